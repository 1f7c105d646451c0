"""Race check: conflicting requests sent at the same moment to `manage.py serve` (gunicorn,
several workers) on loopback; counts the answers, which should all be successes or 409s.

    .venv/bin/python bench/race_check.py [--workers 3] [--rounds 30]

DATABASE_URL may name PostgreSQL (a scratch database `citeaudit_race` is created beside the
one named) or nothing (a temporary SQLite file). Four races, each `--rounds` times: four
reviewers saving their own sheets of one claim, six tabs saving one sheet with the same
version, a reopen against the other reviewer's last submit, two leads saving one claim's gold.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from collections.abc import Callable
from functools import partial
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from fault_test import PASSWORD, _free_port, _login, _start  # noqa: E402

SETUP = """
import django; django.setup()
from django.contrib.auth.models import User
from audit import services
from audit.models import AuditSet
from audit.management.workspaces import command_workspace, grant
from tests.factories import answer_with_claims
def person(name, role):
    user = User.objects.create_user(name, password="{password}")
    grant(user, role)
    return user
people = [person(f"race{{i}}", "reviewer") for i in range(4)]
leads = [person(f"racelead{{i}}", "lead") for i in range(2)]
sets = []
for overlap in (4, 2, 2, 2):
    audit_set = AuditSet.objects.create(
        workspace=command_workspace(None), name=f"Race {{len(sets)}}", auto_gold=True
    )
    _, claims = answer_with_claims(audit_set, {rounds})
    services.review_open(audit_set=audit_set, reviewers=people[:overlap], overlap=overlap,
                         by=leads[0])
    sets.append(claims)
a, b = people[:2]
def submit(claim, user, judgment):
    sheet = services.sheet_for(claim=claim, reviewer=user)
    return services.sheet_submit(sheet=sheet, user=user, version=sheet.version,
                                 data=services.SheetData(judgment=judgment))
for claim in sets[2]:
    submit(claim, a, "not_supported")
    services.sheet_for(claim=claim, reviewer=b)
takes = [(submit(c, a, "not_supported").pk, submit(c, b, "contradicted").pk) for c in sets[3]]
for claims in sets[:2]:
    for claim in claims:
        for user in people:
            if claim.assignments.filter(reviewer=user).exists():
                services.sheet_for(claim=claim, reviewer=user)
import json
print(json.dumps([[[c.pk for c in claims] for claims in sets], takes]))
"""


def _database_url() -> str:
    url = os.environ.get("DATABASE_URL", "")
    if url.startswith(("postgres://", "postgresql://")):
        parts = urlsplit(url)
        admin = urlunsplit(parts._replace(path="/postgres"))
        for sql in ("DROP DATABASE IF EXISTS citeaudit_race", "CREATE DATABASE citeaudit_race"):
            subprocess.run(["psql", admin, "-qc", sql], check=True, capture_output=True)
        return urlunsplit(parts._replace(path="/citeaudit_race"))
    return f"sqlite:///{tempfile.mkdtemp(prefix='citeaudit-race-')}/race.sqlite3"


def _tab(session: requests.Session) -> requests.Session:
    tab = requests.Session()
    tab.cookies.update(session.cookies)
    tab.headers.update(session.headers)
    return tab


def _at_once(*sends: Callable[[], requests.Response]) -> list[int]:
    barrier = threading.Barrier(len(sends))
    statuses = [0] * len(sends)

    def run(index: int, send: Callable[[], requests.Response]) -> None:
        barrier.wait()
        try:
            statuses[index] = send().status_code
        except requests.RequestException:
            statuses[index] = -1  # no answer at all

    threads = [threading.Thread(target=run, args=pair) for pair in enumerate(sends)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return statuses


_VERSION = re.compile(r'name="version" value="(\d+)"')


def _version(session: requests.Session, base: str, claim: int) -> int:
    return int(_VERSION.search(session.get(f"{base}/claims/{claim}/review/").text).group(1))


def run(workers: int, rounds: int) -> dict[str, Counter]:
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "DJANGO_DEBUG": "0",
        "DJANGO_SETTINGS_MODULE": "audit.settings",
        "PYTHONPATH": str(ROOT),
    }
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    out = subprocess.run(
        [sys.executable, "-c", SETUP.format(password=PASSWORD, rounds=rounds)],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    ids, takes = json.loads(out.stdout.strip().splitlines()[-1])
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    server = _start(env, port, workers=workers)
    counts: dict[str, Counter] = {}
    try:
        people = [_login(base, f"race{i}") for i in range(4)]
        leads = [_login(base, f"racelead{i}") for i in range(2)]
        a, b = people[:2]

        counts["4 reviewers, own sheets"] = Counter()
        for claim in ids[0]:
            versions = [_version(p, base, claim) for p in people]
            counts["4 reviewers, own sheets"].update(
                _at_once(
                    *(
                        partial(
                            p.post,
                            f"{base}/claims/{claim}/review/save/",
                            data={"version": v, "notes": f"reviewer {i}"},
                            headers={"HX-Request": "true"},
                            timeout=60,
                        )
                        for i, (p, v) in enumerate(zip(people, versions, strict=True))
                    )
                )
            )

        counts["6 tabs, one sheet"] = Counter()
        tabs = [a] + [_tab(a) for _ in range(5)]
        claim = ids[1][0]
        for _ in range(rounds):
            version = _version(a, base, claim)
            counts["6 tabs, one sheet"].update(
                _at_once(
                    *(
                        partial(
                            tab.post,
                            f"{base}/claims/{claim}/review/save/",
                            data={"version": version, "notes": f"tab {i}"},
                            headers={"HX-Request": "true"},
                            timeout=60,
                        )
                        for i, tab in enumerate(tabs)
                    )
                )
            )

        counts["reopen vs last submit"] = Counter()
        for claim in ids[2]:
            version = _version(b, base, claim)
            counts["reopen vs last submit"].update(
                _at_once(
                    partial(
                        a.post,
                        f"{base}/claims/{claim}/review/reopen/",
                        allow_redirects=False,
                        timeout=60,
                    ),
                    partial(
                        b.post,
                        f"{base}/claims/{claim}/review/submit/",
                        data={"version": version, "judgment": "not_supported"},
                        allow_redirects=False,
                        timeout=60,
                    ),
                )
            )

        counts["2 leads, one claim"] = Counter()
        for claim, sheets in zip(ids[3], takes, strict=True):
            counts["2 leads, one claim"].update(
                _at_once(
                    *(
                        partial(
                            lead.post,
                            f"{base}/claims/{claim}/adjudicate/save/",
                            data={"version": 0, "take": sheet, "reason": "other"},
                            allow_redirects=False,
                            timeout=60,
                        )
                        for lead, sheet in zip(leads, sheets, strict=True)
                    )
                )
            )
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    return counts


def _fine(status: int) -> bool:
    return 200 <= status < 400 or status == 409


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=30)
    args = parser.parse_args()
    counts = run(args.workers, args.rounds)
    bad = 0
    for race, statuses in counts.items():
        shown = ", ".join(f"{n} × {status}" for status, n in sorted(statuses.items()))
        print(f"{race}: {shown}")
        bad += sum(n for status, n in statuses.items() if not _fine(status))
    print(f"answers that were neither a success nor a 409: {bad}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
