"""A set's creation and its settings, one function per use case: the pages and the API both
call these, and each routes a field to the service that owns it (guidelines, criteria,
adjudication settings), so every door versions, validates and records alike."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction

from audit import selectors
from audit.criteria import CriteriaError
from audit.judgments import JudgmentError
from audit.models import AuditSet, CriteriaChange, GuidelineVersion, Job, Workspace
from audit.roles import LEADING, leads, role_in
from audit.services.adjudication import adjudication_settings_check, adjudication_settings_update
from audit.services.criteria import criteria_update
from audit.services.derived import decisions_watched
from audit.services.disagreements import CompareSummary
from audit.services.guidelines import guideline_version_current, set_update
from audit.services.jobs import job_recompare_create

# The longest texts a set keeps (the API's schema says the same).
MAX_NAME = 200
MAX_DESCRIPTION = 10_000
MAX_GUIDELINES = 100_000

COMPARING = ("auto_gold", "evidence_jaccard_threshold", "anonymous_adjudication")


class SetRefused(ValueError):
    """A set's field was refused; `field` names it as the service's argument does."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class SetNameTaken(SetRefused):
    """The workspace already has a set of that name."""

    def __init__(self, name: str) -> None:
        super().__init__("name", f"A set named “{name}” exists.")
        self.name = name


def _checked_texts(*, workspace_id: int, exclude_pk: int | None = None, **texts: str) -> dict:
    """The texts stripped where a name is, and within their lengths; raises SetRefused."""
    limits = {"name": MAX_NAME, "description": MAX_DESCRIPTION, "guidelines": MAX_GUIDELINES}
    checked = {}
    for field, value in texts.items():
        if field == "name":
            value = value.strip()
            if not value:
                raise SetRefused("name", "the name is empty")
        if len(value) > limits[field]:
            raise SetRefused(field, f"at most {limits[field]} characters")
        checked[field] = value
    if "name" in checked and selectors.set_name_taken(
        workspace_id=workspace_id, name=checked["name"], exclude_pk=exclude_pk
    ):
        raise SetNameTaken(checked["name"])
    return checked


def set_create(
    *,
    workspace: Workspace,
    name: str,
    by: AbstractBaseUser,
    description: str = "",
    guidelines: str = "",
    is_training: bool = False,
) -> AuditSet:
    """Create a set in a workspace the user leads, with its guidelines as version 1.

    The name is stripped, not empty and not taken in the workspace (raises SetNameTaken,
    also when another request took it a moment ago); texts within their lengths (raises
    SetRefused); PermissionDenied for someone who does not lead the workspace.
    """
    if role_in(by, workspace.pk) not in LEADING:
        raise PermissionDenied("Only a lead of the workspace can create a set in it.")
    texts = _checked_texts(
        workspace_id=workspace.pk, name=name, description=description, guidelines=guidelines
    )
    try:
        with transaction.atomic():
            audit_set = AuditSet.objects.create(
                workspace=workspace, is_training=is_training, created_by=by, **texts
            )
            guideline_version_current(audit_set=audit_set)
    except IntegrityError:
        raise SetNameTaken(texts["name"]) from None
    return audit_set


def adjudication_settings_apply(
    *,
    audit_set: AuditSet,
    by: AbstractBaseUser,
    auto_gold: bool,
    evidence_jaccard_threshold: float,
    anonymous_adjudication: bool,
) -> CompareSummary | Job:
    """Change how finished claims are compared and compare them again: here for a set of up
    to WEB_DIRECT_MAX_ANSWERS answers (the summary), else by a job that saves and compares
    (the queued job; the settings stay as they are until it runs)."""
    chosen = {
        "auto_gold": auto_gold,
        "evidence_jaccard_threshold": evidence_jaccard_threshold,
        "anonymous_adjudication": anonymous_adjudication,
    }
    if selectors.set_answer_count(audit_set=audit_set) > settings.WEB_DIRECT_MAX_ANSWERS:
        adjudication_settings_check(
            audit_set=audit_set, by=by, evidence_jaccard_threshold=evidence_jaccard_threshold
        )
        # Too many claims to compare within a request.
        return job_recompare_create(audit_set=audit_set, user=by, **chosen)
    return adjudication_settings_update(audit_set=audit_set, by=by, **chosen)


