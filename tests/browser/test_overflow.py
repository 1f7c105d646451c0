"""No page scrolls sideways: long unbroken names and texts wrap or scroll inside their own
box, at 1024 and 1440 pixels wide, on a set built to break layouts and on the demo set."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command

from audit import services
from audit.judgments import NOT_SUPPORTED, UNCLEAR
from audit.models import AuditSet, Claim, SuggestionSource, Webhook, WebhookDelivery
from tests.browser.conftest import ARTIFACTS
from tests.conftest import import_file
from tests.factories import default_workspace, submit_sheet

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = (1024, 1440)
LONG_NAME = "x" * 200
LONG_TEXT = "y" * 200_000
OVERFLOW = "document.documentElement.scrollWidth - window.innerWidth"


@pytest.fixture
def long_set(tmp_path, reviewer_a, reviewer_b, lead):
    line = {
        "question_id": "q" * 200,
        "question": "Q" * 200,
        "answer_id": "a" * 200,
        "system": LONG_NAME,
        "answer": f"Short claim about leave [1]. {LONG_TEXT} [1].",
        "passages": [
            {
                "title": "T" * 200,
                "url": "https://example.org/" + "p" * 200,
                "text": "Short claim about leave. " + "z" * 200_000,
            }
        ],
    }
    path = tmp_path / "long.jsonl"
    path.write_text(json.dumps(line) + "\n", encoding="utf-8")
    audit_set = AuditSet.objects.create(
        workspace=default_workspace(), name="N" * 200, description="D" * 200
    )
    audit_set.reviewers.add(reviewer_a, reviewer_b)
    import_file(audit_set, path)
    services.review_open(
        audit_set=audit_set, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead
    )
    claims = list(Claim.objects.filter(answer__audit_set=audit_set).order_by("order"))
    for claim in claims:
        submit_sheet(reviewer_a, claim, NOT_SUPPORTED)
        submit_sheet(reviewer_b, claim, UNCLEAR)
    return audit_set, claims


def _overflow(page, url: str, name: str) -> dict[tuple[str, int], int]:
    found = {}
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(url)
        page.wait_for_load_state("networkidle")
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / f"overflow-{name}-{width}.png"))
        extra = page.evaluate(OVERFLOW)
        if extra > 0:
            found[(name, width)] = extra
    return found


def test_no_page_scrolls_sideways_with_long_unbroken_names_and_texts(
    new_page, live_server, long_set, reviewer_a, lead
):
    audit_set, claims = long_set
    pk, claim = audit_set.pk, claims[-1]
    hook = Webhook.objects.create(
        audit_set=audit_set, url="https://" + LONG_NAME, secret="s" * 64, events=["set.reviewed"]
    )
    SuggestionSource.objects.create(
        audit_set=audit_set, name=LONG_NAME[:100], version=LONG_NAME[:100], description=LONG_NAME
    )
    WebhookDelivery.objects.create(webhook=hook, event="set.reviewed", body="{}", error=LONG_NAME)
    answer = claim.answer
    lead_pages = {
        "home": "/",
        "set-list": "/sets/",
        "set-detail": f"/sets/{pk}/",
        "label-distribution": f"/sets/{pk}/labels/",
        "set-progress": f"/sets/{pk}/progress/",
        "set-claims": f"/sets/{pk}/claims/",
        "review-open": f"/sets/{pk}/review/open/",
        "adjudication-queue": f"/sets/{pk}/adjudication/",
        "adjudication-settings": f"/sets/{pk}/adjudication/settings/",
        "agreement": f"/sets/{pk}/agreement/",
        "agreement-claims": f"/sets/{pk}/agreement/claims/?row=not_supported&col=unclear",
        "verdicts-upload": f"/sets/{pk}/verdicts/",
        "suggestions-upload": f"/sets/{pk}/suggestions/upload/",
        "set-webhooks": f"/sets/{pk}/webhooks/",
        "set-report": f"/sets/{pk}/report/",
        "set-criteria": f"/sets/{pk}/criteria/",
        "set-compare": f"/sets/{pk}/compare/",
        "suggestion-comparison": f"/sets/{pk}/suggestions/compare/",
        "import": "/import/",
        "answer-detail": f"/answers/{answer.pk}/",
        "claim-split": f"/claims/{claim.pk}/split/",
        "adjudicate": f"/claims/{claim.pk}/adjudicate/",
        "claim-history": f"/claims/{claim.pk}/history/",
    }
    reviewer_pages = {
        "reviewer-home": "/",
        "reviewer-set-detail": f"/sets/{pk}/",
        "reviewer-answer-detail": f"/answers/{answer.pk}/",
        "review-claim": f"/claims/{claim.pk}/review/",
        "refused-lead-page": f"/sets/{pk}/agreement/",
    }
    found = {}

    page = new_page(lead)
    for name, path in lead_pages.items():
        found |= _overflow(page, live_server.url + path, name)
    page = new_page(reviewer_a)
    for name, path in reviewer_pages.items():
        found |= _overflow(page, live_server.url + path, name)

    assert found == {}


def test_release_report_of_the_demo_set_fits_the_window(new_page, live_server):
    call_command("demo", stdout=open("/dev/null", "w"))  # noqa: SIM115
    expertqa = AuditSet.objects.get(name="ExpertQA calibration")
    lena = AuditSet.objects.get(pk=expertqa.pk).reviewers.model.objects.get(username="lena")

    page = new_page(lena, "lena-leads")
    found = _overflow(page, f"{live_server.url}/sets/{expertqa.pk}/report/", "expertqa-report")

    assert found == {}
