"""Scale benchmark: a synthetic set of 100k claims (20k answers × 5 claims, 3 passages each),
imported through the real import service, opened for two reviewers, half the sheets
submitted; then server time of the review page and the lead's claims list.

    .venv/bin/python bench/bench_scale.py [--answers 20000] [--requests 40]

DATABASE_URL names the database (PostgreSQL is the production engine: a scratch database
`scale_bench` is created beside the one named); without it, a temporary SQLite file.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def _database_url(reuse: bool) -> str:
    url = os.environ.get("DATABASE_URL", "")
    if url.startswith(("postgres://", "postgresql://")):
        parts = urlsplit(url)
        admin = urlunsplit(parts._replace(path="/postgres"))
        for sql in (
            () if reuse else ("DROP DATABASE IF EXISTS scale_bench", "CREATE DATABASE scale_bench")
        ):
            subprocess.run(["psql", admin, "-qc", sql], check=True, capture_output=True)
        return urlunsplit(parts._replace(path="/scale_bench"))
    return f"sqlite:///{tempfile.mkdtemp(prefix='citeaudit-scale-')}/scale.sqlite3"


def _p95(values: list[float]) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(0.95 * len(values)))] * 1000


def _build(args: argparse.Namespace) -> tuple:
    """Import the synthetic set, open review for two reviewers, submit half of A's sheets."""
    from bench_import import make_alce
    from django.contrib.auth.models import User
    from django.db import connection

    from audit import services
    from audit.formats import parse_file
    from audit.management.workspaces import command_workspace, grant
    from audit.models import AuditSet, AuditSheet, Claim

    audit_set = AuditSet.objects.create(workspace=command_workspace(None), name="Scale")
    half = args.answers // 2
    import_times = []
    for part in range(2):
        data = make_alce(half, seed=part)
        for item in data["data"]:
            item["id"] = f"p{part}-{item['id']}"
        payload = json.dumps(data).encode()
        start = time.perf_counter()
        services.answers_import(
            audit_set=audit_set,
            parsed=parse_file(payload, f"scale{part}.json"),
            filename=f"scale{part}.json",
            sha256=str(part),
        )
        import_times.append(time.perf_counter() - start)
    claims = Claim.objects.filter(answer__audit_set=audit_set).count()
    print(
        f"import: {half} answers in {import_times[0]:.1f} s, then {import_times[1]:.1f} s "
        f"more; {claims} claims"
    )

    reviewers = []
    for name in ("scale_a", "scale_b"):
        user = User.objects.create_user(name, password="x")
        grant(user, "reviewer")
        reviewers.append(user)
    lead = User.objects.create_superuser("scale_lead", password="x")
    start = time.perf_counter()
    services.review_open(audit_set=audit_set, reviewers=reviewers, overlap=2, by=lead)
    print(f"open review (2 reviewers, overlap 2): {time.perf_counter() - start:.1f} s")

    # Half of reviewer A's claims get a submitted sheet, so lists show every status.
    rng = random.Random(3)
    claim_ids = list(Claim.objects.filter(answer__audit_set=audit_set).values_list("pk", flat=True))
    chosen = rng.sample(claim_ids, len(claim_ids) // 2)
    AuditSheet.objects.bulk_create(
        AuditSheet(
            claim_id=pk,
            reviewer=reviewers[0],
            answer_statement="x",
            judgment="supported",
            status="submitted",
        )
        for pk in chosen
    )
    # Written past the services: every derived row they imply, as a bulk writer must.
    services.set_changed(audit_set_id=audit_set.pk)
    if connection.vendor == "postgresql":
        # Planner statistics and the visibility map (index-only scans), as autovacuum would
        # have them by the time anyone reviews.
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE")

    return audit_set, reviewers, lead, claim_ids, rng


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=20000)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="time the pages on the scale_bench database a previous run left behind",
    )
    args = parser.parse_args()
    if args.reuse and not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        parser.error("--reuse needs a PostgreSQL DATABASE_URL")

    os.environ["DATABASE_URL"] = _database_url(args.reuse)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "audit.settings")
    # Served as in production: DEBUG off (with it, every query is kept in a 9,000-entry log
    # that the cyclic collector walks), and no test-environment template instrumentation
    # (it copies every template context into the response); only the test client's host.
    os.environ["DJANGO_DEBUG"] = "0"
    os.environ["DJANGO_ALLOWED_HOSTS"] = "testserver"
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from audit.models import AuditSet, Claim

    call_command("migrate", verbosity=0)
    # The server's own process setup: the app loaded, then gc.freeze (see audit/wsgi.py).
    import audit.wsgi  # noqa: F401

    if args.reuse:
        audit_set = AuditSet.objects.get(name="Scale")
        reviewers = list(
            User.objects.filter(username__in=["scale_a", "scale_b"]).order_by("username")
        )
        lead = User.objects.get(username="scale_lead")
        claim_ids = list(
            Claim.objects.filter(answer__audit_set=audit_set).values_list("pk", flat=True)
        )
        rng = random.Random(3)
        rng.sample(claim_ids, len(claim_ids) // 2)
    else:
        audit_set, reviewers, lead, claim_ids, rng = _build(args)
    reviewer_client, lead_client = Client(), Client()
    reviewer_client.force_login(reviewers[1])
    lead_client.force_login(lead)
    system = quote(audit_set.answers.values_list("system", flat=True).first())
    claims = f"/sets/{audit_set.pk}/claims/"
    answers = f"/sets/{audit_set.pk}/"
    deep = max(1, len(claim_ids) // 50 // 4)  # a quarter of the way in
    lists = {
        "claims list, page 1": claims,
        f"claims list, page {deep}": f"{claims}?page={deep}",
        "claims list, last page": f"{claims}?page=last",
        "claims list, status filter": f"{claims}?status=partly_submitted",
        "claims list, status, last page": f"{claims}?status=partly_submitted&page=last",
        "claims list, reviewer filter": f"{claims}?reviewer={reviewers[0].pk}",
        "claims list, label filter": f"{claims}?label=verified",
        "claims list, system filter": f"{claims}?system={system}",
        "claims list, text filter": f"{claims}?text=overtime",
        "claims list, text, no match": f"{claims}?text=zzzz",
        "set page, page 1": answers,
        f"set page, page {deep // 5 or 1}": f"{answers}?page={deep // 5 or 1}",
        "set page, last page": f"{answers}?page={len(claim_ids) // 5 // 50}",
        "set page, system filter": f"{answers}?system={system}",
        "set page, question filter": f"{answers}?question=Question+42",
        "set page, cited-unknown filter": f"{answers}?is_partial=true",
    }
    pages = {
        "review page": [f"/claims/{pk}/review/" for pk in rng.sample(claim_ids, args.requests)],
        **{name: [url] * args.requests for name, url in lists.items()},
    }
    print(f"{'page':30} {'n':>4} {'median ms':>10} {'p95 ms':>8} {'queries':>8}")
    for name, urls in pages.items():
        client = reviewer_client if name == "review page" else lead_client
        timings, queries = [], 0
        # Untimed warm-up: a serving worker has its templates compiled and modules loaded
        # long before, so the first request of a fresh process is not a page's time.
        for url in urls[:2]:
            client.get(url)
        for url in urls:
            with CaptureQueriesContext(connection) as ctx:
                start = time.perf_counter()
                response = client.get(url)
                timings.append(time.perf_counter() - start)
            queries = len(ctx.captured_queries)
            assert response.status_code == 200, (url, response.status_code)
        print(
            f"{name:30} {len(urls):4} {statistics.median(timings) * 1000:10.0f} "
            f"{_p95(timings):8.0f} {queries:8}"
        )
    print(f"database: {connection.vendor}")


if __name__ == "__main__":
    main()
