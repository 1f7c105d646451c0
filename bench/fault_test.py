"""Fault test: kill -9 the server in the middle of a review session, restart it, and check
that every draft save and submission the server acknowledged is still there.

    .venv/bin/python bench/fault_test.py [--reviewers 6] [--seconds 8]

DATABASE_URL may name PostgreSQL (a scratch database `citeaudit_fault` is created beside
the one named) or nothing (a temporary SQLite file). Also run by tests/test_fault.py.
"""

from __future__ import annotations

import argparse
import contextlib
import html
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import requests

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "fault-test-password"
SETUP = """
import django; django.setup()
from django.contrib.auth.models import User
from audit import services
from audit.formats import parse_file
from audit.models import AuditSet
from audit.management.workspaces import command_workspace, grant
data = open("fixtures/demo/handmade.jsonl", "rb").read()
audit_set = AuditSet.objects.create(workspace=command_workspace(None), name="Fault test")
services.answers_import(audit_set=audit_set, parsed=parse_file(data, "handmade.jsonl"),
                        filename="handmade.jsonl", sha256="x")
users = []
for i in range({reviewers}):
    user = User.objects.create_user(f"fault{{i}}", password="{password}")
    grant(user, "reviewer")
    users.append(user)
lead = User.objects.create_superuser("faultlead", password="{password}")
services.review_open(audit_set=audit_set, reviewers=users, overlap={overlap}, by=lead)
print(audit_set.pk)
"""

_VERSION = re.compile(r'name="version" value="(\d+)"')
# The CSRF token is bound to the session (no cookie holds it): every page carries it here.
_CSRF = re.compile(r'<body hx-headers=\'\{"x-csrftoken": "(\w+)"\}\'>')
_CLAIM = re.compile(r"/claims/(\d+)/review/")
_NOTES = re.compile(r'<textarea name="notes"[^>]*>(.*?)</textarea>', re.S)


@dataclass
class Acknowledged:
    drafts: dict[tuple[str, int], str] = field(default_factory=dict)  # -> notes last saved
    submitted: dict[tuple[str, int], str] = field(default_factory=dict)  # -> notes
    # The last save sent, acknowledged or not: a save in flight at the kill may have
    # committed without its answer reaching the client, and then it is what survives.
    sent: dict[tuple[str, int], str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass(frozen=True)
class Report:
    drafts: int
    submitted: int
    lost: tuple[str, ...]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _database_url() -> str:
    url = os.environ.get("DATABASE_URL", "")
    if url.startswith(("postgres://", "postgresql://")):
        parts = urlsplit(url)
        admin = urlunsplit(parts._replace(path="/postgres"))
        for sql in ("DROP DATABASE IF EXISTS citeaudit_fault", "CREATE DATABASE citeaudit_fault"):
            subprocess.run(["psql", admin, "-qc", sql], check=True, capture_output=True)
        return urlunsplit(parts._replace(path="/citeaudit_fault"))
    return f"sqlite:///{tempfile.mkdtemp(prefix='citeaudit-fault-')}/fault.sqlite3"


def _start(env: dict, port: int, workers: int = 2) -> subprocess.Popen:
    server = subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "serve",
            "--dev",  # a scratch database on loopback, with the development secret key
            f"--bind=127.0.0.1:{port}",
            f"--workers={workers}",
            "--no-migrate",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group, so kill -9 reaches every worker
    )
    for _ in range(150):
        with contextlib.suppress(requests.RequestException):
            if requests.get(f"http://127.0.0.1:{port}/login/", timeout=2).status_code == 200:
                return server
        time.sleep(0.2)
    raise RuntimeError("server did not start")


def _login(base: str, name: str) -> requests.Session:
    session = requests.Session()
    page = session.get(base + "/login/", timeout=10)
    home = session.post(
        base + "/login/",
        timeout=30,
        data={
            "username": name,
            "password": PASSWORD,
            "csrfmiddlewaretoken": _CSRF.search(page.text).group(1),
        },
    )
    # Logging in renewed the session's token: take it from the page the login led to.
    session.headers["X-CSRFToken"] = _CSRF.search(home.text).group(1)
    return session


