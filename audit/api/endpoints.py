"""The API's resources under /api/v1/: sets and their settings, imports as jobs, answers,
claims, sheets and gold, verdicts, agreement, the release report and decision, exports.

Thin like the pages' views: each finds its object through audit.views.access (the same
404s and 403s as the pages), then calls one selector or service.
"""

from __future__ import annotations

import dataclasses
import json
import math
from datetime import datetime
from enum import StrEnum
from typing import Any

from django.conf import settings
from django.http import HttpRequest, StreamingHttpResponse
from django.utils.cache import patch_cache_control
from django.utils.http import content_disposition_header
from django.utils.text import slugify
from ninja import File, Form, Query, Schema
from ninja.errors import HttpError
from ninja.files import UploadedFile
from ninja.responses import Status
from pydantic import Field

from audit import selectors, services
from audit.criteria import CriteriaError, CriteriaReasonRequired
from audit.formats import FORMATS, FormatError
from audit.formats.reading import check_size
from audit.formats.records import Budget
from audit.models import AuditSet, ClaimCheck, Job, ReviewStatus, Workspace
from audit.roles import is_lead, lead_workspaces, leads
from audit.selectors import api as api_selectors
from audit.selectors import dashboard
from audit.services.exports import EXPORT_FORMATS, export_stream
from audit.views import access

from .base import MAX_LIMIT, api, cursor_page

ClaimStatus = StrEnum(
    "ClaimStatus",
    {code: code for code, _ in ReviewStatus.choices}
    | {s: s for s in api_selectors.MY_SHEET_STATUSES},
)
MachineLabel = StrEnum("MachineLabel", {code: code for code, _ in ClaimCheck.Label.choices})
ImportFormat = StrEnum("ImportFormat", {"auto": "auto"} | {name: name for name in FORMATS})
ExportFormat = StrEnum("ExportFormat", {name: name for name in EXPORT_FORMATS})


# ------------------------------------------------------------------------------- schemas


class Message(Schema):
    detail: str


class SetOut(Schema):
    id: int
    name: str
    description: str
    guidelines: str
    created_at: datetime


class SetIn(Schema):
    name: str = Field(min_length=1, max_length=200)
    # The workspace's slug; may be left out by someone who leads only one.
    workspace: str = Field("", max_length=100)
    description: str = Field("", max_length=10000)
    guidelines: str = Field("", max_length=100000)


class SettingsOut(Schema):
    id: int
    name: str
    description: str
    guidelines: str
    overlap: int
    allow_reviewer_split: bool
    auto_gold: bool
    evidence_jaccard_threshold: float
    anonymous_adjudication: bool
    criteria: list[dict[str, Any]]
    review_opened_at: datetime | None


class SettingsPatch(Schema):
    """Only the fields given change, through the pages' services: a guidelines change is a
    new version with its note, criteria are validated and their change recorded, comparison
    settings compare finished claims again (a big set's by a job)."""

    name: str | None = Field(None, min_length=1, max_length=200)
    description: str | None = Field(None, max_length=10000)
    guidelines: str | None = Field(None, max_length=100000)
    allow_reviewer_split: bool | None = None
    auto_gold: bool | None = None
    evidence_jaccard_threshold: float | None = Field(None, ge=0, le=1)
    anonymous_adjudication: bool | None = None
    # Required with a change of `guidelines`: kept with the new guidelines version.
    guidelines_note: str | None = Field(None, max_length=500)
    criteria: list[dict[str, Any]] | None = None
    # Required with `criteria` once review has started: every decision shows it.
    criteria_reason: str | None = Field(None, max_length=2000)


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


class Page(Schema):
    items: list[dict[str, Any]]
    next_cursor: str | None


# ---------------------------------------------------------------------------------- sets


def _set_out(audit_set: AuditSet) -> dict:
    return {
        "id": audit_set.pk,
        "name": audit_set.name,
        "description": audit_set.description,
        "guidelines": audit_set.guidelines,
        "created_at": audit_set.created_at,
    }


def _settings_out(audit_set: AuditSet) -> dict:
    return {
        **_set_out(audit_set),
        "overlap": audit_set.overlap,
        "allow_reviewer_split": audit_set.allow_reviewer_split,
        "auto_gold": audit_set.auto_gold,
        "evidence_jaccard_threshold": audit_set.evidence_jaccard_threshold,
        "anonymous_adjudication": audit_set.anonymous_adjudication,
        "criteria": audit_set.criteria if isinstance(audit_set.criteria, list) else [],
        "review_opened_at": audit_set.review_opened_at,
    }


