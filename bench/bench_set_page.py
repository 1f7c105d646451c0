"""The set page right after a change: a set built as bench_scale.py builds it, then rounds
of one write through the review services (a reviewer submits a sheet) followed by the
lead's visit to the set page, whose release summary must show that change (it sums the
release facts that services.claims_changed rewrote). Visits with no change in between are
timed too.

    .venv/bin/python bench/bench_set_page.py [--answers 4000] [--rounds 10]

DATABASE_URL as for bench_scale.py (a scratch `scale_bench` database on PostgreSQL, else a
temporary SQLite file).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from bench_scale import _build, _database_url, _p95  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=4000)
    parser.add_argument("--rounds", type=int, default=10)
    args = parser.parse_args()
    os.environ["DATABASE_URL"] = _database_url(False)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "audit.settings")
    os.environ["DJANGO_DEBUG"] = "0"
    os.environ["DJANGO_ALLOWED_HOSTS"] = "testserver"
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from audit import services
    from audit.models import AuditSheet, Claim

    call_command("migrate", verbosity=0)
    import audit.wsgi  # noqa: F401

    audit_set, reviewers, lead, claim_ids, rng = _build(args)
    client = Client()
    client.force_login(lead)
    url = f"/sets/{audit_set.pk}/"
    client.get(url)  # untimed: templates compiled, modules loaded

    def visit() -> float:
        start = time.perf_counter()
        response = client.get(url)
        assert response.status_code == 200
        return time.perf_counter() - start

    warm = [visit() for _ in range(args.rounds)]
    pending = [
        pk
        for pk in rng.sample(claim_ids, args.rounds * 4)
        if not AuditSheet.objects.filter(claim_id=pk, reviewer=reviewers[1]).exists()
    ][: args.rounds]
    writes, after = [], []
    for pk in pending:
        sheet = services.sheet_for(claim=Claim.objects.get(pk=pk), reviewer=reviewers[1])
        start = time.perf_counter()
        services.sheet_submit(
            sheet=sheet,
            user=reviewers[1],
            version=sheet.version,
            data=services.SheetData(judgment="unclear"),
        )
        writes.append(time.perf_counter() - start)
        after.append(visit())
    claims = len(claim_ids)
    print(f"{claims} claims, {connection.vendor}")
    print(f"{'':34} {'n':>4} {'median ms':>10} {'p95 ms':>8}")
    for name, timings in (
        ("set page, warm", warm),
        ("sheet submit (claims_changed)", writes),
        ("set page, first after a change", after),
    ):
        print(
            f"{name:34} {len(timings):4} {statistics.median(timings) * 1000:10.0f} "
            f"{_p95(timings):8.0f}"
        )


if __name__ == "__main__":
    main()
