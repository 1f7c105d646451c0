"""The API's sets: who the token is, the sets it may see, creating one, and a set's
settings (each change through the same service as the pages')."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.http import HttpRequest
from ninja import Schema
from ninja.errors import HttpError
from ninja.responses import Status
from pydantic import Field

from audit import selectors, services
from audit.api.base import api, lead_workspace, refusals
from audit.api.jobs import JobOut, job_out
from audit.criteria import CriteriaError, CriteriaReasonRequired
from audit.models import AuditSet, Job
from audit.problems import FieldInvalid
from audit.roles import is_lead
from audit.services.suggestion_settings import set_suggestion_settings
from audit.views import access


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
    suggestion_source: str
    show_suggested_judgment: bool
    withhold_share: float
    withhold_chosen_at: datetime | None


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
    # Which source pre-highlights the review page: "matcher", "judge-run:<id>", "source:<id>".
    suggestion_source: str | None = Field(None, max_length=40)
    show_suggested_judgment: bool | None = None
    # The share of claims shown no suggestion, 0 to 0.9; fixed once review started.
    withhold_share: float | None = None


SUGGESTING = ("suggestion_source", "show_suggested_judgment", "withhold_share")


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
        "suggestion_source": audit_set.suggestion_source,
        "show_suggested_judgment": audit_set.show_suggested_judgment,
        "withhold_share": audit_set.withhold_share,
        "withhold_chosen_at": audit_set.withhold_chosen_at,
    }


class MeOut(Schema):
    username: str
    lead: bool
    scope: str
    token: str
    workspace: str | None
    set: int | None


@api.get("/me", response={200: MeOut, **refusals()}, tags=["tokens"], url_name="me")
def me(request: HttpRequest) -> dict:
    """The token's owner and what the token may do: read or write, in which workspace (its
    slug; null for every workspace of the owner) and set (its id; null for the whole
    workspace)."""
    token = request.auth
    return {
        "username": request.user.get_username(),
        "lead": is_lead(request.user),
        "scope": token.scope,
        "token": token.name,
        "workspace": token.workspace.slug if token.workspace_id else None,
        "set": token.audit_set_id,
    }


@api.get("/sets", response={200: list[SetOut], **refusals()}, tags=["sets"], url_name="set-list")
def set_list(request: HttpRequest, name: str = "") -> list[dict]:
    """The sets the user may see (a reviewer: the sets they review); `name` picks one."""
    sets = selectors.sets_visible_to(user=request.user).order_by("pk")
    if name:
        sets = sets.filter(name=name)
    return [_set_out(audit_set) for audit_set in sets]


@api.post(
    "/sets",
    response={201: SetOut, **refusals(403, 404, 409, 422)},
    tags=["sets"],
    url_name="set-create",
)
def set_create(request: HttpRequest, payload: SetIn) -> Status:
    access.require_lead(request)
    workspace = lead_workspace(request, payload.workspace)
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
        raise FieldInvalid(f"body.{refusal.field}", str(refusal)) from None
    return Status(201, _set_out(audit_set))


@api.get(
    "/sets/{set_id}",
    response={200: SetOut, **refusals(404, 422)},
    tags=["sets"],
    url_name="set-detail",
)
def set_detail(request: HttpRequest, set_id: int) -> dict:
    return _set_out(access.get_set_for_user(request, set_id))


@api.get(
    "/sets/{set_id}/settings",
    response={200: SettingsOut, **refusals(403, 404, 422)},
    tags=["sets"],
    url_name="set-settings",
)
def set_settings(request: HttpRequest, set_id: int) -> dict:
    return _settings_out(access.get_set_for_lead(request, set_id))


@api.patch(
    "/sets/{set_id}/settings",
    response={200: SettingsOut, 202: JobOut, **refusals(403, 404, 409, 422)},
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
    suggesting = {key: given.pop(key) for key in SUGGESTING if key in given}
    try:
        # All or nothing: a refused suggestion setting leaves the other fields unchanged.
        with transaction.atomic():
            if suggesting:
                set_suggestion_settings(
                    audit_set=audit_set,
                    user=request.user,
                    source_key=suggesting.get("suggestion_source", audit_set.suggestion_source),
                    show_judgment=suggesting.get(
                        "show_suggested_judgment", audit_set.show_suggested_judgment
                    ),
                    withhold_share=suggesting.get("withhold_share", audit_set.withhold_share),
                )
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
        field = "suggestion_source" if refusal.field == "source_key" else refusal.field
        raise FieldInvalid(f"body.{field}", str(refusal)) from None
    except CriteriaReasonRequired as error:
        raise FieldInvalid("body.criteria_reason", str(error)) from None
    except CriteriaError as error:
        raise HttpError(422, f"Invalid criteria: {error}") from None
    if isinstance(change.comparison, Job):
        return Status(202, job_out(change.comparison))
    return Status(200, _settings_out(audit_set))