@api.get("/me", response=dict, tags=["tokens"], url_name="me")
def me(request: HttpRequest) -> dict:
    """The token's owner and what the token may do."""
    return {
        "username": request.user.get_username(),
        "lead": is_lead(request.user),
        "scope": request.auth.scope,
        "token": request.auth.name,
    }


@api.get("/sets", response=list[SetOut], tags=["sets"], url_name="set-list")
def set_list(request: HttpRequest, name: str = "") -> list[dict]:
    """The sets the user may see (a reviewer: the sets they review); `name` picks one."""
    sets = selectors.sets_visible_to(user=request.user).order_by("pk")
    if name:
        sets = sets.filter(name=name)
    return [_set_out(audit_set) for audit_set in sets]


def _lead_workspace(request: HttpRequest, slug: str) -> Workspace:
    """The workspace a new set goes in: the one named, among those the user leads, or the
    only one they lead."""
    workspaces = lead_workspaces(request.user)
    if slug:
        workspace = workspaces.filter(slug=slug).first()
        if workspace is None:
            raise HttpError(404, f"You lead no workspace “{slug}”.")
        return workspace
    found = list(workspaces.order_by("slug")[:21])
    if len(found) != 1:
        slugs = ", ".join(w.slug for w in found[:20])
        raise HttpError(422, f"Invalid request: name the workspace (one of: {slugs}).")
    return found[0]


@api.post("/sets", response={201: SetOut}, tags=["sets"], url_name="set-create")
def set_create(request: HttpRequest, payload: SetIn) -> Status:
    access.require_lead(request)
    workspace = _lead_workspace(request, payload.workspace)
    try:
        audit_set = services.set_create(
            workspace=workspace,
            name=payload.name,
            description=payload.description,
            guidelines=payload.guidelines,
            by=request.user,
        )
    except services.SetNameTaken as taken:
        raise HttpError(409, str(taken)) from None
    except services.SetRefused as refusal:
        raise HttpError(422, f"Invalid request: body.{refusal.field}: {refusal}") from None
    return Status(201, _set_out(audit_set))


@api.get("/sets/{set_id}", response=SetOut, tags=["sets"], url_name="set-detail")
def set_detail(request: HttpRequest, set_id: int) -> dict:
    return _set_out(access.get_set_for_user(request, set_id))


@api.get("/sets/{set_id}/settings", response=SettingsOut, tags=["sets"], url_name="set-settings")
def set_settings(request: HttpRequest, set_id: int) -> dict:
    return _settings_out(access.get_set_for_lead(request, set_id))


@api.patch(
    "/sets/{set_id}/settings",
    response={200: SettingsOut, 202: JobOut},
    tags=["sets"],
    url_name="set-settings-patch",
)
def set_settings_patch(request: HttpRequest, set_id: int, payload: SettingsPatch) -> Status:
    """Change the fields given, all or nothing. 202 with the job when comparing a big set's
    claims again is queued (follow it at /jobs/{id}), else 200 with the settings."""
    audit_set = access.get_set_for_lead(request, set_id)
    given = payload.model_dump(exclude_unset=True)
    if any(value is None for value in given.values()):
        raise HttpError(422, "Invalid request: a field was given as null; leave it out instead.")
    note = given.pop("guidelines_note", None)
    reason = given.pop("criteria_reason", None)
    try:
        change = services.set_settings_update(
            audit_set=audit_set,
            by=request.user,
            changes=given,
            guidelines_note=note,
            criteria_reason=reason,
        )
    except services.SetNameTaken as taken:
        raise HttpError(409, str(taken)) from None
    except services.SetRefused as refusal:
        raise HttpError(422, f"Invalid request: body.{refusal.field}: {refusal}") from None
    except CriteriaReasonRequired as error:
        raise HttpError(422, f"Invalid request: body.criteria_reason: {error}") from None
    except CriteriaError as error:
        raise HttpError(422, f"Invalid criteria: {error}") from None
    if isinstance(change.comparison, Job):
        return Status(202, _job_out(change.comparison))
    return Status(200, _settings_out(audit_set))


# ------------------------------------------------------------------------------- imports


def _job_out(job: Job) -> dict:
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


