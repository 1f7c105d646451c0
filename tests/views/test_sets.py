import pytest
from django.urls import reverse

from audit.models import Answer, AuditSet, Claim, Job, Membership, Workspace
from tests.conftest import FIXTURES, run_queued_jobs
from tests.factories import UserFactory, default_workspace

pytestmark = pytest.mark.django_db


def test_anonymous_user_is_sent_to_login(client):
    response = client.get(reverse("audit:set-list"))

    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


def test_set_list_shows_counts(client_for, lead, handmade):
    response = client_for(lead).get(reverse("audit:set-list"))

    row = response.context["table"].rows[0].record
    assert response.status_code == 200
    assert (row.answer_count, row.claim_count, row.uncited_count, row.unknown_count) == (
        7,
        Claim.objects.count(),
        Claim.objects.filter(is_uncited=True).count(),
        2,
    )


def test_reviewer_sees_only_sets_they_review(client_for, handmade):
    outsider = UserFactory(username="outsider", role="reviewer")
    other = AuditSet.objects.create(workspace=default_workspace(), name="Other set")

    response = client_for(outsider).get(reverse("audit:set-list"))

    assert list(response.context["table"].data) == []
    assert "No sets here" in response.content.decode()
    assert (
        client_for(outsider).get(reverse("audit:set-detail", args=[handmade.pk])).status_code == 404
    )
    answer = Answer.objects.first()
    assert client_for(outsider).get(answer.get_absolute_url()).status_code == 404
    del other


def test_set_list_names_each_sets_workspace_and_filters_by_it(client_for, lead, handmade):
    legal = Workspace.objects.create(name="Legal <team>", slug="legal")
    Membership.objects.create(workspace=legal, user=lead, role="lead")
    contracts = AuditSet.objects.create(workspace=legal, name="Contracts")
    hidden = Workspace.objects.create(name="Hidden workspace", slug="hidden")
    AuditSet.objects.create(workspace=hidden, name="Not mine")
    client = client_for(lead)

    everything = client.get(reverse("audit:set-list"))
    only_legal = client.get(reverse("audit:set-list"), {"workspace": legal.pk})

    body = everything.content.decode()
    assert "<td >Legal &lt;team&gt;</td>" in body  # escaped: a workspace's name is typed text
    assert "Hidden workspace" not in body  # neither a row nor a filter choice
    choices = dict(everything.context["filter"].form.fields["workspace"].choices)
    assert set(choices) == {"", handmade.workspace_id, legal.pk}
    assert [row.record.pk for row in only_legal.context["table"].rows] == [contracts.pk]


def test_set_list_htmx_request_gets_only_the_table(client_for, lead, handmade):
    response = client_for(lead).get(
        reverse("audit:set-list"), {"name": "calib"}, HTTP_HX_REQUEST="true"
    )

    body = response.content.decode()
    assert response.status_code == 200
    assert body.lstrip().startswith('<div id="results">')
    assert "Calibration" in body


def test_set_detail_filters_answers_by_system(client_for, lead, handmade):
    url = reverse("audit:set-detail", args=[handmade.pk])

    response = client_for(lead).get(url, {"system": "handmade v2"})

    assert [a.external_id for a in response.context["table"].data] == ["hm-1-b", "hm-6-a"]


def test_reviewer_cannot_open_import_page(client_for, reviewer_a):
    assert client_for(reviewer_a).get(reverse("audit:import")).status_code == 403


def test_lead_uploads_a_file_into_a_new_set(client_for, lead):
    client = client_for(lead)
    path = FIXTURES / "demo" / "handmade.jsonl"
    with path.open("rb") as fh:
        response = client.post(
            reverse("audit:import"), {"new_set_name": "Uploaded", "file": fh, "format": "auto"}
        )

    # Queued, not imported within the request: the set appears when the job has run.
    job = Job.objects.get()
    assert response.status_code == 302 and response["Location"] == job.get_absolute_url()
    queued = client.get(response["Location"]).content.decode()
    assert "Queued." in queued and 'hx-trigger="every 1s"' in queued
    assert not AuditSet.objects.filter(name="Uploaded").exists()

    run_queued_jobs()

    page = client.get(response["Location"])
    summary = page.context["job"].result
    assert (summary["answers"], summary["format"]) == (7, "native")
    assert AuditSet.objects.get(name="Uploaded").answers.count() == 7
    assert page.context["job"].audit_set.name == "Uploaded"
    assert "Uncited claims" in page.content.decode()
    assert "hx-trigger" not in page.content.decode()


