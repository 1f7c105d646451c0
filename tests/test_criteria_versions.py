"""Decisions say what they stand on: every change of a set's criteria is a numbered version;
once review has started a change needs a reason, and the decision (report page, API, gate)
names the version and who changed the criteria after review started, when and why."""

from __future__ import annotations

import os
import subprocess

import pytest
from django.urls import reverse

from audit import selectors, services
from audit.criteria import CriteriaReasonRequired
from audit.models import AuditSet, CriteriaChange
from tests.conftest import FIXTURES, ROOT, api_client, import_file
from tests.factories import UserFactory, claim_at, default_workspace, submit_sheet

WEAKER = [{"kind": "max_wrong_citations", "limit": 3}]
REASON = "Wrong citations are counted by the matcher now; three are tolerated."


@pytest.fixture
def locked(opened, lead, reviewer_a):
    """Criteria version 1 written before review; then a reviewer submits a contradicted
    sheet, so review has started and the criteria are locked."""
    services.criteria_update(audit_set=opened, criteria=[{"kind": "no_contradicted"}], by=lead)
    submit_sheet(reviewer_a, claim_at("hm-2-a", 0), "contradicted")
    return opened


def test_each_change_is_a_new_version_and_needs_no_reason_before_review(handmade, lead):
    first = services.criteria_update(
        audit_set=handmade, criteria=[{"kind": "no_contradicted"}], by=lead
    )
    second = services.criteria_update(audit_set=handmade, criteria=WEAKER, by=lead)
    same = services.criteria_update(audit_set=handmade, criteria=WEAKER, by=lead)

    assert (first.version, second.version, same) == (1, 2, None)
    assert (second.after_lock, second.reason, second.by) == (False, "", lead)
    provenance = selectors.criteria_provenance(audit_set=handmade)
    assert provenance.current.version == 2
    assert provenance.changed_after_review == ()


def test_the_service_refuses_a_change_after_review_started_without_a_reason(locked, lead):
    with pytest.raises(CriteriaReasonRequired):
        services.criteria_update(audit_set=locked, criteria=WEAKER, by=lead, reason="  ")

    locked.refresh_from_db()
    assert locked.criteria == [{"kind": "no_contradicted", "topics": []}]
    assert CriteriaChange.objects.filter(audit_set=locked).count() == 1


def test_api_patch_of_locked_criteria_without_a_reason_is_422(locked, lead):
    client = api_client(lead)

    response = client.patch(
        f"/api/v1/sets/{locked.pk}/settings", {"criteria": WEAKER}, content_type="application/json"
    )

    assert response.status_code == 422
    assert "criteria_reason" in response.json()["detail"]
    locked.refresh_from_db()
    assert locked.criteria == [{"kind": "no_contradicted", "topics": []}]
    decision = client.get(f"/api/v1/sets/{locked.pk}/decision", {"system": "handmade v1"}).json()
    assert decision["decision"] == "provisional"
    assert decision["criteria_changed_after_review_started"] is False
    assert decision["criteria_version"]["version"] == 1


def test_api_patch_with_a_reason_makes_a_version_the_decision_names(locked, lead):
    client = api_client(lead)
    before = client.get(f"/api/v1/sets/{locked.pk}/decision", {"system": "handmade v1"}).json()
    assert before["criteria"][0]["passed"] is False  # the contradicted sheet fails it

    response = client.patch(
        f"/api/v1/sets/{locked.pk}/settings",
        {"criteria": WEAKER, "criteria_reason": REASON},
        content_type="application/json",
    )

    assert response.status_code == 200, response.content
    change = CriteriaChange.objects.get(audit_set=locked, version=2)
    assert (change.by, change.reason, change.after_lock) == (lead, REASON, True)
    decision = client.get(f"/api/v1/sets/{locked.pk}/decision", {"system": "handmade v1"}).json()
    named = {
        "version": 2,
        "by": "lead",
        "at": change.at.isoformat(),
        "reason": REASON,
        "after_review_started": True,
    }
    assert decision["criteria_version"] == named
    assert decision["criteria_changed_after_review_started"] is True
    assert decision["criteria_changes_after_review_started"] == [named]
    assert decision["review_started_at"] is not None
    report = client.get(f"/api/v1/sets/{locked.pk}/report").json()
    assert report["criteria_version"] == named
    assert report["criteria_changes_after_review_started"] == [named]


