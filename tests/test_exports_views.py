"""The lead's export downloads: streamed, lead-only, one link per format on the set page."""

from __future__ import annotations

import json

import pytest
from django.http import StreamingHttpResponse
from django.template.loader import render_to_string
from django.test import RequestFactory
from django.urls import reverse

from audit.models import Job
from audit.views.exports import set_export
from tests import test_exports

# The reviewed set the export tests build, shared rather than built twice.
reviewed = test_exports.reviewed
_export = test_exports._export

pytestmark = pytest.mark.django_db


def _url(audit_set, fmt: str) -> str:
    return reverse("audit:set-export", args=[audit_set.pk, fmt])


def _body(response: StreamingHttpResponse) -> str:
    return b"".join(response.streaming_content).decode("utf-8")


@pytest.mark.parametrize(
    ("fmt", "content_type", "filename"),
    [
        ("jsonl", "application/x-ndjson; charset=utf-8", "calibration-jsonl.jsonl"),
        ("audit-sheets", "application/json; charset=utf-8", "calibration-audit-sheets.json"),
        ("csv", "text/csv; charset=utf-8", "calibration-csv.csv"),
        ("evidence", "text/csv; charset=utf-8", "calibration-evidence.csv"),
    ],
)
def test_lead_downloads_every_format(client_for, lead, reviewed, fmt, content_type, filename):
    response = client_for(lead).get(_url(reviewed, fmt))

    assert response.status_code == 200
    assert response.streaming is True
    assert response["Content-Type"] == content_type
    assert response["Content-Disposition"] == f'attachment; filename="{filename}"'
    assert response["Cache-Control"] == "private, no-store"
    assert _body(response) == _export(reviewed, fmt)


def test_downloaded_sheets_parse_as_one_json_array(client_for, lead, reviewed):
    items = json.loads(_body(client_for(lead).get(_url(reviewed, "audit-sheets"))))

    assert {item["kind"] for item in items} == {"sheet", "gold"}


def test_reviewer_may_not_download(client_for, reviewer_a, reviewed):
    assert client_for(reviewer_a).get(_url(reviewed, "jsonl")).status_code == 403


def test_anonymous_user_is_sent_to_login(client, reviewed):
    response = client.get(_url(reviewed, "jsonl"))

    assert response.status_code == 302
    assert response.url.startswith(reverse("login"))


def test_unknown_format_or_set_is_not_found(client_for, lead, reviewed):
    assert client_for(lead).get(_url(reviewed, "xml")).status_code == 404
    assert client_for(lead).get(reverse("audit:set-export", args=[9999, "csv"])).status_code == 404


def test_a_post_queues_the_export_as_a_job(client_for, lead, reviewed):
    response = client_for(lead).post(_url(reviewed, "csv"))

    job = Job.objects.get()
    assert (job.kind, job.params, job.created_by) == ("export", {"format": "csv"}, lead)
    assert response.url == job.get_absolute_url()


def test_view_streams_through_a_request_factory(lead, reviewed):
    request = RequestFactory().get("/")
    request.user = lead

    response = set_export(request, reviewed.pk, "csv")

    assert isinstance(response, StreamingHttpResponse)
    assert _body(response) == _export(reviewed, "csv")


def test_export_partial_links_every_format(reviewed):
    html = render_to_string("audit/set_detail.html#exports", {"audit_set": reviewed})

    assert [
        fmt
        for fmt in ("jsonl", "audit-sheets", "csv", "evidence")
        if f'href="/sets/{reviewed.pk}/export/{fmt}/"' in html
    ] == [
        "jsonl",
        "audit-sheets",
        "csv",
        "evidence",
    ]
