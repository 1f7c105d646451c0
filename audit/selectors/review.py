"""Reads for reviewers: their queue, the next claim, assigned claims and their sheets."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import (
    Case,
    Count,
    Exists,
    F,
    OuterRef,
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
    Assignment,
    AuditSet,
    AuditSheet,
    Claim,
    ClaimSkip,
    ControlAssignment,
    ReviewerPause,
    ReviewerTally,
)
from audit.selectors.blindness import sets_reviewed_by

# ------------------------------------------------------------------------------- review


def holds_claim(*, claim_id: int, user) -> bool:
    """Whether the claim is in the user's queue: assigned, or mixed in as a control."""
    return (
        Assignment.objects.filter(claim_id=claim_id, reviewer=user).exists()
        or ControlAssignment.objects.filter(claim_id=claim_id, reviewer=user).exists()
    )


def _keyed(assignments: QuerySet[Assignment]) -> QuerySet[Assignment]:
    return assignments.annotate(
        k_answer=F("claim__answer_id"),
        k_top=Coalesce("claim__parent_order", "claim__order"),
        k_atomic=Case(When(claim__parent__isnull=True, then=Value(0)), default=Value(1)),
        k_order=F("claim__order"),
    ).order_by("k_answer", "k_top", "k_atomic", "k_order")


def review_queue(*, reviewer, audit_set: AuditSet) -> QuerySet[Assignment]:
    """The reviewer's assignments in a set, in queue order, with their own sheet's status."""
    own_sheet = AuditSheet.objects.filter(claim=OuterRef("claim"), reviewer=reviewer)
    return _keyed(
        Assignment.objects.filter(
            reviewer=reviewer,
            claim__answer__audit_set=audit_set,
            claim__answer__audit_set__reviewers=reviewer,
        ).annotate(
            # "" for no sheet yet: a NULL would drop out of exclude(sheet_status=...).
            sheet_status=Coalesce(Subquery(own_sheet.values("status")[:1]), Value(""))
        )
    )


def _unfinished(*, reviewer, audit_set: AuditSet, model=Assignment) -> QuerySet:
    """The reviewer's claims in the set without a submitted sheet: their assignments, or
    (model=ControlAssignment) the control claims mixed into their queue."""
    submitted = AuditSheet.objects.filter(
        claim=OuterRef("claim"), reviewer=reviewer, status=AuditSheet.Status.SUBMITTED
    )
    # A claim of a replaced or retired answer no longer waits for its reviewer: its sheets
    # stay on record, but the current version is the one to judge.
    return model.objects.filter(
        reviewer=reviewer,
        claim__answer__audit_set=audit_set,
        claim__answer__audit_set__reviewers=reviewer,
        claim__answer__replaced_at__isnull=True,
    ).exclude(Exists(submitted))


def is_paused(*, reviewer, audit_set: AuditSet) -> bool:
    return ReviewerPause.objects.filter(audit_set=audit_set, reviewer=reviewer).exists()


def _queue_key(claim: Claim) -> tuple[int, int, int, int]:
    parent_order = claim.parent_order if claim.parent_id else claim.order
    return (claim.answer_id, parent_order, 1 if claim.parent_id else 0, claim.order)


def _first_in_queue(assignments: QuerySet[Assignment]) -> int | None:
    # Two short queries instead of one sort of the whole queue: the lowest answer first
    # (an index walk on claim.answer_id), then the queue order inside that answer.
    answer_id = (
        assignments.order_by("claim__answer_id").values_list("claim__answer_id", flat=True).first()
    )
    if answer_id is None:
        return None
    return (
        _keyed(assignments.filter(claim__answer_id=answer_id))
        .values_list("claim_id", flat=True)
        .first()
    )


