"""Jobs: an upload is queued, run by a worker, followed on its page, cancelled or run again;
whatever happens to it, an import is all or nothing."""

from __future__ import annotations

import os
import signal
import threading
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from audit import selectors, services
from audit.models import Answer, AuditSet, Claim, Job
from audit.selectors.jobs import CANCEL_KEY, PROGRESS_KEY
from audit.services import imports, job_runners, jobs
from tests.conftest import (
    FIXTURES,
    kill_worker_part_way,
    queue_import,
    run_queued_jobs,
    stored_import_rows,
)
from tests.formats.helpers import jsonl, native_line


def _many(n: int) -> bytes:
    return jsonl(*(native_line(question_id=f"q{i}", answer_id=f"a{i}") for i in range(n)))


@pytest.mark.django_db
def test_a_queued_import_runs_once_even_if_its_task_comes_twice(lead, jobs_dir):
    job = queue_import(lead, _many(3))
    assert (jobs_dir / job.token / "upload").exists()

    services.job_run(job_id=job.pk)
    services.job_run(job_id=job.pk)

    job.refresh_from_db()
    assert (job.status, job.attempts, job.total) == ("succeeded", 1, 3)
    assert job.result["answers"] == 3
    assert Answer.objects.filter(audit_set__name="Uploaded").count() == 3
    # The upload is not kept once the job has ended.
    assert not (jobs_dir / job.token).exists()


@pytest.mark.django_db
def test_a_cancelled_queued_job_never_runs(lead, jobs_dir):
    job = queue_import(lead, _many(2))

    services.job_cancel(job=job)
    services.job_run(job_id=job.pk)

    job.refresh_from_db()
    assert job.status == "cancelled"
    assert not AuditSet.objects.filter(name="Uploaded").exists()
    assert not (jobs_dir / job.token).exists()
    with pytest.raises(services.JobRefused):
        services.job_cancel(job=job)


@pytest.mark.django_db
def test_cancelling_a_running_import_keeps_nothing_of_it(lead, monkeypatch):
    # One answer a chunk, and the lead's cancel arrives after the first one was written.
    monkeypatch.setattr(imports, "CHUNK", 1)
    job = queue_import(lead, _many(5))
    reports = []
    report = jobs._report

    def cancel_after_first(job, *, done, total):
        report(job, done=done, total=total)
        reports.append(done)
        if done == 1:
            running = Job.objects.get(pk=job.pk)
            assert running.status == "running"
            services.job_cancel(job=running)

    monkeypatch.setattr(jobs, "_report", cancel_after_first)

    services.job_run(job_id=job.pk)

    job.refresh_from_db()
    assert job.status == "cancelled"
    assert reports == [0, 0, 1]
    assert not AuditSet.objects.filter(name="Uploaded").exists()
    assert Answer.objects.count() == Claim.objects.count() == 0


@pytest.mark.django_db
def test_an_import_that_fails_on_a_late_line_writes_nothing_and_names_the_place(lead):
    bad = native_line(question_id="q9")
    bad["passages"][0]["text"] = None
    job = queue_import(lead, jsonl(*(native_line(question_id=f"q{i}") for i in range(3)), bad))

    services.job_run(job_id=job.pk)

    job.refresh_from_db()
    assert job.status == "failed"
    assert job.error == "answers.jsonl: line 4: passages[0].text: expected a string, got null"
    assert not AuditSet.objects.filter(name="Uploaded").exists()
    assert Answer.objects.count() == 0


