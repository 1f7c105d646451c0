"""Speed of splitting answers into claims and of locating given claims in their answers.

Run: .venv/bin/python bench/bench_claims.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from audit.claims import locate_claim, split_claims  # noqa: E402

EXPERTQA = Path(__file__).resolve().parent.parent / "fixtures" / "expertqa" / "rand_test.jsonl"


def _long_answer() -> str:
    sentence = "The U.S. agency reported a 3.5% rise in costs, e.g. for fuel [1][2]. "
    paragraph = sentence * 10 + "Dr. Smith disagreed. [3]\n\n"
    return paragraph * 17


def _time(action, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return times


def _locate_all() -> None:
    for line in EXPERTQA.read_text(encoding="utf-8").splitlines():
        for system in json.loads(line)["answers"].values():
            answer, hint = system["answer_string"], 0
            for claim in system["claims"]:
                location = locate_claim(claim["claim_string"], answer, hint)
                if location is not None:
                    hint = location.end


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    answer = _long_answer()
    split_claims("Warm up the segmenter [1].")
    split = _time(lambda: split_claims(answer), args.repeat)
    print(
        f"split_claims, {len(answer.split()):,}-word answer: "
        f"median {statistics.median(split) * 1000:.0f} ms, max {max(split) * 1000:.0f} ms"
    )
    located = _time(_locate_all, args.repeat)
    print(
        f"locate_claim, ExpertQA rand_test (1,292 claims): "
        f"median {statistics.median(located):.2f} s, max {max(located):.2f} s"
    )


if __name__ == "__main__":
    main()
