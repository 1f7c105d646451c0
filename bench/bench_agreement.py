"""Agreement statistics at dashboard scale: 50,000 claims × 2 reviewers, pure computation.

.venv/bin/python bench/bench_agreement.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from audit.agreement import Rating, sheet_confusion, summarize  # noqa: E402
from audit.judgments import JUDGMENT_CODES  # noqa: E402


def main() -> None:
    codes = sorted(JUDGMENT_CODES)
    ratings = [
        Rating(i, rater, codes[(i * (3 if rater == "a" else 5)) % 7 if i % 4 else i % 7])
        for i in range(50_000)
        for rater in ("a", "b")
    ]
    timings = []
    for _ in range(5):
        start = time.perf_counter()
        summarize(ratings)
        summarize(ratings, binary=True)
        sheet_confusion(ratings)
        timings.append(time.perf_counter() - start)
    print(f"50k claims x 2 reviewers: median {statistics.median(timings) * 1000:.0f} ms")


if __name__ == "__main__":
    main()
