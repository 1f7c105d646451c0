"""Load test: 50 reviewers doing the real review flow against gunicorn on PostgreSQL.

    .venv/bin/python bench/load_test.py [--reviewers 50] [--seconds 60]

Creates a fresh PostgreSQL database on 127.0.0.1 (loopback only), imports a synthetic set,
opens it for review, starts `manage.py serve` (gunicorn) and lets every virtual reviewer
open the next claim, toggle evidence (autosaves) and submit, for a bounded time. Then it
checks the database: every sheet a client saw submitted is submitted, with that client's
judgment, and no sheet belongs to anyone but its reviewer. Prints requests/s, p50/p95/p99
and errors. Exits non-zero when anything was lost or overwritten.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

DB = "scale_load"
PG = "postgres://postgres@127.0.0.1:5432"
PASSWORD = "load-test-password"
# Pause between a reviewer's actions (reading, deciding); 0 makes it a stress test.
THINK_SECONDS = 0.0
JUDGMENTS = ["supported", "partially_supported", "not_supported", "contradicted", "unclear"]

_VERSION = re.compile(r'name="version" value="(\d+)"')
# The CSRF token is bound to the session (no cookie holds it): every page carries it here.
_CSRF = re.compile(r'<body hx-headers=\'\{"x-csrftoken": "(\w+)"\}\'>')
_EVIDENCE = re.compile(r'name="evidence" value="(\d+:\d+:\d+)"')
_CLAIM = re.compile(r"/claims/(\d+)/review/")


def prepare(answers: int, reviewers: int) -> int:
    subprocess.run(["psql", PG + "/postgres", "-qc", f"DROP DATABASE IF EXISTS {DB}"], check=True)
    subprocess.run(["psql", PG + "/postgres", "-qc", f"CREATE DATABASE {DB}"], check=True)
    os.environ["DATABASE_URL"] = f"{PG}/{DB}"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "audit.settings")
    import django

    django.setup()
    from bench_import import make_alce
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from audit import services
    from audit.formats import parse_file
    from audit.management.workspaces import command_workspace, grant
    from audit.models import AuditSet

    call_command("migrate", verbosity=0)
    audit_set = AuditSet.objects.create(workspace=command_workspace(None), name="Load test")
    payload = json.dumps(make_alce(answers)).encode()
    services.answers_import(
        audit_set=audit_set,
        parsed=parse_file(payload, "load.json"),
        filename="load.json",
        sha256="load",
    )
    users = []
    for i in range(reviewers):
        user = User.objects.create_user(f"load{i:02d}", password=PASSWORD)
        grant(user, "reviewer")
        users.append(user)
    lead = User.objects.create_superuser("loadlead", password=PASSWORD)
    services.review_open(audit_set=audit_set, reviewers=users, overlap=2, by=lead)
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")  # what autovacuum does within a minute of a bulk load
    return audit_set.pk


class Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latencies: dict[str, list[float]] = defaultdict(list)
        self.errors: list[str] = []
        self.submitted: dict[int, tuple[str, str]] = {}  # sheet key -> (user, judgment)

    def record(self, kind: str, seconds: float) -> None:
        with self.lock:
            self.latencies[kind].append(seconds)


def login(base: str, name: str) -> requests.Session:
    """A logged-in session; logins (one slow password hash each) happen before the clock."""
    session = requests.Session()
    page = session.get(base + "/login/", timeout=30)
    response = session.post(
        base + "/login/",
        data={
            "username": name,
            "password": PASSWORD,
            "csrfmiddlewaretoken": _CSRF.search(page.text).group(1),
        },
        timeout=30,
    )
    response.raise_for_status()
    # Logging in renewed the session's token: take it from the page the login led to.
    session.headers["X-CSRFToken"] = _CSRF.search(response.text).group(1)
    return session


def reviewer(
    s: requests.Session, base: str, name: str, set_pk: int, stop: float, stats: Stats, seed: int
) -> None:
    # A failed request is already counted as an error; that virtual reviewer stops.
    with contextlib.suppress(requests.RequestException):
        _review_until(s, base, name, set_pk, stop, stats, seed)


def _review_until(
    s: requests.Session, base: str, name: str, set_pk: int, stop: float, stats: Stats, seed: int
) -> None:
    rng = random.Random(seed)
    think = THINK_SECONDS

    def call(kind: str, method: str, url: str, **kw):
        start = time.perf_counter()
        try:
            response = s.request(method, base + url, timeout=30, **kw)
        except requests.RequestException as error:
            with stats.lock:
                stats.errors.append(f"{kind} {url}: {type(error).__name__}")
            raise
        stats.record(kind, time.perf_counter() - start)
        if response.status_code >= 500 or response.status_code in (403, 404, 409):
            with stats.lock:
                stats.errors.append(f"{kind} {url}: HTTP {response.status_code}")
        return response

    # Reviewers arrive spread over a pause, not all in the same millisecond (that burst of
    # 50 simultaneous first requests would be a different test). The first claim comes
    # through the set's "continue" link; after that, as in the browser, from the page that
    # a submit redirects to.
    time.sleep(rng.uniform(0, 2 * think))
    page = call("open-next", "GET", f"/sets/{set_pk}/continue/")
    while time.time() < stop:
        found = _CLAIM.search(page.url)
        if not found:
            return  # nothing left to review
        claim = found.group(1)
        version = int(_VERSION.search(page.text).group(1))
        sentences = _EVIDENCE.findall(page.text)
        headers = {"HX-Request": "true"}
        chosen: list[str] = []
        judgment = rng.choice(JUDGMENTS)
        for _ in range(2):  # toggle evidence: each toggle autosaves
            time.sleep(rng.uniform(0, 2 * think))
            if sentences:
                chosen = sorted(set(chosen) ^ {rng.choice(sentences)})
            saved = call(
                "autosave",
                "POST",
                f"/claims/{claim}/review/save/",
                headers=headers,
                data={
                    "version": version,
                    "judgment": judgment,
                    "evidence": chosen,
                    "verification_worthy": "on",
                    "active_seconds": 3,
                },
            )
            match = _VERSION.search(saved.text)
            if saved.status_code != 200 or not match:
                break
            version = int(match.group(1))
        if not chosen and sentences:
            chosen = [sentences[0]]
        done = call(
            "submit",
            "POST",
            f"/claims/{claim}/review/submit/",
            allow_redirects=False,
            data={
                "version": version,
                "judgment": judgment,
                "evidence": chosen,
                "verification_worthy": "on",
                "active_seconds": 2,
            },
        )
        if done.status_code in (302, 303):
            with stats.lock:
                stats.submitted[(int(claim), name)] = judgment
            page = call("open-next", "GET", done.headers["Location"])
        else:
            if done.status_code < 500:
                with stats.lock:
                    stats.errors.append(f"submit claim {claim}: HTTP {done.status_code}")
            page = call("open-next", "GET", f"/sets/{set_pk}/continue/")


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reviewers", type=int, default=50)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--answers", type=int, default=2000)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--workers", type=int, default=5)
    parser.add_argument("--threads", type=int, help="default: `manage.py serve`'s")
    parser.add_argument("--think", type=float, default=0.0, help="mean seconds between actions")
    args = parser.parse_args()
    global THINK_SECONDS
    THINK_SECONDS = args.think

    set_pk = prepare(args.answers, args.reviewers)
    env = {**os.environ, "DJANGO_DEBUG": "0", "DATABASE_URL": f"{PG}/{DB}"}
    server = subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "serve",
            "--dev",  # a scratch database on loopback, with the development secret key
            f"--bind=127.0.0.1:{args.port}",
            f"--workers={args.workers}",
            *([f"--threads={args.threads}"] if args.threads else []),
            "--no-migrate",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{args.port}"
    try:
        for _ in range(100):
            try:
                requests.get(base + "/login/", timeout=5)
                break
            except requests.RequestException:
                time.sleep(0.2)
        names = [f"load{i:02d}" for i in range(args.reviewers)]
        sessions = [login(base, name) for name in names]
        stats = Stats()
        stop = time.time() + args.seconds
        threads = [
            threading.Thread(
                target=reviewer, args=(sessions[i], base, name, set_pk, stop, stats, i)
            )
            for i, name in enumerate(names)
        ]
        started = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.perf_counter() - started
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=30)

    from django.db.models import Exists, OuterRef

    from audit.models import Assignment, AuditSheet

    lost = []
    for (claim, name), judgment in stats.submitted.items():
        sheet = AuditSheet.objects.filter(claim_id=claim, reviewer__username=name).first()
        if sheet is None or sheet.status != "submitted" or sheet.judgment != judgment:
            lost.append((claim, name))
    assigned = Assignment.objects.filter(claim=OuterRef("claim"), reviewer=OuterRef("reviewer"))
    foreign = AuditSheet.objects.filter(~Exists(assigned))
    everything = [x for v in stats.latencies.values() for x in v]
    total = len(everything)
    print(
        f"{args.reviewers} reviewers, {elapsed:.0f} s, {total} requests, "
        f"{total / elapsed:.1f} req/s, errors {len(stats.errors)}"
    )
    print(f"{'request':12} {'n':>6} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}")
    for kind, values in sorted(stats.latencies.items()) + [("review flow", everything)]:
        print(
            f"{kind:12} {len(values):6} {percentile(values, 0.5):8.0f} "
            f"{percentile(values, 0.95):8.0f} {percentile(values, 0.99):8.0f}"
        )
    print(
        f"submitted by clients {len(stats.submitted)}, lost or changed {len(lost)}, "
        f"sheets not owned by an assignee {foreign.count()}"
    )
    for error in stats.errors[:10]:
        print("  error:", error)
    median = statistics.median(everything) * 1000 if everything else 0
    print(f"median {median:.0f} ms")
    sys.exit(1 if lost or foreign.exists() or stats.errors else 0)


if __name__ == "__main__":
    main()
