"""Speed of the matcher on realistic text built offline from the datasets' real passages.

Run: .venv/bin/python bench/bench_matcher.py

- warm: one claim against a prepared 50,000-word source, all checks (check_claim plus a
  quote check of a 12-word span), median over claims;
- cold: the same with prepare_passage of the source included;
- batch: 1,000 answers of 5 claims, 3 passages of ~100 words each (ALCE-like), every
  passage prepared once per answer, each claim checked against 1 cited + 2 uncited.
"""

from __future__ import annotations

import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from _data import expertqa_claims, real_passages  # noqa: E402

from audit import matching  # noqa: E402


def big_source(words: int, rng: random.Random) -> str:
    """Real passages joined as paragraphs until the text has `words` words."""
    passages = real_passages()
    rng.shuffle(passages)
    out: list[str] = []
    count = 0
    for passage in passages:
        out.append(passage)
        count += len(passage.split())
        if count >= words:
            break
    return "\n\n".join(out)


def short_passages(rng: random.Random) -> list[str]:
    """Real passages cut to about 100 words at a word boundary (retrieval chunk size)."""
    out = []
    for passage in real_passages():
        words = passage.split()
        if len(words) >= 80:
            out.append(" ".join(words[:100]))
    rng.shuffle(out)
    return out


def ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


def main() -> None:
    rng = random.Random(11)
    claims = [c["claim"] for c in expertqa_claims()]
    rng.shuffle(claims)
    source = big_source(50_000, rng)
    n_words = len(source.split())

    prep_times = []
    for _ in range(5):
        t0 = time.perf_counter()
        prepared = matching.prepare_passage(source)
        prep_times.append(time.perf_counter() - t0)

    warm = []
    for claim in claims[:200]:
        span = " ".join(claim.split()[:12])
        t0 = time.perf_counter()
        matching.check_claim(claim, [prepared], [])
        matching.verify_quote(span, prepared)
        warm.append(time.perf_counter() - t0)

    cold = []
    for claim in claims[200:211]:
        span = " ".join(claim.split()[:12])
        t0 = time.perf_counter()
        fresh = matching.prepare_passage(source)
        matching.check_claim(claim, [fresh], [])
        matching.verify_quote(span, fresh)
        cold.append(time.perf_counter() - t0)

    chunks = short_passages(rng)
    answers = []
    for a in range(1000):
        passages = [chunks[(3 * a + j) % len(chunks)] for j in range(3)]
        answers.append((passages, [claims[(5 * a + j) % len(claims)] for j in range(5)]))
    batch_runs = []
    for _ in range(3):
        t0 = time.perf_counter()
        for passages, answer_claims in answers:
            prepared_three = [matching.prepare_passage(p) for p in passages]
            for j, claim in enumerate(answer_claims):
                cited = [prepared_three[j % 3]]
                uncited = [p for i, p in enumerate(prepared_three) if i != j % 3]
                matching.check_claim(claim, cited, uncited)
        batch_runs.append(time.perf_counter() - t0)

    print(f"source: {n_words:,} words, {len(prepared.spans):,} sentences (real passages)")
    print(f"{'measure':46} {'median':>11}")
    print(f"{'prepare_passage(50k words)':46} {ms(statistics.median(prep_times))}")
    print(f"{'warm: check_claim + verify_quote, 50k words':46} {ms(statistics.median(warm))}")
    print(f"{'warm: p95':46} {ms(sorted(warm)[int(0.95 * len(warm))])}")
    print(f"{'cold: prepare + check_claim + verify_quote':46} {ms(statistics.median(cold))}")
    batch = statistics.median(batch_runs)
    print(
        f"{'batch: 5,000 claims x 3 passages (100 words)':46} {batch:8.2f} s  "
        f"({batch / 5000 * 1e6:.0f} us/claim)"
    )


if __name__ == "__main__":
    main()
