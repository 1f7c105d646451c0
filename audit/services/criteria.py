"""Writes to a set's acceptance criteria: every change is kept, and a change made once the
first sheet was submitted is marked as made after the lock."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction

from audit.criteria import criteria_from_dicts, criteria_to_dicts
from audit.models import AuditSet, CriteriaChange
from audit.selectors import criteria_locked_since
from audit.services.derived import claims_changed


def criteria_update(
    *, audit_set: AuditSet, criteria: list[dict[str, Any]], by: AbstractBaseUser
) -> CriteriaChange | None:
    """Store the set's criteria (validated; raises audit.criteria.CriteriaError) and record
    the change; None when nothing changed.

    The lock time is the first submitted sheet's; it is written down the first time the
    criteria change after it, so a later reopened sheet cannot unlock them.
    """
    normalized = criteria_to_dicts(criteria_from_dicts(criteria))
    with transaction.atomic():
        audit_set = AuditSet.objects.select_for_update(no_key=True).get(pk=audit_set.pk)
        if normalized == audit_set.criteria:
            return None
        locked_since = criteria_locked_since(audit_set=audit_set)
        change = CriteriaChange.objects.create(
            audit_set=audit_set,
            by=by,
            before=audit_set.criteria,
            after=normalized,
            after_lock=locked_since is not None,
        )
        audit_set.criteria = normalized
        audit_set.criteria_locked_at = locked_since
        audit_set.save(update_fields=["criteria", "criteria_locked_at"])
        # Release decisions read the criteria: the set page's overview is out of date.
        claims_changed(audit_set_id=audit_set.pk)
    return change