def test_broken_upload_shows_the_error_and_writes_nothing(client_for, lead, tmp_path):
    client = client_for(lead)
    broken = tmp_path / "broken.jsonl"
    broken.write_text(
        '{"question_id": "q", "question": "Q", "system": "s", "answer": "A [1].", '
        '"passages": [{"title": "t", "text": null}]}\n'
    )
    with broken.open("rb") as fh:
        response = client.post(
            reverse("audit:import"), {"new_set_name": "Broken", "file": fh, "format": "auto"}
        )
    run_queued_jobs()

    page = client.get(response["Location"])
    assert page.context["job"].status == "failed"
    assert page.context["job"].error == (
        "broken.jsonl: line 1: passages[0].text: expected a string, got null"
    )
    assert "Nothing was imported." in page.content.decode()
    assert not AuditSet.objects.filter(name="Broken").exists()
    assert Answer.objects.count() == 0


def test_label_distribution_counts_labels_per_system(client_for, lead, handmade):
    response = client_for(lead).get(reverse("audit:label-distribution", args=[handmade.pk]))

    per_system = response.context["sections"][0]["rows"]
    assert [r["group"] for r in per_system] == ["handmade v1", "handmade v2"]
    assert sum(r["total"] for r in per_system) == Claim.objects.count()


def test_menu_shows_lead_links_to_leads_only_and_follows_group_changes(
    client_for, lead, reviewer_a
):
    import_link = f'href="{reverse("audit:import")}"'

    as_lead = client_for(lead).get(reverse("audit:set-list")).content.decode()
    as_reviewer = client_for(reviewer_a).get(reverse("audit:set-list")).content.decode()

    assert import_link in as_lead and "· lead" in as_lead
    assert import_link not in as_reviewer and "· lead" not in as_reviewer

    # The role is remembered per request only: a promotion shows on the next page.
    Membership.objects.filter(user=reviewer_a).update(role=Membership.Role.LEAD)
    promoted = client_for(reviewer_a).get(reverse("audit:set-list")).content.decode()
    assert import_link in promoted and "· lead" in promoted


def test_set_detail_restored_from_history_shows_the_release_summary(client_for, lead, handmade):
    # Back after htmx's history cache was evicted: htmx asks for the whole page again, with
    # its header set; the page must be the full one, release summary included.
    response = client_for(lead).get(
        reverse("audit:set-detail", args=[handmade.pk]),
        HTTP_HX_REQUEST="true",
        HTTP_HX_HISTORY_RESTORE_REQUEST="true",
    )

    assert response.status_code == 200
    assert response.content.decode().count('aria-label="Release summary"') == 1


def test_set_detail_htmx_filter_gets_only_the_table(client_for, lead, handmade):
    response = client_for(lead).get(
        reverse("audit:set-detail", args=[handmade.pk]), HTTP_HX_REQUEST="true"
    )

    assert response.status_code == 200
    assert response.content.decode().count('aria-label="Release summary"') == 0
    assert response.content.decode().count("<html") == 0


def test_set_detail_badges_and_filters_answers_no_citation_verifies(client_for, lead, handmade):
    url = reverse("audit:set-detail", args=[handmade.pk])
    Answer.objects.filter(external_id="hm-2-a").update(external_id="<b>hm-2-a</b>")

    everything = client_for(lead).get(url)
    flagged = client_for(lead).get(url, {"no_citation_verifies": "true"})
    cleared = client_for(lead).get(url, {"no_citation_verifies": "false"})

    body = everything.content.decode()
    assert body.count('class="flag unknown no-citation-verifies"') == 2
    assert "&lt;b&gt;hm-2-a&lt;/b&gt;</a> <span" in body
    assert '<option value="true">yes</option>' in body.split('name="no_citation_verifies"')[1]
    assert [r.record.external_id for r in flagged.context["table"].rows] == [
        "<b>hm-2-a</b>",
        "hm-5-a",
    ]
    assert len(cleared.context["table"].rows) == 5
    assert "no citation verifies</span>" not in cleared.content.decode()


def test_label_distribution_counts_answers_no_citation_verifies(client_for, lead, handmade):
    response = client_for(lead).get(reverse("audit:label-distribution", args=[handmade.pk]))

    per_system = response.context["sections"][0]["rows"]
    assert [(r["group"], r["answers"], r["no_citation_verifies"]) for r in per_system] == [
        ("handmade v1", 5, (2, 40.0)),
        ("handmade v2", 2, (0, 0.0)),
    ]
    assert '<th class="num">No citation verifies</th>' in response.content.decode()
