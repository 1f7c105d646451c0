"""Token F1 of audit.unsupported.unsupported_spans on WiCE's human labels of unsupported spans.

Run: .venv/bin/python bench/eval_unsupported.py [--fit | --cv] [--errors N]

Data: WiCE non-supported tokens (Kamoi et al. 2023), ../shared/datasets/wice: partially
supported Wikipedia sub-claims, each with its cited web page as a list of sentences (menus and
boilerplate included) and one boolean per claim token, true where the page does not support
that part of the claim. Train chose every option; dev only reports (the test split is held
out elsewhere and is not read here).

How it is scored (the benchmark's token labels, not characters):
- each character span is mapped onto the given claim_tokens: a token is predicted unsupported
  when its characters overlap a span (spans never cut a word, so a token is in or out);
- micro F1: precision and recall over the tokens of all sub-claims pooled;
- per-claim F1: F1 of each sub-claim, then the mean (a sub-claim with nothing predicted and
  something labelled scores 0; every sub-claim here has at least one labelled token).
The page goes in as one passage, its sentences joined by newlines, as a cited page would be
stored. Baseline: every content word (the matcher's analyzer: not a stop word, stemmed)
absent from the whole page is a span of its own.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from audit import unsupported  # noqa: E402
from audit.matching import prepare_passage  # noqa: E402
from audit.unsupported import Span, unsupported_spans  # noqa: E402

WICE = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "wice"


@dataclass(frozen=True)
class Item:
    claim: str
    offsets: tuple[tuple[int, int], ...]  # claim_tokens located in claim
    gold: tuple[bool, ...]
    page: str


def load(split: str) -> list[Item]:
    items = []
    with open(WICE / f"non_supported_tokens_{split}.jsonl") as fh:
        for line in fh:
            row = json.loads(line)
            claim, at, offsets = row["claim"], 0, []
            for token in row["claim_tokens"]:
                start = claim.index(token, at)
                offsets.append((start, start + len(token)))
                at = start + len(token)
            items.append(
                Item(
                    claim,
                    tuple(offsets),
                    tuple(row["non_supported_spans"]),
                    "\n".join(row["evidence"]),
                )
            )
    return items


def token_flags(item: Item, spans: list[Span]) -> list[bool]:
    return [any(s.start < end and start < s.end for s in spans) for start, end in item.offsets]


@dataclass
class Score:
    tp: int = 0
    fp: int = 0
    fn: int = 0
    per_claim: list[float] | None = None

    def add(self, gold: tuple[bool, ...], predicted: list[bool]) -> None:
        tp = sum(g and p for g, p in zip(gold, predicted, strict=True))
        fp = sum(p and not g for g, p in zip(gold, predicted, strict=True))
        fn = sum(g and not p for g, p in zip(gold, predicted, strict=True))
        self.tp, self.fp, self.fn = self.tp + tp, self.fp + fp, self.fn + fn
        if self.per_claim is None:
            self.per_claim = []
        self.per_claim.append(2 * tp / (2 * tp + fp + fn) if tp + fp + fn else 1.0)

    def row(self) -> str:
        p = self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0
        r = self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        return (
            f"F1 {f:.3f}  P {p:.3f}  R {r:.3f}  per-claim F1 {statistics.mean(self.per_claim):.3f}"
        )


def baseline(claim: str, evidence: list) -> list[Span]:
    """Each content word absent from the whole evidence, as a span of its own."""
    read = unsupported._read_claim(claim)
    passages = [prepare_passage(p) if isinstance(p, str) else p for p in evidence]
    return [
        Span(*read.span(i, i))
        for i, term in enumerate(read.terms)
        if term and not any(term in p.index.occurrences for p in passages)
    ]


def evaluate(items: list[Item], method, prepared: dict) -> Score:  # noqa: ANN001
    score = Score()
    for item in items:
        score.add(item.gold, token_flags(item, method(item.claim, [prepared[item.page]])))
    return score


SPEED_PASSAGE = (
    "the company reported revenue of 4.2 billion dollars in 2023 after its new plant in "
    "Ohio opened and hired 1,200 workers from the region while costs rose sharply"
)


def speed() -> tuple[float, float]:
    """µs per call, best of 5 runs (the machine is shared): a 25-word claim against three
    100-word passages, prepared once (as imports do) and as plain strings."""
    words = SPEED_PASSAGE.split()
    texts = [" ".join(words[(i * 7) % 26 :] + words[: (i * 7) % 26]) * 4 + "." for i in range(3)]
    prepared = [prepare_passage(t) for t in texts]
    claim = (
        "Customers in Ohio said the company reported revenue of 5.1 billion dollars in 2024, "
        "after hiring 900 new workers for the plant in early spring."
    )
    timings = []
    for passages, n in ((prepared, 1000), (texts, 200)):
        best = float("inf")
        for _ in range(5):
            start = time.perf_counter()
            for _ in range(n):
                unsupported_spans(claim, passages)
            best = min(best, (time.perf_counter() - start) / n * 1e6)
        timings.append(best)
    return timings[0], timings[1]


def _token_rows(items: list[Item], prepared: dict) -> list[tuple[Item, object, list, list[bool]]]:
    """Per sub-claim: its reading, feature vectors and the gold label of each analyzer token
    (unsupported when it overlaps a labelled claim token)."""
    cases = []
    for item in items:
        read = unsupported._read_claim(item.claim)
        vectors = unsupported._features(read, [prepared[item.page]])
        labels = []
        for i in range(len(read.terms)):
            start, end = read.span(i, i)
            labels.append(
                any(
                    g and s < end and start < e
                    for (s, e), g in zip(item.offsets, item.gold, strict=True)
                )
            )
        cases.append((item, read, vectors, labels))
    return cases


def _fit_model(cases):  # noqa: ANN001, ANN202
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    rows = [v for _, _, vectors, _ in cases for v in vectors]
    labels = [y for *_, ys in cases for y in ys]
    return LogisticRegression(C=FIT_C, max_iter=5000).fit(np.array(rows, dtype=float), labels)


def _scores(cases, model, thresholds) -> dict[float, Score]:  # noqa: ANN001
    import numpy as np

    scores = {t: Score() for t in thresholds}
    for item, read, vectors, _ in cases:
        probabilities = model.predict_proba(np.array(vectors, dtype=float))[:, 1]
        for threshold, score in scores.items():
            spans = unsupported._decode(item.claim, read, vectors, probabilities, threshold)
            score.add(item.gold, token_flags(item, spans))
    return scores


FIT_C = 1.0
THRESHOLDS = (0.2, 0.25, 0.3, 0.35, 0.4, 0.45)


def fit(items: list[Item], prepared: dict) -> None:
    """Fit the token model on `items` and print its constants and each threshold's score."""
    cases = _token_rows(items, prepared)
    model = _fit_model(cases)
    print(f"_BIAS = {model.intercept_[0]:+.3f}")
    for name, weight in zip(unsupported.FEATURES, model.coef_[0], strict=True):
        print(f"    {weight:+.3f},  # {name}")
    for threshold, score in _scores(cases, model, THRESHOLDS).items():
        print(f"threshold {threshold:.2f} (in-sample): {score.row()}")


