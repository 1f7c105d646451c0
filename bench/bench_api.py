"""API benchmark: the claims list at 100k claims (first page, a page deep in the set, the
status, system and label filters) and pulling all gold of the set as JSON Lines, through the API
with a lead's token, in this process (server time, no network). Run by hand, never in CI:

    .venv/bin/python bench/bench_api.py [--answers 20000] [--requests 40] [--reuse FOLDER]
    DATABASE_URL=postgres://… .venv/bin/python bench/bench_api.py --answers 0 --import-answers 10000

--answers 20000 is 100k claims (5 per answer), 200k submitted sheets and gold on half the
claims, written by bench_export.build into a temporary SQLite file (DATABASE_URL
overrides, e.g. a PostgreSQL database of your own). Prints medians and p95 in ms, the gold
pull's seconds, lines and this process's peak RSS before and after it.

--import-answers N writes N ALCE-style answers (5 claims each, bench_import.make_alce) to a
file and imports it twice: uploaded through the API as a job that a `manage.py db_worker
--batch` process runs (timed from the upload to the job's end, as a client polling it
sees), and with `manage.py import_answers` (bench_import's CLI run); claims per second of
each.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_export import SET_NAME, _peak_rss_mb, _setup, build  # noqa: E402
from bench.bench_import import _run_cli, make_alce  # noqa: E402


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def _now() -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return f"{datetime.now(UTC):%Y-%m-%d %H:%M:%S} UTC, load {load}"


def run(args: argparse.Namespace) -> None:
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from audit import services
    from audit.api.base import encode_cursor
    from audit.models import AuditSet, Claim
    from audit.services.planner import planner_statistics_refresh

    call_command("migrate", verbosity=0)
    if args.reuse and AuditSet.objects.filter(name=SET_NAME).exists():
        print(f"reusing the built set ({_now()}) on {connection.vendor}")
    else:
        print(f"building {args.answers} answers ({_now()}) on {connection.vendor}", flush=True)
        start = time.perf_counter()
        n_claims, n_sheets = build(args.answers)
        services.set_changed(audit_set_id=AuditSet.objects.get(name=SET_NAME).pk)
        planner_statistics_refresh(rows=n_claims + n_sheets)
        seconds = time.perf_counter() - start
        print(f"built {n_claims} claims, {n_sheets} sheets in {seconds:.0f} s")
    audit_set = AuditSet.objects.get(name=SET_NAME)
    _token, text = services.token_create(
        user=User.objects.get(username="lead"), name="bench", scope="read"
    )
    client = Client(SERVER_NAME="localhost", HTTP_AUTHORIZATION=f"Bearer {text}")
    claims = Claim.objects.filter(answer__audit_set=audit_set).order_by("pk")
    ids = list(claims.values_list("pk", flat=True))
    url = f"/api/v1/sets/{audit_set.pk}/claims"
    cases = {
        "first page (50)": {},
        "page at the middle (cursor)": {"cursor": encode_cursor(ids[len(ids) // 2])},
        "last page (cursor)": {"cursor": encode_cursor(ids[-30])},
        "status=adjudicated": {"status": "adjudicated"},
        # A status and a label no claim of the built set has: a filter that matches
        # nothing must not read the whole set either.
        "status=in_review (none)": {"status": "in_review"},
        "system=bench": {"system": "bench"},
        "label=verified": {"label": "verified"},
        "label=unknown (none)": {"label": "unknown"},
        "label=verified, cursor": {
            "label": "verified",
            "cursor": encode_cursor(ids[len(ids) // 2]),
        },
        "limit=500": {"limit": 500},
    }
    print(f"claims list ({_now()}), {args.requests} requests after 2 untimed:")
    for name, query in cases.items():
        times = []
        for i in range(args.requests + 2):
            start = time.perf_counter()
            response = client.get(url, query)
            elapsed = time.perf_counter() - start
            assert response.status_code == 200, response.content[:300]
            if i >= 2:
                times.append(elapsed * 1000)
        print(f"  {name:30} median {statistics.median(times):6.1f} ms, p95 {_p95(times):6.1f} ms")

    before = _peak_rss_mb()
    start = time.perf_counter()
    response = client.get(f"/api/v1/sets/{audit_set.pk}/gold")
    lines = size = 0
    for piece in response.streaming_content:
        lines += piece.count(b"\n")
        size += len(piece)
    seconds = time.perf_counter() - start
    print(
        f"gold as JSON Lines ({_now()}): {lines} lines, {size / 1e6:.1f} MB in {seconds:.1f} s; "
        f"peak RSS {before:.0f} MB before, {_peak_rss_mb():.0f} MB after"
    )


def import_side_by_side(n_answers: int, folder: str) -> None:
    import json
    import resource
    import subprocess

    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from audit import services
    from audit.management.workspaces import grant
    from audit.models import Claim, Job

    call_command("migrate", verbosity=0)
    path = Path(folder) / "alce.json"
    path.write_text(json.dumps(make_alce(n_answers)))
    lead, _ = User.objects.get_or_create(username="import-lead")
    # A lead of the default workspace, where the import's new set is made.
    grant(lead, "lead")
    _token, text = services.token_create(user=lead, name="bench", scope="write")
    client = Client(SERVER_NAME="localhost", HTTP_AUTHORIZATION=f"Bearer {text}")
    print(f"import of {n_answers} answers ({_now()}) on {connection.vendor}", flush=True)
    start = time.perf_counter()
    with open(path, "rb") as handle:
        response = client.post("/api/v1/imports", {"file": handle, "new_set_name": "api-import"})
    assert response.status_code == 202, response.content[:300]
    job_id = response.json()["id"]
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    worker = subprocess.run(
        [sys.executable, "manage.py", "db_worker", "--batch", "--no-startup-delay"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "DJANGO_DEBUG": "0"},
    )
    api_seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # CPU of the worker process: on a shared machine, throughput is read off it.
    worker_cpu = (after.ru_utime + after.ru_stime) - (children.ru_utime + children.ru_stime)
    job = client.get(f"/api/v1/jobs/{job_id}").json()
    assert job["status"] == "succeeded", (job, worker.stderr[-2000:])
    claims = Claim.objects.filter(answer__audit_set__name="api-import").count()
    print(
        f"  API job: {api_seconds:.1f} s, {claims / api_seconds:.0f} claims/s ({claims} claims); "
        f"worker CPU {worker_cpu:.1f} s, {claims / worker_cpu:.0f} claims per CPU second"
    )
    assert Job.objects.filter(pk=job_id, status="succeeded").exists()
    took, rss, _kids, cpu, _own, _out = _run_cli(path, "cli-import", None)
    claims = Claim.objects.filter(answer__audit_set__name="cli-import").count()
    print(
        f"  CLI:     {took:.1f} s, {claims / took:.0f} claims/s ({claims} claims), {rss:.0f} MB; "
        f"CPU {cpu:.1f} s, {claims / cpu:.0f} claims per CPU second ({_now()})"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--answers", type=int, default=20000)
    parser.add_argument("--requests", type=int, default=40)
    parser.add_argument("--import-answers", type=int, default=0)
    parser.add_argument(
        "--reuse", help="keep the SQLite file in this folder and measure its set if it is built"
    )
    args = parser.parse_args()
    tmp = tempfile.mkdtemp(prefix="citeaudit-api-bench-")
    folder = args.reuse or tmp
    try:
        _setup(os.environ.get("DATABASE_URL", f"sqlite:///{folder}/bench.sqlite3"))
        if args.answers:
            run(args)
        if args.import_answers:
            import_side_by_side(args.import_answers, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