def next_claim_id(*, reviewer, audit_set: AuditSet, after: Claim | None = None) -> int | None:
    """The reviewer's next unsubmitted claim after `after` in queue order, wrapping round;
    claims the reviewer skipped come only once no other is left, the longest skipped first.
    Control claims take their place in the same order as any other claim. None while a
    lead has paused the reviewer's queue."""
    if is_paused(reviewer=reviewer, audit_set=audit_set):
        return None
    skipped = ClaimSkip.objects.filter(claim=OuterRef("claim"), reviewer=reviewer)
    queues = [
        _unfinished(reviewer=reviewer, audit_set=audit_set, model=model)
        for model in (Assignment, ControlAssignment)
    ]
    following = _earliest([_following(q.exclude(Exists(skipped)), after) for q in queues], after)
    if following is not None:
        return following
    later = []
    for queue in queues:
        queue = queue.filter(Exists(skipped))
        if after is not None:
            queue = queue.exclude(claim=after)
        first = (
            queue.annotate(skipped_at=Subquery(skipped.values("skipped_at")[:1]))
            .order_by("skipped_at", "claim_id")
            .values_list("skipped_at", "claim_id")
            .first()
        )
        if first is not None:
            later.append(first)
    return min(later)[1] if later else None


def _earliest(claim_ids: list[int | None], after: Claim | None) -> int | None:
    """Of the next claims of several queues, the one that comes first after `after`."""
    found = [pk for pk in claim_ids if pk is not None]
    if len(found) < 2:
        return found[0] if found else None
    keys = {claim.pk: _queue_key(claim) for claim in Claim.objects.filter(pk__in=found)}
    ranked = sorted(found, key=lambda pk: keys[pk])
    if after is not None:
        ahead = [pk for pk in ranked if keys[pk] > _queue_key(after)]
        if ahead:
            return ahead[0]
    return ranked[0]


def _following(unfinished: QuerySet[Assignment], after: Claim | None) -> int | None:
    if after is None:
        return _first_in_queue(unfinished)
    _, top, atomic, order = _queue_key(after)
    later_in_answer = (
        Q(k_top__gt=top)
        | Q(k_top=top, k_atomic__gt=atomic)
        | Q(k_top=top, k_atomic=atomic, k_order__gt=order)
    )
    following = (
        _keyed(unfinished.filter(claim__answer_id=after.answer_id))
        .filter(later_in_answer)
        .values_list("claim_id", flat=True)
        .first()
    )
    if following is None:
        following = _first_in_queue(unfinished.filter(claim__answer_id__gt=after.answer_id))
    if following is None:
        following = _first_in_queue(unfinished.exclude(claim=after))
    return following


@dataclass(frozen=True)
class QueuePlace:
    position: int  # 1-based place of the claim among the reviewer's claims of its answer
    in_answer: int  # the reviewer's claims of that answer
    assigned: int  # the reviewer's claims in the set
    done: int  # of those, submitted


def queue_place(*, reviewer, audit_set: AuditSet, claim: Claim) -> QueuePlace:
    """Where `claim` sits in the reviewer's queue, and how far they are.

    The set-wide numbers are the reviewer's stored tally (one row); the place is counted
    inside the claim's answer only, so the page costs the same at 100 or 100,000 claims.
    A place in the whole queue would count every earlier assignment (~60 ms at 100k).
    """
    _, top, atomic, order = _queue_key(claim)
    up_to = (
        Q(k_top__lt=top)
        | Q(k_top=top, k_atomic__lt=atomic)
        | Q(k_top=top, k_atomic=atomic, k_order__lte=order)
    )
    counts = {"in_answer": 0, "position": 0}
    for model in (Assignment, ControlAssignment):
        here = _keyed(model.objects.filter(reviewer=reviewer, claim__answer_id=claim.answer_id))
        found = here.order_by().aggregate(in_answer=Count("pk"), position=Count("pk", filter=up_to))
        counts = {name: counts[name] + found[name] for name in counts}
    tally = (
        ReviewerTally.objects.filter(audit_set=audit_set, reviewer=reviewer)
        .values_list("assigned", "submitted")
        .first()
    ) or (0, 0)
    # Controls are in the reviewer's numbers as any claim is (the tally leaves them out).
    controls = ControlAssignment.objects.filter(
        reviewer=reviewer, claim__answer__audit_set=audit_set
    )
    controls_done = AuditSheet.objects.filter(
        reviewer=reviewer,
        status=AuditSheet.Status.SUBMITTED,
        claim__in=controls.values("claim"),
    ).count()
    return QueuePlace(
        position=counts["position"],
        in_answer=counts["in_answer"],
        assigned=tally[0] + controls.count(),
        done=tally[1] + controls_done,
    )