@api.post("/imports", response={202: JobOut}, tags=["imports"], url_name="import-create")
def import_create(
    request: HttpRequest,
    file: File[UploadedFile],
    set: Form[int | None] = None,  # noqa: A002 - the form field's public name
    new_set_name: Form[str] = "",
    format: Form[ImportFormat] = ImportFormat.auto,  # noqa: A002
    workspace: Form[str] = "",
) -> Status:
    """Queue the import of an answer file (any supported format) into a set, or into a new
    set of that name, as a job; follow it at /jobs/{id}."""
    access.require_lead(request)
    audit_set = access.get_set_for_lead(request, set) if set is not None else None
    name = new_set_name.strip()
    into = None
    if audit_set is None:
        if not name:
            raise HttpError(422, "Invalid request: pass set (an id) or new_set_name.")
        into = _lead_workspace(request, workspace)
        if selectors.set_name_taken(workspace_id=into.pk, name=name):
            raise HttpError(409, f"A set named “{name}” exists; pass its id as set.")
    try:
        check_size(file.size, file.name or "upload", settings.IMPORT_MAX_BYTES)
    except FormatError as error:
        raise HttpError(413, str(error)) from None
    job = services.job_import_create(
        upload=file,
        audit_set=audit_set,
        new_set_name=name,
        fmt=str(format),
        user=request.user,
        workspace=into,
    )
    return Status(202, _job_out(job))


JobStatus = StrEnum("JobStatus", {code: code for code, _ in Job.Status.choices})


def _get_job_for_lead(request: HttpRequest, job_id: int) -> Job:
    # The job pages' lookup: a lead of the job's workspace, else 404.
    access.require_lead(request)
    job = selectors.jobs_for_lead(user=request.user).filter(pk=job_id).first()
    if job is None:
        raise HttpError(404, "No such job.")
    return job


@api.get("/jobs", response=Page, tags=["jobs"], url_name="job-list")
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
    return cursor_page(jobs, cursor=cursor, limit=limit, row=_job_out)


@api.get("/jobs/{job_id}", response=JobOut, tags=["jobs"], url_name="job-detail")
def job_detail(request: HttpRequest, job_id: int) -> dict:
    """A job's status and progress; a failed import's error names file, line and field.
    A running job whose worker was lost ends here as failed, naming the worker, so a loop
    that waits for the job to end always ends."""
    access.require_lead(request)
    services.jobs_reap_stale()
    return _job_out(_get_job_for_lead(request, job_id))


