"""Jobs: long actions queued by a request and run by a worker process (`manage.py db_worker`):
imports, exports, recomputing machine checks, comparing again, machine verdicts.

A job's row is written in short transactions of its own (queued → running → how it
ended); its work runs in one transaction, so a job that fails, is cancelled or whose worker
is killed leaves nothing half-written, and running it again gives the same result. While it
runs, its progress and a lead's cancel request pass through the cache (see
`selectors.job_progress`): the work's own transaction hides its writes until it commits.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
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
from audit.import_plan import FORK_LOCK, MatcherStopped
from audit.models import Answer, AuditSet, Job, Webhook, Workspace
from audit.selectors.jobs import (
    CANCEL_KEY,
    HEARTBEAT_KEY,
    PROGRESS_KEY,
    export_path,
    job_is_stale,
    job_retry_refusal,
    jobs_stale_candidates,
)
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
    worker) is left alone, so a task delivered twice runs its job once. While it runs, a
    thread of its own writes its heartbeat; first, jobs whose worker was lost are ended.
    """
    jobs_reap_stale()
    with transaction.atomic():
        job = Job.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.status != Job.Status.QUEUED:
            return
        job.status = Job.Status.RUNNING
        job.started_at = timezone.now()
        job.finished_at = None
        job.attempts += 1
        job.worker = f"{socket.gethostname()} pid {os.getpid()}"[:200]
        job.save(update_fields=["status", "started_at", "finished_at", "attempts", "worker"])
    _report(job, done=0, total=0)
    status, result, error = Job.Status.FAILED, {}, ""
    try:
        with _heartbeat(job):
            result = _RUNNERS[job.kind](job)
        status = Job.Status.SUCCEEDED
    except JobCancelled:
        status = Job.Status.CANCELLED
    except (FormatError, JobFailed, MatcherStopped) as failure:
        error = str(failure)
    except Exception as failure:
        # Logged with its traceback for the operator; the page says only that it failed.
        logger.exception("job %s failed", job.pk)
        error = "The job stopped on an internal error."
        if isinstance(failure.__context__, SystemExit | KeyboardInterrupt):
            # Stopping at once broke what it interrupted (a database call, say).
            error = f"Its worker ({job.worker}) was stopped while it ran. {_kept(job)}"
        raise
    except BaseException:
        # The worker was told to stop at once (a second SIGTERM or Ctrl-C): the work's
        # transaction rolls back as this propagates.
        error = f"Its worker ({job.worker}) was stopped while it ran. {_kept(job)}"
        raise
    finally:
        _finish(job, status=status, result=result, error=error)
        if job.kind == Job.Kind.IMPORT:
            _import_finished(job)


def jobs_reap_stale() -> int:
    """End every running job whose worker was lost (no heartbeat for JOB_STALE_SECONDS):
    failed with the reason, or cancelled if a lead had asked; returns how many.

    Its work had rolled back with the dead worker's transaction (a judge run keeps the
    verdicts stored before), so nothing is half-written; its uploaded file is kept for a
    retry. Called by the job pages, the API's job list and detail, and a worker taking a
    job, so a lost job ends when anyone next looks.
    """
    ended = 0
    for job in jobs_stale_candidates().only(
        "pk", "status", "token", "kind", "worker", "started_at", "audit_set"
    ):
        if job_is_stale(job) and _end_lost(job):
            ended += 1
    return ended


def _end_lost(job: Job) -> bool:
    cancelled = bool(cache.get(CANCEL_KEY.format(token=job.token)))
    silent = settings.JOB_STALE_SECONDS
    who = f"Its worker ({job.worker})" if job.worker else "Its worker"
    if cancelled:
        status = Job.Status.CANCELLED
        error = f"{who} had stopped answering. {_kept(job)}"
    else:
        status = Job.Status.FAILED
        error = (
            f"{who} stopped answering: no heartbeat for over {silent} s (killed, or its "
            f"machine lost). {_kept(job)}"
        )
    # Only if it still runs: a worker that ended it meanwhile said how, and is right.
    ended = Job.objects.filter(pk=job.pk, status=Job.Status.RUNNING).update(
        status=status, error=error, finished_at=timezone.now()
    )
    if not ended:
        return False
    logger.warning("job %s lost its worker (%s): %s", job.pk, job.worker, status)
    cache.delete(CANCEL_KEY.format(token=job.token))
    if cancelled:
        _discard_files(job)
    if job.kind == Job.Kind.IMPORT:
        _import_finished(job)
    return True