@pytest.mark.django_db
def test_a_job_import_with_matching_processes_stores_what_one_without_does(
    lead, settings, monkeypatch
):
    # Past a chunk of lines, with labels, split and given claims and an uncited passage.
    data = (FIXTURES / "samples" / "native_sample.jsonl").read_bytes() + jsonl(
        *(
            native_line(
                question_id=f"g{i % 200}",
                answer_id=f"g{i}",
                answer=f"The warranty lasts {i} years [1]. Repairs are free [2].",
                passages=[
                    {"title": "W", "url": "", "text": f"The warranty lasts {i} years."},
                    {"title": "R", "url": "", "text": "Repairs are free. Parts cost extra."},
                    {"title": "X", "url": "", "text": "Repairs are free of charge for two years."},
                ],
                labels=[{"rater": "r1", "claim": 1, "judgment": "supported"}] if i % 7 else [],
            )
            for i in range(520)
        )
    )
    read_in_workers = []
    real = imports._read_in_workers
    monkeypatch.setattr(
        imports,
        "_read_in_workers",
        lambda *args: read_in_workers.append(args[-1]) or real(*args),
    )
    # The test process may run threads of its own; db_worker's main thread runs alone.
    monkeypatch.setattr(job_runners, "_may_fork", lambda: True)
    stored = []
    for workers in (0, 2):
        settings.IMPORT_WORKERS = workers
        job = queue_import(lead, data, set_name=f"with {workers}")

        services.job_run(job_id=job.pk)

        job.refresh_from_db()
        assert job.status == "succeeded", job.error
        assert job.result["answers"] == 524
        stored.append(stored_import_rows(AuditSet.objects.get(name=f"with {workers}")))
    assert read_in_workers == [2]
    assert stored[0] == stored[1]


def test_an_import_job_forks_matching_processes_only_from_a_lone_main_thread():
    from_a_thread = []
    thread = threading.Thread(target=lambda: from_a_thread.append(job_runners._may_fork()))
    thread.start()
    thread.join()

    assert from_a_thread == [False]


@pytest.mark.django_db
def test_a_file_read_whole_has_its_own_lower_limit(lead, settings):
    settings.IMPORT_MAX_WHOLE_BYTES = 1000
    alce = (FIXTURES / "samples" / "alce_sample.json").read_bytes()
    assert len(alce) > 1000
    streamed = queue_import(lead, _many(8), set_name="Streamed")
    whole = queue_import(lead, alce, name="alce_sample.json", set_name="Whole")
    assert streamed.params["size"] > 1000

    run_queued_jobs()

    streamed.refresh_from_db()
    whole.refresh_from_db()
    assert streamed.status == "succeeded"
    assert whole.status == "failed"
    assert whole.error == (
        f"alce_sample.json: file is {len(alce):,} bytes, over the limit of 1,000 bytes for a "
        "file read whole; only native JSON Lines files are read a line at a time"
    )


@pytest.mark.django_db
def test_a_job_whose_worker_went_silent_can_be_run_again(client_for, lead, settings):
    job = queue_import(lead, _many(2))
    # As a killed worker leaves it: running, its last report long ago.
    Job.objects.filter(pk=job.pk).update(
        status="running", started_at=timezone.now() - timedelta(hours=1), worker="w1 pid 7"
    )
    cache.set(PROGRESS_KEY.format(token=job.token), {"done": 1, "total": 2, "at": 0})
    client = client_for(lead)

    page = client.get(job.get_absolute_url()).content.decode()
    assert "Its worker (w1 pid 7) stopped answering" in page and "Run again" in page
    assert "hx-trigger" not in page  # nothing left to poll for
    job.refresh_from_db()
    assert job.status == "failed"

    response = client.post(reverse("audit:job-retry", args=[job.pk]))
    assert response.status_code == 302
    job.refresh_from_db()
    assert job.status == "queued"
    run_queued_jobs()
    job.refresh_from_db()
    assert job.status == "succeeded"
    assert Answer.objects.filter(audit_set__name="Uploaded").count() == 2


@pytest.mark.django_db
def test_a_job_still_reporting_cannot_be_run_twice(lead):
    job = queue_import(lead, _many(2))
    Job.objects.filter(pk=job.pk).update(status="running")
    cache.set(PROGRESS_KEY.format(token=job.token), {"done": 1, "total": 2, "at": time.time()})

    with pytest.raises(services.JobRefused):
        services.job_retry(job=job)


@pytest.mark.django_db
def test_the_job_page_polls_while_running_and_escapes_the_file_name(client_for, lead):
    job = queue_import(lead, _many(2), name="<b>evil.jsonl", set_name="<i>set</i>")
    Job.objects.filter(pk=job.pk).update(status="running")
    cache.set(PROGRESS_KEY.format(token=job.token), {"done": 1, "total": 2, "at": time.time()})
    client = client_for(lead)

    page = client.get(job.get_absolute_url()).content.decode()
    fragment = client.get(job.get_absolute_url(), headers={"HX-Request": "true"})

    assert "&lt;b&gt;evil.jsonl" in page and "<b>evil" not in page
    assert "&lt;i&gt;set&lt;/i&gt;" in page
    assert "1 of 2 answers" in page and 'hx-trigger="every 1s"' in page
    assert fragment.content.decode().lstrip().startswith('<div id="job-status"')
    listing = client.get(reverse("audit:job-list")).content.decode()
    assert "Running (1 of 2)" in listing and "&lt;b&gt;evil" in listing


