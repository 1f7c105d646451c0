"""Suggestions from a model outside the app: the file and body format with errors naming
line and field, the push checked against the set's claims and passages and stored all or
nothing, replaced on a re-push, queued as a job when large; the API and upload page as
doors onto the same service."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import PermissionDenied
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from audit import services
from audit.formats import FormatError
from audit.formats.suggestions import Span, parse_records, parse_suggestions
from audit.models import AuditSet, Claim, Job, Membership, Suggestion, SuggestionSource, Workspace
from tests.conftest import FIXTURES, api_client, import_file, run_queued_jobs
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


def _lines(*objs) -> bytes:
    return "".join(json.dumps(o) + "\n" for o in objs).encode()


def _parse_error(data: bytes) -> str:
    with pytest.raises(FormatError) as err:
        parse_suggestions(data, "s.jsonl", max_bytes=10_000)
    return str(err.value)


# ------------------------------------------------------------------------------ the format


def test_a_full_record_is_parsed_with_every_part():
    (record,) = parse_suggestions(
        _lines(
            {
                "claim": "hm-1-a claim 1",
                "judgment": "supported",
                "judgment_score": 0.9,
                "evidence": [{"passage": 1, "start": 0, "end": 40, "score": 0.8}],
                "unsupported": [{"start": 3, "end": 9, "score": 0.7}],
                "wrong_citation": {"passage": 2, "score": 0.6},
            }
        ),
        "s.jsonl",
        max_bytes=10_000,
    )
    assert (record.location, record.claim, record.judgment, record.judgment_score) == (
        "line 1",
        "hm-1-a claim 1",
        "supported",
        0.9,
    )
    assert record.evidence == (Span(0, 40, 1, 0.8),)
    assert record.unsupported == (Span(3, 9, None, 0.7),)
    assert (record.wrong_citation_passage, record.wrong_citation_score) == (2, 0.6)


def test_only_the_claim_is_required():
    (record,) = parse_suggestions(b'{"claim": 7}\n', "s.jsonl", max_bytes=100)
    assert (record.claim, record.judgment, record.evidence, record.judgment_score) == (
        7,
        "",
        (),
        None,
    )


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ({"judgment": "supported"}, "s.jsonl: line 2: claim: required"),
        ({"claim": 1, "judgment": "maybe"}, "s.jsonl: line 2: judgment: unknown judgment 'maybe'"),
        (
            {"claim": 1, "judgment": "supported", "judgment_score": 1.5},
            "line 2: judgment_score: expected a number from 0 to 1, got 1.5",
        ),
        (
            {"claim": 1, "evidence": [{"passage": 1, "start": 0.5, "end": 4}]},
            "line 2: evidence[0].start: expected a whole number from 0, got 0.5",
        ),
        (
            {"claim": 1, "evidence": [{"passage": 1, "start": 4, "end": 4}]},
            "line 2: evidence[0].end: end 4 is not after start 4",
        ),
        (
            {"claim": 1, "unsupported": [{"start": 0, "end": 4, "passage": 1}]},
            "line 2: unsupported[0].passage: unknown field",
        ),
        ({"claim": 1, "colour": "red"}, "line 2: colour: unknown field"),
        (
            {"claim": 1, "wrong_citation": {"passage": 0}},
            "line 2: wrong_citation.passage: expected a passage number from 1, got 0",
        ),
        ({"claim": True}, "line 2: claim: expected a claim id or name, got boolean"),
        ({"claim": 1, "judgment_score": 0.5}, "line 2: judgment_score: a score needs a judgment"),
    ],
)
def test_a_bad_field_is_named_with_its_line(line, expected):
    message = _parse_error(_lines({"claim": 99}, line))
    assert expected in message


def test_nan_infinity_nul_and_oversize_files_are_refused():
    assert "NaN is not a number JSON allows" in _parse_error(
        b'{"claim": 1, "judgment": "supported", "judgment_score": NaN}\n'
    )
    assert "too large a number" in _parse_error(
        b'{"claim": 1, "judgment": "supported", "judgment_score": 1e400}\n'
    )
    assert "NUL byte" in _parse_error(b'{"claim": 1}\n\x00')
    assert "over the limit" in _parse_error(b'{"claim": 1}\n' * 1000)
    assert "a second suggestion for the same claim (line 1)" in _parse_error(
        _lines({"claim": 3}, {"claim": 3})
    )


def test_a_body_list_names_each_record_by_index_and_refuses_nan():
    with pytest.raises(FormatError) as err:
        parse_records(
            [{"claim": 1}, {"claim": 2, "judgment": "supported", "judgment_score": float("nan")}],
            "body",
        )
    assert (
        str(err.value)
        == "body: suggestions[1].judgment_score: expected a number from 0 to 1, got nan"
    )


# ------------------------------------------------------------------------------ the service


def _claim(audit_set, answer="hm-1-a", order=0) -> Claim:
    return Claim.objects.get(
        answer__audit_set=audit_set, answer__external_id=answer, order=order, parent=None
    )


def _push(audit_set, lead, records, **kw):
    return services.suggestions_push(
        audit_set=audit_set, user=lead, name="nli", version="1", records=records, **kw
    )


def test_a_push_stores_each_part_and_fills_the_unsupported_words(handmade, lead):
    claim = _claim(handmade)
    summary = _push(
        handmade,
        lead,
        [
            {
                "claim": "hm-1-a claim 1",
                "judgment": "supported",
                "judgment_score": 0.9,
                "evidence": [{"passage": 1, "start": 13, "end": 40, "score": 0.8}],
                "unsupported": [{"start": 0, "end": 9, "score": 0.7}],
                "wrong_citation": {"passage": 2, "score": 0.25},
            },
            {"claim": _claim(handmade, "hm-2-a").pk, "judgment": "unclear"},
        ],
    )
    source = SuggestionSource.objects.get()
    assert (summary.source, summary.created, summary.replaced) == (f"source:{source.pk}", 2, 0)
    row = Suggestion.objects.get(claim=claim)
    assert (
        row.judgment,
        row.judgment_score,
        row.wrong_citation_passage,
        row.wrong_citation_score,
    ) == ("supported", 0.9, 2, 0.25)
    assert row.evidence == [{"passage": 1, "start": 13, "end": 40, "score": 0.8}]
    assert row.unsupported == [{"start": 0, "end": 9, "text": claim.text[0:9], "score": 0.7}]
    assert claim.text[0:9] == "Full-time"


def test_a_repush_of_the_same_source_replaces_and_changes_nothing_else(handmade, lead):
    first = [{"claim": "hm-1-a claim 1", "judgment": "supported"}, {"claim": "hm-1-a claim 2"}]
    _push(handmade, lead, first)
    again = _push(handmade, lead, [{"claim": "hm-1-a claim 1", "judgment": "contradicted"}])
    assert (again.created, again.replaced) == (0, 1)
    assert SuggestionSource.objects.count() == 1
    assert sorted(Suggestion.objects.values_list("claim__order", "judgment")) == [
        (0, "contradicted"),
        (1, ""),
    ]
    _push(handmade, lead, [{"claim": "hm-1-a claim 1", "judgment": "contradicted"}])
    assert Suggestion.objects.count() == 2


@pytest.mark.parametrize(
    ("record", "expected"),
    [
        (
            {"claim": 999999},
            "request body: suggestions[1].claim: no claim 999999 in set 'Calibration'",
        ),
        ({"claim": "nope claim 1"}, "suggestions[1].claim: no answer 'nope' in set"),
        ({"claim": "hm-1-a claim 9"}, "suggestions[1].claim: answer 'hm-1-a' has no claim 9"),
        ({"claim": "hm-1-a"}, "suggestions[1].claim: expected a claim id or a name"),
        (
            {"claim": "hm-1-a claim 2", "evidence": [{"passage": 7, "start": 0, "end": 2}]},
            "suggestions[1].evidence[0].passage: the claim's answer has no passage 7 (it has 1, 2)",
        ),
        (
            {"claim": "hm-1-a claim 2", "evidence": [{"passage": 1, "start": 0, "end": 100000}]},
            "suggestions[1].evidence[0].end: end 100000 is past passage 1's text",
        ),
        (
            {"claim": "hm-1-a claim 2", "unsupported": [{"start": 0, "end": 100000}]},
            "suggestions[1].unsupported[0].end: end 100000 is past the claim's text",
        ),
        (
            {"claim": "hm-1-a claim 2", "wrong_citation": {"passage": 3}},
            "suggestions[1].wrong_citation.passage: the claim's answer has no passage 3",
        ),
        ({"claim": "hm-1-a claim 1"}, "suggestions[1].claim: a second suggestion for claim"),
    ],
)
def test_a_push_refused_by_the_set_names_record_and_field_and_writes_nothing(
    handmade, lead, record, expected
):
    first = {"claim": _claim(handmade).pk, "judgment": "supported"}
    with pytest.raises(FormatError) as err:
        _push(handmade, lead, [first, record])
    assert expected in str(err.value)
    assert (SuggestionSource.objects.count(), Suggestion.objects.count()) == (0, 0)


def test_a_claim_of_another_set_is_not_found(handmade, lead):
    other = AuditSet.objects.create(workspace=handmade.workspace, name="Other")
    import_file(other, FIXTURES / "demo" / "handmade.jsonl")
    with pytest.raises(FormatError, match="no claim"):
        _push(handmade, lead, [{"claim": _claim(other).pk}])
    assert Suggestion.objects.count() == 0


def test_only_a_lead_of_the_set_may_push_or_delete(handmade, lead, reviewer_a):
    with pytest.raises(PermissionDenied):
        _push(handmade, reviewer_a, [{"claim": "hm-1-a claim 1"}])
    outsider = UserFactory(username="elsewhere", role="reviewer")
    space = Workspace.objects.create(name="Elsewhere", slug="elsewhere")
    Membership.objects.create(workspace=space, user=outsider, role=Membership.Role.LEAD)
    with pytest.raises(PermissionDenied):
        _push(handmade, outsider, [{"claim": "hm-1-a claim 1"}])
    _push(handmade, lead, [{"claim": "hm-1-a claim 1"}])
    source = SuggestionSource.objects.get()
    with pytest.raises(PermissionDenied):
        services.source_delete(source=source, user=reviewer_a)
    assert Suggestion.objects.count() == 1


def test_deleting_a_source_removes_its_suggestions_and_the_set_falls_back_to_the_matcher(
    handmade, lead
):
    summary = _push(handmade, lead, [{"claim": "hm-1-a claim 1"}])
    AuditSet.objects.filter(pk=handmade.pk).update(suggestion_source=summary.source)
    services.source_delete(source=SuggestionSource.objects.get(), user=lead)
    handmade.refresh_from_db()
    assert (handmade.suggestion_source, Suggestion.objects.count()) == ("matcher", 0)


def test_a_big_push_goes_to_a_job_that_stores_what_a_direct_push_would(handmade, lead, settings):
    settings.WEB_DIRECT_MAX_SUGGESTIONS = 1
    records = [
        {"claim": "hm-1-a claim 1", "judgment": "supported", "judgment_score": 0.5},
        {"claim": "hm-1-a claim 2", "unsupported": [{"start": 0, "end": 4}]},
    ]
    job = _push(handmade, lead, records)
    assert isinstance(job, Job)
    assert (job.kind, Suggestion.objects.count()) == ("suggestions", 0)
    run_queued_jobs()
    job.refresh_from_db()
    assert (job.status, job.total, job.result["created"]) == ("succeeded", 2, 2)
    assert job.result["source"] == f"source:{SuggestionSource.objects.get().pk}"
    assert sorted(Suggestion.objects.values_list("claim__order", "judgment", "judgment_score")) == [
        (0, "supported", 0.5),
        (1, "", None),
    ]


def test_a_job_whose_record_the_set_refuses_fails_naming_it_and_stores_nothing(handmade, lead):
    records = [
        {"claim": "hm-1-a claim 1"},
        {"claim": "hm-1-a claim 2", "wrong_citation": {"passage": 9}},
    ]
    job = _push(handmade, lead, records, as_job=True)
    run_queued_jobs()
    job.refresh_from_db()
    assert job.status == "failed"
    assert "suggestions[1].wrong_citation.passage: the claim's answer has no passage 9" in job.error
    assert (SuggestionSource.objects.count(), Suggestion.objects.count()) == (0, 0)


# ------------------------------------------------------------------------------ the API


def test_the_api_push_answers_the_summary_and_lists_the_source(handmade, lead):
    client = api_client(lead)
    url = f"/api/v1/sets/{handmade.pk}/suggestions"
    body = {
        "name": "nli",
        "version": "2",
        "suggestions": [
            {
                "claim": "hm-1-a claim 1",
                "judgment": "supported",
                "judgment_score": 0.75,
                "evidence": [{"passage": 1, "start": 13, "end": 40, "score": 0.5}],
                "unsupported": [{"start": 0, "end": 9}],
            },
        ],
    }
    response = client.post(url, body, content_type="application/json")
    assert response.status_code == 200, response.content
    source = SuggestionSource.objects.get()
    assert response.json() == {
        "source": f"source:{source.pk}",
        "name": "nli",
        "version": "2",
        "created": 1,
        "replaced": 0,
    }
    sources = client.get(f"/api/v1/sets/{handmade.pk}/suggestion-sources").json()
    assert sources[0] == {
        "key": "matcher",
        "name": "Matcher",
        "version": sources[0]["version"],
        "kind": "matcher",
    }
    assert sources[-1] == {
        "key": f"source:{source.pk}",
        "name": "nli",
        "version": "2",
        "kind": "source",
    }
    page = client.get(url, {"source": f"source:{source.pk}"}).json()
    claim = _claim(handmade)
    assert page == {
        "items": [
            {
                "claim": claim.pk,
                "claim_name": "hm-1-a claim 1",
                "source": f"source:{source.pk}",
                "name": "nli",
                "version": "2",
                "judgment": "supported",
                "judgment_score": 0.75,
                "evidence": [{"passage": 1, "start": 13, "end": 40, "score": 0.5}],
                "unsupported": [{"start": 0, "end": 9, "text": "Full-time", "score": None}],
                "wrong_citation_passage": None,
                "wrong_citation_score": None,
            }
        ],
        "next_cursor": None,
    }


def test_the_api_pages_the_matchers_suggestions_by_cursor(handmade, lead):
    client = api_client(lead)
    url = f"/api/v1/sets/{handmade.pk}/suggestions"
    seen, cursor = [], ""
    while True:
        page = client.get(url, {"source": "matcher", "limit": 2, "cursor": cursor}).json()
        seen += [item["claim"] for item in page["items"]]
        assert all(
            item["source"] == "matcher" and item["name"] == "Matcher" for item in page["items"]
        )
        cursor = page["next_cursor"]
        if not cursor:
            break
    expected = list(
        Claim.objects.filter(answer__audit_set=handmade, machine_check__isnull=False)
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    assert seen == expected
    assert len(expected) > 2


def test_the_api_refuses_a_bad_record_with_a_problem_naming_the_field(handmade, lead):
    body = {
        "name": "nli",
        "version": "1",
        "suggestions": [{"claim": "hm-1-a claim 1", "judgment": "maybe"}],
    }
    response = api_client(lead).post(
        f"/api/v1/sets/{handmade.pk}/suggestions", body, content_type="application/json"
    )
    assert response.status_code == 422
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["errors"][0]["field"] == "body.suggestions[0].judgment"
    assert problem["errors"][0]["message"].startswith("unknown judgment 'maybe'")
    assert Suggestion.objects.count() == 0


def test_the_api_async_push_answers_202_with_the_job(handmade, lead):
    body = {"name": "nli", "version": "1", "suggestions": [{"claim": "hm-1-a claim 1"}]}
    response = api_client(lead).post(
        f"/api/v1/sets/{handmade.pk}/suggestions?async=true", body, content_type="application/json"
    )
    assert response.status_code == 202
    assert response.json()["kind"] == "suggestions"
    run_queued_jobs()
    assert Suggestion.objects.count() == 1


def test_the_api_file_push_names_the_line(handmade, lead):
    data = _lines({"claim": "hm-1-a claim 1"}, {"claim": "hm-1-a claim 2", "judgment": "maybe"})
    response = api_client(lead).post(
        f"/api/v1/sets/{handmade.pk}/suggestions/file",
        {"file": SimpleUploadedFile("nli.jsonl", data), "name": "nli", "version": "1"},
    )
    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "file.judgment"
    assert "line 2: unknown judgment 'maybe'" in response.json()["detail"]
    good = _lines({"claim": "hm-1-a claim 1"}, {"claim": "hm-1-a claim 2", "judgment": "unclear"})
    response = api_client(lead).post(
        f"/api/v1/sets/{handmade.pk}/suggestions/file",
        {"file": SimpleUploadedFile("nli.jsonl", good), "name": "nli", "version": "1"},
    )
    assert (response.status_code, response.json()["created"]) == (200, 2)


def test_reviewers_and_other_workspaces_get_no_suggestions_through_the_api(
    handmade, lead, reviewer_a
):
    _push(handmade, lead, [{"claim": "hm-1-a claim 1", "judgment": "supported"}])
    body = {"name": "x", "version": "1", "suggestions": [{"claim": "hm-1-a claim 1"}]}
    outsider = UserFactory(username="elsewhere", role="lead")
    space = Workspace.objects.create(name="Elsewhere", slug="elsewhere")
    Membership.objects.create(workspace=space, user=outsider, role=Membership.Role.LEAD)
    Membership.objects.filter(user=outsider).exclude(workspace=space).delete()
    base = f"/api/v1/sets/{handmade.pk}"
    for user, status in ((reviewer_a, 403), (outsider, 404)):
        client = api_client(user)
        assert client.get(f"{base}/suggestions", {"source": "matcher"}).status_code == status
        assert client.get(f"{base}/suggestion-sources").status_code == status
        pushed = client.post(f"{base}/suggestions", body, content_type="application/json")
        assert pushed.status_code == status
    read_only = api_client(lead, scope="read")
    assert read_only.get(f"{base}/suggestion-sources").status_code == 200
    assert (
        read_only.post(f"{base}/suggestions", body, content_type="application/json").status_code
        == 403
    )
    assert SuggestionSource.objects.count() == 1


def test_an_unknown_source_key_is_404(handmade, lead):
    client = api_client(lead)
    url = f"/api/v1/sets/{handmade.pk}/suggestions"
    assert client.get(url, {"source": "source:12345"}).status_code == 404
    assert client.get(url, {"source": "bogus"}).status_code == 404


# ------------------------------------------------------------------------------ the page


def test_a_lead_uploads_a_file_on_the_page_and_sees_the_source(handmade, lead, client_for):
    client = client_for(lead)
    url = reverse("audit:suggestions-upload", args=[handmade.pk])
    data = _lines({"claim": "hm-1-a claim 1", "judgment": "supported"}, {"claim": "hm-2-a claim 1"})
    response = client.post(
        url,
        {"name": "nli <b>", "version": "3", "file": SimpleUploadedFile("nli.jsonl", data)},
    )
    page = response.content.decode()
    assert response.status_code == 200
    assert "Imported suggestions of nli &lt;b&gt; 3." in page
    assert "nli <b>" not in page
    assert Suggestion.objects.filter(source__name="nli <b>", source__version="3").count() == 2


def test_a_refused_file_on_the_page_names_line_and_field_and_stores_nothing(
    handmade, lead, client_for
):
    client = client_for(lead)
    url = reverse("audit:suggestions-upload", args=[handmade.pk])
    data = _lines(
        {"claim": "hm-1-a claim 1"},
        {"claim": "hm-1-a claim 2", "evidence": [{"passage": 5, "start": 0, "end": 3}]},
    )
    response = client.post(
        url, {"name": "nli", "version": "1", "file": SimpleUploadedFile("nli.jsonl", data)}
    )
    assert response.status_code == 400
    assert (
        "nli.jsonl: line 2: evidence[0].passage: the claim&#x27;s answer has no passage 5"
        in response.content.decode()
    )
    assert (SuggestionSource.objects.count(), Suggestion.objects.count()) == (0, 0)


def test_a_large_file_on_the_page_goes_to_a_job(handmade, lead, client_for, settings):
    settings.WEB_DIRECT_MAX_VERDICT_BYTES = 10
    client = client_for(lead)
    data = _lines({"claim": "hm-1-a claim 1", "judgment": "unclear"})
    response = client.post(
        reverse("audit:suggestions-upload", args=[handmade.pk]),
        {"name": "nli", "version": "1", "file": SimpleUploadedFile("nli.jsonl", data)},
    )
    job = Job.objects.get()
    assert (response.status_code, response.url) == (302, job.get_absolute_url())
    run_queued_jobs()
    job.refresh_from_db()
    assert (job.status, job.result["created"]) == ("succeeded", 1)
    assert "Imported suggestions of nli 1." in client.get(job.get_absolute_url()).content.decode()


def test_a_lead_deletes_a_source_on_the_page(handmade, lead, client_for):
    _push(handmade, lead, [{"claim": "hm-1-a claim 1"}])
    source = SuggestionSource.objects.get()
    client = client_for(lead)
    url = reverse("audit:suggestions-upload", args=[handmade.pk])
    assert "nli" in client.get(url).content.decode()
    response = client.post(url, {"delete": str(source.pk)})
    assert (response.status_code, response.url) == (302, url)
    assert (SuggestionSource.objects.count(), Suggestion.objects.count()) == (0, 0)
    assert client.post(url, {"delete": str(source.pk)}).status_code == 404


# ------------------------------------------------------------------------------ exports


def test_the_jsonl_export_carries_each_claims_suggestions_with_their_source(handmade, lead):
    from audit.services.exports import export_stream

    _push(
        handmade,
        lead,
        [
            {
                "claim": "hm-1-a claim 1",
                "judgment": "supported",
                "judgment_score": 0.9,
                "evidence": [{"passage": 1, "start": 13, "end": 40, "score": 0.8}],
                "unsupported": [{"start": 0, "end": 9}],
                "wrong_citation": {"passage": 2, "score": 0.3},
            }
        ],
    )
    source = SuggestionSource.objects.get()
    lines = [
        json.loads(line)
        for line in "".join(
            export_stream(audit_set=handmade, fmt="jsonl", viewer=lead)
        ).splitlines()
    ]  # noqa: E501
    claims = [line for line in lines if line["record"] == "claim"]
    first = _claim(handmade)
    by_id = {line["claim"]["db_id"]: line for line in claims}
    assert by_id[first.pk]["suggestions"] == [
        {
            "source": f"source:{source.pk}",
            "name": "nli",
            "version": "1",
            "judgment": "supported",
            "judgment_score": 0.9,
            "evidence": [{"passage": 1, "start": 13, "end": 40, "score": 0.8}],
            "unsupported": [{"start": 0, "end": 9, "text": "Full-time", "score": None}],
            "wrong_citation_passage": 2,
            "wrong_citation_score": 0.3,
        }
    ]
    assert by_id[first.pk]["machine_check"] is not None  # the matcher's stay its check
    assert all(line["suggestions"] == [] for pk, line in by_id.items() if pk != first.pk)


def test_an_export_with_suggestions_reads_back_as_an_import(handmade, lead, tmp_path):
    from audit.formats import parse_file
    from audit.services.exports import export_stream

    _push(handmade, lead, [{"claim": "hm-1-a claim 1", "judgment": "supported"}])
    data = "".join(export_stream(audit_set=handmade, fmt="jsonl")).encode()
    parsed = parse_file(data, "export.jsonl")
    assert parsed.format == "citeaudit"
    assert len(parsed.records) == handmade.answers.count()


def test_suggestions_cost_the_export_one_query_a_chunk_whatever_the_number_of_sources(
    handmade, lead
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from audit.services.exports import export_stream

    def queries(chunk_size: int) -> int:
        with CaptureQueriesContext(connection) as ctx:
            "".join(export_stream(audit_set=handmade, fmt="jsonl", chunk_size=chunk_size))
        return len(ctx.captured_queries)

    before = queries(100), queries(2)
    for version in ("1", "2", "3"):
        services.suggestions_push(
            audit_set=handmade,
            user=lead,
            name="nli",
            version=version,
            records=[{"claim": "hm-1-a claim 1"}, {"claim": "hm-2-a claim 1"}],
        )
    chunks = -(-handmade.answers.count() // 2)
    assert (queries(100), queries(2)) == (before[0] + 1, before[1] + chunks)
