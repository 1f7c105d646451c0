"""Jobs: long actions queued by a request and run by a worker process (`manage.py db_worker`):
imports, exports, recomputing machine checks, comparing again, machine verdicts.

A job's row is written in short transactions of its own (queued → running → how it
ended); its work runs in one transaction, so a job that fails, is cancelled or whose worker
is killed leaves nothing half-written, and running it again gives the same result. While it
runs, its progress and a lead's cancel request pass through the cache (see
`selectors.job_progress`): the work's own transaction hides its writes until it commits.
"""

from __future__ import annotations

import logging
import shutil
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from django.core.files.move import file_move_safe
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone

from audit.formats import FormatError, parse_path
from audit.models import Answer, AuditSet, Job, Webhook, Workspace
from audit.selectors.jobs import CANCEL_KEY, PROGRESS_KEY, export_path, job_is_stale
from audit.services.webhooks import webhooks_fire

logger = logging.getLogger(__name__)

# Progress entries outlive any job; a day is far past the longest import.
_PROGRESS_SECONDS = 24 * 60 * 60
_WRITE_CHUNK = 1024 * 1024


class JobCancelled(Exception):
    """Raised inside a job's work when a lead asked to cancel it: its transaction rolls back."""


class JobFailed(Exception):
    """A job that cannot go on for a reason the lead can act on; the message says which."""


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

    A big upload, which Django has already streamed to a temporary file, is moved to
    JOBS_DIR; a small one is written there a chunk at a time. Never read whole into memory.
    A new set is created in `workspace`.
    """
    if audit_set is None and workspace is None:
        raise ValueError("A new set needs a workspace.")
    token = uuid.uuid4().hex
    return _create(
        kind=Job.Kind.IMPORT,
        audit_set=audit_set,
        user=user,
        token=token,
        params={**_upload_save(upload, token), "format": fmt, "new_set_name": new_set_name},
        workspace=workspace,
    )


def job_export_create(*, audit_set: AuditSet, fmt: str, user) -> Job:
    """Queue an export of the set in one of EXPORT_FORMATS, written to a file under JOBS_DIR
    that its creator may download until EXPORT_LINK_HOURS after it is written. It holds
    what its creator may see (a claim they still review carries only their own sheet)."""
    _exports_expire()
    return _create(kind=Job.Kind.EXPORT, audit_set=audit_set, user=user, params={"format": fmt})


def job_rematch_create(*, audit_set: AuditSet, user) -> Job:
    """Queue recomputing the matcher's checks for every claim of the set."""
    return _create(kind=Job.Kind.REMATCH, audit_set=audit_set, user=user, params={})


def job_recompare_create(
    *,
    audit_set: AuditSet,
    user,
    auto_gold: bool,
    evidence_jaccard_threshold: float,
    anonymous_adjudication: bool,
) -> Job:
    """Queue a change of the set's adjudication settings; the job saves them and compares
    the finished claims again, all in one transaction."""
    return _create(
        kind=Job.Kind.RECOMPARE,
        audit_set=audit_set,
        user=user,
        params={
            "auto_gold": auto_gold,
            "evidence_jaccard_threshold": evidence_jaccard_threshold,
            "anonymous_adjudication": anonymous_adjudication,
        },
    )


def job_verdicts_create(*, upload: UploadedFile, audit_set: AuditSet, user) -> Job:
    """Queue the import of an uploaded verdict file into the set."""
    token = uuid.uuid4().hex
    return _create(
        kind=Job.Kind.VERDICTS,
        audit_set=audit_set,
        user=user,
        token=token,
        params=_upload_save(upload, token),
    )


def _upload_save(upload: UploadedFile, token: str) -> dict:
    folder = Path(settings.JOBS_DIR) / token
    folder.mkdir(parents=True, exist_ok=False)
    path = folder / "upload"
    if hasattr(upload, "temporary_file_path"):
        # Django has already written a big upload to a temporary file: move it (a rename on
        # one filesystem, a copy otherwise) rather than read and write 100+ MB again.
        file_move_safe(upload.temporary_file_path(), str(path))
    else:
        with open(path, "wb") as out:
            for chunk in upload.chunks(_WRITE_CHUNK):
                out.write(chunk)
    return {"path": str(path), "filename": (upload.name or "upload")[:300], "size": upload.size}


