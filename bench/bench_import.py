"""Import benchmark: N ALCE-style answers (5 cited claims, 3 passages of ~100 words each)
parsed, split, matched and written to a fresh database. Run by hand, never in CI:

    .venv/bin/python bench/bench_import.py [--answers 1000] [--runs 3]

DATABASE_URL picks the database (a temporary SQLite file by default).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

_VOCABULARY = """
employee contract policy leave annual salary overtime notice period probation manager
approval remote working holiday entitlement pension benefit insurance training travel expense
claim receipt department review performance bonus shift schedule sick pay certificate
statutory minimum maximum weekly monthly hours rate agreement union termination resignation
dismissal grievance appeal hearing record data protection
"""
WORDS = _VOCABULARY.split()


def _sentence(rng: random.Random, n: int) -> str:
    words = [rng.choice(WORDS) for _ in range(n)]
    if rng.random() < 0.4:
        words.insert(rng.randrange(len(words)), str(rng.randint(2, 400)))
    return " ".join(words).capitalize() + "."


def make_alce(n_answers: int, seed: int = 7) -> dict:
    rng = random.Random(seed)
    data = []
    for i in range(n_answers):
        docs = []
        for d in range(3):
            text = " ".join(_sentence(rng, rng.randint(8, 16)) for _ in range(8))
            docs.append({"title": f"Doc {i}-{d}", "text": text})
        sentences = []
        for _ in range(5):
            doc = rng.randrange(3)
            source = rng.choice(docs[doc]["text"].split(". "))
            sentences.append(f"{source.rstrip('.')} [{doc + 1}].")
        data.append(
            {
                "id": f"q{i}",
                "question": f"Question {i}?",
                "docs": docs,
                "output": " ".join(sentences),
            }
        )
    return {"args": {"model": "bench/model-x", "tag": "bench"}, "data": data}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    tmp = tempfile.mkdtemp(prefix="citeaudit-bench-")
    os.environ.setdefault("DATABASE_URL", f"sqlite:///{tmp}/bench.sqlite3")
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "audit.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from audit import services
    from audit.formats import parse_file
    from audit.models import AuditSet, Claim

    call_command("migrate", verbosity=0)
    payload = json.dumps(make_alce(args.answers)).encode()
    timings = []
    for run in range(args.runs):
        audit_set = AuditSet.objects.create(name=f"bench {time.time()} {run}")
        start = time.perf_counter()
        parsed = parse_file(payload, "bench.json")
        summary = services.answers_import(
            audit_set=audit_set, parsed=parsed, filename="bench.json", sha256="bench"
        )
        timings.append(time.perf_counter() - start)
        claims = Claim.objects.filter(answer__audit_set=audit_set).count()
        print(f"run {run + 1}: {timings[-1]:.2f} s, {summary.answers} answers, {claims} claims")
    engine = django.db.connection.vendor
    print(f"median {statistics.median(timings):.2f} s for {args.answers} answers on {engine}")


if __name__ == "__main__":
    main()
