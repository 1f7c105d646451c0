"""Sentence splitter speed and agreement with pysbd on real passages from the datasets.

Run: .venv/bin/python bench/bench_splitter.py
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import pysbd  # noqa: E402
from _data import real_passages  # noqa: E402

from audit.sentences import sentence_spans  # noqa: E402

Splitter = Callable[[str], list[tuple[int, int]]]


def _strip(text: str, start: int, end: int) -> tuple[int, int] | None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return (start, end) if start < end else None


def _per_line(
    text: str, split_line: Callable[[str], list[tuple[int, int]]]
) -> list[tuple[int, int]]:
    # The product's rule is that a newline ends a sentence, so every splitter is given
    # the same lines and judged only on where it cuts inside a line.
    spans: list[tuple[int, int]] = []
    offset = 0
    for line in text.split("\n"):
        for s, e in split_line(line):
            span = _strip(text, offset + s, offset + e)
            if span:
                spans.append(span)
        offset += len(line) + 1
    return spans


_PYSBD = pysbd.Segmenter(language="en", clean=False, char_span=True)


def pysbd_spans(text: str) -> list[tuple[int, int]]:
    return _per_line(
        text, lambda line: [(s.start, s.end) for s in _PYSBD.segment(line)] if line.strip() else []
    )


def blingfire_spans(text: str) -> list[tuple[int, int]]:
    import blingfire

    def split_line(line: str) -> list[tuple[int, int]]:
        if not line.strip():
            return []
        _, offsets = blingfire.text_to_sentences_and_offsets(line)
        return [(int(s), int(e)) for s, e in offsets]

    return _per_line(text, split_line)


# Footnote markers and closing quotes right after a full stop belong to the sentence they
# end; splitters disagree on which side they go, which is not a disagreement on the cut.
_TRAILER = re.compile(r"(?:\s*\[\d{1,4}\]|[\"'\u2019\u201d)\]])*")


def _inner_ends(spans: list[tuple[int, int]], text: str) -> set[int]:
    # Only cuts inside a line count: line ends are given to every splitter.
    ends = set()
    last = len(text.rstrip())
    for _, e in spans:
        e = _TRAILER.match(text, e).end()
        if e < last and text[e : e + 1] != "\n" and text[e:].split("\n", 1)[0].strip():
            ends.add(e)
    return ends


def agreement(
    candidate: Splitter, reference: list[list[tuple[int, int]]], texts: list[str]
) -> tuple[float, float]:
    tp = fp = fn = 0
    for text, ref in zip(texts, reference, strict=True):
        got = _inner_ends(candidate(text), text)
        want = _inner_ends(ref, text)
        tp += len(got & want)
        fp += len(got - want)
        fn += len(want - got)
    return tp / max(1, tp + fp), tp / max(1, tp + fn)


def words_per_second(splitter: Splitter, texts: list[str], repeat: int = 3) -> float:
    words = sum(len(t.split()) for t in texts)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for text in texts:
            splitter(text)
        times.append(time.perf_counter() - t0)
    return words / statistics.median(times)


def main() -> None:
    texts = real_passages()
    words = sum(len(t.split()) for t in texts)
    print(
        f"{len(texts)} distinct real passages, {words:,} words "
        "(ExpertQA evidence + AttributionBench references)"
    )
    reference = [pysbd_spans(t) for t in texts]
    rows = [("regex (audit.sentences)", sentence_spans)]
    try:
        import blingfire  # noqa: F401

        rows.append(("blingfire", blingfire_spans))
    except ImportError:
        print("(blingfire not installed: skipped)")
    rows.append(("pysbd (reference)", pysbd_spans))
    print(f"{'splitter':26} {'words/s':>12} {'precision':>10} {'recall':>8}")
    for name, fn in rows:
        wps = words_per_second(fn, texts, repeat=1 if fn is pysbd_spans else 5)
        precision, recall = agreement(fn, reference, texts)
        print(f"{name:26} {wps:12,.0f} {precision:10.3f} {recall:8.3f}")


if __name__ == "__main__":
    main()
