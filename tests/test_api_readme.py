"""The API examples of docs/reference.md, run as written against a live server with a worker
process: the curl lines, and the five-line script that pushes a run, waits for its job and
gates on the decision. Also the stdlib gate client's exit codes, over real HTTP."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from audit import services
from audit.models import Answer, AuditSet, Claim
from tests.conftest import FIXTURES, ROOT, gold_by_agreement, import_file
from tests.factories import UserFactory, default_workspace

HANDMADE = FIXTURES / "demo" / "handmade.jsonl"
SYSTEM = "handmade v1"


def _api_blocks() -> list[str]:
    reference = (ROOT / "docs" / "reference.md").read_text()
    section = reference.split("\n## HTTP API\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", section, flags=re.S)


def _run(script: str, cwd, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )


@pytest.fixture
def nightly(role_groups, transactional_db):
    lead = UserFactory(username="lead", role="lead")
    audit_set = AuditSet.objects.create(
        workspace=default_workspace(), name="Nightly", created_by=lead
    )
    import_file(audit_set, HANDMADE)
    services.criteria_update(audit_set=audit_set, criteria=[{"kind": "no_contradicted"}], by=lead)
    _token, text = services.token_create(user=lead, name="ci", scope="write")
    return {"set": audit_set, "token": text, "lead": lead}


def _workdir(tmp_path):
    # Another run of the same system: new answer ids, so the import adds them.
    run = HANDMADE.read_text().replace('"answer_id": "hm-', '"answer_id": "run2-hm-')
    (tmp_path / "run.jsonl").write_text(run)
    verdict = {"judge": "nli", "answer_id": "hm-1-a", "claim_index": 0, "judgment": "unclear"}
    (tmp_path / "verdicts.jsonl").write_text(json.dumps(verdict) + "\n")
    # The gate is copied on its own, as a CI pipeline would: it needs no Django.
    (tmp_path / "audit").mkdir()
    shutil.copy(ROOT / "audit" / "gate.py", tmp_path / "audit" / "gate.py")
    return tmp_path


def test_the_reference_examples_run_as_written(nightly, live_server, start_worker, tmp_path):
    curl_lines, script = _api_blocks()
    assert len(script.strip().splitlines()) == 5
    cwd = _workdir(tmp_path)
    audit_set = nightly["set"]
    env = {
        **os.environ,
        "CITEAUDIT_URL": live_server.url,
        "CITEAUDIT_TOKEN": nightly["token"],
        "SET": str(audit_set.pk),
    }

    listed = _run(curl_lines, cwd, env)
    assert listed.returncode == 0, listed.stderr
    # curl adds no newline: the first example's answer is the first JSON value printed.
    sets, _end = json.JSONDecoder().raw_decode(listed.stdout)
    assert [s["name"] for s in sets] == ["Nightly"]
    assert (cwd / "gold.jsonl").read_text() == ""  # nothing adjudicated yet
    assert (cwd / "claims.csv").read_text().startswith("\ufeffquestion_id,question,answer_id,")
    assert audit_set.imports.filter(format="verdicts").count() == 1

    start_worker()
    # The example's set, system and file are the reader's: these are this test's.
    script = re.sub(
        r"^SET=\S+ SYSTEM=\S+ FILE=\S+",
        f'SET={audit_set.pk} SYSTEM="{SYSTEM}" FILE=run.jsonl',
        script,
        count=1,
    )
    gated = _run(script, cwd, env)
    assert gated.returncode == 2, gated.stderr
    assert gated.stdout.startswith(f"{SYSTEM}: PROVISIONAL\n")
    assert Answer.objects.filter(audit_set=audit_set, external_id__startswith="run2-").count() == 7


def _gate(*args: str, cwd=ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "audit.gate", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={k: v for k, v in os.environ.items() if k != "CITEAUDIT_TOKEN"},
    )


def test_the_gate_client_exits_by_the_decision(nightly, live_server):
    audit_set = nightly["set"]
    reviewers = [UserFactory(username=f"rev_{n}", role="reviewer") for n in "ab"]
    services.review_open(audit_set=audit_set, reviewers=reviewers, overlap=2, by=nightly["lead"])
    common = ["--url", live_server.url, "--token", nightly["token"], "--set", "Nightly"]

    provisional = _gate(*common, "--system", SYSTEM)
    assert provisional.returncode == 2, provisional.stderr

    claims = Claim.objects.filter(answer__audit_set=audit_set, answer__system=SYSTEM)
    for claim in claims.filter(parent__isnull=True):
        gold_by_agreement(reviewers, claim)
    passed = _gate(*common, "--system", SYSTEM)
    assert (passed.returncode, passed.stdout) == (
        0,
        f"{SYSTEM}: PASS\n  ok   No contradicted claim. No contradicted claim among "
        f"{claims.filter(parent__isnull=True).count()} claims.\n"
        f"  on criteria version 1 of {audit_set.criteria_changes.get().at:%Y-%m-%d %H:%M} UTC "
        "by lead\n",
    )

    by_id = [*common[:-1], str(audit_set.pk)]
    wrong = claims.filter(parent__isnull=True).order_by("pk").first()
    wrong.adjudication.judgment = "contradicted"
    wrong.adjudication.save()
    services.claims_changed(claim_ids=[wrong.pk])
    failed = _gate(*by_id, "--system", SYSTEM)
    assert failed.returncode == 1
    named = f"{wrong.answer.external_id} claim {wrong.order + 1} (id {wrong.pk})"
    assert f"  FAIL No contradicted claim. 1 contradicted claim.\n       {named}" in (failed.stdout)

    assert _gate(*common, "--system", "nope").returncode == 3
    assert _gate(*common[:-1], "No such set", "--system", SYSTEM).returncode == 3
    bad_token = _gate("--url", live_server.url, "--token", "cit_x_y", "--set", "1", "--system", "s")
    assert bad_token.returncode == 3
    assert "HTTP 401 Unknown token." in bad_token.stderr
    nowhere = "http://127.0.0.1:9"
    unreachable = _gate("--url", nowhere, "--token", "t", "--set", "1", "--system", "s")
    assert unreachable.returncode == 3
    assert "cannot connect" in unreachable.stderr
    assert _gate("--set", "1").returncode == 3
