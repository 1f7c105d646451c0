"""Writes to a set's acceptance criteria, and to what they read of claims: every change of
the criteria is kept as a numbered version, and one made once the first sheet was submitted
is marked as made after the lock and needs a reason; a lead marks which claims answer the
question."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import transaction
from django.db.models import Max

from audit.criteria import CriteriaReasonRequired, criteria_from_dicts, criteria_to_dicts
from audit.models import AuditSet, Claim, CriteriaChange
from audit.selectors import criteria_locked_since
from audit.services.derived import claims_changed, decisions_watched


def criteria_update(
    *,
    audit_set: AuditSet,
    criteria: list[dict[str, Any]],
    by: AbstractBaseUser,
    reason: str = "",
) -> CriteriaChange | None:
    """Store the set's criteria (validated; raises audit.criteria.CriteriaError) as a new
    criteria version, recording who changed them, when and why; None when nothing changed.

    Once review has started (the lock) a change needs a `reason` (raises
    CriteriaReasonRequired without one): the decisions made on these criteria name it.
    The lock time is the first submitted sheet's; it is written down the first time the
    criteria change after it, so a later reopened sheet cannot unlock them.
    """
    normalized = criteria_to_dicts(criteria_from_dicts(criteria))
    reason = reason.strip()
    # New criteria can change a system's decision with no claim changed.
    with transaction.atomic(), decisions_watched(audit_set_id=audit_set.pk):
        # The set's row lock also serializes the version numbers.
        audit_set = AuditSet.objects.select_for_update(no_key=True).get(pk=audit_set.pk)
        if normalized == audit_set.criteria:
            return None
        locked_since = criteria_locked_since(audit_set=audit_set)
        if locked_since is not None and not reason:
            raise CriteriaReasonRequired(
                f"Review started {locked_since:%Y-%m-%d %H:%M} UTC: changing the criteria now "
                "needs a reason, which every decision on them will show."
            )
        last = audit_set.criteria_changes.aggregate(last=Max("version"))["last"] or 0
        change = CriteriaChange.objects.create(
            audit_set=audit_set,
            version=last + 1,
            by=by,
            before=audit_set.criteria,
            after=normalized,
            after_lock=locked_since is not None,
            reason=reason,
        )
        audit_set.criteria = normalized
        audit_set.criteria_locked_at = locked_since
        audit_set.save(update_fields=["criteria", "criteria_locked_at"])
        # Release decisions read the criteria: the set page's overview is out of date.
        claims_changed(audit_set_id=audit_set.pk)
    return change


def claims_mark_answering(*, audit_set: AuditSet, claim_ids: list[int], value: bool) -> int:
    """Mark (or unmark) top-level claims of the set as answering the question: a lead's
    bulk decision, which the criterion "no claim that answers the question is partially or
    not supported" reads alongside what reviewers marked on their sheets. Returns how many
    claims changed."""
    with transaction.atomic():
        changed = list(
            Claim.objects.filter(answer__audit_set=audit_set, pk__in=claim_ids, parent__isnull=True)
            .exclude(answers_question=value)
            .values_list("pk", flat=True)
        )
        if changed:
            Claim.objects.filter(pk__in=changed).update(answers_question=value)
            claims_changed(audit_set_id=audit_set.pk, claim_ids=changed)
    return len(changed)