def test_the_criteria_page_requires_a_reason_once_review_started(client_for, locked, lead):
    client = client_for(lead)
    url = reverse("audit:set-criteria", args=[locked.pk])
    form = client.get(url)
    assert 'name="reason"' in form.text
    assert form.context["form"].fields["reason"].required is True

    refused = client.post(url, {"max_wrong_citations": "on", "max_wrong_citations_limit": "3"})

    assert refused.status_code == 200
    assert list(refused.context["form"].errors) == ["reason"]
    assert CriteriaChange.objects.filter(audit_set=locked).count() == 1

    saved = client.post(
        url,
        {"max_wrong_citations": "on", "max_wrong_citations_limit": "3", "reason": REASON},
    )
    assert saved.status_code == 302
    report = client.get(reverse("audit:set-report", args=[locked.pk]))
    assert "Decisions on criteria version 2" in report.text
    assert "Criteria changed after review started" in report.text
    assert REASON in report.text
    history = client.get(url)
    assert REASON in history.text


def test_the_criteria_page_needs_no_reason_before_review(client_for, handmade, lead):
    client = client_for(lead)
    url = reverse("audit:set-criteria", args=[handmade.pk])
    assert client.get(url).context["form"].fields["reason"].required is False

    saved = client.post(url, {"no_contradicted": "on"})

    assert saved.status_code == 302
    assert CriteriaChange.objects.get(audit_set=handmade).version == 1


# ------------------------------------------------------------- the gate, as CI runs it


@pytest.fixture
def nightly_locked(role_groups, transactional_db):
    lead = UserFactory(username="lead", role="lead")
    reviewer = UserFactory(username="rev_a", role="reviewer")
    audit_set = AuditSet.objects.create(
        workspace=default_workspace(), name="Nightly eval", created_by=lead
    )
    import_file(audit_set, FIXTURES / "demo" / "handmade.jsonl")
    services.criteria_update(audit_set=audit_set, criteria=[{"kind": "no_contradicted"}], by=lead)
    services.review_open(audit_set=audit_set, reviewers=[reviewer], overlap=1, by=lead)
    submit_sheet(reviewer, claim_at("hm-2-a", 0), "contradicted")
    _token, text = services.token_create(user=lead, name="ci", scope="write")
    return {"set": audit_set, "token": text, "lead": lead}


def _readme_gate(url: str, token: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in {"CITEAUDIT_TOKEN", "PYTHONPATH"}}
    return subprocess.run(
        ["python3", "audit/gate.py", "--url", url, "--token", token]
        + ["--set", "Nightly eval", "--system", "handmade v1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_the_gate_says_the_criteria_changed_after_review_started(nightly_locked, live_server):
    audit_set, token = nightly_locked["set"], nightly_locked["token"]
    before = _readme_gate(live_server.url, token)
    assert before.returncode == 2, before.stderr
    assert "CRITERIA CHANGED" not in before.stdout
    assert before.stdout.rstrip().splitlines()[-1].startswith("  on criteria version 1 of ")

    client = api_client(nightly_locked["lead"])
    refused = client.patch(
        f"/api/v1/sets/{audit_set.pk}/settings",
        {"criteria": WEAKER},
        content_type="application/json",
    )
    assert refused.status_code == 422
    assert _readme_gate(live_server.url, token).stdout == before.stdout

    client.patch(
        f"/api/v1/sets/{audit_set.pk}/settings",
        {"criteria": WEAKER, "criteria_reason": REASON},
        content_type="application/json",
    )
    after = _readme_gate(live_server.url, token)

    change = CriteriaChange.objects.get(audit_set=audit_set, version=2)
    when = f"{change.at:%Y-%m-%d %H:%M} UTC"
    lines = after.stdout.splitlines()
    assert after.returncode == 2, after.stderr
    assert lines[:2] == [
        "handmade v1: PROVISIONAL",
        f"  CRITERIA CHANGED AFTER REVIEW STARTED: version 2 by lead at {when}: {REASON}",
    ]
    assert lines[-1] == f"  on criteria version 2 of {when} by lead"
