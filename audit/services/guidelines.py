"""A set's guidelines as numbered versions: editing a set in the app, and the version a
submitted sheet was judged under."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction

from audit.judgments import JudgmentError
from audit.models import AuditSet, GuidelineVersion
from audit.roles import leads

OUTSIDE_NOTE = "Changed outside the app (no change note)."
FIRST_NOTE = "First version."


def guideline_version_current(*, audit_set: AuditSet) -> GuidelineVersion:
    """The set's current guideline version, made when the text has none yet.

    Sets made before versions were kept, by an import or the admin, have no version for
    their text: the first sheet submitted under it records one, so no sheet points at a
    text other than the one it was judged under.
    """
    latest = GuidelineVersion.objects.filter(audit_set=audit_set).order_by("-number").first()
    if latest is not None and latest.text == audit_set.guidelines:
        return latest
    number = latest.number + 1 if latest is not None else 1
    try:
        with transaction.atomic():
            return GuidelineVersion.objects.create(
                audit_set=audit_set,
                number=number,
                text=audit_set.guidelines,
                note=OUTSIDE_NOTE if latest is not None else FIRST_NOTE,
            )
    except IntegrityError:
        # Another submit made it a moment ago.
        return GuidelineVersion.objects.get(audit_set=audit_set, number=number)


def set_update(
    *,
    audit_set: AuditSet,
    by: AbstractBaseUser,
    name: str,
    description: str,
    guidelines: str,
    is_training: bool,
    change_note: str = "",
) -> GuidelineVersion | None:
    """Change a set's name, description, training mode and guidelines. A change of the
    guidelines needs a change note and becomes a new version (returned); else None."""
    if not leads(by, audit_set):
        raise PermissionDenied("Only a lead can edit a set.")
    change_note = change_note.strip()
    with transaction.atomic():
        audit_set = AuditSet.objects.select_for_update().get(pk=audit_set.pk)
        changed = guidelines != audit_set.guidelines
        if changed and not change_note:
            raise JudgmentError("Say what changed in the guidelines, in the change note.")
        if changed:
            # The text being replaced keeps its version, so the diff has both sides.
            guideline_version_current(audit_set=audit_set)
        audit_set.name = name
        audit_set.description = description
        audit_set.guidelines = guidelines
        audit_set.is_training = is_training
        audit_set.save(update_fields=["name", "description", "guidelines", "is_training"])
        if not changed:
            return None
        latest = GuidelineVersion.objects.filter(audit_set=audit_set).order_by("-number").first()
        return GuidelineVersion.objects.create(
            audit_set=audit_set,
            number=latest.number + 1 if latest else 1,
            text=guidelines,
            note=change_note,
            by=by,
        )
