import re
from datetime import timedelta

import pytest
from django.db import connection
from django.template.loader import render_to_string
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from audit import selectors, services
from audit.models import Adjudication, Assignment, AuditSheet, Claim
from audit.services import SheetData
from audit.services.statuses import claim_statuses_refresh
from audit.services.tallies import reviewer_tallies_refresh
from tests.factories import UserFactory, answer_with_claims, claim_at

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def _submit(user, claim: Claim, judgment: str, seconds: int = 0) -> AuditSheet:
    sheet = services.sheet_for(claim=claim, reviewer=user)
    AuditSheet.objects.filter(pk=sheet.pk).update(
        updated_at=timezone.now() - timedelta(seconds=600)
    )
    sheet.refresh_from_db()
    return services.sheet_submit(
        sheet=sheet,
        user=user,
        version=sheet.version,
        data=SheetData(judgment=judgment),
        active_seconds=seconds,
    )


def test_lead_opens_a_set_for_review_through_the_form(
    client_for, handmade, lead, reviewer_a, reviewer_b
):
    response = client_for(lead).post(
        reverse("audit:review-open", args=[handmade.pk]),
        {"reviewers": [reviewer_a.pk, reviewer_b.pk], "overlap": 2, "allow_reviewer_split": "on"},
    )

    handmade.refresh_from_db()
    assert response.url == reverse("audit:set-progress", args=[handmade.pk])
    assert Assignment.objects.count() == 36
    assert (handmade.overlap, handmade.allow_reviewer_split) == (2, True)


def test_open_form_offers_every_member_and_checks_the_overlap(
    client_for, handmade, lead, reviewer_a
):
    url = reverse("audit:review-open", args=[handmade.pk])
    form = client_for(lead).get(url).context["form"]

    response = client_for(lead).post(url, {"reviewers": [reviewer_a.pk], "overlap": 2})

    # A lead may review too: every active member of the workspace is offered, with the role.
    assert [u.username for u in form.fields["reviewers"].queryset] == ["lead", "rev_a", "rev_b"]
    assert [label for _, label in form.fields["reviewers"].choices] == [
        "lead (lead)",
        "rev_a",
        "rev_b",
    ]
    assert response.status_code == 200
    assert response.context["form"].non_field_errors() == [
        "An overlap of 2 needs at least 2 reviewers."
    ]
    assert Assignment.objects.count() == 0


def test_progress_page_counts_each_reviewer(client_for, opened, lead, reviewer_a, reviewer_b):
    _submit(reviewer_a, claim_at("hm-1-a", 0), "not_supported", seconds=60)
    _submit(reviewer_a, claim_at("hm-1-a", 1), "not_supported", seconds=100)
    _submit(reviewer_a, claim_at("hm-1-a", 2), "not_supported", seconds=110)
    services.sheet_for(claim=claim_at("hm-1-a", 3), reviewer=reviewer_a)
    _submit(reviewer_b, claim_at("hm-1-a", 0), "contradicted", seconds=90)
    services.guideline_flag_raise(
        claim=claim_at("hm-1-a", 0), user=reviewer_b, comment="Which year?"
    )

    response = client_for(lead).get(reverse("audit:set-progress", args=[opened.pk]))

    rows = [
        (
            r.username,
            r.assigned,
            r.submitted,
            r.drafts,
            r.median_seconds,
            r.claims_per_hour,
            r.flags,
        )
        for r in response.context["rows"]
    ]
    assert rows == [
        ("rev_a", 18, 3, 1, 100, 40.0, 0),
        ("rev_b", 18, 1, 0, 90, 40.0, 1),
    ]
    assert (response.context["submitted"], response.context["assigned"]) == (4, 36)
    assert "Which year?" in response.content.decode()


def test_lead_pages_are_403_for_reviewers(client_for, opened, reviewer_a):
    client = client_for(reviewer_a)
    urls = [
        reverse("audit:set-progress", args=[opened.pk]),
        reverse("audit:set-claims", args=[opened.pk]),
        reverse("audit:review-open", args=[opened.pk]),
    ]

    statuses = [client.get(url).status_code for url in urls]
    statuses.append(
        client.post(
            reverse("audit:reviewer-replace", args=[opened.pk]),
            {"leaving": reviewer_a.pk, "joining": reviewer_a.pk},
        ).status_code
    )

    assert statuses == [403, 403, 403, 403]