def _review(base: str, name: str, set_pk: int, ack: Acknowledged, stop: threading.Event) -> None:
    session = _login(base, name)
    step = 0
    while not stop.is_set():
        page = session.get(f"{base}/sets/{set_pk}/continue/", timeout=10)
        found = _CLAIM.search(page.url)
        if not found:
            return
        claim = int(found.group(1))
        version = int(_VERSION.search(page.text).group(1))
        headers = {"HX-Request": "true"}
        for _ in range(3):
            step += 1
            notes = f"{name} note {step}"
            with ack.lock:
                ack.sent[(name, claim)] = notes
            saved = session.post(
                f"{base}/claims/{claim}/review/save/",
                headers=headers,
                timeout=10,
                data={
                    "version": version,
                    "judgment": "unclear",
                    "notes": notes,
                    "active_seconds": 1,
                },
            )
            if saved.status_code != 200:
                return
            with ack.lock:
                ack.drafts[(name, claim)] = notes
            version = int(_VERSION.search(saved.text).group(1))
        done = session.post(
            f"{base}/claims/{claim}/review/submit/",
            allow_redirects=False,
            timeout=10,
            data={"version": version, "judgment": "unclear", "notes": notes},
        )
        if done.status_code in (302, 303):
            with ack.lock:
                ack.submitted[(name, claim)] = notes


def run(reviewers: int = 6, seconds: float = 8.0) -> Report:
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "DJANGO_DEBUG": "0",
        "DJANGO_SETTINGS_MODULE": "audit.settings",
    }
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    setup = SETUP.format(reviewers=reviewers, password=PASSWORD, overlap=min(2, reviewers))
    out = subprocess.run(
        [sys.executable, "-c", setup], cwd=ROOT, env=env, check=True, capture_output=True, text=True
    )
    set_pk = int(out.stdout.strip().splitlines()[-1])

    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    server = _start(env, port)
    ack, stop = Acknowledged(), threading.Event()
    names = [f"fault{i}" for i in range(reviewers)]
    threads = [threading.Thread(target=_quietly, args=(base, n, set_pk, ack, stop)) for n in names]
    for t in threads:
        t.start()
    # At least `seconds`, and on a loaded machine longer, until some submission has been
    # acknowledged: a kill before any proves nothing about submissions.
    started = time.monotonic()
    while time.monotonic() - started < seconds or (
        not ack.submitted and time.monotonic() - started < seconds + 60
    ):
        time.sleep(0.2)
    os.killpg(server.pid, signal.SIGKILL)  # mid-session: requests are in flight
    server.wait()
    stop.set()
    for t in threads:
        t.join()

    server = _start(env, port)
    lost = []
    try:
        sessions = {n: _login(base, n) for n in names}
        for (name, claim), notes in sorted(ack.drafts.items()):
            page = sessions[name].get(f"{base}/claims/{claim}/review/", timeout=10).text
            shown = _NOTES.search(page)
            kept = html.unescape(shown.group(1)).strip() if shown else None
            in_flight = ack.sent.get((name, claim))
            if kept not in (notes, in_flight):
                lost.append(f"draft {name}/claim {claim}: {notes!r} or {in_flight!r}, not {kept!r}")
            elif (name, claim) in ack.submitted and "Submitted" not in page:
                lost.append(f"submission {name}/claim {claim}")
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    return Report(drafts=len(ack.drafts), submitted=len(ack.submitted), lost=tuple(lost))


def _quietly(*args) -> None:
    # The kill ends requests mid-flight; those were never acknowledged, so nothing is owed.
    with contextlib.suppress(requests.RequestException, AttributeError):
        _review(*args)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reviewers", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=8.0)
    args = parser.parse_args()
    report = run(args.reviewers, args.seconds)
    print(
        f"acknowledged before kill -9: {report.drafts} draft sheets, {report.submitted} "
        f"submissions; missing after restart: {len(report.lost)}"
    )
    for item in report.lost:
        print("  lost:", item)
    sys.exit(1 if report.lost else 0)


if __name__ == "__main__":
    main()
