"""Reads for a claim's discussion: who may read it, and its comments as shown."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db.models import Q

from audit.models import (
    Assignment,
    AuditSheet,
    Claim,
    ClaimComment,
    ControlAssignment,
    Membership,
)
from audit.roles import leads
from audit.selectors.blindness import is_blind


def may_discuss(*, user, claim: Claim) -> bool:
    """A lead who is not blind on the claim, or one of its reviewers (assigned, or with it
    in their queue as a control) whose own sheet is submitted."""
    if user is None or not user.is_authenticated:
        return False
    holds = (
        Assignment.objects.filter(claim=claim, reviewer=user).exists()
        or ControlAssignment.objects.filter(claim=claim, reviewer=user).exists()
    )
    if holds:
        return AuditSheet.objects.filter(
            claim=claim, reviewer=user, status=AuditSheet.Status.SUBMITTED
        ).exists()
    return leads(user, claim.answer.audit_set) and not is_blind(user=user, claim=claim)


@dataclass(frozen=True)
class Thread:
    comments: list[tuple[ClaimComment, str]]  # each comment with the name it shows
    mentionable: frozenset[str]  # usernames an @mention marks: the claim's reviewers, leads


def claim_thread(*, claim: Claim, anonymous: bool = False) -> Thread:
    """The claim's comments, oldest first. With anonymous adjudication a reviewer's comment
    shows no name."""
    reviewers = set(
        Assignment.objects.filter(claim=claim).values_list("reviewer__username", flat=True)
    )
    leads = set(
        get_user_model()
        .objects.filter(
            Q(
                memberships__workspace_id=claim.answer.audit_set.workspace_id,
                memberships__role__in=(Membership.Role.OWNER, Membership.Role.LEAD),
                memberships__is_active=True,
            )
            | Q(is_superuser=True)
        )
        .values_list("username", flat=True)
    )
    comments = []
    for comment in ClaimComment.objects.filter(claim=claim).select_related("author"):
        name = comment.author.get_username() if comment.author else "someone"
        if anonymous and name in reviewers:
            name = "a reviewer"
        comments.append((comment, name))
    return Thread(comments=comments, mentionable=frozenset(reviewers | leads))
