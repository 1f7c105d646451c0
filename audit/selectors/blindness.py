"""Reads that decide who may see what: blind claims, visible sheets and sets."""

from __future__ import annotations

from django.db.models import (
    Exists,
    OuterRef,
    Q,
    QuerySet,
)

from audit.models import (
    Assignment,
    AuditSet,
    AuditSheet,
    Claim,
    ControlAssignment,
)
from audit.roles import is_lead

# --------------------------------------------------------------------------- blindness


def blind_claims(*, user) -> QuerySet:
    """Claim ids (for `pk__in=`) on which `user` may see no sheet but their own, nor what
    the other sheets decide (status, counts, gold, provisional verdicts): the claims
    assigned to them whose own sheet is not submitted.

    The one rule for every page, export and count that shows sheets per claim, whatever
    the user's other roles: a lead who also reviews is as blind as any reviewer until they
    submit.
    """
    if user is None or not user.is_authenticated:
        return Assignment.objects.none().values("claim_id")
    own_submitted = AuditSheet.objects.filter(
        claim=OuterRef("claim"), reviewer=user, status=AuditSheet.Status.SUBMITTED
    )
    # A control claim stays blind to the reviewer it was mixed in for, submitted or not:
    # seeing its gold or status at once would tell a control from any other claim.
    controls = ControlAssignment.objects.filter(reviewer=user).values("claim_id")
    return (
        Assignment.objects.filter(reviewer=user)
        .exclude(Exists(own_submitted))
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


def sets_visible_to(*, user) -> QuerySet[AuditSet]:
    if is_lead(user):
        return AuditSet.objects.all()
    return AuditSet.objects.filter(reviewers=user)