# --------------------------------------------------------------- a real worker process


@pytest.mark.usefixtures("role_groups")
@pytest.mark.django_db(transaction=True)
def test_a_worker_process_runs_an_uploaded_import(client_for, lead, start_worker):
    client = client_for(lead)
    response = client.post(
        reverse("audit:import"),
        {
            "new_set_name": "By worker",
            "format": "auto",
            "file": SimpleUploadedFile("w.jsonl", _many(4)),
        },
    )
    job = Job.objects.get()
    assert response["Location"] == job.get_absolute_url()

    worker = start_worker("--batch")
    _, errors = worker.communicate(timeout=120)

    assert worker.returncode == 0, errors
    job.refresh_from_db()
    assert (job.status, job.result["answers"]) == ("succeeded", 4)
    assert Answer.objects.filter(audit_set__name="By worker").count() == 4
    assert "Imported into" in client.get(job.get_absolute_url()).content.decode()


@pytest.mark.django_db
def test_a_big_upload_is_moved_to_the_jobs_folder_whole_and_imported(
    client_for, lead, settings, tmp_path
):
    # Past this size Django streams the upload to a temporary file, which the page moves.
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 1024
    spool = tmp_path / "spool"
    spool.mkdir()
    settings.FILE_UPLOAD_TEMP_DIR = str(spool)
    data = _many(40)
    assert len(data) > 1024

    client_for(lead).post(
        reverse("audit:import"),
        {"new_set_name": "Big", "format": "auto", "file": SimpleUploadedFile("big.jsonl", data)},
    )

    job = Job.objects.get()
    assert Path(job.params["path"]).read_bytes() == data
    assert job.params["size"] == len(data)
    assert list(spool.iterdir()) == []  # nothing left behind where Django spooled it
    (done,) = run_queued_jobs()
    assert (done.status, done.result["answers"]) == ("succeeded", 40)


@pytest.mark.usefixtures("role_groups")
@pytest.mark.django_db(transaction=True)
def test_kill_9_of_the_worker_mid_import_leaves_nothing_and_a_rerun_imports_it_all(
    lead, settings, start_worker
):
    # Several chunks, so the worker is killed after it wrote some and before the commit.
    n = 3 * imports.CHUNK
    job = queue_import(lead, _many(n))
    worker = start_worker()
    kill_worker_part_way(worker, job, n)
    assert worker.returncode == -signal.SIGKILL

    job.refresh_from_db()
    assert job.status == "running"
    assert not AuditSet.objects.filter(name="Uploaded").exists()
    assert Answer.objects.count() == Claim.objects.count() == 0

    settings.JOB_STALE_SECONDS = 0
    services.job_retry(job=job)
    rerun = start_worker("--batch")
    _, errors = rerun.communicate(timeout=300)

    assert rerun.returncode == 0, errors
    job.refresh_from_db()
    assert (job.status, job.attempts, job.result["answers"]) == ("succeeded", 2, n)
    assert Answer.objects.filter(audit_set__name="Uploaded").count() == n


@pytest.mark.django_db
def test_job_progress_and_cancel_pass_through_redis_when_it_is_the_cache(lead, settings):
    # Several machines share Redis (REDIS_URL); the machines here and CI run one on 6379.
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/15"),
            "KEY_PREFIX": f"citeaudit-test-{os.getpid()}",
        }
    }
    job = queue_import(lead, _many(2))
    Job.objects.filter(pk=job.pk).update(status="running")
    job.refresh_from_db()

    jobs._report(job, done=1, total=2)
    services.job_cancel(job=job)

    progress = selectors.job_progress(job)
    assert (progress.done, progress.total, progress.cancelling) == (1, 2, True)
    assert cache.get(PROGRESS_KEY.format(token=job.token))["done"] == 1
    # Not cache.clear(): on Redis that empties the whole database, not this prefix.
    cache.delete_many([PROGRESS_KEY.format(token=job.token), CANCEL_KEY.format(token=job.token)])