def cross_validate(items: list[Item], prepared: dict, label: str, seeds=(0, 1)) -> None:  # noqa: ANN001
    """5-fold cross-validation by sub-claim: each fold scored by a model fitted on the other
    four, the folds pooled, the micro F1 averaged over shuffles."""
    import random

    cases = _token_rows(items, prepared)
    results: dict[float, list[float]] = {t: [] for t in THRESHOLDS}
    for seed in seeds:
        order = list(range(len(cases)))
        random.Random(seed).shuffle(order)
        pooled = {t: Score() for t in THRESHOLDS}
        for k in range(5):
            held = [cases[i] for j, i in enumerate(order) if j % 5 == k]
            model = _fit_model([cases[i] for j, i in enumerate(order) if j % 5 != k])
            for threshold, score in _scores(held, model, THRESHOLDS).items():
                total = pooled[threshold]
                total.tp, total.fp, total.fn = (
                    total.tp + score.tp,
                    total.fp + score.fp,
                    total.fn + score.fn,
                )
        for threshold, total in pooled.items():
            results[threshold].append(2 * total.tp / (2 * total.tp + total.fp + total.fn))
    for threshold, f1s in results.items():
        print(f"{label} 5-fold CV, threshold {threshold:.2f}: F1 {statistics.mean(f1s):.3f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fit", action="store_true", help="fit the token model on train")
    parser.add_argument(
        "--cv", action="store_true", help="5-fold cross-validation on train and on train+dev"
    )
    parser.add_argument("--errors", type=int, default=0)
    args = parser.parse_args()
    splits = {name: load(name) for name in ("train", "dev")}
    prepared = {i.page: prepare_passage(i.page) for items in splits.values() for i in items}
    if args.fit:
        fit(splits["train"], prepared)
        return
    if args.cv:
        cross_validate(splits["train"], prepared, "train")
        cross_validate(splits["train"] + splits["dev"], prepared, "train+dev")
        return
    methods = {"baseline (content word absent)": baseline, "unsupported_spans": unsupported_spans}
    for name, method in methods.items():
        for split, items in splits.items():
            print(f"{name:32s} {split:5s} {evaluate(items, method, prepared).row()}")
    if args.errors:
        for item in splits["train"][: args.errors]:
            flags = token_flags(item, unsupported_spans(item.claim, [prepared[item.page]]))
            print(
                " ".join(
                    ("[" if g else "") + ("*" if p else "") + item.claim[s:e] + ("]" if g else "")
                    for (s, e), g, p in zip(item.offsets, item.gold, flags, strict=True)
                )
            )
    prepared_us, plain_us = speed()
    print(
        f"speed: {prepared_us:.0f} µs per 25-word claim vs 3 prepared 100-word passages, "
        f"{plain_us:.0f} µs with the passages as strings (best of 5)"
    )


if __name__ == "__main__":
    main()