def _create(
    *,
    kind: str,
    audit_set: AuditSet | None,
    user,
    params: dict,
    token: str | None = None,
    workspace: Workspace | None = None,
) -> Job:
    job = Job.objects.create(
        kind=kind,
        audit_set=audit_set,
        workspace=audit_set.workspace if audit_set is not None else workspace,
        created_by=user,
        token=token or uuid.uuid4().hex,
        params=params,
    )
    enqueue_job(job)
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
    except (FormatError, JobFailed) as failure:
        error = str(failure)
    except Exception:
        # Logged with its traceback for the operator; the page says only that it failed.
        logger.exception("job %s failed", job.pk)
        error = "The job stopped on an internal error."
        raise
    finally:
        _finish(job, status=status, result=result, error=error)
        if job.kind == Job.Kind.IMPORT:
            _import_finished(job)


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
        enqueue_job(job)


def enqueue_job(job: Job) -> None:
    # After commit: a worker must find the row in the state this transaction leaves.
    from audit.tasks import run_job

    transaction.on_commit(lambda: run_job.enqueue(job.pk))


def _import_finished(job: Job) -> None:
    job.refresh_from_db(fields=["status", "audit_set", "result", "error"])
    if job.audit_set_id is None:  # a new set that was never made: no webhook to tell
        return
    webhooks_fire(
        audit_set_id=job.audit_set_id,
        event=Webhook.Event.IMPORT_FINISHED,
        data={
            "job": job.pk,
            "status": job.status,
            "answers": job.result.get("answers", 0),
            "claims": job.result.get("claims", 0),
            "error": job.error,
        },
    )


def _report(job: Job, *, done: int, total: int) -> None:
    cache.set(
        PROGRESS_KEY.format(token=job.token),
        {"done": done, "total": total, "at": time.time()},
        _PROGRESS_SECONDS,
    )


def _total(job: Job, total: int) -> None:
    Job.objects.filter(pk=job.pk).update(total=total)
    _report(job, done=0, total=total)


def _reporter(job: Job, total: int) -> Callable[[int], None]:
    """A job's progress callback: reports rows done and stops the work if cancelled."""
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
    _total(job, total)
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
            workers=settings.IMPORT_WORKERS if _may_fork() else 0,
        )
    return {"audit_set": audit_set.pk, **asdict(summary)}


def _may_fork() -> bool:
    """Whether this job may fork matching processes as the command line does: only from
    a process whose one thread runs it. `manage.py db_worker` runs one job at a time in
    its main thread; under --reload (DEBUG's default) it runs in a thread beside the
    reloader's, and a web server's threads may not fork either: a forked child gets a
    copy of any lock another thread held, never released."""
    return threading.current_thread() is threading.main_thread() and threading.active_count() == 1


def _judge_run(job: Job) -> dict:
    # A judge run writes each verdict as it arrives (so cancel and resume keep them), not
    # in one transaction; see audit/services/judges.py.
    from audit.services.judges import judge_run_execute

    def progress_for(total: int) -> Callable[[int], None]:
        _total(job, total)
        return _reporter(job, total)

    return judge_run_execute(run_id=job.params["run"], progress_for=progress_for)