def test_claims_table_shows_each_review_status(client_for, opened, lead, reviewer_a, reviewer_b):
    # Without automatic gold, agreeing sheets wait for a lead as "all submitted".
    opened.auto_gold = False
    opened.save(update_fields=["auto_gold"])
    same, differ, half, judged, lone = (
        claim_at("hm-1-a", 0),
        claim_at("hm-1-a", 1),
        claim_at("hm-1-a", 2),
        claim_at("hm-1-a", 3),
        claim_at("hm-2-a", 0),
    )
    for claim, (a, b) in {
        same: ("not_supported", "not_supported"),
        differ: ("not_supported", "contradicted"),
        judged: ("not_supported", "not_supported"),
    }.items():
        _submit(reviewer_a, claim, a)
        _submit(reviewer_b, claim, b)
    _submit(reviewer_a, half, "not_supported")
    Adjudication.objects.create(claim=judged, judgment="not_supported", source="unanimous")
    Assignment.objects.filter(claim=lone).delete()
    # The two rows above are written directly, past the services that keep the status.
    claim_statuses_refresh(claim_ids=[judged.pk, lone.pk])
    url = reverse("audit:set-claims", args=[opened.pk])
    client = client_for(lead)

    def pks(status: str) -> list[int]:
        table = client.get(url, {"status": status}).context["table"]
        return [row.record.pk for row in table.rows]

    assert pks("submitted") == [same.pk]
    assert pks("disagreement") == [differ.pk]
    assert pks("partly_submitted") == [half.pk]
    assert pks("adjudicated") == [judged.pk]
    assert pks("unassigned") == [lone.pk]
    assert len(pks("in_review")) == 13
    body = client.get(url, {"status": "partly_submitted"}).content.decode()
    assert '<span class="status status-partly_submitted">1 of 2</span>' in body


def test_claims_table_rows_render_as_django_tables2_would(
    client_for, opened, lead, reviewer_a, reviewer_b
):
    # The claims table renders its rows in one pass (ClaimReviewTable.page_rows); the
    # markup must be what the library's own cell-by-cell template gives, on every status.
    opened.auto_gold = False
    opened.save(update_fields=["auto_gold"])
    _submit(reviewer_a, claim_at("hm-1-a", 0), "not_supported")
    _submit(reviewer_b, claim_at("hm-1-a", 0), "contradicted")
    _submit(reviewer_a, claim_at("hm-1-a", 1), "not_supported")
    services.claim_split(
        claim=claim_at("hm-1-a", 2),
        parts=[services.AtomicPart("One."), services.AtomicPart("Two.")],
        by=lead,
    )
    Assignment.objects.filter(claim=claim_at("hm-2-a", 0)).delete()
    claim_statuses_refresh(claim_ids=[claim_at("hm-2-a", 0).pk])
    table = client_for(lead).get(reverse("audit:set-claims", args=[opened.pk])).context["table"]

    fast = one_pass_and_library_tbody(table)
    assert fast.count("<tr") == len(table.rows) > 10
    for status in ("disagreement", "partly_submitted", "split", "unassigned", "in_review"):
        assert f"status-{status}" in fast


def one_pass_and_library_tbody(table) -> str:
    """The table's body as its one-pass template renders it, after checking that it is
    what the library's own cell-by-cell template gives."""

    def tbody(template: str) -> str:
        table.template_name = template
        html = render_to_string(template, {"table": table}, request=table.request)
        body = html[html.index("<tbody") : html.index("</tbody>")]
        return re.sub(r"\s+", " ", re.sub(r">\s+<", "><", body)).replace("<td >", "<td>")

    fast = tbody("audit/_one_pass_table.html")
    assert fast == tbody("django_tables2/table.html")
    return fast


def test_answer_table_rows_render_as_django_tables2_would(client_for, opened, lead):
    # An empty system and a long, hostile question: the default cell, the cut and escaping.
    answer = opened.answers.order_by("pk").first()
    opened.answers.filter(pk=answer.pk).update(system="", external_id="")
    answer.question.text = "<b>" + "why " * 40
    answer.question.save(update_fields=["text"])
    table = client_for(lead).get(reverse("audit:set-detail", args=[opened.pk])).context["table"]

    fast = one_pass_and_library_tbody(table)
    assert fast.count("<tr") == len(table.rows) > 3
    assert f">#{answer.pk}</a>" in fast
    assert "&lt;b&gt;why" in fast
    assert "…" in fast


