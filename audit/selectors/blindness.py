"""Reads that decide who may see what: blind claims, visible sheets and sets."""

from __future__ import annotations

from django.db.models import (
    Exists,
    OuterRef,
    Q,
    QuerySet,
)

from audit import roles
from audit.models import (
    Assignment,
    AuditSet,
    AuditSheet,
    Claim,
    ControlAssignment,
)

# --------------------------------------------------------------------------- blindness


def blind_claims(*, user) -> QuerySet:
    """Claim ids (for `pk__in=`) on which `user` may see no sheet but their own, nor what
    the other sheets decide (status, counts, gold, provisional verdicts): the claims
    assigned to them on which some assigned reviewer has not submitted yet, their own
    sheet included.

    The one rule for every page, export and count that shows sheets per claim, whatever
    the user's other roles: a lead who also reviews is as blind as any reviewer until
    every sheet is in. Waiting for their own submit only was not enough: a co-reviewer's
    draft could then be read, and the reader's sheet reopened to follow it while no sheet
    was yet in to mark the reopen as non-independent (services.sheet_reopen).
    """
    if user is None or not user.is_authenticated:
        return Assignment.objects.none().values("claim_id")
    submitted = AuditSheet.objects.filter(
        claim=OuterRef("claim"), reviewer=OuterRef("reviewer"), status=AuditSheet.Status.SUBMITTED
    )
    waiting = Assignment.objects.filter(claim=OuterRef("claim")).exclude(Exists(submitted))
    # A control claim stays blind to the reviewer it was mixed in for, submitted or not:
    # seeing its gold or status at once would tell a control from any other claim.
    controls = ControlAssignment.objects.filter(reviewer=user).values("claim_id")
    return (
        Assignment.objects.filter(reviewer=user)
        .filter(Exists(waiting))
        .values("claim_id")
        .union(controls)
    )


def blind_claim_ids(*, user, audit_set: AuditSet | None = None) -> set[int]:
    """blind_claims as a set, optionally within one audit set."""
    claims = Claim.objects.filter(pk__in=blind_claims(user=user))
    if audit_set is not None:
        claims = claims.filter(answer__audit_set=audit_set)
    return set(claims.values_list("pk", flat=True))


def is_blind(*, user, claim: Claim) -> bool:
    return Claim.objects.filter(pk=claim.pk, pk__in=blind_claims(user=user)).exists()


def visible_sheets(queryset: QuerySet[AuditSheet], *, user) -> QuerySet[AuditSheet]:
    """The sheets of `queryset` that `user` may see (see blind_claims)."""
    if user is None:
        return queryset
    return queryset.filter(~Q(claim_id__in=blind_claims(user=user)) | Q(reviewer=user))


# ------------------------------------------------------------------------ workspaces


def sets_led_by(*, user) -> QuerySet[AuditSet]:
    """Every set of the workspaces where the user is a lead or owner."""
    return roles.within_limit(
        user, AuditSet.objects.filter(workspace__in=roles.lead_workspaces(user))
    )


def sets_reviewed_by(*, user) -> QuerySet[AuditSet]:
    """The sets the user reviews, in workspaces where they are still an active member: a
    deactivated member keeps their assignments' history but sees nothing."""
    if user is None or not user.is_authenticated:
        return AuditSet.objects.none()
    reviewed = AuditSet.objects.filter(
        pk__in=AuditSet.reviewers.through.objects.filter(user=user).values("auditset_id"),
        workspace__in=roles.member_workspaces(user),
    )
    return roles.within_limit(user, reviewed)


def sets_visible_to(*, user) -> QuerySet[AuditSet]:
    """The sets a user may open at all: those they lead plus those they review. Every set
    page, count and search starts from here, so nothing crosses workspaces (nor leaves an
    API token's workspace and set)."""
    if user is None or not user.is_authenticated:
        return AuditSet.objects.none()
    visible = AuditSet.objects.filter(
        Q(workspace__in=roles.lead_workspaces(user))
        | Q(pk__in=sets_reviewed_by(user=user).values("pk"))
    )
    return roles.within_limit(user, visible)