def _export_run(job: Job) -> dict:
    from audit.services import exports

    fmt = job.params["format"]
    spec = exports.EXPORT_FORMATS[fmt]
    total = exports.export_answer_count(audit_set=job.audit_set)
    _total(job, total)
    final = export_path(job, spec.extension)
    final.parent.mkdir(parents=True, exist_ok=True)
    # Written under another name and renamed when whole: a download never finds half a file.
    partial = final.with_name(final.name + ".part")
    try:
        with open(partial, "w", encoding="utf-8", newline="") as out:
            for piece in exports.export_stream(
                audit_set=job.audit_set,
                fmt=fmt,
                viewer=job.created_by,
                progress=_reporter(job, total),
                chunk_size=exports.CHUNK,
            ):
                out.write(piece)
        partial.replace(final)
    finally:
        partial.unlink(missing_ok=True)
    expires = timezone.now() + timedelta(hours=settings.EXPORT_LINK_HOURS)
    return {
        "format": fmt,
        "answers": total,
        "size": final.stat().st_size,
        "expires_at": expires.isoformat(),
    }


def _rematch_run(job: Job) -> dict:
    from audit.matching import MATCHER_VERSION
    from audit.services.checks import claim_checks_recompute

    total = Answer.objects.filter(audit_set=job.audit_set).count()
    _total(job, total)
    # One transaction over the per-answer ones: cancelled or killed, no claim keeps a new check.
    with transaction.atomic():
        claims = claim_checks_recompute(
            audit_set=job.audit_set, progress=_every(_PROGRESS_ROWS, _reporter(job, total))
        )
    return {"claims": claims, "matcher_version": MATCHER_VERSION}


def _recompare_run(job: Job) -> dict:
    from audit.services.adjudication import adjudication_settings_update
    from audit.services.disagreements import comparable_claim_ids

    params = job.params
    with transaction.atomic():
        total = len(comparable_claim_ids(audit_set=job.audit_set))
        _total(job, total)
        summary = adjudication_settings_update(
            audit_set=job.audit_set,
            by=job.created_by,
            auto_gold=params["auto_gold"],
            evidence_jaccard_threshold=params["evidence_jaccard_threshold"],
            anonymous_adjudication=params["anonymous_adjudication"],
            progress=_reporter(job, total),
        )
    return asdict(summary)


def _verdicts_run(job: Job) -> dict:
    import hashlib

    from audit.formats.verdicts import parse_verdicts
    from audit.services.verdicts import verdicts_store

    params = job.params
    data = Path(params["path"]).read_bytes()
    verdicts = parse_verdicts(data, params["filename"], max_bytes=settings.IMPORT_MAX_WHOLE_BYTES)
    _total(job, len(verdicts))
    summary = verdicts_store(
        audit_set=job.audit_set,
        verdicts=verdicts,
        filename=params["filename"],
        sha256=hashlib.sha256(data).hexdigest(),
        progress=_reporter(job, len(verdicts)),
    )
    return {**asdict(summary), "judges": list(summary.judges)}


def _every(rows: int, progress: Callable[[int], None]) -> Callable[[int], None]:
    """Pass progress on every `rows` rows, for work that reports one row at a time."""
    pending = 0

    def report(done: int) -> None:
        nonlocal pending
        pending += done
        if pending >= rows:
            progress(pending)
            pending = 0

    return report


def _exports_expire() -> None:
    """Delete export files past their link's expiry; run whenever an export is queued."""
    now = timezone.now()
    for job in Job.objects.filter(
        kind=Job.Kind.EXPORT,
        status=Job.Status.SUCCEEDED,
        finished_at__lt=now - timedelta(hours=settings.EXPORT_LINK_HOURS),
    ).only("pk", "token"):
        for path in export_path(job, "*").parent.glob(f"{job.token}.*"):
            path.unlink(missing_ok=True)


# Answers between two reports of a rematch (one report per answer would be a cache write
# per answer).
_PROGRESS_ROWS = 50


# One entry per kind of job: what job_run runs, returning what the job's page shows.
_RUNNERS: dict[str, Callable[[Job], dict]] = {
    Job.Kind.IMPORT: _import_run,
    Job.Kind.EXPORT: _export_run,
    Job.Kind.REMATCH: _rematch_run,
    Job.Kind.RECOMPARE: _recompare_run,
    Job.Kind.VERDICTS: _verdicts_run,
    Job.Kind.JUDGE: _judge_run,
}
