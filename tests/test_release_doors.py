"""Every door onto the release decision gives the same decision for the same set, after any
history of sheets submitted and reopened, gold and criteria changes: the set page, the
report page, the API's report and decision, the `gate` command and the decision.changed
webhook's payload, and the decision the live labels give."""

from __future__ import annotations

import io
import json
import random
from contextlib import redirect_stdout

import pytest
from django.core.management import call_command
from django.urls import reverse

from audit import selectors, services
from audit.criteria import decision_badge, evaluate
from audit.gate import EXIT_CODES
from audit.models import Adjudication, AuditSheet, Claim, Webhook, WebhookDelivery
from audit.services import ReviewError
from tests.conftest import api_client
from tests.factories import submit_sheet

pytestmark = pytest.mark.django_db

SYSTEMS = ("handmade v1", "handmade v2")
JUDGMENTS = ("supported", "partially_supported", "not_supported", "contradicted")
CRITERIA = (
    {"kind": "no_contradicted"},
    {"kind": "numbers_grounded"},
    {"kind": "min_supported_share", "percent": 50},
    {"kind": "min_supported_share", "percent": 100},
    {"kind": "uncited_only_if_not_worthy"},
    {"kind": "max_wrong_citations", "limit": 0},
    {"kind": "answering_claims_backed"},
    {"kind": "no_unsupported_numbers"},
)
# A webhook's word as (badge, passes on current labels); None: the set has no criteria.
WORDS = {
    "pass": ("pass", True),
    "fail": ("fail", False),
    "provisional-pass": ("provisional", True),
    "provisional-fail": ("provisional", False),
    None: ("none", None),
}


def _seen(badge: str, passed: bool | None) -> tuple[str, bool | None]:
    return (badge, None if badge == "none" else passed)


def _pages(client, audit_set) -> tuple[dict, dict]:
    detail = client.get(reverse("audit:set-detail", args=[audit_set.pk]))
    report = client.get(reverse("audit:set-report", args=[audit_set.pk]))
    assert (detail.status_code, report.status_code) == (200, 200)
    return (
        {
            item.system: _seen(item.badge, item.decision and item.decision.passed)
            for item in detail.context["release"].systems
        },
        {
            item.system: _seen(item.badge, item.decision and item.decision.passed)
            for item in report.context["overview"].systems
        },
    )


def _api(client, audit_set) -> tuple[dict, dict]:
    report = client.get(f"/api/v1/sets/{audit_set.pk}/report").json()
    decisions = {}
    for system in SYSTEMS:
        found = client.get(f"/api/v1/sets/{audit_set.pk}/decision", {"system": system}).json()
        decisions[system] = _seen(found["decision"], found["passed"])
    return {row["system"]: row["decision"] for row in report["systems"]}, decisions


def _gate(audit_set, system: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out), pytest.raises(SystemExit) as exit_:
        call_command("gate", "--set", audit_set.name, "--system", system, stdout=out)
    return exit_.value.code, out.getvalue().splitlines()[0]


def _webhook(current: dict) -> dict:
    """The decision per system as the decision.changed payloads sent so far tell it."""
    for delivery in WebhookDelivery.objects.filter(event="decision.changed").order_by("pk"):
        body = json.loads(delivery.body)
        current[body["system"]] = body["after"]
    WebhookDelivery.objects.all().delete()
    return current


def _live(audit_set) -> dict:
    """The decision the live labels give, without the stored tallies."""
    audit_set.refresh_from_db()
    criteria, _error = selectors.set_criteria(audit_set=audit_set)
    labels = selectors.claim_labels(audit_set=audit_set)
    found = {}
    for system in SYSTEMS:
        if not criteria:
            found[system] = ("none", None)
            continue
        decision = evaluate(criteria, [c for c in labels if c.system == system], system=system)
        found[system] = _seen(decision_badge(decision), decision.passed)
    return found


def _step(rng: random.Random, audit_set, lead, reviewers) -> str:
    """One random write through the services; what it did, for the failure message."""
    claims = list(Claim.objects.filter(answer__audit_set=audit_set, parent__isnull=True))
    claim = rng.choice(claims)
    reviewer = rng.choice(reviewers)
    kind = rng.choice(("submit", "submit", "submit", "reopen", "gold", "criteria"))
    try:
        if kind == "submit":
            judgment = rng.choice(JUDGMENTS)
            submit_sheet(reviewer, claim, judgment)
            return f"{reviewer.username} submits {judgment} on {claim.pk}"
        if kind == "reopen":
            sheet = AuditSheet.objects.filter(
                claim__answer__audit_set=audit_set, status=AuditSheet.Status.SUBMITTED
            ).first()
            if sheet is None:
                return "nothing to reopen"
            services.sheet_reopen(sheet=sheet, user=sheet.reviewer)
            return f"{sheet.reviewer.username} reopens {sheet.claim_id}"
        if kind == "gold":
            sheet = (
                AuditSheet.objects.filter(claim=claim, status=AuditSheet.Status.SUBMITTED)
                .order_by("?")
                .first()
            )
            if sheet is None:
                return f"no sheet in for gold on {claim.pk}"
            gold = Adjudication.objects.filter(claim=claim).first()
            services.adjudication_save(
                claim=claim,
                lead=lead,
                version=gold.version if gold else 0,
                take=sheet.pk,
                reason="other",
            )
            return f"gold {sheet.judgment} on {claim.pk}"
        criteria = rng.sample(CRITERIA, rng.randint(0, 3))
        services.criteria_update(audit_set=audit_set, criteria=criteria, by=lead, reason="test")
        return f"criteria {criteria}"
    except ReviewError as refused:
        return f"{kind} refused: {refused}"


@pytest.mark.parametrize("seed", range(3))
def test_every_door_gives_the_same_decision_after_a_random_history(
    seed, opened, lead, reviewer_a, reviewer_b, client_for, django_capture_on_commit_callbacks
):
    rng = random.Random(seed)
    Webhook.objects.create(
        audit_set=opened, url="http://127.0.0.1:9/hook", secret="s", events=["decision.changed"]
    )
    with django_capture_on_commit_callbacks(execute=True):
        services.criteria_update(audit_set=opened, criteria=[dict(CRITERIA[0])], by=lead)
    page_client, api = client_for(lead), api_client(lead)
    sent: dict = {}
    done: list[str] = []
    for _ in range(8):
        with django_capture_on_commit_callbacks(execute=True):
            done.append(_step(rng, opened, lead, [reviewer_a, reviewer_b]))
        live = _live(opened)
        set_page, report_page = _pages(page_client, opened)
        api_report, api_decision = _api(api, opened)
        webhook = {system: WORDS[word] for system, word in _webhook(sent).items()}
        gate = {system: _gate(opened, system) for system in SYSTEMS}

        assert set_page == live, done
        assert report_page == live, done
        assert api_decision == live, done
        assert api_report == {system: badge for system, (badge, _) in live.items()}, done
        # No criteria, no word: the webhook says so with `after` null, or never spoke.
        decided = {system: seen for system, seen in live.items() if seen[0] != "none"}
        assert {s: seen for s, seen in webhook.items() if seen[0] != "none"} == decided, done
        for system, (badge, _passed) in live.items():
            code, first_line = gate[system]
            assert (code, first_line) == (
                EXIT_CODES.get(badge, 3),
                f"{system}: {badge.upper()}",
            ), done
