"""A release decision names its reason: the refund example, end to end through the pages.

The question asks about business customers; claim 1 gives the consumers' 30 days and drops
the 14 days for business that answers it. The share of supported claims alone would only
say "1 of 3"; the decision must fail because of claim 1, naming it and its unsupported
words.
"""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from audit.models import AuditSet, Claim, Passage
from tests.conftest import run_queued_jobs

pytestmark = pytest.mark.django_db

QUESTION = "Can business customers return opened hardware?"
ANSWER = (
    "Customers can return hardware within 30 days. [1] "
    "Refunds go back to the original payment method. [2] "
    "Opened software licences cannot be returned. [1]"
)
PASSAGES = [
    {
        "title": "Returns policy",
        "url": "https://shop.example/returns",
        "text": "Consumers can return hardware within 30 days of delivery. Business customers "
        "can return hardware within 14 days, and opened hardware only if it is faulty.",
    },
    {
        "title": "Refunds",
        "url": "https://shop.example/refunds",
        "text": "Refunds go back to the original payment method within 5 working days.",
    },
    {
        "title": "Software",
        "url": "https://shop.example/software",
        "text": "Opened software licences cannot be returned.",
    },
]


def _evidence(claim: Claim, position: int, sentence: str) -> str:
    text = Passage.objects.get(answer=claim.answer, position=position).text
    start = text.index(sentence)
    return f"{position}:{start}:{start + len(sentence)}"


def _submit(client, claim: Claim, **fields) -> None:
    data = {"version": 1, "verification_worthy": "on", "active_seconds": 30, **fields}
    response = client.post(reverse("audit:review-submit", args=[claim.pk]), data)
    assert response.status_code in (200, 302), response.content[:300]


def test_the_refund_answer_fails_because_claim_1_drops_the_condition_that_answers_it(
    client_for, lead, reviewer_a, reviewer_b
):
    leader = client_for(lead)
    line = {
        "question_id": "refund-1",
        "question": QUESTION,
        "system": "rag-v1",
        "answer_id": "a1",
        "answer": ANSWER,
        "passages": PASSAGES,
    }
    upload = SimpleUploadedFile("refund.jsonl", (json.dumps(line) + "\n").encode())
    leader.post(
        reverse("audit:import"), {"new_set_name": "Refunds", "format": "auto", "file": upload}
    )
    (job,) = run_queued_jobs()
    assert job.status == "succeeded", job.error
    audit_set = AuditSet.objects.get(name="Refunds")
    claim1, claim2, claim3 = Claim.objects.filter(answer__audit_set=audit_set).order_by("order")
    assert claim1.text.startswith("Customers can return hardware within 30 days.")

    # The lead writes the criteria down before review starts.
    leader.post(
        reverse("audit:set-criteria", args=[audit_set.pk]),
        {
            "min_supported_share": "on",
            "min_supported_share_percent": "30",
            "answering_claims_backed": "on",
        },
    )
    leader.post(
        reverse("audit:review-open", args=[audit_set.pk]),
        {"reviewers": [reviewer_a.pk, reviewer_b.pk], "overlap": 2},
    )

    consumers = "Consumers can return hardware within 30 days of delivery."
    refunds = "Refunds go back to the original payment method within 5 working days."
    for reviewer in (reviewer_a, reviewer_b):
        client = client_for(reviewer)
        _submit(
            client,
            claim1,
            judgment="partially_supported",
            evidence=[_evidence(claim1, 1, consumers)],
            unsupported_assertions="Customers",
            answers_question="on",
        )
        _submit(client, claim2, judgment="supported", evidence=[_evidence(claim2, 2, refunds)])
        _submit(client, claim3, judgment="wrong_citation", wrong_citation_passage=3)

    leader = client_for(lead)  # one test client: logged in as the lead again
    report = leader.get(reverse("audit:set-report", args=[audit_set.pk]))
    assert report.status_code == 200, report.status_code
    page = report.content.decode()
    (release,) = report.context["overview"].systems

    assert "Claims fully supported by their own citations: 1 of 3" in page
    assert release.badge == "fail"
    failed = [item for item in release.explained if not item.result.passed]
    assert [item.result.criterion.kind for item in failed] == ["answering_claims_backed"]
    (named,) = failed[0].claims
    assert named == (claim1, "partially supported; unsupported: “Customers”")
    assert (
        "Claim 1 of a1</a>: “Customers can return hardware within 30 days.” — partially "
        "supported; unsupported: “Customers”"
    ) in page
    # The share criterion passes at 30%: the failure is the claim, not a percentage.
    assert [item.result.passed for item in release.explained] == [True, False]


def test_a_lead_marks_the_listed_claims_as_answering_the_question(client_for, lead, handmade):
    client = client_for(lead)
    listing = reverse("audit:set-claims", args=[handmade.pk])

    response = client.post(
        reverse("audit:claims-mark-answering", args=[handmade.pk]),
        {"query": "text=annual", "value": "1"},
    )

    marked = set(
        Claim.objects.filter(answer__audit_set=handmade, answers_question=True).values_list(
            "text", flat=True
        )
    )
    assert response.status_code == 302 and response["Location"] == f"{listing}?text=annual"
    assert marked and all("annual" in text.lower() for text in marked)
    page = client.get(listing, {"answers_question": "true"})
    assert {row.record.text for row in page.context["table"].page.object_list} == marked
    assert "answers Q" in page.content.decode()

    client.post(
        reverse("audit:claims-mark-answering", args=[handmade.pk]),
        {"query": "", "value": "0"},
    )
    assert not Claim.objects.filter(answers_question=True).exists()
