"""Jobs beyond imports: exports of a large set, recomputing machine checks, comparing again
after a settings change and machine verdicts, each with progress, cancel and all or nothing;
and a real worker process running every kind."""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from audit import services
from audit.formats import parse_file
from audit.models import AuditSet, ClaimCheck, Job, RaterLabel, Severity
from audit.selectors.jobs import export_path
from audit.services import job_runners, jobs
from audit.services.exports import EXPORT_FORMATS
from tests.conftest import FIXTURES, import_file, kill_worker_part_way, run_queued_jobs
from tests.factories import UserFactory, claim_at, default_workspace, evidence_ref, submit_sheet
from tests.formats.helpers import jsonl, native_line
from tests.test_exports import _export

pytestmark = pytest.mark.django_db

FULL_TIME = "Full-time employees are entitled to 25 days of paid annual leave in each leave year."
PART_TIME = "Part-time employees receive the same entitlement pro rata to their contracted hours."


def _cancel_after_first_report(monkeypatch) -> list[int]:
    """As a lead's cancel arriving once the job has reported some rows done."""
    reports: list[int] = []
    report = jobs._report

    def cancel_after_first(job, *, done, total):
        report(job, done=done, total=total)
        reports.append(done)
        if done and len(reports) == 3:
            services.job_cancel(job=Job.objects.get(pk=job.pk))

    monkeypatch.setattr(jobs, "_report", cancel_after_first)
    return reports


# ----------------------------------------------------------------------------- exports


@pytest.mark.parametrize("fmt", list(EXPORT_FORMATS))
def test_a_large_set_is_exported_by_a_job_whose_file_is_the_streamed_export(
    client_for, lead, handmade, settings, fmt
):
    settings.WEB_DIRECT_MAX_ANSWERS = 1
    client = client_for(lead)
    url = reverse("audit:set-export", args=[handmade.pk, fmt])

    offer = client.get(url)
    assert offer.status_code == 200
    assert "Prepare the export" in offer.content.decode()
    assert not Job.objects.exists()  # a GET starts nothing
    response = client.post(url)
    job = Job.objects.get()
    assert (response.status_code, response.url) == (302, job.get_absolute_url())
    run_queued_jobs()

    job.refresh_from_db()
    assert (job.kind, job.status, job.total, job.result["answers"]) == ("export", "succeeded", 7, 7)
    download = client.get(reverse("audit:job-download", args=[job.pk]))
    assert download.status_code == 200
    spec = EXPORT_FORMATS[fmt]
    assert download["Content-Type"] == spec.content_type
    assert download["Content-Disposition"] == (
        f'attachment; filename="calibration-{fmt}.{spec.extension}"'
    )
    assert download["Cache-Control"] == "private, no-store"
    body = b"".join(download.streaming_content).decode()
    assert body == _export(handmade, fmt, viewer=lead)
    assert job.result["size"] == len(body.encode())
    page = client.get(job.get_absolute_url()).content.decode()
    assert f'href="/jobs/{job.pk}/download/"' in page


def test_a_small_set_still_streams_and_its_page_links_straight_to_the_files(
    client_for, lead, handmade
):
    client = client_for(lead)

    response = client.get(reverse("audit:set-export", args=[handmade.pk, "csv"]))
    page = client.get(handmade.get_absolute_url()).content.decode()

    assert response.streaming is True
    assert f'href="/sets/{handmade.pk}/export/csv/" download' in page
    assert "each export is written by a job" not in page


def test_a_large_sets_page_links_to_the_export_offer_not_to_a_file(
    client_for, lead, handmade, settings
):
    settings.WEB_DIRECT_MAX_ANSWERS = 1

    page = client_for(lead).get(handmade.get_absolute_url()).content.decode()

    assert f'href="/sets/{handmade.pk}/export/csv/">' in page
    assert "each export is written by a job" in page


