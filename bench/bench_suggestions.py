"""Render-time cost of the review page's unsupported-span suggestions: for each ExpertQA claim
that cites text, `unsupported_spans` against the claim's evidence passages given as strings
(prepared in the call, as the page does), best of 3. Prints the median, p95 and maximum.

    .venv/bin/python bench/bench_suggestions.py [PATH]
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "audit.settings")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from audit import unsupported  # noqa: E402

DEFAULT = Path(__file__).resolve().parents[1] / "fixtures" / "expertqa" / "rand_test.jsonl"


def main() -> None:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    times, sizes = [], []
    for line in path.read_text(encoding="utf-8").splitlines():
        for answer in json.loads(line)["answers"].values():
            for claim in answer.get("claims", []):
                text = claim.get("claim_string") or ""
                passages = [e for e in claim.get("evidence") or [] if isinstance(e, str)]
                if not text or not passages:
                    continue
                best = float("inf")
                for _ in range(3):
                    start = time.perf_counter()
                    unsupported.unsupported_spans(text, passages)
                    best = min(best, time.perf_counter() - start)
                times.append(best * 1000)
                sizes.append(sum(map(len, passages)))
    times.sort()
    print(f"{len(times)} claims, evidence characters median {statistics.median(sizes):.0f}")
    print(
        f"ms per claim: median {statistics.median(times):.2f}, "
        f"p95 {times[int(0.95 * len(times))]:.2f}, max {times[-1]:.2f}"
    )


if __name__ == "__main__":
    main()