def assigned_claim(*, user, pk: int) -> Claim | None:
    """The claim if it is assigned to the user (or in their queue as a control) in a set
    they still review, else None."""
    return (
        Claim.objects.select_related("answer__question", "answer__audit_set", "parent")
        .filter(
            Exists(Assignment.objects.filter(claim=OuterRef("pk"), reviewer=user))
            | Exists(ControlAssignment.objects.filter(claim=OuterRef("pk"), reviewer=user)),
            pk=pk,
            answer__audit_set__in=sets_reviewed_by(user=user),
        )
        .first()
    )


def is_control_for(*, claim: Claim, reviewer) -> bool:
    """Whether the claim is in the reviewer's queue as a control (never shown to them)."""
    return ControlAssignment.objects.filter(claim=claim, reviewer=reviewer).exists()


def split_claim_for_reviewer(*, user, pk: int) -> Claim | None:
    """A claim split into atomic claims that the user had a sheet on, or whose atomic
    claims they review, in a set they still review: its old review address explains the
    split instead of a bare 404."""
    mine = Q(Exists(AuditSheet.objects.filter(claim=OuterRef("pk"), reviewer=user))) | Q(
        Exists(Assignment.objects.filter(claim__parent=OuterRef("pk"), reviewer=user))
    )
    return (
        Claim.objects.select_related("answer__question", "answer__audit_set")
        .filter(
            Exists(Claim.objects.filter(parent=OuterRef("pk"))),
            pk=pk,
            answer__audit_set__in=sets_reviewed_by(user=user),
        )
        .filter(mine)
        .first()
    )


def split_after_judging(*, user) -> QuerySet[Claim]:
    """Claims split after the user judged them: their sheets are kept, not counted as done."""
    judged = AuditSheet.objects.filter(claim=OuterRef("pk"), reviewer=user).filter(
        Q(status=AuditSheet.Status.SUBMITTED) | ~Q(judgment="")
    )
    return (
        Claim.objects.filter(
            Exists(judged),
            Exists(Claim.objects.filter(parent=OuterRef("pk"))),
            answer__audit_set__in=sets_reviewed_by(user=user),
        )
        .only("pk", "answer_id")
        .annotate(snippet=Left("text", 160), set_name=F("answer__audit_set__name"))
        .order_by("answer__audit_set_id", *QUEUE_ORDER)
    )


def reviewer_sheet(*, claim: Claim, reviewer) -> AuditSheet:
    """The reviewer's stored sheet for a claim, or a blank draft that is not stored.

    Looking at a claim writes nothing: the sheet is stored by its first save or submit.
    A blank draft snapshots the claim text and cited URLs as they are now.
    """
    sheet = AuditSheet.objects.filter(claim=claim, reviewer=reviewer).first()
    if sheet is not None:
        return sheet
    cited = claim.citations.order_by("position").values_list("url", flat=True)
    return AuditSheet(
        claim=claim, reviewer=reviewer, answer_statement=claim.text, cited_urls=list(cited)
    )


def split_verdict(*, claim: Claim) -> str | None:
    """The derived verdict of a split claim, from its atomic claims' adjudications."""
    verdicts = dict(
        Adjudication.objects.filter(claim__parent=claim).values_list("claim_id", "judgment")
    )
    children = claim.atomic_claims.order_by("order").values_list("pk", flat=True)
    return judgments.derived_verdict([verdicts.get(pk) for pk in children])