def test_only_the_lead_who_asked_may_download_and_only_until_the_link_expires(
    client_for, lead, handmade, settings
):
    job = services.job_export_create(audit_set=handmade, fmt="jsonl", user=lead)
    run_queued_jobs()
    url = reverse("audit:job-download", args=[job.pk])
    other = Client()
    other.force_login(UserFactory(username="lead2", role="lead"))

    assert other.get(url).status_code == 404
    assert "Only lead may download it" in other.get(job.get_absolute_url()).content.decode()
    assert client_for(lead).get(url).status_code == 200

    job.refresh_from_db()
    job.result["expires_at"] = (timezone.now() - timedelta(seconds=1)).isoformat()
    job.save(update_fields=["result"])
    assert client_for(lead).get(url).status_code == 404
    assert "The link has expired" in client_for(lead).get(job.get_absolute_url()).content.decode()

    # Its file is removed when the next export is queued, a link's lifetime after it ended.
    path = export_path(job, "jsonl")
    assert path.exists()
    Job.objects.filter(pk=job.pk).update(finished_at=timezone.now() - timedelta(hours=25))
    services.job_export_create(audit_set=handmade, fmt="csv", user=lead)
    assert not path.exists()


def test_an_import_job_has_nothing_to_download(client_for, lead, handmade):
    job = Job.objects.create(kind=Job.Kind.IMPORT, audit_set=handmade, token="imp")

    assert client_for(lead).get(reverse("audit:job-download", args=[job.pk])).status_code == 404


def test_a_cancelled_export_leaves_no_file(lead, handmade, monkeypatch):
    monkeypatch.setattr("audit.services.exports.CHUNK", 1)
    reports = _cancel_after_first_report(monkeypatch)
    job = services.job_export_create(audit_set=handmade, fmt="jsonl", user=lead)

    run_queued_jobs()

    job.refresh_from_db()
    assert job.status == "cancelled"
    assert reports[:3] == [0, 0, 1]
    assert list(export_path(job, "jsonl").parent.iterdir()) == []


# ----------------------------------------------------------------------------- rematch


def test_rematch_job_recomputes_every_check(client_for, lead, handmade):
    expected = dict(ClaimCheck.objects.values_list("claim_id", "best_score"))
    ClaimCheck.objects.update(best_score=-1.0)
    client = client_for(lead)

    response = client.post(reverse("audit:set-rematch", args=[handmade.pk]))
    job = Job.objects.get()
    assert response.url == job.get_absolute_url()
    run_queued_jobs()

    job.refresh_from_db()
    assert (job.status, job.total, job.result["claims"]) == ("succeeded", 7, len(expected))
    assert dict(ClaimCheck.objects.values_list("claim_id", "best_score")) == expected
    page = client.get(job.get_absolute_url()).content.decode()
    assert f"the machine checks of {len(expected)} claims" in page


def test_a_cancelled_rematch_keeps_every_old_check(lead, handmade, monkeypatch):
    ClaimCheck.objects.update(best_score=-1.0)
    monkeypatch.setattr(job_runners, "_PROGRESS_ROWS", 1)
    reports = _cancel_after_first_report(monkeypatch)
    job = services.job_rematch_create(audit_set=handmade, user=lead)

    run_queued_jobs()

    job.refresh_from_db()
    assert job.status == "cancelled"
    assert reports[:3] == [0, 0, 1]
    assert set(ClaimCheck.objects.values_list("best_score", flat=True)) == {-1.0}


# -------------------------------------------------------------------------- recompare


def _confirm_claim(reviewer_a, reviewer_b):
    """A claim whose sheets agree with evidence Jaccard 0.5: queued to confirm."""
    claim = claim_at("hm-1-a", 1)
    one, two = evidence_ref(claim, 1, FULL_TIME), evidence_ref(claim, 1, PART_TIME)
    submit_sheet(reviewer_a, claim, "partially_supported", one)
    submit_sheet(reviewer_b, claim, "partially_supported", one, two)
    claim.refresh_from_db()
    assert claim.severity == Severity.CONFIRM
    return claim


