"""The release gate run the way a user runs it: `python3 audit/gate.py ...` from the checkout's
root, as the README shows, and the installed `citeaudit-gate` command, against a live server.
A gate that crashes exits 3 (error), never 1, the code CI reads as "the system fails"."""

from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from audit import services
from audit.models import AuditSet, Claim
from tests.conftest import FIXTURES, ROOT, gold_by_agreement, import_file
from tests.factories import UserFactory, default_workspace

HANDMADE = FIXTURES / "demo" / "handmade.jsonl"
SYSTEM = "handmade v1"
INSTALLED_GATE = Path(sys.executable).parent / "citeaudit-gate"


@pytest.fixture
def nightly(role_groups, transactional_db):
    lead = UserFactory(username="lead", role="lead")
    audit_set = AuditSet.objects.create(
        workspace=default_workspace(), name="Nightly eval", created_by=lead
    )
    import_file(audit_set, HANDMADE)
    services.criteria_update(audit_set=audit_set, criteria=[{"kind": "no_contradicted"}], by=lead)
    _token, text = services.token_create(user=lead, name="ci", scope="read")
    return {"set": audit_set, "token": text, "lead": lead}


def _env() -> dict[str, str]:
    # A CI runner's environment: no Django settings, no token unless passed.
    return {
        k: v
        for k, v in os.environ.items()
        if k not in {"CITEAUDIT_TOKEN", "DJANGO_SETTINGS_MODULE", "PYTHONPATH"}
    }


def readme_gate(*args: str) -> subprocess.CompletedProcess:
    """`python3 audit/gate.py ...` from the checkout's root, with the system's Python 3."""
    return subprocess.run(
        ["python3", "audit/gate.py", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
    )


def installed_gate(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    assert INSTALLED_GATE.exists(), "citeaudit-gate is not installed: run .ci/setup again"
    return subprocess.run(
        [str(INSTALLED_GATE), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=_env(),
    )


def _settle(nightly, judgment: str) -> None:
    audit_set = nightly["set"]
    reviewers = [UserFactory(username=f"rev_{n}", role="reviewer") for n in "ab"]
    services.review_open(audit_set=audit_set, reviewers=reviewers, overlap=2, by=nightly["lead"])
    claims = Claim.objects.filter(answer__audit_set=audit_set, answer__system=SYSTEM)
    for claim in claims.filter(parent__isnull=True):
        gold_by_agreement(reviewers, claim, judgment)


def test_the_readme_command_from_a_checkout_passes_a_passing_system(nightly, live_server):
    _settle(nightly, "not_supported")
    gated = readme_gate(
        "--url", live_server.url, "--token", nightly["token"],
        "--set", "Nightly eval", "--system", SYSTEM,
    )  # fmt: skip
    assert gated.returncode == 0, gated.stderr
    assert gated.stdout.startswith(f"{SYSTEM}: PASS\n")
    assert gated.stderr == ""


def test_the_readme_command_from_a_checkout_fails_a_failing_system(nightly, live_server):
    _settle(nightly, "contradicted")
    gated = readme_gate(
        "--url", live_server.url, "--token", nightly["token"],
        "--set", str(nightly["set"].pk), "--system", SYSTEM,
    )  # fmt: skip
    assert gated.returncode == 1, gated.stderr
    assert gated.stdout.startswith(f"{SYSTEM}: FAIL\n")
    assert "  FAIL No contradicted claim." in gated.stdout


def test_the_installed_command_answers_from_any_folder(nightly, live_server, tmp_path):
    common = ["--url", live_server.url, "--token", nightly["token"], "--set", "Nightly eval"]
    provisional = installed_gate(*common, "--system", SYSTEM, cwd=tmp_path)
    assert provisional.returncode == 2, provisional.stderr
    assert provisional.stdout.startswith(f"{SYSTEM}: PROVISIONAL\n")
    _settle(nightly, "not_supported")
    passed = installed_gate(*common, "--system", SYSTEM, cwd=tmp_path)
    assert passed.returncode == 0, passed.stderr
    assert installed_gate(*common, "--system", "nope", cwd=tmp_path).returncode == 3


class _OddServer(http.server.BaseHTTPRequestHandler):
    """A server on loopback that answers 200 with JSON that is not a decision."""

    def do_GET(self) -> None:  # noqa: N802 - the handler's method name
        body = json.dumps({"system": "s", "unexpected": True}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def odd_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _OddServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_crash_is_an_error_not_a_failed_system(odd_server, tmp_path):
    args = ["--url", odd_server, "--token", "t", "--set", "1", "--system", "s"]
    for gated in (readme_gate(*args), installed_gate(*args, cwd=tmp_path)):
        assert gated.returncode == 3, gated.stderr
        assert "crashed" in gated.stderr


def test_errors_and_usage_exit_3_from_a_checkout():
    unreachable = readme_gate(
        "--url", "http://127.0.0.1:9", "--token", "t", "--set", "1", "--system", "s"
    )
    assert unreachable.returncode == 3
    assert "cannot connect" in unreachable.stderr
    assert readme_gate("--set", "1").returncode == 3
    no_token = readme_gate("--url", "http://127.0.0.1:9", "--set", "1", "--system", "s")
    assert no_token.returncode == 3
    assert "no token" in no_token.stderr


def _manage_gate(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "gate", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_the_server_command_exits_3_on_a_crash_or_a_usage_error(tmp_path):
    # A database that cannot be opened: the command crashes before any decision.
    env = {**_env(), "DATABASE_URL": f"sqlite:///{tmp_path}/missing/folder/db.sqlite3"}
    crashed = _manage_gate("--set", "Nightly eval", "--system", SYSTEM, env=env)
    assert crashed.returncode == 3, crashed.stderr
    assert "gate: crashed" in crashed.stderr
    # argparse's own code for a usage error is 2, the gate's "provisional".
    assert _manage_gate("--set", "Nightly eval", env=env).returncode == 3
