"""Writes for a claim's discussion: comments between a lead and the claim's reviewers,
guideline flags raised on a claim, and leads settling them (resolved, dismissed, or opened
as a thread)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from audit import selectors
from audit.judgments import JudgmentError
from audit.models import Claim, ClaimComment, GuidelineFlag
from audit.roles import leads
from audit.services.locks import claims_lock

COMMENT_MAX = 10_000
FLAG_STATUSES = ("open", "resolved", "dismissed")


def comment_post(
    *, claim: Claim, user: AbstractBaseUser, body: str, from_flag: GuidelineFlag | None = None
) -> ClaimComment:
    """Add a comment to the claim's thread; only someone who may read the thread may."""
    body = body.strip()
    if not body:
        raise JudgmentError("Write a comment first.")
    if len(body) > COMMENT_MAX:
        raise JudgmentError(f"Keep a comment under {COMMENT_MAX} characters.")
    if not selectors.may_discuss(user=user, claim=claim):
        raise PermissionDenied("Submit your own sheet before joining the discussion.")
    return ClaimComment.objects.create(claim=claim, author=user, body=body, from_flag=from_flag)


def flag_settle(*, flag: GuidelineFlag, by: AbstractBaseUser, status: str) -> GuidelineFlag:
    """Mark a guideline flag resolved or dismissed, or open it again."""
    if not leads(by, flag.audit_set):
        raise PermissionDenied("Only a lead can settle a flag.")
    if status not in FLAG_STATUSES:
        raise JudgmentError(f"Unknown flag status “{status}”.")
    flag.status = status
    flag.settled_by = None if status == "open" else by
    flag.settled_at = None if status == "open" else timezone.now()
    # One UPDATE of the three: two leads at once leave one's settlement whole.
    flag.save(update_fields=["status", "settled_by", "settled_at"])
    return flag


def flag_discuss(*, flag: GuidelineFlag, by: AbstractBaseUser) -> ClaimComment:
    """Open the claim's thread with the flag quoted, for the lead and its reviewers; a flag
    already opened gives its thread's first comment."""
    if not leads(by, flag.audit_set):
        raise PermissionDenied("Only a lead can open a flag as a discussion.")
    if flag.claim is None:
        raise JudgmentError("This flag's claim is gone: there is no thread to open.")
    with transaction.atomic():
        # The flag's row lock: two leads opening it at once would both find no thread and
        # both post the quote (SQLite's immediate transactions queue them anyway).
        GuidelineFlag.objects.select_for_update().filter(pk=flag.pk).exists()
        existing = ClaimComment.objects.filter(from_flag=flag).order_by("pk").first()
        if existing is not None:
            return existing
        quoted = "\n".join(f"> {line}" for line in flag.comment.splitlines())
        who = flag.raised_by.get_username() if flag.raised_by else "a reviewer"
        return comment_post(
            claim=flag.claim, user=by, body=f"{quoted}\n\nFlagged by @{who}.", from_flag=flag
        )


def guideline_flag_raise(*, claim: Claim, user: AbstractBaseUser, comment: str) -> GuidelineFlag:
    """Record that the guidelines do not settle this claim; leads read it on the progress page."""
    comment = comment.strip()
    if not comment:
        raise JudgmentError("Say what the guidelines should settle.")
    if not leads(user, claim.answer.audit_set) and not selectors.holds_claim(
        claim_id=claim.pk, user=user
    ):
        raise PermissionDenied("This claim is not assigned to you.")
    with transaction.atomic():
        # A second click (or a resent form) on the same comment is the same flag, not a new
        # one; the claim's lock keeps two tabs sending it at once from both finding none.
        claims_lock(claim_ids=[claim.pk])
        same = GuidelineFlag.objects.filter(claim=claim, raised_by=user, comment=comment).first()
        if same is not None:
            return same
        return GuidelineFlag.objects.create(
            audit_set_id=claim.answer.audit_set_id, claim=claim, raised_by=user, comment=comment
        )
