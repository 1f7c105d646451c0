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
import hashlib
import logging
import os
import shutil
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.core.cache import cache
from django.core.files.move import file_move_safe
from django.core.files.uploadedfile import UploadedFile
from django.db import IntegrityError, transaction
from django.tasks import task
from django.utils import timezone

from audit.formats import FormatError
from audit.import_plan import FORK_LOCK, MatcherStopped
from audit.models import AuditSet, IdempotencyKey, Job, Webhook, Workspace
from audit.runs import run_refusal
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


class IdempotencyConflict(Exception):
    """An Idempotency-Key used before for a request with another body."""


def job_import_create(
    *,
    upload: UploadedFile,
    audit_set: AuditSet | None,
    new_set_name: str,
    fmt: str,
    user,
    workspace: Workspace | None = None,
    system: str = "",
    run: str = "",
    idempotency_key: str = "",
) -> Job:
    """Queue the import of an uploaded answer file into a set (or a new set of that name).

    A big upload, which Django has already streamed to a temporary file, is moved to
    JOBS_DIR; a small one is written there a chunk at a time. Never read whole into memory.
    A new set is created in `workspace`. `system` and `run` name the file's system and run
    (services.imports.answers_import); a bad pair raises FormatError naming the field.

    With an `idempotency_key`, the same user's request with the same key and body within
    IDEMPOTENCY_KEY_HOURS gets the job the first one queued, and one with another body
    raises IdempotencyConflict; two at once queue one job (the key's unique row decides
    which).
    """
    if audit_set is None and workspace is None:
        raise ValueError("A new set needs a workspace.")
    refusal = run_refusal(system, run)
    if refusal is not None:
        raise FormatError(upload.name or "upload", "", *refusal)
    fingerprint = ""
    if idempotency_key:
        fingerprint = _fingerprint(
            upload, audit_set.pk if audit_set else None, new_set_name, fmt, system, run, workspace
        )
        found = _idempotent_job(user=user, key=idempotency_key, fingerprint=fingerprint)
        if found is not None:
            return found
    token = uuid.uuid4().hex
    params = {**_upload_save(upload, token), "format": fmt, "new_set_name": new_set_name}
    if system:
        params |= {"system": system, "run": run}
    try:
        with transaction.atomic():
            job = _create(
                kind=Job.Kind.IMPORT,
                audit_set=audit_set,
                user=user,
                token=token,
                params=params,
                workspace=workspace,
            )
            if idempotency_key:
                IdempotencyKey.objects.create(
                    user=user, key=idempotency_key, fingerprint=fingerprint, job=job
                )
    except IntegrityError:
        # The same key's other request committed first: its job stands, this one is undone.
        shutil.rmtree(Path(settings.JOBS_DIR) / token, ignore_errors=True)
        found = _idempotent_job(user=user, key=idempotency_key, fingerprint=fingerprint)
        if found is None:
            raise
        return found
    return job


def _fingerprint(upload: UploadedFile, *fields: object) -> str:
    """What a push asked for: the file's bytes and the fields that say where they go."""
    digest = hashlib.sha256(repr(fields).encode())
    for chunk in upload.chunks(_WRITE_CHUNK):
        digest.update(chunk)
    upload.seek(0)
    return digest.hexdigest()


def _idempotent_job(*, user, key: str, fingerprint: str) -> Job | None:
    """The job of the user's earlier request with this key, if the key still holds (for
    IDEMPOTENCY_KEY_HOURS); IdempotencyConflict if that request asked for something else.
    Keys past their time are removed first (everyone's, so the table does not grow), and
    the key is free for a new request."""
    since = timezone.now() - timedelta(hours=settings.IDEMPOTENCY_KEY_HOURS)
    IdempotencyKey.objects.filter(created_at__lt=since).delete()
    found = IdempotencyKey.objects.filter(user=user, key=key).select_related("job").first()
    if found is None:
        return None
    if found.fingerprint != fingerprint:
        raise IdempotencyConflict(
            "This Idempotency-Key was used for another request; use a new key for this one."
        )
    return found.job


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


def job_suggestions_create(
    *,
    audit_set: AuditSet,
    user,
    name: str,
    version: str,
    description: str,
    upload: UploadedFile | None = None,
    body: bytes | None = None,
) -> Job:
    """Queue storing a model's suggestions: an uploaded suggestions file, or `body`, the
    records of an API push written as one JSON list (its errors then name `suggestions[i]`,
    as a direct push's do)."""
    token = uuid.uuid4().hex
    if upload is not None:
        params = _upload_save(upload, token)
    else:
        folder = Path(settings.JOBS_DIR) / token
        folder.mkdir(parents=True, exist_ok=False)
        path = folder / "upload"
        path.write_bytes(body or b"[]")
        params = {"path": str(path), "filename": "request body", "size": len(body or b""),
                  "body": True}  # fmt: skip
    params |= {"name": name, "version": version, "description": description}
    return _create(
        kind=Job.Kind.SUGGESTIONS, audit_set=audit_set, user=user, token=token, params=params
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
    transaction.on_commit(lambda: run_job.enqueue(job.pk))


@task
def run_job(job_id: int) -> None:
    """The worker's task: it only names the job's row, written by the request that queued it."""
    job_run(job_id=job_id)


# One entry per kind of job: what job_run runs, returning what the job's page shows. Filled
# by job_runner from services.job_runners (loaded when the app is ready), which imports the
# services that do the work: the queue itself depends on none of them.
_RUNNERS: dict[str, Callable[[Job], dict]] = {}


def job_runner(kind: str) -> Callable[[Callable[[Job], dict]], Callable[[Job], dict]]:
    """Register the function that runs jobs of `kind`."""

    def register(runner: Callable[[Job], dict]) -> Callable[[Job], dict]:
        _RUNNERS[kind] = runner
        return runner

    return register


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


def progress_total(job: Job, total: int) -> None:
    """Record how many rows the job will do, once it knows."""
    Job.objects.filter(pk=job.pk).update(total=total)
    _report(job, done=0, total=total)


def progress_reporter(job: Job, total: int) -> Callable[[int], None]:
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