def test_settings_of_a_large_set_change_through_a_job_all_at_once(
    client_for, lead, opened, reviewer_a, reviewer_b, settings
):
    claim = _confirm_claim(reviewer_a, reviewer_b)
    settings.WEB_DIRECT_MAX_ANSWERS = 1
    client = client_for(lead)

    response = client.post(
        reverse("audit:adjudication-settings", args=[opened.pk]),
        {"auto_gold": "on", "evidence_jaccard_threshold": "0.6"},
    )
    job = Job.objects.get()
    assert response.url == job.get_absolute_url()
    opened.refresh_from_db()
    assert opened.evidence_jaccard_threshold == 0.5  # nothing changes before the job runs

    run_queued_jobs()

    job.refresh_from_db()
    opened.refresh_from_db()
    claim.refresh_from_db()
    assert (job.kind, job.status, job.total) == ("recompare", "succeeded", 1)
    assert job.result == {"compared": 1, "unanimous": 0, "queued": 1}
    assert opened.evidence_jaccard_threshold == 0.6
    assert claim.severity == Severity.EVIDENCE
    assert "Compared 1 finished claims again" in client.get(job.get_absolute_url()).content.decode()


def test_a_cancelled_recompare_keeps_the_old_settings(
    lead, opened, reviewer_a, reviewer_b, monkeypatch
):
    claim = _confirm_claim(reviewer_a, reviewer_b)
    # A second finished claim, in another answer: the job compares them in two parts.
    other = claim_at("hm-2-a", 0)
    submit_sheet(reviewer_a, other, "not_supported")
    submit_sheet(reviewer_b, other, "unclear")
    monkeypatch.setattr("audit.services.derived.CHUNK", 1)
    reports = _cancel_after_first_report(monkeypatch)
    job = services.job_recompare_create(
        audit_set=opened,
        user=lead,
        auto_gold=True,
        evidence_jaccard_threshold=0.6,
        anonymous_adjudication=True,
    )

    run_queued_jobs()

    job.refresh_from_db()
    opened.refresh_from_db()
    claim.refresh_from_db()
    assert job.status == "cancelled"
    assert reports[:3] == [0, 0, 1]
    assert (opened.evidence_jaccard_threshold, opened.anonymous_adjudication) == (0.5, False)
    assert claim.severity == Severity.CONFIRM


# --------------------------------------------------------------------------- verdicts


def _verdicts(*lines: dict) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def test_a_large_verdict_file_is_imported_by_a_job(client_for, lead, handmade, settings):
    settings.WEB_DIRECT_MAX_VERDICT_BYTES = 10
    data = _verdicts(
        {"judge": "nli", "answer_id": "hm-1-a", "claim_index": 0, "judgment": "supported"},
        {"judge": "nli", "answer_id": "hm-1-a", "claim_index": 1, "judgment": "unclear"},
    )
    client = client_for(lead)

    response = client.post(
        reverse("audit:verdicts-upload", args=[handmade.pk]),
        {"file": SimpleUploadedFile("judge.jsonl", data)},
    )
    job = Job.objects.get()
    assert response.url == job.get_absolute_url()
    run_queued_jobs()

    job.refresh_from_db()
    assert (job.kind, job.status, job.total) == ("verdicts", "succeeded", 2)
    assert job.result == {"judges": ["nli"], "created": 2, "replaced": 0}
    assert RaterLabel.objects.filter(rater__name="nli").count() == 2
    assert "Imported verdicts of nli." in client.get(job.get_absolute_url()).content.decode()


def test_a_verdict_job_that_fails_writes_nothing_and_names_the_place(lead, handmade):
    data = _verdicts(
        {"judge": "nli", "answer_id": "hm-1-a", "claim_index": 0, "judgment": "supported"},
        {"judge": "nli", "answer_id": "nope", "claim_index": 0, "judgment": "supported"},
    )
    job = services.job_verdicts_create(
        upload=SimpleUploadedFile("judge.jsonl", data), audit_set=handmade, user=lead
    )

    run_queued_jobs()

    job.refresh_from_db()
    assert job.status == "failed"
    assert job.error == "judge.jsonl: line 2: answer_id: no answer 'nope' in set 'Calibration'"
    assert RaterLabel.objects.count() == 0


