"""Submit → next claim, and adjudication save → next claim, in chromium against gunicorn.

    .venv/bin/python bench/bench_review_flow.py [--claims 40] [--port 8765] [--timing]
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_flow \
        .venv/bin/python bench/bench_review_flow.py

Builds a fresh database (a temporary SQLite file, or the PostgreSQL database named, which is
dropped and created again), imports synthetic ALCE-style answers, opens them for two
reviewers and has the second one submit a different judgment on every claim beforehand, so
each is a disagreement. Then `manage.py serve` (gunicorn + whitenoise, as deployed) runs on
loopback and Debian's chromium, driven by Playwright, does what an expert does:

- reviewer: on each claim press a judgment key, wait for "Draft saved" and for the page to
  have fetched the next claim (as it does while a reviewer reads), press `s`; timed from
  the key press to the next claim shown with its scripts run (`readyState` complete);
- lead: on each disagreement choose a reason, wait for the next claim of the queue to be
  fetched, press Shift+A; timed the same way.

Prints median, p95 and max in milliseconds. Run by hand; figures go in bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

PASSWORD = "bench-flow-password"
CHROMIUM = "/usr/bin/chromium"


def prepare(claims: int) -> int:
    url = os.environ.get("DATABASE_URL", "")
    if url.startswith("postgres"):
        base, _, name = url.rpartition("/")
        subprocess.run(
            ["psql", base + "/postgres", "-qc", f"DROP DATABASE IF EXISTS {name}"], check=True
        )
        subprocess.run(["psql", base + "/postgres", "-qc", f"CREATE DATABASE {name}"], check=True)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "audit.settings")
    import django

    django.setup()
    from bench_import import make_alce
    from django.contrib.auth.models import User
    from django.core.management import call_command

    from audit import services
    from audit.formats import parse_file
    from audit.management.workspaces import command_workspace, grant
    from audit.models import AuditSet, Claim

    call_command("migrate", verbosity=0)
    audit_set = AuditSet.objects.create(workspace=command_workspace(None), name="Flow")
    # About two claims per answer: enough answers for the claims asked for.
    payload = json.dumps(make_alce(max(1, claims // 2 + 2))).encode()
    services.answers_import(
        audit_set=audit_set,
        parsed=parse_file(payload, "flow.json"),
        filename="flow.json",
        sha256="f",
    )
    first = User.objects.create_user("flow_a", password=PASSWORD)
    second = User.objects.create_user("flow_b", password=PASSWORD)
    for user in (first, second):
        grant(user, "reviewer")
    lead = User.objects.create_user("flow_lead", password=PASSWORD)
    grant(lead, "lead")
    services.review_open(audit_set=audit_set, reviewers=[first, second], overlap=2, by=lead)
    # The second reviewer has judged every claim already ("unclear"): the first one's
    # submits make disagreements for the lead.
    for claim in Claim.objects.filter(answer__audit_set=audit_set).order_by("pk"):
        sheet = services.sheet_for(claim=claim, reviewer=second)
        services.sheet_submit(
            sheet=sheet,
            user=second,
            version=sheet.version,
            data=services.SheetData(judgment="unclear"),
        )
    return audit_set.pk


def _summary(name: str, seconds: list[float]) -> str:
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return (
        f"{name:<34} n={len(ms):<4} median {statistics.median(ms):6.0f} ms   "
        f"p95 {p95:6.0f} ms   max {ms[-1]:6.0f} ms"
    )


# Where a submit's time goes, from the browser's navigation timing: the submit's POST and
# its redirect, the next page's first byte, its HTML, DOMContentLoaded and load.
PHASES = """() => {
    const n = performance.getEntriesByType('navigation')[0];
    const at = (t) => Math.round(t - n.startTime);
    return `post+redirect ${Math.round(n.redirectEnd - n.redirectStart)} ms, first byte `
        + `${at(n.responseStart)}, html ${at(n.responseEnd)}, `
        + `dom ${at(n.domContentLoadedEventEnd)}, load ${at(n.loadEventEnd)}`;
}"""


# The next claim's page fetched ahead (or no next claim to fetch).
HELD = """() => {
    const next = document.getElementById('next-claim');
    if (!next) return true;
    const url = next.getAttribute('href');
    return performance.getEntriesByType('resource').some(
        (e) => e.name.endsWith(url) && e.initiatorType === 'fetch' && e.responseEnd > 0);
}"""

# The draft's save confirmed: the status line says so.
SAVED = """() => document.querySelector('#save-status[data-state=saved]') !== null"""

# The same for the lead: the claim after this one in the queue, fetched ahead.
HELD_GOLD = """() => {
    const url = document.getElementById('adjudication-form').dataset.nextUrl;
    if (!url) return true;
    return performance.getEntriesByType('resource').some(
        (e) => e.name.endsWith(url) && e.initiatorType === 'fetch' && e.responseEnd > 0);
}"""

# Another page than `before` is in the window, parsed and its scripts run: the next claim
# loaded, or shown in place of the one submitted.
SHOWN = """(before) => location.pathname !== before && document.readyState === 'complete'
    && document.body !== null && document.body.querySelector('main') !== null"""


def run(base: str, set_pk: int, claims: int, timing: bool = False) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])

        def signed_in(name: str):
            page = browser.new_context(viewport={"width": 1440, "height": 900}).new_page()
            page.goto(base + "/login/")
            page.fill("input[name=username]", name)
            page.fill("input[name=password]", PASSWORD)
            page.click("button[type=submit]")
            page.wait_for_load_state("load")
            return page

        page = signed_in("flow_a")
        page.goto(f"{base}/sets/{set_pk}/continue/")
        submits, drafts = [], []
        for _ in range(claims):
            page.wait_for_selector("html[data-scripts=ready]", state="attached")
            start = time.perf_counter()
            page.keyboard.press("3")
            page.wait_for_function(SAVED, polling=5)
            drafts.append(time.perf_counter() - start)
            # A reviewer reads for seconds; the page fetches the next claim meanwhile.
            page.wait_for_function(HELD)
            before = page.evaluate("location.pathname")
            start = time.perf_counter()
            page.keyboard.press("s")
            page.wait_for_function(SHOWN, arg=before, polling=5)
            submits.append(time.perf_counter() - start)
            if timing:
                print(page.evaluate(PHASES))
            if "/review/" not in page.url:
                break

        page = signed_in("flow_lead")
        page.goto(f"{base}/sets/{set_pk}/adjudication/")
        page.locator("#results tbody tr a", has_text="Adjudicate").first.click()
        page.wait_for_load_state("load")
        saves = []
        while "/adjudicate/" in page.url and len(saves) < claims:
            page.wait_for_selector("#adjudication-form")
            page.select_option("#id_reason", "reviewer_error")
            page.focus("#id_flag")
            page.wait_for_function(HELD_GOLD)
            before = page.evaluate("location.pathname")
            start = time.perf_counter()
            page.keyboard.press("Shift+A")
            page.wait_for_function(SHOWN, arg=before, polling=5)
            saves.append(time.perf_counter() - start)
        browser.close()
    print(_summary("judgment key → draft saved", drafts))
    print(_summary("submit → next claim shown", submits))
    print(_summary("adjudication save → next claim shown", saves))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=int, default=40)
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--timing", action="store_true", help="print each submit's phases")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        if not os.environ.get("DATABASE_URL"):
            os.environ["DATABASE_URL"] = f"sqlite:///{tmp}/flow.sqlite3"
        set_pk = prepare(args.claims)
        # As deployed: production settings, so static files carry hashed names and are
        # cached for good; plain http on loopback (chromium keeps secure cookies there).
        server_env = {
            **os.environ,
            "DJANGO_PRODUCTION": "1",
            "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
            "DJANGO_SSL_REDIRECT": "0",
        }
        server = subprocess.Popen(
            [
                sys.executable,
                "manage.py",
                "serve",
                "--no-migrate",
                f"--bind=127.0.0.1:{args.port}",
            ],
            cwd=ROOT,
            env=server_env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            base = f"http://127.0.0.1:{args.port}"
            import requests

            for _ in range(100):
                try:
                    requests.get(base + "/login/", timeout=2)
                    break
                except requests.RequestException:
                    time.sleep(0.2)
            print(
                f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
                f"load {os.getloadavg()[0]:.1f}, "
                f"database {os.environ['DATABASE_URL'].split(':')[0]}"
            )
            run(base, set_pk, args.claims, args.timing)
        finally:
            server.terminate()
            server.wait(timeout=30)


if __name__ == "__main__":
    main()
