"""Reads for the lead's adjudication queue and decisions."""

from __future__ import annotations

from django.db.models import (
    Case,
    CharField,
    Exists,
    F,
    Min,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Coalesce, Left

from audit import judgments
from audit.models import (
    QUEUE_ORDER,
    Adjudication,
    Answer,
    Assignment,
    AuditSet,
    AuditSheet,
    Claim,
)
from audit.selectors.blindness import blind_claims, sets_led_by, visible_sheets

# ------------------------------------------------------------------------- adjudication

# The lead meets the worst disagreements first, then claims in reading order.
ADJUDICATION_ORDER = ("severity", *QUEUE_ORDER)
# A sheet submitted after less active time than this was hardly read.
FAST_SECONDS = 2


def adjudication_sheets(*, claim: Claim) -> list[AuditSheet]:
    """The claim's submitted sheets by its current reviewers, oldest first (A, B, …)."""
    return list(
        AuditSheet.objects.filter(
            claim=claim,
            status=AuditSheet.Status.SUBMITTED,
            claim__assignments__reviewer=F("reviewer"),
        )
        .select_related("reviewer", "wrong_citation_passage", "guideline_version")
        .order_by("pk")
    )


def adjudication_queue(*, audit_set: AuditSet, viewer=None) -> QuerySet[Claim]:
    """Claims of the set waiting for a lead, most severe first, without any long text,
    less those the viewer still reviews (see blind_claims).

    Each row carries its submitted sheets (reviewer, judgment, active time) prefetched.
    """
    fast = AuditSheet.objects.filter(
        claim=OuterRef("pk"),
        status=AuditSheet.Status.SUBMITTED,
        active_seconds__lt=FAST_SECONDS,
    )
    waiting = Claim.objects.filter(answer__audit_set=audit_set, severity__isnull=False)
    if viewer is not None:
        waiting = waiting.exclude(pk__in=blind_claims(user=viewer))
    return (
        waiting.exclude(Exists(Adjudication.objects.filter(claim=OuterRef("pk"))))
        .select_related("answer")
        .only("pk", "order", "parent_id", "severity", "evidence_jaccard", "answer__external_id")
        .annotate(
            snippet=Left("text", 160),
            system=F("answer__system"),
            label=F("machine_check__label"),
            has_fast=Exists(fast),
        )
        .prefetch_related(
            Prefetch(
                "sheets",
                queryset=AuditSheet.objects.filter(
                    status=AuditSheet.Status.SUBMITTED,
                    claim__assignments__reviewer=F("reviewer"),
                )
                .select_related("reviewer")
                .only("pk", "claim_id", "judgment", "active_seconds", "reviewer__username")
                .order_by("pk"),
                to_attr="submitted_sheets",
            )
        )
        .order_by(*ADJUDICATION_ORDER)
    )


def next_in_adjudication_queue(*, audit_set: AuditSet, after: Claim, viewer=None) -> int | None:
    """The next claim waiting for a lead after `after` in queue order, wrapping round."""
    waiting = (
        adjudication_queue(audit_set=audit_set, viewer=viewer)
        .prefetch_related(None)
        .exclude(pk=after.pk)
        .annotate(
            k_top=Coalesce("parent_order", "order"),
            k_atomic=Case(When(parent__isnull=True, then=Value(0)), default=Value(1)),
        )
    )
    if after.severity is None:
        return waiting.values_list("pk", flat=True).first()
    key = (
        after.severity,
        after.answer_id,
        after.parent_order if after.parent_id else after.order,
        1 if after.parent_id else 0,
        after.order,
    )
    later = (
        Q(severity__gt=key[0])
        | Q(severity=key[0], answer_id__gt=key[1])
        | Q(severity=key[0], answer_id=key[1], k_top__gt=key[2])
        | Q(severity=key[0], answer_id=key[1], k_top=key[2], k_atomic__gt=key[3])
        | Q(severity=key[0], answer_id=key[1], k_top=key[2], k_atomic=key[3], order__gt=key[4])
    )
    following = waiting.filter(later).values_list("pk", flat=True).first()
    if following is not None:
        return following
    return waiting.values_list("pk", flat=True).first()


def lead_decided(*, claim: Claim) -> bool:
    """Whether a lead has settled the claim's gold (unanimous gold is no lead's decision)."""
    return Adjudication.objects.filter(claim=claim, lead__isnull=False).exists()


def lead_claim(*, user, pk: int) -> Claim | None:
    """The claim if it is in a set the user leads, else None (the view answers 404)."""
    return (
        Claim.objects.select_related("answer__question", "answer__audit_set", "parent")
        .filter(pk=pk, answer__audit_set__in=sets_led_by(user=user))
        .first()
    )


def set_systems(*, audit_set: AuditSet) -> list[str]:
    return list(
        Answer.objects.filter(audit_set=audit_set, replaced_at__isnull=True)
        .order_by("system")
        .values_list("system", flat=True)
        .distinct()
    )


def claims_by_ids(*, ids: list[int], viewer=None) -> list[Claim]:
    """A page of claims for a list behind a dashboard number, in the order of `ids`, each
    with its gold judgment and submitted sheets; no long text. A claim the viewer still
    reviews shows only the viewer's own sheet and no gold (see blind_claims)."""
    blind = blind_claims(user=viewer) if viewer is not None else Assignment.objects.none()
    rows = {
        claim.pk: claim
        for claim in Claim.objects.filter(pk__in=ids)
        .select_related("answer")
        .only("pk", "order", "parent_id", "severity", "answer__external_id", "answer__system")
        .annotate(
            snippet=Left("text", 160),
            gold=Case(
                When(pk__in=blind.values("claim_id"), then=Value(None)),
                default=Subquery(
                    Adjudication.objects.filter(claim=OuterRef("pk")).values("judgment")[:1]
                ),
                output_field=CharField(),
            ),
        )
        .prefetch_related(
            Prefetch(
                "sheets",
                queryset=visible_sheets(
                    AuditSheet.objects.filter(status=AuditSheet.Status.SUBMITTED), user=viewer
                )
                .select_related("reviewer")
                .only("pk", "claim_id", "judgment", "reviewer__username")
                .order_by("pk"),
                to_attr="submitted_sheets",
            )
        )
    }
    return [rows[pk] for pk in ids if pk in rows]


def sheet_letters(*, audit_set: AuditSet) -> dict[int, str]:
    """Each reviewer's letter in the set (reviewer id → "A", "B", …), in the order they
    first wrote a sheet there. The same person keeps one letter on every claim, page and
    download of the set, so "A" never means another reviewer on the next claim."""
    firsts = (
        AuditSheet.objects.filter(claim__answer__audit_set=audit_set)
        .values("reviewer_id")
        .annotate(first=Min("pk"))
        .order_by("first")
        .values_list("reviewer_id", flat=True)
    )
    return {reviewer_id: judgments.sheet_letter(i) for i, reviewer_id in enumerate(firsts)}
