"""The API's imports and jobs: a pushed file becomes an import job; jobs are listed,
followed, cancelled and retried."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from django.conf import settings
from django.http import HttpRequest
from ninja import File, Form, Header, Query, Schema
from ninja.errors import HttpError
from ninja.files import UploadedFile
from ninja.responses import Status

from audit import selectors, services
from audit.api.base import MAX_LIMIT, api, cursor_page, lead_workspace, refusals
from audit.formats import FORMATS, FormatError
from audit.formats.reading import check_size
from audit.models import Job
from audit.views import access

ImportFormat = StrEnum("ImportFormat", {"auto": "auto"} | {name: name for name in FORMATS})


class JobOut(Schema):
    id: int
    kind: str
    status: str
    set: int | None
    filename: str
    done: int
    total: int
    percent: int
    elapsed_seconds: float | None
    stale: bool
    # A lead asked to cancel it and it has not stopped yet.
    cancelling: bool
    attempts: int
    # The worker process that ran it last ("host pid N").
    worker: str
    error: str
    result: dict[str, Any]
    created_at: datetime
    finished_at: datetime | None


class JobPage(Schema):
    items: list[JobOut]
    next_cursor: str | None


# ------------------------------------------------------------------------------- imports


def job_out(job: Job) -> dict:
    progress = selectors.job_progress(job)
    return {
        "id": job.pk,
        "kind": job.kind,
        "status": job.status,
        "set": job.audit_set_id,
        "filename": job.params.get("filename", ""),
        "done": progress.done,
        "total": progress.total,
        "percent": progress.percent,
        "elapsed_seconds": progress.elapsed.total_seconds() if progress.elapsed else None,
        "stale": progress.stale,
        "cancelling": progress.cancelling,
        "attempts": job.attempts,
        "worker": job.worker,
        "error": job.error,
        "result": job.result,
        "created_at": job.created_at,
        "finished_at": job.finished_at,
    }


# The header a push may carry so that its retry queues nothing twice.
_IDEMPOTENCY_KEY = Header("", alias="Idempotency-Key", max_length=200)


@api.post(
    "/imports",
    response={202: JobOut, **refusals(403, 404, 409, 413, 422)},
    tags=["imports"],
    url_name="import-create",
)
def import_create(
    request: HttpRequest,
    file: File[UploadedFile],
    set: Form[int | None] = None,  # noqa: A002 - the form field's public name
    new_set_name: Form[str] = "",
    format: Form[ImportFormat] = ImportFormat.auto,  # noqa: A002
    workspace: Form[str] = "",
    system: Form[str] = "",
    run: Form[str] = "",
    idempotency_key: str = _IDEMPOTENCY_KEY,
) -> Status:
    """Queue the import of an answer file (any supported format) into a set, or into a new
    set of that name, as a job; follow it at /jobs/{id}.

    `system` names the system of every answer in the file; with `run` the file is that run
    of the system, whole, and replaces the run's earlier push by answer id. A retry with
    the same `Idempotency-Key` header and body answers the first request's job; the same
    key with another body answers 409."""
    access.require_lead(request)
    audit_set = access.get_set_for_lead(request, set) if set is not None else None
    name = new_set_name.strip()
    into = None
    if audit_set is None:
        if not name:
            raise HttpError(422, "Invalid request: pass set (an id) or new_set_name.")
        into = lead_workspace(request, workspace)
        if selectors.set_name_taken(workspace_id=into.pk, name=name):
            raise HttpError(409, f"A set named “{name}” exists; pass its id as set.")
    try:
        check_size(file.size, file.name or "upload", settings.IMPORT_MAX_BYTES)
    except FormatError as error:
        raise HttpError(413, str(error)) from None
    try:
        job = services.job_import_create(
            upload=file,
            audit_set=audit_set,
            new_set_name=name,
            fmt=str(format),
            user=request.user,
            workspace=into,
            system=system.strip(),
            run=run.strip(),
            idempotency_key=idempotency_key,
        )
    except FormatError as error:
        raise HttpError(422, f"Invalid request: {error.field}: {error.message}.") from None
    except services.IdempotencyConflict as conflict:
        raise HttpError(409, str(conflict)) from None
    return Status(202, job_out(job))


JobStatus = StrEnum("JobStatus", {code: code for code, _ in Job.Status.choices})


def _get_job_for_lead(request: HttpRequest, job_id: int) -> Job:
    # The job pages' lookup: a lead of the job's workspace, else 404.
    access.require_lead(request)
    job = selectors.jobs_for_lead(user=request.user).filter(pk=job_id).first()
    if job is None:
        raise HttpError(404, "No such job.")
    return job


@api.get("/jobs", response={200: JobPage, **refusals(403, 422)}, tags=["jobs"], url_name="job-list")
def job_list(
    request: HttpRequest,
    status: JobStatus | None = None,
    set: int | None = None,  # noqa: A002 - the query parameter's public name
    cursor: str = "",
    limit: int = Query(50, ge=1, le=MAX_LIMIT),
) -> dict:
    """The jobs of the workspaces you lead, oldest first (page on with next_cursor),
    optionally of one status or set. A running job whose worker was lost is ended first."""
    access.require_lead(request)
    services.jobs_reap_stale()
    jobs = selectors.jobs_for_lead(user=request.user)
    if status:
        jobs = jobs.filter(status=str(status))
    if set is not None:
        jobs = jobs.filter(audit_set_id=set)
    return cursor_page(jobs, cursor=cursor, limit=limit, row=job_out)


@api.get(
    "/jobs/{job_id}",
    response={200: JobOut, **refusals(403, 404, 422)},
    tags=["jobs"],
    url_name="job-detail",
)
def job_detail(request: HttpRequest, job_id: int) -> dict:
    """A job's status and progress; a failed import's error names file, line and field.
    A running job whose worker was lost ends here as failed, naming the worker, so a loop
    that waits for the job to end always ends."""
    access.require_lead(request)
    services.jobs_reap_stale()
    return job_out(_get_job_for_lead(request, job_id))


@api.post(
    "/jobs/{job_id}/cancel",
    response={202: JobOut, **refusals(403, 404, 409, 422)},
    tags=["jobs"],
    url_name="job-cancel",
)
def job_cancel(request: HttpRequest, job_id: int) -> Status:
    """Cancel a job: a queued one, or one whose worker was lost, at once; a running one
    stops at its next chunk (`cancelling` is true until then). 409 once it has ended."""
    job = _get_job_for_lead(request, job_id)
    try:
        services.job_cancel(job=job)
    except services.JobRefused as refusal:
        raise HttpError(409, str(refusal)) from None
    job.refresh_from_db()
    return Status(202, job_out(job))


@api.post(
    "/jobs/{job_id}/retry",
    response={202: JobOut, **refusals(403, 404, 409, 422)},
    tags=["jobs"],
    url_name="job-retry",
)
def job_retry(request: HttpRequest, job_id: int) -> Status:
    """Queue again a job that failed, was cancelled or lost its worker, with the same
    inputs; the same job id, so follow it as before. 409 while it is queued or running,
    after it succeeded, or when its uploaded file is no longer kept."""
    services.jobs_reap_stale()
    job = _get_job_for_lead(request, job_id)
    try:
        services.job_retry(job=job)
    except services.JobRefused as refusal:
        raise HttpError(409, str(refusal)) from None
    job.refresh_from_db()
    return Status(202, job_out(job))
