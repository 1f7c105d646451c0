"""Token F1 of audit.matching.unsupported_spans on WiCE's human labels of unsupported claim parts.

Run: .venv/bin/python bench/eval_unsupported.py [--ablate] [--errors N]

Data: WiCE non-supported tokens (Kamoi et al. 2023), /work/shared/datasets/wice: partially
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
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from audit import unsupported  # noqa: E402
from audit.matching import Span, prepare_passage, unsupported_spans  # noqa: E402

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
                Item(claim, tuple(offsets), tuple(row["non_supported_spans"]), "\n".join(row["evidence"]))
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
        return f"F1 {f:.3f}  P {p:.3f}  R {r:.3f}  per-claim F1 {statistics.mean(self.per_claim):.3f}"


def baseline(claim: str, evidence: list) -> list[Span]:
    """Each content word absent from the whole evidence, as a span of its own."""
    tokens = unsupported._tokens(claim)
    passages = [prepare_passage(p) if isinstance(p, str) else p for p in evidence]
    return [
        Span(t.start, t.end)
        for t in tokens
        if t.term and not any(t.term in p.index.postings for p in passages)
    ]


def evaluate(items: list[Item], method, prepared: dict) -> Score:  # noqa: ANN001
    score = Score()
    for item in items:
        score.add(item.gold, token_flags(item, method(item.claim, [prepared[item.page]])))
    return score


def speed() -> float:
    """µs per call: a 25-word claim against three prepared 100-word passages."""
    words = (
        "the company reported revenue of 4.2 billion dollars in 2023 after its new plant in "
        "Ohio opened and hired 1,200 workers from the region while costs rose sharply"
    ).split()
    passages = [
        prepare_passage(" ".join(words[(i * 7) % 20 :] + words[: (i * 7) % 20]) * 4 + ".")
        for i in range(3)
    ]
    claim = "Customers in Ohio said the company reported revenue of 5.1 billion dollars in 2024, after hiring 900 new workers for the plant."
    n = 2000
    start = time.perf_counter()
    for _ in range(n):
        unsupported_spans(claim, passages)
    return (time.perf_counter() - start) / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ablate", action="store_true")
    parser.add_argument("--errors", type=int, default=0)
    args = parser.parse_args()
    splits = {name: load(name) for name in ("train", "dev")}
    prepared = {i.page: prepare_passage(i.page) for items in splits.values() for i in items}
    methods = {"baseline (content word absent)": baseline, "unsupported_spans": unsupported_spans}
    if args.ablate:
        default = unsupported.DEFAULT_OPTIONS
        for name, options in ABLATIONS(default).items():
            methods[name] = lambda c, e, o=options: unsupported.unsupported_spans(c, e, o)
    for name, method in methods.items():
        for split, items in splits.items():
            print(f"{name:40s} {split:5s} {evaluate(items, method, prepared).row()}")
    if args.errors:
        for item in splits["train"][: args.errors]:
            flags = token_flags(item, unsupported_spans(item.claim, [prepared[item.page]]))
            print(
                " ".join(
                    ("[" if g else "") + ("*" if p else "") + item.claim[s:e] + ("]" if g else "")
                    for (s, e), g, p in zip(item.offsets, item.gold, flags, strict=True)
                )
            )
    print(f"speed: {speed():.0f} µs per 25-word claim vs 3 prepared 100-word passages")


def ABLATIONS(d: unsupported.SpanOptions) -> dict[str, unsupported.SpanOptions]:  # noqa: N802
    return {
        "focus 3": replace(d, focus=3),
        "focus 5": replace(d, focus=5),
        "focus 10": replace(d, focus=10),
        "merge gap 1": replace(d, merge_gap=1),
        "merge gap 2": replace(d, merge_gap=2),
        "merge gap 3": replace(d, merge_gap=3),
        "lead prepositions": replace(d, lead_prepositions=True),
        "names": replace(d, names=True),
    }


if __name__ == "__main__":
    main()
