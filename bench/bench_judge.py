"""An automatic judge's run against the local fake endpoint (tests/fake_llm.py): how the
thread pool spreads requests that each take a fixed time, and the calibration page's cost.

Builds a throwaway SQLite database with `--claims` claims (10 per answer) and gold on every
claim, then runs a judge version over all of them at each `--concurrency`, the endpoint
answering every request after `--delay` seconds; prints wall time, claims per second and
tokens per 1,000 claims, then times the calibration (overall and its four splits).

    .venv/bin/python bench/bench_judge.py [--claims 200] [--delay 0.05] [--concurrency 1 8]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

PASSAGES = [
    {
        "title": "Leave",
        "text": "Full-time employees get 25 days of paid leave. Up to 5 days carry over.",
    }
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--claims", type=int, default=200)
    parser.add_argument("--delay", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["DATABASE_URL"] = f"sqlite:///{Path(tmp) / 'bench.sqlite3'}"
        os.environ["CITEAUDIT_CACHE_DIR"] = str(Path(tmp) / "cache")
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "audit.settings")
        # The fake endpoint is on loopback, which the server refuses unless allowed.
        os.environ["CITEAUDIT_EGRESS_ALLOW"] = "127.0.0.1"
        import django

        django.setup()
        from django.conf import settings
        from django.contrib.auth.models import User
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        from audit import services
        from audit.formats import parse_file
        from audit.management.workspaces import command_workspace
        from audit.models import Adjudication, AuditSet, Claim, JudgeRun
        from audit.selectors.judges import judge_calibration, run_cost
        from audit.services import judges
        from tests.fake_llm import FakeLLM

        lead = User.objects.create_user("lead", password="x")
        audit_set = AuditSet.objects.create(workspace=command_workspace(None), name="Bench")
        lines = []
        for i in range(args.claims // 10):
            answer = " ".join(f"Employees get {20 + k} days of leave. [1]" for k in range(10))
            lines.append(
                json.dumps(
                    {
                        "question_id": f"q{i}",
                        "question": "How much leave?",
                        "system": f"sys-{i % 2}",
                        "answer_id": f"a{i}",
                        "answer": answer,
                        "passages": PASSAGES,
                    }
                )
            )
        data = ("\n".join(lines) + "\n").encode()
        services.answers_import(
            audit_set=audit_set,
            parsed=parse_file(data, "bench.jsonl"),
            filename="bench.jsonl",
            sha256=hashlib.sha256(data).hexdigest(),
        )
        claims = list(Claim.objects.filter(answer__audit_set=audit_set))
        Adjudication.objects.bulk_create(
            Adjudication(
                claim=c,
                judgment="supported" if c.pk % 3 else "not_supported",
                source="edited",
                lead=lead,
            )
            for c in claims
        )
        fake = FakeLLM().start()
        fake.delay_seconds = args.delay
        fake.default = {"judgment": "supported", "evidence": [1], "rationale": "S1."}
        print(f"{len(claims)} claims, endpoint delay {args.delay:.3f} s per request")
        for concurrency in args.concurrency:
            judge = judges.judge_create(
                audit_set=audit_set,
                fields={
                    "name": f"c{concurrency}",
                    "base_url": fake.base_url,
                    "model": "fake",
                    "max_concurrency": concurrency,
                    "min_kappa": 0.0,
                    # The lowest threshold the operator's floor lets a lead write.
                    "min_gold": settings.JUDGE_MIN_GOLD_FLOOR,
                },
                user=lead,
            )
            run = judges.judge_run_start(judge=judge, subset=JudgeRun.Subset.ALL, user=lead)
            started = time.perf_counter()
            services.job_run(job_id=run.job_id)
            wall = time.perf_counter() - started
            cost = run_cost(run=run)
            print(
                f"concurrency {concurrency:>2}: {wall:6.2f} s, {cost.judged / wall:6.1f} claims/s, "
                f"{cost.errors} errors, {cost.tokens_per_1000} tokens per 1,000 claims"
            )
        started = time.perf_counter()
        judge_calibration(version=run.version)
        first = time.perf_counter() - started
        print(f"calibration with splits (first, imports scikit-learn): {first:.2f} s")
        started = time.perf_counter()
        judge_calibration(version=run.version)
        print(f"calibration with splits (again): {time.perf_counter() - started:.2f} s")
        fake.stop()


if __name__ == "__main__":
    main()
