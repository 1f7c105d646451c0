"""Jobs: long actions queued by a request and run by a worker process (`manage.py db_worker`).

A job's row is written in short transactions of its own (queued → running → how it
ended); its work runs in one transaction, so a job that fails, is cancelled or whose worker
is killed leaves nothing half-written, and running it again gives the same result. While it
runs, its progress and a lead's cancel request pass through the cache (see
`selectors.job_progress`): the work's own transaction hides its writes until it commits.
"""

from __future__ import annotations

import logging
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone

from audit.formats import FormatError, parse_path
from audit.models import AuditSet, Job, Workspace
from audit.selectors.jobs import CANCEL_KEY, PROGRESS_KEY, job_is_stale

logger = logging.getLogger(__name__)

# Progress entries outlive any job; a day is far past the longest import.
_PROGRESS_SECONDS = 24 * 60 * 60
_WRITE_CHUNK = 1024 * 1024


class JobCancelled(Exception):
    """Raised inside a job's work when a lead asked to cancel it: its transaction rolls back."""


class JobRefused(Exception):
    """A job action that does not apply to the job as it now is (e.g. cancel a finished one)."""


def job_import_create(
    *,
    upload: UploadedFile,
    audit_set: AuditSet | None,
    new_set_name: str,
    fmt: str,
    user,
    workspace: Workspace | None = None,
) -> Job:
    """Queue the import of an uploaded answer file into a set (or a new set of that name).

    The upload is copied to JOBS_DIR a chunk at a time (Django has already streamed a big
    one to a temporary file), never read whole into memory. A new set is created in
    `workspace`.
    """
    if audit_set is None and workspace is None:
        raise ValueError("A new set needs a workspace.")
    token = uuid.uuid4().hex
    folder = Path(settings.JOBS_DIR) / token
    folder.mkdir(parents=True, exist_ok=False)
    path = folder / "upload"
    with open(path, "wb") as out:
        for chunk in upload.chunks(_WRITE_CHUNK):
            out.write(chunk)
    job = Job.objects.create(
        kind=Job.Kind.IMPORT,
        audit_set=audit_set,
        workspace=audit_set.workspace if audit_set is not None else workspace,
        created_by=user,
        token=token,
        params={
            "path": str(path),
            "filename": (upload.name or "upload")[:300],
            "format": fmt,
            "new_set_name": new_set_name,
            "size": upload.size,
        },
    )
    _enqueue(job)
    return job


def job_run(*, job_id: int) -> None:
    """Run a queued job to its end; what the worker's task calls.

    A job that is not queued (cancelled before it started, or already taken by another
    worker) is left alone, so a task delivered twice runs its job once.
    """
    with transaction.atomic():
        job = Job.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.status != Job.Status.QUEUED:
            return
        job.status = Job.Status.RUNNING
        job.started_at = timezone.now()
        job.finished_at = None
        job.attempts += 1
        job.save(update_fields=["status", "started_at", "finished_at", "attempts"])
    cache.delete(CANCEL_KEY.format(token=job.token))
    _report(job, done=0, total=0)
    status, result, error = Job.Status.FAILED, {}, ""
    try:
        result = _RUNNERS[job.kind](job)
        status = Job.Status.SUCCEEDED
    except JobCancelled:
        status = Job.Status.CANCELLED
    except FormatError as failure:
        error = str(failure)
    except Exception:
        # Logged with its traceback for the operator; the page says only that it failed.
        logger.exception("job %s failed", job.pk)
        error = "The job stopped on an internal error."
        raise
    finally:
        _finish(job, status=status, result=result, error=error)


def job_cancel(*, job: Job) -> None:
    """Cancel a queued job at once, or ask a running one to stop at its next chunk."""
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        if job.status == Job.Status.QUEUED:
            job.status = Job.Status.CANCELLED
            job.finished_at = timezone.now()
            job.save(update_fields=["status", "finished_at"])
            _discard_files(job)
            return
        if job.status != Job.Status.RUNNING:
            raise JobRefused(f"This job has already {job.get_status_display().lower()}.")
    cache.set(CANCEL_KEY.format(token=job.token), True, _PROGRESS_SECONDS)


def job_retry(*, job: Job) -> None:
    """Queue again a job whose worker stopped without a word (killed, machine lost).

    Its work had rolled back with the worker's transaction, so it runs again from the start.
    """
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        if not (job.status == Job.Status.RUNNING and job_is_stale(job)):
            raise JobRefused("Only a job whose worker stopped answering can be run again.")
        job.status = Job.Status.QUEUED
        job.save(update_fields=["status"])
        _enqueue(job)


def _enqueue(job: Job) -> None:
    # After commit: a worker must find the row in the state this transaction leaves.
    from audit.tasks import run_job

    transaction.on_commit(lambda: run_job.enqueue(job.pk))


def _report(job: Job, *, done: int, total: int) -> None:
    cache.set(
        PROGRESS_KEY.format(token=job.token),
        {"done": done, "total": total, "at": time.time()},
        _PROGRESS_SECONDS,
    )


def _reporter(job: Job, total: int) -> Callable[[int], None]:
    """The import's progress callback: reports rows done and stops the work if cancelled."""
    done = 0

    def progress(rows: int) -> None:
        nonlocal done
        done += rows
        if cache.get(CANCEL_KEY.format(token=job.token)):
            raise JobCancelled
        _report(job, done=done, total=total)

    return progress


def _finish(job: Job, *, status: str, result: dict, error: str) -> None:
    fields = {"status": status, "result": result, "error": error, "finished_at": timezone.now()}
    if result.get("audit_set"):
        fields["audit_set_id"] = result["audit_set"]
    Job.objects.filter(pk=job.pk).update(**fields)
    cache.delete(CANCEL_KEY.format(token=job.token))
    _discard_files(job)


def _discard_files(job: Job) -> None:
    shutil.rmtree(Path(settings.JOBS_DIR) / job.token, ignore_errors=True)


def _import_run(job: Job) -> dict:
    # Imported here, not at the top: the import service imports half the app.
    from audit.services.imports import answers_import

    params = job.params
    parsed, check = parse_path(
        params["path"],
        params["filename"],
        fmt=params["format"],
        max_bytes=settings.IMPORT_MAX_BYTES,
        max_whole_bytes=settings.IMPORT_MAX_WHOLE_BYTES,
    )
    total = len(parsed.records) if isinstance(parsed.records, tuple) else check.lines
    Job.objects.filter(pk=job.pk).update(total=total)
    _report(job, done=0, total=total)
    with transaction.atomic():
        audit_set = job.audit_set
        if audit_set is None:
            audit_set, _ = AuditSet.objects.get_or_create(
                workspace=job.workspace,
                name=params["new_set_name"],
                defaults={"created_by": job.created_by},
            )
        summary = answers_import(
            audit_set=audit_set,
            parsed=parsed,
            filename=params["filename"],
            sha256=check.sha256,
            user=job.created_by,
            progress=_reporter(job, total),
            # A worker runs one job at a time in its main thread, so it may fork matching
            # processes as the command line does (a web server's threads may not).
            workers=settings.IMPORT_WORKERS,
        )
    return {"audit_set": audit_set.pk, **asdict(summary)}


_RUNNERS: dict[str, Callable[[Job], dict]] = {Job.Kind.IMPORT: _import_run}