@api.post(
    "/jobs/{job_id}/cancel",
    response={202: JobOut, 409: Message},
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
    return Status(202, _job_out(job))


@api.post(
    "/jobs/{job_id}/retry",
    response={202: JobOut, 409: Message},
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
    return Status(202, _job_out(job))


# ------------------------------------------------------------------ answers, claims, sheets


def _answer_row(answer) -> dict:
    return {
        "id": answer.pk,
        "external_id": answer.external_id,
        "question_id": answer.question.external_id,
        "system": answer.system,
        "is_partial": answer.is_partial,
    }


@api.get(
    "/sets/{set_id}/answers", response=Page, tags=["answers and claims"], url_name="answer-list"
)
def answer_list(
    request: HttpRequest,
    set_id: int,
    system: str = "",
    cursor: str = "",
    limit: int = Query(50, ge=1, le=MAX_LIMIT),
) -> dict:
    audit_set = access.get_set_for_user(request, set_id)
    rows = api_selectors.api_answers(audit_set=audit_set, system=system)
    return cursor_page(rows, cursor=cursor, limit=limit, row=_answer_row)


def _claim_row(lead: bool):
    def row(claim) -> dict:
        return {
            "id": claim.pk,
            "answer": claim.answer_id,
            "answer_external_id": claim.answer_external_id,
            "system": claim.system,
            "parent": claim.parent_id,
            "order": claim.order,
            "text": claim.text,
            "start": claim.start,
            "end": claim.end,
            "location": claim.location,
            "is_uncited": claim.is_uncited,
            "label": claim.label,
            ("status" if lead else "my_sheet"): claim.shown_status,
        }

    return row


@api.get("/sets/{set_id}/claims", response=Page, tags=["answers and claims"], url_name="claim-list")
def claim_list(
    request: HttpRequest,
    set_id: int,
    status: ClaimStatus | None = None,
    system: str = "",
    label: MachineLabel | None = None,
    cursor: str = "",
    limit: int = Query(50, ge=1, le=MAX_LIMIT),
) -> dict:
    """A lead: every claim with its review status. A reviewer: the claims assigned to them,
    with `my_sheet` (todo, draft, submitted) and nothing of the other sheets; their
    `status` filter takes those three values."""
    audit_set = access.get_set_for_user(request, set_id)
    rows = api_selectors.api_claims(
        user=request.user,
        audit_set=audit_set,
        status=str(status) if status else "",
        system=system,
        label=str(label) if label else "",
    )
    return cursor_page(
        rows, cursor=cursor, limit=limit, row=_claim_row(leads(request.user, audit_set))
    )


def _judgment_fields(record) -> dict:
    return {
        "judgment": record.judgment,
        "evidence": record.evidence,
        "unsupported_assertions": record.unsupported_assertions,
        "verification_worthy": record.verification_worthy,
        "answers_question": record.answers_question,
    }


def _sheet_row(sheet) -> dict:
    return {
        "id": sheet.pk,
        "claim": sheet.claim_id,
        "reviewer": sheet.reviewer.username,
        "status": sheet.status,
        **_judgment_fields(sheet),
        "notes": sheet.notes,
        "active_seconds": sheet.active_seconds,
        "submitted_at": sheet.submitted_at.isoformat() if sheet.submitted_at else None,
    }


@api.get("/claims/{claim_id}", response=dict, tags=["answers and claims"], url_name="claim-detail")
def claim_detail(request: HttpRequest, claim_id: int) -> dict:
    """A claim with the sheets the user may see and its gold: for a reviewer, a claim
    assigned to them and their own sheet only."""
    claim = selectors.lead_claim(user=request.user, pk=claim_id) if is_lead(request.user) else None
    lead = claim is not None
    if claim is None:
        claim = access.get_claim_for_reviewer(request, claim_id)
    sheets = selectors.visible_sheets(claim.sheets.select_related("reviewer"), user=request.user)
    if not lead:
        sheets = sheets.filter(reviewer=request.user)
    blind = selectors.is_blind(user=request.user, claim=claim)
    gold = getattr(claim, "adjudication", None) if lead and not blind else None
    return {
        "id": claim.pk,
        "answer": claim.answer_id,
        "answer_external_id": claim.answer.external_id,
        "question_id": claim.answer.question.external_id,
        "system": claim.answer.system,
        "parent": claim.parent_id,
        "order": claim.order,
        "text": claim.text,
        "start": claim.start,
        "end": claim.end,
        "sheets": [_sheet_row(sheet) for sheet in sheets.order_by("pk")],
        "gold": ({"source": gold.source, **_judgment_fields(gold)} if gold else None),
    }


@api.get("/sets/{set_id}/sheets", response=Page, tags=["sheets and gold"], url_name="sheet-list")
def sheet_list(
    request: HttpRequest,
    set_id: int,
    cursor: str = "",
    limit: int = Query(50, ge=1, le=MAX_LIMIT),
) -> dict:
    """A lead: the set's sheets (none but their own on claims they still review); a
    reviewer: their own sheets."""
    audit_set = access.get_set_for_user(request, set_id)
    rows = api_selectors.api_sheets(user=request.user, audit_set=audit_set)
    return cursor_page(rows, cursor=cursor, limit=limit, row=_sheet_row)


def _ndjson(rows) -> Any:
    for row in rows:
        yield json.dumps(row, ensure_ascii=False) + "\n"


@api.get("/sets/{set_id}/gold", tags=["sheets and gold"], url_name="gold")
def gold(request: HttpRequest, set_id: int) -> StreamingHttpResponse:
    """Every gold record of the set as JSON Lines, streamed (leads)."""
    audit_set = access.get_set_for_lead(request, set_id)
    response = StreamingHttpResponse(
        _ndjson(api_selectors.api_gold(user=request.user, audit_set=audit_set)),
        content_type="application/x-ndjson; charset=utf-8",
    )
    patch_cache_control(response, private=True, no_store=True)
    return response


# ---------------------------------------------------------------- verdicts and agreement


@api.post("/sets/{set_id}/verdicts", response=dict, tags=["verdicts"], url_name="verdicts")
def verdicts_push(request: HttpRequest, set_id: int, file: File[UploadedFile]) -> dict:
    """An automatic judge's verdicts, in the verdicts upload's format; all or nothing."""
    audit_set = access.get_set_for_lead(request, set_id)
    name = file.name or "verdicts"
    try:
        check_size(file.size, name, settings.IMPORT_MAX_WHOLE_BYTES)
        summary = services.verdicts_import(
            audit_set=audit_set,
            data=file.read(settings.IMPORT_MAX_WHOLE_BYTES + 1),
            filename=name,
            max_bytes=settings.IMPORT_MAX_WHOLE_BYTES,
            budget=Budget(name, max_answers=settings.WEB_IMPORT_MAX_VERDICTS, unit="verdicts"),
        )
    except FormatError as error:
        raise HttpError(422, str(error)) from None
    return dataclasses.asdict(summary)


def _plain(value: Any) -> Any:
    """JSON-safe: dataclasses as dicts, tuples as lists, NaN and infinities as null."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, frozenset, set)):
        return [_plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


@api.get(
    "/sets/{set_id}/agreement", response=dict, tags=["agreement and release"], url_name="agreement"
)
def agreement(request: HttpRequest, set_id: int, system: str = "") -> dict:
    """The agreement dashboard's figures: reviewer agreement, evidence overlap, raters
    against gold; one system's answers with `system`."""
    audit_set = access.get_set_for_lead(request, set_id)
    if system and system not in selectors.set_systems(audit_set=audit_set):
        raise HttpError(404, "No such system in this set.")
    board = dashboard.agreement_dashboard(audit_set=audit_set, system=system)
    return {
        "system": board.system,
        "sheets": board.sheets,
        "claims": board.claims,
        "gold": board.gold,
        "full": _plain(board.full),
        "binary": _plain(board.binary),
        "evidence_jaccard": _plain(board.evidence_jaccard),
        "evidence_f1": _plain(board.evidence_f1),
        "unsupported_f1": _plain(board.unsupported_f1),
        "raters": [
            {"name": r.name, "kind": r.kind, "full": _plain(r.full), "binary": _plain(r.binary)}
            for r in board.raters
        ],
    }


# ------------------------------------------------------------------------------- release


@api.get("/sets/{set_id}/report", response=dict, tags=["agreement and release"], url_name="report")
def report(request: HttpRequest, set_id: int) -> dict:
    """The release report per system: metrics and the decision, as on the report page."""
    audit_set = access.get_set_for_lead(request, set_id)
    overview = selectors.release_overview(audit_set=audit_set, viewer=request.user)
    return {
        "criteria": [criterion.describe() for criterion in overview.criteria],
        "criteria_error": overview.criteria_error,
        **overview.provenance.as_dict(),
        "overall": _plain(overview.overall),
        "systems": [
            {
                "system": release.system,
                "decision": release.badge,
                "metrics": _plain(release.summary),
                # Only with an accepted judge: the same with its verdicts on unjudged claims.
                "with_accepted_judge": {
                    "decision": release.judged.badge,
                    "claims_filled": release.judged.filled,
                    "metrics": _plain(release.judged.summary),
                }
                if release.judged
                else None,
            }
            for release in overview.systems
        ],
    }


@api.get(
    "/sets/{set_id}/decision", response=dict, tags=["agreement and release"], url_name="decision"
)
def decision(request: HttpRequest, set_id: int, system: str, with_judge: bool = False) -> dict:
    """pass, fail or provisional (some claim has no gold yet) for one system, with each
    criterion's result and the claims that fail it; "none" when the set has no criteria.
    With `with_judge=true` the set's accepted automatic judge stands for the claims no human
    judged; `judge` then names it and each named claim says whose verdict it carries."""
    audit_set = access.get_set_for_lead(request, set_id)
    if system not in selectors.set_systems(audit_set=audit_set):
        raise HttpError(404, f"No system “{system}” in this set.")
    return selectors.decision_report(
        audit_set=audit_set, system=system, viewer=request.user, with_judge=with_judge
    )


# ------------------------------------------------------------------------------- exports


@api.get("/sets/{set_id}/exports/{fmt}", tags=["exports"], url_name="export")
def export(request: HttpRequest, set_id: int, fmt: ExportFormat) -> StreamingHttpResponse:
    """The set's labelled data in any export format, streamed as it is read (leads)."""
    audit_set = access.get_set_for_lead(request, set_id)
    spec = EXPORT_FORMATS[str(fmt)]
    response = StreamingHttpResponse(
        export_stream(audit_set=audit_set, fmt=str(fmt), viewer=request.user),
        content_type=spec.content_type,
    )
    filename = f"{slugify(audit_set.name) or 'set'}-{fmt}.{spec.extension}"
    response["Content-Disposition"] = content_disposition_header(True, filename)
    patch_cache_control(response, private=True, no_store=True)
    return response
