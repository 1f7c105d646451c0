"""Writes that calibrate reviewers: skipping a claim for later with a reason."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied

from audit.judgments import JudgmentError
from audit.models import Assignment, AuditSheet, Claim, ClaimSkip

SKIP_REASON_MAX = 2000


def claim_skip(*, claim: Claim, user: AbstractBaseUser, reason: str) -> ClaimSkip:
    """Put an assigned claim back for later: it comes after every claim the reviewer has
    not skipped. Skipping again replaces the reason. Stores no sheet."""
    reason = reason.strip()
    if not reason:
        raise JudgmentError("Say why you skip this claim, for the lead.")
    if len(reason) > SKIP_REASON_MAX:
        raise JudgmentError(f"Keep the reason under {SKIP_REASON_MAX} characters.")
    if not Assignment.objects.filter(claim=claim, reviewer=user).exists():
        raise PermissionDenied("This claim is not assigned to you.")
    if AuditSheet.objects.filter(
        claim=claim, reviewer=user, status=AuditSheet.Status.SUBMITTED
    ).exists():
        raise JudgmentError("This claim is submitted: there is nothing to skip.")
    skip, _ = ClaimSkip.objects.update_or_create(
        claim=claim, reviewer=user, defaults={"reason": reason}
    )
    return skip