def _kept(job: Job) -> str:
    """What a stopped job left: a judge run keeps the verdicts it stored, any other job
    nothing (its work was one transaction)."""
    if job.kind == Job.Kind.JUDGE:
        return "Verdicts stored so far are kept; running it again asks only about the rest."
    return "Nothing of it was kept; running it again starts from the beginning."


@contextlib.contextmanager
def _heartbeat(job: Job) -> Iterator[None]:
    """Write the job's heartbeat to the cache every JOB_HEARTBEAT_SECONDS while the block
    runs, from a thread: the cache, not the job's row, since on SQLite the work's own
    transaction holds the write lock until it commits. Under FORK_LOCK, so a matcher pool
    never forks while the thread is in the middle of a write."""
    key = HEARTBEAT_KEY.format(token=job.token)
    stop = threading.Event()

    def beat() -> None:
        while True:
            try:
                with FORK_LOCK:
                    cache.set(key, time.time(), _PROGRESS_SECONDS)
            except Exception:  # a cache outage must not end the job; the next beat retries
                logger.exception("job %s: heartbeat not written", job.pk)
            if stop.wait(settings.JOB_HEARTBEAT_SECONDS):
                return

    thread = threading.Thread(target=beat, name=HEARTBEAT_THREAD, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        cache.delete(key)


HEARTBEAT_THREAD = "citeaudit-job-heartbeat"


def job_cancel(*, job: Job) -> None:
    """Cancel a queued job, or a running one whose worker was lost, at once; ask a running
    one to stop at its next chunk (the flag is in the cache, which every worker and web
    process shares; the job's page says *cancelling* until it has stopped).

    A running job is asked without a transaction: on SQLite its work's transaction holds
    the write lock, and a cancel must not wait for the job it cancels."""
    job = Job.objects.get(pk=job.pk)
    if job.status == Job.Status.QUEUED:
        with transaction.atomic():
            job = Job.objects.select_for_update().get(pk=job.pk)
            if job.status == Job.Status.QUEUED:
                job.status = Job.Status.CANCELLED
                job.finished_at = timezone.now()
                job.save(update_fields=["status", "finished_at"])
                _discard_files(job)
                return
    if job.status != Job.Status.RUNNING:  # a worker took it, or it ended, meanwhile
        raise JobRefused(f"This job has already {job.get_status_display().lower()}.")
    cache.set(CANCEL_KEY.format(token=job.token), True, _PROGRESS_SECONDS)
    if job_is_stale(job):
        _end_lost(job)


def job_retry(*, job: Job) -> None:
    """Queue again a job that failed, was cancelled or lost its worker (killed, machine
    lost), with the same inputs: refused when they are gone (an upload is deleted when its
    job ends, except when its worker was lost) or the job is still queued or running.

    Its work had rolled back with the worker's transaction, so it runs again from the start
    (a judge run asks only about claims without a verdict).
    """
    with transaction.atomic():
        job = Job.objects.select_for_update().get(pk=job.pk)
        refusal = job_retry_refusal(job)
        if refusal:
            raise JobRefused(refusal)
        job.status = Job.Status.QUEUED
        job.error = ""
        job.result = {}
        job.finished_at = None
        job.save(update_fields=["status", "error", "result", "finished_at"])
        for key in (CANCEL_KEY, PROGRESS_KEY, HEARTBEAT_KEY):
            cache.delete(key.format(token=job.token))
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
    main = threading.main_thread()
    # The job's heartbeat thread is the one other thread allowed: it writes only under
    # FORK_LOCK, which the pool holds while it forks.
    return threading.current_thread() is main and all(
        thread is main or thread.name == HEARTBEAT_THREAD for thread in threading.enumerate()
    )


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
