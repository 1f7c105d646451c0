"""How well candidate match-strength measures separate human "supported" from "not supported".

Run: .venv/bin/python bench/calibrate_trust.py

Labels: ExpertQA claims with cited evidence text, "Complete" (positive) against "Incomplete"
and "Partial" (negative); AttributionBench rows, "attributable" against "not attributable"
(label-balanced per source, negatives chosen to be hard). A lexical score cannot judge
entailment; these figures show how much a label built on it can promise, and where the
trust_label thresholds sit.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _data import attributionbench_rows, expertqa_claims  # noqa: E402
from rapidfuzz import fuzz  # noqa: E402

from audit import matching  # noqa: E402
from audit.bm25 import bm25_scores, pooled_idf  # noqa: E402


def labelled() -> list[tuple[str, str, list[str], bool]]:
    """(dataset, claim, cited passages, supported) for every usable labelled claim."""
    out = []
    for c in expertqa_claims():
        if c["passages"] and c["support"] in ("Complete", "Incomplete", "Partial"):
            out.append(("expertqa", c["claim"], c["passages"], c["support"] == "Complete"))
    for r in attributionbench_rows():
        refs = [x for x in r["references"] if x.strip()]
        if refs:
            out.append(
                (
                    f"ab/{r['src_dataset']}",
                    r["claim"],
                    refs,
                    r["attribution_label"] == "attributable",
                )
            )
    return out


def measures(claim: str, passages: list[str]) -> dict[str, float]:
    prepared = [matching.prepare_passage(p) for p in passages]
    query = matching._query(claim)
    checks = matching.check_claim(claim, prepared, [])
    result = {"best_score": checks.best_score, "label": checks.label}
    indexes = [p.index for p in prepared]
    n = sum(i.size for i in indexes)
    if not query.terms or not n:
        return {**result, "bm25": 0.0, "cov": 0.0, "ctx_cov": 0.0, "fuzz": 0.0, "uniform_ctx": 0.0}
    idf = pooled_idf(query.terms, indexes)
    total = sum(idf.values())
    weights = [w / total for w in idf.values()]
    terms = list(idf)
    avgdl = sum(sum(i.lengths) for i in indexes) / n
    best: dict[str, float] = {
        "bm25": 0.0,
        "cov": 0.0,
        "ctx_cov": 0.0,
        "fuzz": 0.0,
        "uniform_ctx": 0.0,
    }
    for p, index in zip(prepared, indexes, strict=True):
        scores, masks = bm25_scores(idf, index, avgdl, k1=1.2, b=0.75)
        for s, raw in scores.items():
            m = masks[s]
            pairs = (m | masks.get(s - 1, 0), m | masks.get(s + 1, 0))
            best["bm25"] = max(best["bm25"], min(1.0, raw / total))
            best["cov"] = max(best["cov"], sum(w for b, w in enumerate(weights) if m >> b & 1))
            for union in pairs:
                best["ctx_cov"] = max(
                    best["ctx_cov"], sum(w for b, w in enumerate(weights) if union >> b & 1)
                )
            best["uniform_ctx"] = max(
                best["uniform_ctx"], *(bin(u).count("1") / len(terms) for u in pairs)
            )
            best["fuzz"] = max(
                best["fuzz"], fuzz.token_set_ratio(query.folded, p.sentences[s]) / 100
            )
    return {**result, **best}


def auc(pos: list[float], neg: list[float]) -> float:
    if not pos or not neg:
        return float("nan")
    wins = sum((p > q) + 0.5 * (p == q) for p in pos for q in neg)
    return wins / (len(pos) * len(neg))


def main() -> None:
    data = labelled()
    rows = [(ds, measures(claim, passages), ok) for ds, claim, passages, ok in data]
    names = [n for n in rows[0][1] if n != "label"]
    groups: dict[str, Callable[[str], bool]] = {
        "expertqa": lambda ds: ds == "expertqa",
        "ab/all": lambda ds: ds.startswith("ab/"),
        **{
            d: (lambda ds, d=d: ds == d)
            for d in sorted({ds for ds, _, _ in rows if ds.startswith("ab/")})
        },
    }
    print("AUC (supported vs not) of each measure of the best cited match")
    print(f"{'group':28} {'n':>5} " + " ".join(f"{n:>11}" for n in names))
    for group, member in groups.items():
        sub = [(m, ok) for ds, m, ok in rows if member(ds)]
        cells = [
            auc([m[n] for m, ok in sub if ok], [m[n] for m, ok in sub if not ok]) for n in names
        ]
        print(f"{group:28} {len(sub):5d} " + " ".join(f"{c:11.3f}" for c in cells))

    print("\nbest_score thresholds: share labelled supported among claims at or above")
    print(f"{'group':12} {'thr':>5} {'n>=thr':>7} {'supported':>10} {'recall':>7}")
    for group in ("expertqa", "ab/all"):
        sub = [(m["best_score"], ok) for ds, m, ok in rows if groups[group](ds)]
        positives = sum(ok for _, ok in sub)
        for thr in (0.3, 0.4, 0.45, 0.5, 0.6, 0.7, 0.75, 0.8, 0.9):
            above = [ok for s, ok in sub if s >= thr]
            share = sum(above) / len(above) if above else float("nan")
            print(
                f"{group:12} {thr:5.2f} {len(above):7d} {share:10.3f} "
                f"{sum(above) / max(1, positives):7.3f}"
            )
        base = statistics.mean(ok for _, ok in sub)
        print(f"{group:12}   all {len(sub):7d} {base:10.3f}")

    print("\ntrust_label outcome (cited = the human-judged references)")
    print(f"{'group':12} {'label':9} {'n':>6} {'share':>6} {'supported':>10}")
    for group in ("expertqa", "ab/all"):
        sub = [(m["label"], ok) for ds, m, ok in rows if groups[group](ds)]
        for label in ("verified", "likely", "unknown"):
            hits = [ok for lab, ok in sub if lab == label]
            share = sum(hits) / len(hits) if hits else float("nan")
            print(f"{group:12} {label:9} {len(hits):6d} {len(hits) / len(sub):6.2f} {share:10.3f}")


if __name__ == "__main__":
    main()