# ------------------------------------------------------------------- a worker process


@pytest.mark.usefixtures("role_groups")
@pytest.mark.django_db(transaction=True)
def test_a_worker_process_runs_every_kind_of_job(lead, start_worker):
    audit_set = AuditSet.objects.create(workspace=default_workspace(), name="Worked")
    import_file(audit_set, FIXTURES / "demo" / "handmade.jsonl")
    data = _verdicts(
        {"judge": "nli", "answer_id": "hm-1-a", "claim_index": 0, "judgment": "supported"}
    )
    queued = [
        services.job_export_create(audit_set=audit_set, fmt="csv", user=lead),
        services.job_rematch_create(audit_set=audit_set, user=lead),
        services.job_recompare_create(
            audit_set=audit_set,
            user=lead,
            auto_gold=False,
            evidence_jaccard_threshold=0.7,
            anonymous_adjudication=False,
        ),
        services.job_verdicts_create(
            upload=SimpleUploadedFile("v.jsonl", data), audit_set=audit_set, user=lead
        ),
    ]

    worker = start_worker("--batch")
    _, errors = worker.communicate(timeout=180)

    assert worker.returncode == 0, errors
    done = {job.kind: job for job in Job.objects.order_by("pk")}
    assert [done[job.kind].status for job in queued] == ["succeeded"] * 4
    assert export_path(done["export"], "csv").read_bytes().decode() == _export(
        audit_set, "csv", viewer=lead
    )
    assert done["rematch"].result["claims"] == ClaimCheck.objects.count()
    audit_set.refresh_from_db()
    assert audit_set.evidence_jaccard_threshold == 0.7
    assert RaterLabel.objects.count() == 1


def test_the_job_list_names_each_kind_and_counts_in_its_own_unit(
    client_for, lead, handmade, monkeypatch
):
    export = services.job_export_create(audit_set=handmade, fmt="evidence", user=lead)
    recompare = services.job_recompare_create(
        audit_set=handmade,
        user=lead,
        auto_gold=True,
        evidence_jaccard_threshold=0.5,
        anonymous_adjudication=False,
    )
    Job.objects.filter(pk=recompare.pk).update(status="running")
    recompare.refresh_from_db()
    jobs._report(recompare, done=3, total=9)
    client = client_for(lead)

    listing = client.get(reverse("audit:job-list")).content.decode()
    page = client.get(recompare.get_absolute_url()).content.decode()

    assert f">Export #{export.pk}</a></td>\n      <td>evidence</td>" in listing
    assert f">Compare again #{recompare.pk}</a>" in listing and "Running (3 of 9)" in listing
    assert "3 of 9 claims" in page
    assert "unanimous gold on, evidence threshold 0.5, anonymous adjudication off" in page


@pytest.mark.usefixtures("role_groups")
@pytest.mark.django_db(transaction=True)
def test_kill_9_of_the_worker_mid_rematch_keeps_every_old_check(lead, settings, start_worker):
    n = 200
    audit_set = AuditSet.objects.create(workspace=default_workspace(), name="Killed")
    data = jsonl(*(native_line(question_id=f"q{i}", answer_id=f"a{i}") for i in range(n)))
    services.answers_import(
        audit_set=audit_set,
        parsed=parse_file(data, "k.jsonl"),
        filename="k.jsonl",
        sha256=hashlib.sha256(data).hexdigest(),
    )
    ClaimCheck.objects.update(best_score=-1.0)
    job = services.job_rematch_create(audit_set=audit_set, user=lead)
    worker = start_worker()
    kill_worker_part_way(worker, job, n)

    assert set(ClaimCheck.objects.values_list("best_score", flat=True)) == {-1.0}
    settings.JOB_STALE_SECONDS = 0
    services.job_retry(job=job)
    rerun = start_worker("--batch")
    _, errors = rerun.communicate(timeout=300)

    assert rerun.returncode == 0, errors
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("succeeded", 2)
    assert -1.0 not in set(ClaimCheck.objects.values_list("best_score", flat=True))
