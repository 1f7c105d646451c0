"""Verdict pushes of any size: `?async=true`, or a file too big to store in the request,
goes to a job that stores what a direct push would, with no bound on its verdicts; a
refused line fails the job naming it and stores nothing. The page and the API share the
choice (services.verdicts_push)."""

from __future__ import annotations

import json

import httpx2
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from audit.models import AuditSet, Job, RaterLabel
from citeaudit_client import Client
from citeaudit_client import Job as ClientJob
from tests.conftest import FIXTURES, api_client, import_file, run_queued_jobs
from tests.factories import default_workspace
from tests.test_python_client import _answers, _job, pauses  # noqa: F401 - a fixture

pytestmark = pytest.mark.django_db

CLAIMS = [("hm-1-a", 0), ("hm-1-a", 1), ("hm-1-a", 2), ("hm-2-a", 0), ("hm-3-a", 0)]


def _file(judgment: str = "supported", answer: str = "hm-1-a") -> bytes:
    lines = [
        {"judge": "nli-v1", "answer_id": a if a != "hm-1-a" else answer, "claim_index": i,
         "judgment": judgment}
        for a, i in CLAIMS
    ]  # fmt: skip
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def _push(audit_set, lead, data: bytes, **params):
    url = f"/api/v1/sets/{audit_set.pk}/verdicts"
    if params:
        url += "?" + "&".join(f"{k}={v}" for k, v in params.items())
    return api_client(lead).post(url, {"file": SimpleUploadedFile("judge.jsonl", data)})


def _labels(audit_set) -> list[tuple]:
    return sorted(
        RaterLabel.objects.filter(claim__answer__audit_set=audit_set).values_list(
            "rater__name", "claim__answer__external_id", "claim__order", "judgment"
        )
    )


def test_an_async_push_stores_what_a_direct_push_stores(handmade, lead):
    twin = AuditSet.objects.create(workspace=default_workspace(), name="Twin")
    import_file(twin, FIXTURES / "demo" / "handmade.jsonl")

    direct = _push(handmade, lead, _file())
    queued = _push(twin, lead, _file(), **{"async": "true"})

    assert direct.status_code == 200
    assert queued.status_code == 202, queued.content
    assert queued.json()["kind"] == Job.Kind.VERDICTS
    assert RaterLabel.objects.filter(claim__answer__audit_set=twin).count() == 0
    (job,) = run_queued_jobs()
    assert job.status == Job.Status.SUCCEEDED, job.error
    assert _labels(twin) == _labels(handmade)
    assert len(_labels(twin)) == len(CLAIMS)


def test_a_job_has_no_bound_on_verdicts_where_a_request_has(handmade, lead, settings):
    settings.WEB_IMPORT_MAX_VERDICTS = 2

    refused = _push(handmade, lead, _file())
    queued = _push(handmade, lead, _file(), **{"async": "true"})

    assert refused.status_code == 422
    assert "verdicts" in refused.json()["detail"]
    assert queued.status_code == 202
    run_queued_jobs()
    assert len(_labels(handmade)) == len(CLAIMS)


def test_a_big_file_goes_to_a_job_by_itself(handmade, lead, settings):
    settings.WEB_DIRECT_MAX_VERDICT_BYTES = 100

    response = _push(handmade, lead, _file())

    assert response.status_code == 202
    run_queued_jobs()
    assert len(_labels(handmade)) == len(CLAIMS)


def test_a_refused_line_fails_the_job_naming_it_and_stores_nothing(handmade, lead):
    response = _push(handmade, lead, _file(answer="nope"), **{"async": "true"})

    assert response.status_code == 202
    (job,) = run_queued_jobs()
    assert job.status == Job.Status.FAILED
    assert "line 1: answer_id: no answer 'nope'" in job.error
    assert _labels(handmade) == []


def test_only_a_lead_pushes_and_an_oversized_file_is_413(handmade, lead, reviewer_a, settings):
    assert _push(handmade, reviewer_a, _file(), **{"async": "true"}).status_code in (403, 404)
    settings.IMPORT_MAX_WHOLE_BYTES = 10
    too_big = _push(handmade, lead, _file(), **{"async": "true"})
    assert too_big.status_code == 413
    assert Job.objects.count() == 0


def test_the_upload_page_and_the_api_make_the_same_choice(handmade, lead, client_for, settings):
    settings.WEB_DIRECT_MAX_VERDICT_BYTES = 100
    page = client_for(lead).post(
        reverse("audit:verdicts-upload", args=[handmade.pk]),
        {"file": SimpleUploadedFile("judge.jsonl", _file())},
    )
    job = Job.objects.get()
    assert page.status_code == 302 and page.url == job.get_absolute_url()


def test_the_client_pushes_as_a_job_and_waits_for_it(pauses):  # noqa: F811
    queued = httpx2.Response(202, json=_job("queued", 0, 0).json())
    steps = [_job("running", 2, 5), _job("succeeded", 5, 5)]
    transport, calls = _answers(queued, *steps)
    with Client("http://citeaudit.test", "t", transport=transport) as client:
        job = client.verdicts_push(3, _file(), as_job=True, wait=True, timeout=10)
    assert isinstance(job, ClientJob) and job.ok and job.done == 5
    assert calls[0].url.params["async"] == "true"
    assert calls[0].method == "POST" and calls[0].url.path.endswith("/sets/3/verdicts")

    summary = httpx2.Response(200, json={"judges": ["nli-v1"], "created": 5, "replaced": 0})
    transport, calls = _answers(summary)
    with Client("http://citeaudit.test", "t", transport=transport) as client:
        assert client.verdicts_push(3, _file())["created"] == 5
    assert "async" not in calls[0].url.params
