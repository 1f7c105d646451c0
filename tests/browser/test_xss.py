"""Hostile text in every imported and lead-entered field never runs in the browser."""

import json

import pytest
from django.urls import reverse

from audit import services
from audit.models import Answer, AuditSet, Claim, SuggestionSource, Webhook, WebhookDelivery
from tests.conftest import import_file
from tests.factories import default_workspace
from tests.xss_payloads import PAYLOADS

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def hostile_set(tmp_path, reviewer_a, reviewer_b):
    audit_set = AuditSet.objects.create(
        workspace=default_workspace(),
        name=PAYLOADS[0],
        description=" ".join(PAYLOADS[:10]),
        guidelines="\n\n".join(PAYLOADS),
    )
    audit_set.reviewers.add(reviewer_a, reviewer_b)
    for i, payload in enumerate(PAYLOADS[1:12], start=1):
        AuditSet.objects.create(
            workspace=default_workspace(), name=f"{i} {payload}"[:200], guidelines=payload
        )
    lines = []
    for i, payload in enumerate(PAYLOADS):
        lines.append(
            {
                "question_id": f"x{i}",
                "question": payload,
                "answer_id": f"{i}-{payload}"[:150],
                "system": payload[:150],
                "answer": f"Claim {i} says {payload} [1]. Second {payload} claim [2].",
                "claims": None,
                "passages": [
                    {"title": payload, "url": payload, "text": f"Claim {i} says {payload}."},
                    {"title": payload, "url": f"https://example.org/{i}", "text": payload},
                ],
            }
        )
    path = tmp_path / "hostile.jsonl"
    path.write_text(
        "".join(
            json.dumps({k: v for k, v in line.items() if v is not None}) + "\n" for line in lines
        )
    )
    import_file(audit_set, path)
    return audit_set


def _pages(audit_set: AuditSet) -> list[str]:
    pages = ["/sets/", f"/sets/{audit_set.pk}/", f"/sets/{audit_set.pk}/labels/", "/import/"]
    pages += [a.get_absolute_url() for a in Answer.objects.filter(audit_set=audit_set)]
    return pages


def _lead_pages(audit_set: AuditSet, claim: Claim) -> list[str]:
    names = [
        "set-progress",
        "set-claims",
        "review-open",
        "adjudication-queue",
        "adjudication-settings",
        "agreement",
        "set-report",
        "set-criteria",
        "set-compare",
        "verdicts-upload",
        "suggestions-upload",
        "set-webhooks",
    ]
    pages = [reverse(f"audit:{name}", args=[audit_set.pk]) for name in names]
    pages += [
        reverse(f"audit:{name}", args=[claim.pk])
        for name in ("adjudicate", "claim-history", "claim-split")
    ]
    return pages


def _judge(claim: Claim, reviewer, judgment: str, note: str) -> None:
    sheet = services.sheet_for(claim=claim, reviewer=reviewer)
    services.sheet_submit(
        sheet=sheet,
        user=reviewer,
        version=sheet.version,
        data=services.SheetData(judgment=judgment, notes=note, unsupported_assertions=(note,)),
    )


def test_no_payload_runs_on_any_page(new_page, lead, live_server, hostile_set):
    page = new_page(lead)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))

    visited = 0
    for url in _pages(hostile_set):
        page.goto(f"{live_server.url}{url}")
        page.wait_for_load_state("load")
        visited += 1

        assert page.evaluate("window.__xss === undefined && parent.__xss === undefined"), url
        javascript_links = page.eval_on_selector_all(
            "a[href], area[href], [*|href]",
            "els => els.map(e => e.getAttribute('href') || e.getAttribute('xlink:href'))"
            ".filter(h => /^\\s*(javascript|data|vbscript):/i.test(h || ''))",
        )
        assert javascript_links == [], url

    # The payloads were really on the pages, shown as text.
    answer = Answer.objects.get(audit_set=hostile_set, external_id__startswith="2-")
    page.goto(f"{live_server.url}{answer.get_absolute_url()}")
    assert page.inner_text("h1.q") == PAYLOADS[2]
    page.goto(f"{live_server.url}/sets/")
    assert PAYLOADS[0] in page.inner_text("#results")
    assert visited == 4 + len(PAYLOADS)
    assert dialogs == []


def test_no_payload_runs_on_review_adjudication_and_report_pages(
    new_page, lead, reviewer_a, reviewer_b, live_server, hostile_set
):
    services.review_open(
        audit_set=hostile_set, reviewers=[reviewer_a, reviewer_b], overlap=2, by=lead
    )
    claims = list(Claim.objects.filter(answer__audit_set=hostile_set).order_by("pk")[:6])
    for i, claim in enumerate(claims):
        payload = PAYLOADS[i]
        _judge(claim, reviewer_a, "unclear", payload)
        _judge(claim, reviewer_b, "not_supported", payload)
    # A webhook's URL and delivery log as hostile as the rest (the page's form refuses such a
    # URL; the admin or an old row need not).
    hook = Webhook.objects.create(
        audit_set=hostile_set, url=PAYLOADS[0], secret=PAYLOADS[1], events=[PAYLOADS[2]]
    )
    WebhookDelivery.objects.create(webhook=hook, event=PAYLOADS[3], body="{}", error=PAYLOADS[4])
    SuggestionSource.objects.create(
        audit_set=hostile_set,
        name=PAYLOADS[5][:100],
        version=PAYLOADS[6][:100],
        description=PAYLOADS[7],
    )
    dialogs: list[str] = []
    checked = 0
    for user, urls in (
        (reviewer_a, ["/", *[reverse("audit:review-claim", args=[c.pk]) for c in claims]]),
        (lead, _lead_pages(hostile_set, claims[0])),
    ):
        page = new_page(user)
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        for url in urls:
            response = page.goto(f"{live_server.url}{url}")
            page.wait_for_load_state("load")
            checked += 1

            assert response.status == 200, url
            assert page.evaluate("window.__xss === undefined && parent.__xss === undefined"), url
            assert (
                page.eval_on_selector_all(
                    "a[href]",
                    "els => els.filter(e => /^\\s*javascript:/i.test(e.getAttribute('href')))"
                    ".length",
                )
                == 0
            ), url

    # The payloads were there, as text: the notes of a sheet on the adjudication view.
    page.goto(f"{live_server.url}{reverse('audit:adjudicate', args=[claims[0].pk])}")
    assert PAYLOADS[0] in page.inner_text("body")
    assert checked == 1 + len(claims) + 15
    assert dialogs == []
