"""Writes that calibrate reviewers: skipping a claim for later with a reason, control
claims mixed into the queues, and pausing a reviewer's queue."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import transaction

from audit.judgments import JudgmentError
from audit.models import (
    Assignment,
    AuditSet,
    AuditSheet,
    Claim,
    ClaimSkip,
    ControlAssignment,
    ControlClaim,
    ReviewerPause,
)
from audit.roles import leads
from audit.selectors import holds_claim
from audit.services.locks import audit_set_lock

SKIP_REASON_MAX = 2000
# One control in more claims than this measures a reviewer on too few controls to tell.
CONTROL_RATE_MAX = 1000


def claim_skip(*, claim: Claim, user: AbstractBaseUser, reason: str) -> ClaimSkip:
    """Put an assigned claim back for later: it comes after every claim the reviewer has
    not skipped. Skipping again replaces the reason. Stores no sheet."""
    reason = reason.strip()
    if not reason:
        raise JudgmentError("Say why you skip this claim, for the lead.")
    if len(reason) > SKIP_REASON_MAX:
        raise JudgmentError(f"Keep the reason under {SKIP_REASON_MAX} characters.")
    if not holds_claim(claim_id=claim.pk, user=user):
        raise PermissionDenied("This claim is not assigned to you.")
    if AuditSheet.objects.filter(
        claim=claim, reviewer=user, status=AuditSheet.Status.SUBMITTED
    ).exists():
        raise JudgmentError("This claim is submitted: there is nothing to skip.")
    skip, _ = ClaimSkip.objects.update_or_create(
        claim=claim, reviewer=user, defaults={"reason": reason}
    )
    return skip


# ----------------------------------------------------------------------------- controls


class ControlSettingRefused(JudgmentError):
    """A control setting out of range; `field` names it as the set's field does."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def controls_mark(
    *, audit_set: AuditSet, claim_ids: list[int], by: AbstractBaseUser, control: bool = True
) -> int:
    """Mark adjudicated claims of the set as controls (or unmark them), then mix controls
    into the reviewers' queues at the set's rate. Returns how many claims changed.
    Unmarking keeps every sheet already written on it and its place in the queues."""
    if not leads(by, audit_set):
        raise PermissionDenied("Only a lead can choose control claims.")
    claims = Claim.objects.filter(pk__in=claim_ids, answer__audit_set=audit_set)
    with transaction.atomic():
        # Two leads marking one claim at once: the second sees it marked, not a duplicate.
        audit_set_lock(audit_set_id=audit_set.pk)
        if control:
            eligible = claims.filter(adjudication__isnull=False, control__isnull=True)
            changed = len(
                ControlClaim.objects.bulk_create(
                    [ControlClaim(claim=claim, marked_by=by) for claim in eligible]
                )
            )
        else:
            changed, _ = ControlClaim.objects.filter(claim__in=claims).delete()
        controls_assign(audit_set=audit_set)
    return changed


def control_settings_update(
    *, audit_set: AuditSet, by: AbstractBaseUser, rate: int, threshold: float
) -> int:
    """Set one control in `rate` claims of each queue (0: none) and the accuracy below
    which a reviewer is shown to the leads; returns how many controls were mixed in."""
    if not leads(by, audit_set):
        raise PermissionDenied("Only a lead can change control settings.")
    if rate == 1 or rate < 0 or rate > CONTROL_RATE_MAX:
        raise ControlSettingRefused(
            "control_rate",
            f"One control in N claims: N is 0 (no controls) or from 2 to {CONTROL_RATE_MAX}.",
        )
    if not 0.0 <= threshold <= 1.0:
        raise ControlSettingRefused(
            "calibration_threshold", "The threshold is a share of claims, between 0 and 1."
        )
    with transaction.atomic():
        audit_set.control_rate = rate
        audit_set.calibration_threshold = threshold
        audit_set.save(update_fields=["control_rate", "calibration_threshold"])
        return controls_assign(audit_set=audit_set)


def controls_assign(*, audit_set: AuditSet) -> int:
    """Mix control claims into each reviewer's queue until one claim in `control_rate` is a
    control (as far as there are controls the reviewer has not judged); a reviewer with no
    regular claim in an open set gets them all. Never takes one out: a reviewer keeps every
    claim they may have started. Writes no derived row: a control's sheet counts in none
    (see ControlAssignment)."""
    rate = audit_set.control_rate
    if rate < 2:
        return 0
    controls = list(
        ControlClaim.objects.filter(claim__answer__audit_set=audit_set)
        .order_by("claim_id")
        .values_list("claim_id", flat=True)
    )
    added = []
    for reviewer in audit_set.reviewers.order_by("pk"):
        regular = Assignment.objects.filter(
            reviewer=reviewer, claim__answer__audit_set=audit_set
        ).values_list("claim_id", flat=True)
        have = set(
            ControlAssignment.objects.filter(
                reviewer=reviewer, claim__answer__audit_set=audit_set
            ).values_list("claim_id", flat=True)
        )
        if regular or audit_set.review_opened_at is None:
            wanted = len(regular) // (rate - 1) - len(have)
        else:
            # A calibration-only queue: a reviewer with no regular claim in an open set (a
            # new expert on an already adjudicated set) gets every control not yet judged.
            wanted = len(controls)
        if wanted <= 0:
            continue
        taken = (
            have
            | set(regular)
            | set(AuditSheet.objects.filter(reviewer=reviewer).values_list("claim_id", flat=True))
        )
        free = [pk for pk in controls if pk not in taken]
        # Spread over the controls, so reviewers do not all get the same few.
        offset = reviewer.pk % len(free) if free else 0
        chosen = (free[offset:] + free[:offset])[:wanted]
        added += [ControlAssignment(claim_id=pk, reviewer=reviewer) for pk in chosen]
    ControlAssignment.objects.bulk_create(added, ignore_conflicts=True)
    return len(added)


def reviewer_pause(
    *, audit_set: AuditSet, reviewer: AbstractBaseUser, by: AbstractBaseUser, paused: bool
) -> None:
    """Pause a reviewer's queue in the set, or let them go on. Every sheet stays."""
    if not leads(by, audit_set):
        raise PermissionDenied("Only a lead can pause a reviewer.")
    if paused:
        ReviewerPause.objects.get_or_create(
            audit_set=audit_set, reviewer=reviewer, defaults={"paused_by": by}
        )
    else:
        ReviewerPause.objects.filter(audit_set=audit_set, reviewer=reviewer).delete()