@dataclass(frozen=True)
class SettingsChange:
    """What a settings change made: a guidelines version, a criteria version, and the
    comparison's summary or the job queued to compare (None where that part did not change)."""

    guidelines: GuidelineVersion | None = None
    criteria: CriteriaChange | None = None
    comparison: CompareSummary | Job | None = None


def set_settings_update(
    *,
    audit_set: AuditSet,
    by: AbstractBaseUser,
    changes: dict[str, Any],
    guidelines_note: str | None = None,
    criteria_reason: str | None = None,
) -> SettingsChange:
    """Change the settings named in `changes` (name, description, guidelines, is_training,
    allow_reviewer_split, criteria, auto_gold, evidence_jaccard_threshold,
    anonymous_adjudication), all or nothing; the others stay.

    Each goes through the service that owns it: a guidelines change is a new version with
    its author and `guidelines_note` (required, services.set_update), a criteria change a
    criteria version with `criteria_reason` (required once review started,
    services.criteria_update), comparison settings compare again (by a job for a big set).
    A note or reason without what it explains is refused. Raises SetRefused (`field` names
    the argument), SetNameTaken, CriteriaError, PermissionDenied.
    """
    if not leads(by, audit_set):
        raise PermissionDenied("Only a lead can edit a set.")
    unknown = set(changes) - {
        "name",
        "description",
        "guidelines",
        "is_training",
        "allow_reviewer_split",
        "criteria",
        *COMPARING,
    }
    if unknown:
        raise ValueError(f"Not a set's setting: {', '.join(sorted(unknown))}.")
    if criteria_reason is not None and "criteria" not in changes:
        raise SetRefused("criteria_reason", "a reason is given with criteria only.")
    if guidelines_note is not None and "guidelines" not in changes:
        raise SetRefused("guidelines_note", "a note is given with guidelines only.")
    texts = _checked_texts(
        workspace_id=audit_set.workspace_id,
        exclude_pk=audit_set.pk,
        **{k: changes[k] for k in ("name", "description", "guidelines") if k in changes},
    )
    version = criteria = comparison = None
    # Settings and criteria in one change: one decision.changed per system for the two.
    with transaction.atomic(), decisions_watched(audit_set_id=audit_set.pk):
        if texts or "is_training" in changes:
            current = AuditSet.objects.get(pk=audit_set.pk)
            try:
                version = set_update(
                    audit_set=current,
                    by=by,
                    name=texts.get("name", current.name),
                    description=texts.get("description", current.description),
                    guidelines=texts.get("guidelines", current.guidelines),
                    is_training=changes.get("is_training", current.is_training),
                    change_note=guidelines_note or "",
                )
            except JudgmentError as error:
                raise SetRefused("guidelines_note", str(error)) from None
        if "allow_reviewer_split" in changes:
            AuditSet.objects.filter(pk=audit_set.pk).update(
                allow_reviewer_split=changes["allow_reviewer_split"]
            )
        if "criteria" in changes:
            try:
                criteria = criteria_update(
                    audit_set=audit_set,
                    criteria=changes["criteria"],
                    by=by,
                    reason=criteria_reason or "",
                )
            except (TypeError, AttributeError) as error:
                # Criteria that are not objects of the expected shape.
                raise CriteriaError(str(error)) from None
        # Last: a job it queues is only sent once everything before it was written.
        if any(key in changes for key in COMPARING):
            current = AuditSet.objects.get(pk=audit_set.pk)
            comparison = adjudication_settings_apply(
                audit_set=current,
                by=by,
                **{key: changes.get(key, getattr(current, key)) for key in COMPARING},
            )
    audit_set.refresh_from_db()
    return SettingsChange(guidelines=version, criteria=criteria, comparison=comparison)