def test_claims_table_filters_by_reviewer_label_and_text(client_for, opened, lead, reviewer_a):
    carol = UserFactory(username="carol", role="reviewer")
    Assignment.objects.filter(claim=claim_at("hm-3-a", 0), reviewer=reviewer_a).update(
        reviewer=carol
    )
    # Moved directly, past the services that keep each reviewer's tally.
    reviewer_tallies_refresh(audit_set_id=opened.pk)
    url = reverse("audit:set-claims", args=[opened.pk])
    client = client_for(lead)

    by_reviewer = client.get(url, {"reviewer": carol.pk}).context["table"]
    by_label = client.get(url, {"label": "likely"}).context["table"]
    by_text = client.get(url, {"text": "overtime"}).context["table"]

    assert [r.record.pk for r in by_reviewer.rows] == [claim_at("hm-3-a", 0).pk]
    # Most words found: the two weaker matches, and the close ones whose staff/employees,
    # can/may or a missing word keep them from "all words found" (audit.scope_words).
    assert sorted(r.record.pk for r in by_label.rows) == sorted(
        claim_at(answer, order).pk
        for answer, order in [
            ("hm-1-a", 1),
            ("hm-1-b", 0),
            ("hm-1-b", 1),
            ("hm-3-a", 1),
            ("hm-4-a", 1),
            ("hm-6-a", 0),
        ]
    )
    assert [r.record.pk for r in by_text.rows] == [claim_at("hm-3-a", 0).pk]


def test_claims_table_htmx_request_gets_only_the_table(client_for, opened, lead):
    response = client_for(lead).get(
        reverse("audit:set-claims", args=[opened.pk]), {"status": "in_review"}, **HTMX
    )

    assert response.content.decode().lstrip().startswith('<div id="results">')


def test_claims_table_never_loads_answer_or_passage_text(client_for, opened, lead):
    client = client_for(lead)
    url = reverse("audit:set-claims", args=[opened.pk])

    with CaptureQueriesContext(connection) as few:
        client.get(url, {"status": "in_review"})
    services.claim_split(
        claim=claim_at("hm-1-a", 0),
        parts=[services.AtomicPart("a"), services.AtomicPart("b")],
        by=lead,
    )
    with CaptureQueriesContext(connection) as more:
        client.get(url, {"status": "in_review"})

    sql = " ".join(q["sql"] for q in more.captured_queries)
    assert len(few.captured_queries) == len(more.captured_queries)
    assert '"audit_answer"."text"' not in sql
    assert '"audit_passage"."text"' not in sql
    assert '"audit_claim"."text" LIKE' not in sql


def test_reviewer_replace_form_moves_open_claims(client_for, opened, lead, reviewer_a):
    carol = UserFactory(username="carol", role="reviewer")
    _submit(reviewer_a, claim_at("hm-1-a", 0), "not_supported")

    response = client_for(lead).post(
        reverse("audit:reviewer-replace", args=[opened.pk]),
        {"leaving": reviewer_a.pk, "joining": carol.pk},
    )

    assert response.url == reverse("audit:set-progress", args=[opened.pk])
    assert (
        Assignment.objects.filter(reviewer=reviewer_a).count(),
        Assignment.objects.filter(reviewer=carol).count(),
    ) == (1, 17)


def test_claims_table_reaches_its_last_page_in_one_click_and_any_page_holds_its_rows(
    client_for, audit_set, lead, reviewer_a
):
    # 130 claims over 26 answers: three pages of 50, the last one with 30.
    for _ in range(26):
        answer_with_claims(audit_set, 5)
    services.review_open(audit_set=audit_set, reviewers=[reviewer_a], overlap=1, by=lead)
    client = client_for(lead)
    url = reverse("audit:set-claims", args=[audit_set.pk])
    in_order = list(selectors.claim_rows(audit_set=audit_set).values_list("pk", flat=True))

    def page(**params) -> tuple[list[int], str]:
        response = client.get(url, params)
        return [row.record.pk for row in response.context["table"].page.object_list], (
            response.content.decode()
        )

    first, html = page()
    assert first == in_order[:50]
    assert '<a href="?page=last">last</a>' in html
    assert page(page=2)[0] == in_order[50:100]
    last, html = page(page="last")
    assert last == in_order[100:]
    assert len(last) == 30
    assert '<a href="?page=last">last</a>' not in html
    # Filtered: one claim per answer, a single page.
    assert page(page="last", text="Claim 1")[0] == list(
        selectors.claim_rows(audit_set=audit_set)
        .filter(text__icontains="Claim 1")
        .values_list("pk", flat=True)
    )


def test_set_pages_answer_table_holds_the_right_answers_on_every_page(client_for, audit_set, lead):
    # 120 answers: pages of 50, the last one (read backwards from the end) with 20.
    answers = [answer_with_claims(audit_set, 1)[0].pk for _ in range(120)]
    client = client_for(lead)
    url = reverse("audit:set-detail", args=[audit_set.pk])

    def page(number: int) -> list[int]:
        table = client.get(url, {"page": number}).context["table"]
        return [row.record.pk for row in table.page.object_list]

    assert [page(1), page(2), page(3)] == [answers[:50], answers[50:100], answers[100:]]
    by_system = client.get(url, {"page": 3, "sort": "-claim_count"}).context["table"]
    assert len(by_system.page.object_list) == 20
