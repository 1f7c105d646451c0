"""Ranking quality of audit.matching.rank_sentences on human evidence labels (offline).

Run: .venv/bin/python bench/eval_ranking.py [--tune]

What the gold is (read this before quoting a figure):
- genSearch-min: AttributionBench rows from Stanford-GenSearch (Liu et al. 2023). Their
  `references` field is the annotator's copy-paste of the *minimal set of sentences* of the
  cited page that support the statement (one per line). Rows labelled attributable are
  complete support; "not attributable" rows with a short reference (<= 5 lines) are partial
  support, the reference being the supporting part. The cited pages themselves are not in the
  data, so each gold set is placed in a pseudo page: real passages retrieved for the same
  or the most similar questions (by question TF-IDF, never by the claim), about 80 sentences
  (uniform 40-120). The gold lines go in as one block or scattered, half of the items each.
  Gold = the sentences of those lines. Distractors may also support the claim, so scores are
  lower bounds; they are also easier than a real page, whose other sentences share its topic.
- expertqa-psg: ExpertQA claims judged "Complete" with one cited passage (~100 words); the
  page is that passage among the other passages retrieved for the same question (+ padding).
  Gold = every sentence of the cited passage: passage-level, not minimal, so only hit@3.
- hagrid-quote: AttributionBench HAGRID rows labelled attributable with one cited quote
  (a Wikipedia paragraph); page = all quotes of that question + padding. Passage-level gold.
Half of the questions (md5 of the question) tune the weights, the other half report.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import random
import re
import statistics
import sys
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from _data import attributionbench_rows, expertqa_claims  # noqa: E402
from rapidfuzz import fuzz  # noqa: E402
from sklearn.feature_extraction.text import TfidfVectorizer  # noqa: E402

from audit import matching  # noqa: E402
from audit.bm25 import bm25_scores, pooled_idf  # noqa: E402


@dataclass(frozen=True)
class Item:
    dataset: str
    question: str
    claim: str
    page: str
    gold: frozenset[int]  # sentence indices of sentence_spans(page)
    minimal: bool

    @property
    def half(self) -> int:
        return hashlib.md5(self.question.encode()).digest()[0] % 2


# ---------------------------------------------------------------------------- pages


class Pool:
    """Real passages grouped by question, and question-to-question similarity."""

    def __init__(self, by_question: dict[str, list[str]]) -> None:
        self.questions = list(by_question)
        self.passages = by_question
        self.vectorizer = TfidfVectorizer(stop_words="english", sublinear_tf=True)
        self.matrix = self.vectorizer.fit_transform(self.questions)
        self.all_passages = list(dict.fromkeys(p for ps in by_question.values() for p in ps))
        self.text_vectorizer = TfidfVectorizer(stop_words="english", sublinear_tf=True)
        self.text_matrix = self.text_vectorizer.fit_transform(self.all_passages)

    def neighbours(self, question: str) -> list[str]:
        sims = (self.matrix @ self.vectorizer.transform([question]).T).toarray().ravel()
        order = np.argsort(-sims, kind="stable")
        return [self.questions[i] for i in order if self.questions[i] != question]

    def similar_passages(self, text: str) -> list[str]:
        sims = (self.text_matrix @ self.text_vectorizer.transform([text]).T).toarray().ravel()
        order = np.argsort(-sims, kind="stable")[:200]
        return [self.all_passages[i] for i in order]


def _norm(text: str) -> str:
    return re.sub(r"\W+", " ", text.casefold()).strip()


def build_page(
    gold_blocks: list[str],
    question: str,
    pool: Pool,
    rng: random.Random,
    *,
    scattered: bool,
    hard: bool = False,
) -> tuple[str, frozenset[int]]:
    gold_norm = [_norm(b) for b in gold_blocks]
    target = rng.randint(40, 120)
    paragraphs: list[str] = []
    count = 0
    if hard:
        # Passages nearest to the gold text itself: same subject, like the rest of a page.
        groups = [pool.similar_passages(" ".join(gold_blocks))]
    else:
        groups = [pool.passages.get(q, []) for q in [question, *pool.neighbours(question)]]
    for group in groups:
        for passage in group:
            norm = _norm(passage)
            if any(g and (g in norm or norm in g) for g in gold_norm):
                continue
            if passage in paragraphs:
                continue
            paragraphs.append(passage)
            count += len(matching.sentence_spans(passage))
            if count >= target:
                break
        if count >= target:
            break
    rng.shuffle(paragraphs)
    if scattered:
        slots = sorted(rng.randint(0, len(paragraphs)) for _ in gold_blocks)
        for offset, (slot, block) in enumerate(zip(slots, gold_blocks, strict=True)):
            paragraphs.insert(slot + offset, ("GOLD", block))  # type: ignore[arg-type]
    else:
        paragraphs.insert(rng.randint(0, len(paragraphs)), ("GOLD", "\n".join(gold_blocks)))  # type: ignore[arg-type]
    text = ""
    gold_ranges: list[tuple[int, int]] = []
    for para in paragraphs:
        if text:
            text += "\n\n"
        if isinstance(para, tuple):
            gold_ranges.append((len(text), len(text) + len(para[1])))
            text += para[1]
        else:
            text += para
    spans = matching.sentence_spans(text)
    gold = frozenset(
        i for i, (s, e) in enumerate(spans) if any(gs <= s and e <= ge for gs, ge in gold_ranges)
    )
    return text, gold


def load_items() -> list[Item]:
    rng = random.Random(20261101)
    ab = attributionbench_rows()
    eqa = expertqa_claims()
    by_question: dict[str, list[str]] = {}
    for c in eqa:
        for p in c["passages"]:
            by_question.setdefault(c["question"], [])
            if p not in by_question[c["question"]]:
                by_question[c["question"]].append(p)
    for r in ab:
        for ref in r["references"]:
            if ref.strip() and ref not in by_question.setdefault(r["question"], []):
                by_question[r["question"]].append(ref)
    pool = Pool(by_question)
    items: list[Item] = []

    seen: set[tuple[str, str]] = set()
    for r in ab:
        if r["src_dataset"] != "Stanford-GenSearch" or not r["references"]:
            continue
        lines = [ln.strip() for ln in r["references"][0].split("\n") if ln.strip()]
        if not lines or len(lines) > 5 or len(" ".join(lines).split()) > 120:
            continue
        if (r["claim"], lines[0]) in seen:
            continue
        seen.add((r["claim"], lines[0]))
        label = "complete" if r["attribution_label"] == "attributable" else "partial"
        scattered = rng.random() < 0.5
        for hard in (False, True):
            page, gold = build_page(lines, r["question"], pool, rng, scattered=scattered, hard=hard)
            name = f"genSearch-min/{label}/{'hard' if hard else 'easy'}"
            if gold:
                items.append(Item(name, r["question"], r["claim"], page, gold, True))

    for c in eqa:
        if c["support"] != "Complete" or len(c["passages"]) != 1:
            continue
        if len(c["passages"][0].split()) < 30:
            continue
        page, gold = build_page(c["passages"], c["question"], pool, rng, scattered=False)
        if gold:
            items.append(Item("expertqa-psg", c["question"], c["claim"], page, gold, False))

    for r in ab:
        if r["src_dataset"] != "HAGRID" or r["attribution_label"] != "attributable":
            continue
        if len(r["references"]) != 1 or not r["references"][0].strip():
            continue
        quote = re.sub(r"^\[\d+\]\s*", "", r["references"][0].strip())
        page, gold = build_page([quote], r["question"], pool, rng, scattered=False)
        if gold:
            items.append(Item("hagrid-quote", r["question"], r["claim"], page, gold, False))
    return items


# ---------------------------------------------------------------------------- methods


@dataclass
class Components:
    """Per sentence of one page: the bounded score components of the combined ranker."""

    bm25: np.ndarray
    coverage: np.ndarray
    context: np.ndarray
    fuzz: np.ndarray
    sentences: tuple[str, ...]


def components(item: Item, k1: float, b: float) -> Components:
    passage = matching.prepare_passage(item.page)
    query = matching._query(item.claim)
    n = passage.index.size
    out = Components(*(np.zeros(n) for _ in range(4)), passage.sentences)
    if query.terms:
        idf = pooled_idf(query.terms, [passage.index])
        total = sum(idf.values())
        avgdl = sum(passage.index.lengths) / max(1, n)
        weights = [w / total for w in idf.values()]
        scores, masks = bm25_scores(idf, passage.index, avgdl, k1=k1, b=b)

        def weight(mask: int) -> float:
            return sum(w for bit, w in enumerate(weights) if mask >> bit & 1)

        for s, raw in scores.items():
            m = masks[s]
            out.bm25[s] = min(1.0, raw / total)
            out.coverage[s] = weight(m)
            out.context[s] = max(weight(m | masks.get(s - 1, 0)), weight(m | masks.get(s + 1, 0)))
    for s, sentence in enumerate(passage.sentences):
        out.fuzz[s] = fuzz.token_set_ratio(query.folded, sentence) / 100
    return out


def ranked(comp: Components, w: matching.RankWeights) -> list[int]:
    lexical = w.bm25 * comp.bm25 + w.coverage * comp.coverage + w.context * comp.context
    candidates = lexical > 0
    total = lexical.copy()
    if w.fuzz:
        # Only the best lexical candidates get the fuzzy score, as in the module.
        order = np.argsort(-lexical, kind="stable")
        top = order[: w.fuzz_candidates]
        total[top] += w.fuzz * comp.fuzz[top]
    idx = np.flatnonzero(candidates)
    return _distinct(comp, idx[np.argsort(-total[idx], kind="stable")])


def fuzz_only(comp: Components) -> list[int]:
    return _distinct(comp, np.argsort(-comp.fuzz, kind="stable"))


def _distinct(comp: Components, order: np.ndarray) -> list[int]:
    # A repeated sentence is shown once, as in the module.
    seen: set[str] = set()
    out = []
    for i in order:
        if comp.sentences[i] not in seen:
            seen.add(comp.sentences[i])
            out.append(int(i))
    return out


def metrics(items: list[Item], rankings: list[list[int]]) -> tuple[float, float | None, int]:
    hits = [bool(set(r[:3]) & it.gold) for it, r in zip(items, rankings, strict=True)]
    full = [
        it.gold <= set(r[:5])
        for it, r in zip(items, rankings, strict=True)
        if it.minimal and len(it.gold) <= 5
    ]
    return (
        sum(hits) / max(1, len(hits)),
        (sum(full) / len(full)) if full else None,
        len(items),
    )


BM25_ONLY = matching.RankWeights(bm25=1.0, coverage=0.0, context=0.0, fuzz=0.0)


def tune(items: list[Item]) -> matching.RankWeights:
    """Grid search on the tuning half: maximise full-set@5 on minimal sets plus hit@3."""
    best: tuple[float, matching.RankWeights] | None = None
    for k1, b in itertools.product((0.9, 1.2, 1.6), (0.3, 0.5, 0.75)):
        comps = [components(it, k1, b) for it in items]
        grid = [x / 10 for x in range(11)]
        for wb, wc, wx in itertools.product(grid, grid, grid):
            wf = round(1.0 - wb - wc - wx, 3)
            if wf < 0:
                continue
            w = matching.RankWeights(bm25=wb, coverage=wc, context=wx, fuzz=wf, k1=k1, b=b)
            rankings = [ranked(c, w) for c in comps]
            scores = []
            for name in sorted({it.dataset for it in items}):
                sub = [(it, r) for it, r in zip(items, rankings, strict=True) if it.dataset == name]
                h, f, _ = metrics([i for i, _ in sub], [r for _, r in sub])
                scores.append(h + (f if f is not None else 0.0))
            objective = statistics.mean(scores)
            if best is None or objective > best[0]:
                best = (objective, w)
    assert best is not None
    print(f"tuned: {best[1]} (objective {best[0]:.4f})")
    return best[1]


def report(items: list[Item], weights: matching.RankWeights, title: str) -> None:
    print(f"\n{title}")
    print(
        f"{'dataset':26} {'n':>4} {'sent/page':>9} {'gold':>5}  {'method':10} {'hit@3':>6} {'full@5':>7}"
    )
    for name in sorted({it.dataset for it in items}):
        sub = [it for it in items if it.dataset == name]
        pages = statistics.median(len(matching.sentence_spans(it.page)) for it in sub)
        gold = statistics.median(len(it.gold) for it in sub)
        comps = [components(it, BM25_ONLY.k1, BM25_ONLY.b) for it in sub]
        module = [
            _sentence_indices(it, matching.rank_sentences(it.claim, [it.page], k=5)) for it in sub
        ]
        tuned = [ranked(components(it, weights.k1, weights.b), weights) for it in sub]
        rows = [
            ("bm25", [ranked(c, BM25_ONLY) for c in comps]),
            ("rapidfuzz", [fuzz_only(c) for c in comps]),
            ("combined", module),
        ]
        if weights != matching.DEFAULT_WEIGHTS:
            rows.append(("tuned", tuned))
        for method, rankings in rows:
            h, f, n = metrics(sub, rankings)
            fs = f"{f:7.3f}" if f is not None else "      -"
            print(f"{name:26} {n:4d} {pages:9.0f} {gold:5.0f}  {method:10} {h:6.3f} {fs}")


def _sentence_indices(item: Item, highlights: list[matching.Highlight]) -> list[int]:
    starts = {s: i for i, (s, _) in enumerate(matching.sentence_spans(item.page))}
    return [starts[h.start] for h in highlights]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tune", action="store_true", help="grid-search weights on half 0")
    args = parser.parse_args()
    items = load_items()
    tune_half = [it for it in items if it.half == 0]
    test_half = [it for it in items if it.half == 1]
    weights = tune(tune_half) if args.tune else matching.DEFAULT_WEIGHTS
    if args.tune:
        weights = replace(weights)
        report(tune_half, weights, "TUNING half (weights chosen here)")
    report(test_half, weights, "HELD-OUT half (report these)")


if __name__ == "__main__":
    main()
