"""Reads: the querysets views share, each already limited to what the user may see."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db.models import (
    Case,
    CharField,
    Count,
    Exists,
    F,
    IntegerField,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    Value,
    When,
)
from django.db.models.functions import Coalesce, Left
from django.http import Http404

from audit import judgments, roles
from audit.models import (
    Adjudication,
    Answer,
    Assignment,
    AuditSet,
    AuditSheet,
    Claim,
    ClaimCheck,
    GuidelineFlag,
    Severity,
)
from audit.roles import is_lead

# The order a reviewer meets claims in: answer by answer, each answer's claims in reading
# order, an atomic claim right where its parent was.
QUEUE_ORDER = (
    "answer_id",
    Coalesce("parent__order", "order"),
    F("parent_id").asc(nulls_first=True),
    "order",
)


def sets_visible_to(*, user) -> QuerySet[AuditSet]:
    if is_lead(user):
        return AuditSet.objects.all()
    return AuditSet.objects.filter(reviewers=user)


def _claim_count(filter_q: Q | None = None, outer: str = "audit_set") -> Subquery:
    # A subquery per column keeps each count exact without one big multiplying join.
    claims = Claim.objects.filter(**{f"answer__{outer}": OuterRef("pk")}, parent__isnull=True)
    if filter_q is not None:
        claims = claims.filter(filter_q)
    return Coalesce(
        Subquery(
            claims.order_by().values(f"answer__{outer}").annotate(n=Count("pk")).values("n"),
            output_field=IntegerField(),
        ),
        Value(0),
    )


def set_list_rows(*, user) -> QuerySet[AuditSet]:
    answers = Coalesce(
        Subquery(
            Answer.objects.filter(audit_set=OuterRef("pk"))
            .order_by()
            .values("audit_set")
            .annotate(n=Count("pk"))
            .values("n"),
            output_field=IntegerField(),
        ),
        Value(0),
    )
    return sets_visible_to(user=user).annotate(
        answer_count=answers,
        claim_count=_claim_count(),
        uncited_count=_claim_count(Q(is_uncited=True)),
        unknown_count=_claim_count(~Q(cited_unknown=[])),
    )


def answer_rows(*, audit_set: AuditSet) -> QuerySet[Answer]:
    """The set page's answer list, without loading any answer or passage text."""

    def count(filter_q: Q | None = None) -> Subquery:
        claims = Claim.objects.filter(answer=OuterRef("pk"), parent__isnull=True)
        if filter_q is not None:
            claims = claims.filter(filter_q)
        return Coalesce(
            Subquery(
                claims.order_by().values("answer").annotate(n=Count("pk")).values("n"),
                output_field=IntegerField(),
            ),
            Value(0),
        )

    return (
        Answer.objects.filter(audit_set=audit_set)
        .select_related("question")
        .only(
            "pk",
            "external_id",
            "system",
            "is_partial",
            "question__external_id",
            "question__text",
            "import_batch_id",
            "audit_set_id",
        )
        .annotate(
            claim_count=count(),
            uncited_count=count(Q(is_uncited=True)),
            unknown_count=count(~Q(cited_unknown=[])),
            verified_count=count(Q(machine_check__label=ClaimCheck.Label.VERIFIED)),
        )
    )


def set_for_user(*, user, pk: int) -> AuditSet:
    try:
        return sets_visible_to(user=user).get(pk=pk)
    except AuditSet.DoesNotExist:
        raise Http404("No such audit set.") from None


def answer_for_user(*, user, pk: int) -> Answer:
    visible = sets_visible_to(user=user)
    try:
        return Answer.objects.select_related("question", "audit_set").get(
            pk=pk, audit_set__in=visible
        )
    except Answer.DoesNotExist:
        raise Http404("No such answer.") from None


@dataclass(frozen=True)
class Distribution:
    group: str
    counts: dict[str, int]
    total: int

    def share(self, label: str) -> float:
        return self.counts.get(label, 0) / self.total if self.total else 0.0


def label_distribution(*, audit_set: AuditSet, by: str) -> list[Distribution]:
    """Machine labels counted per system (by="system") or per import file (by="import")."""
    key = "claim__answer__system" if by == "system" else "claim__answer__import_batch__filename"
    rows = (
        ClaimCheck.objects.filter(claim__answer__audit_set=audit_set, claim__parent__isnull=True)
        .values(key, "label")
        .annotate(n=Count("pk"))
        .order_by()
    )
    counts: dict[str, Counter] = defaultdict(Counter)
    for row in rows:
        counts[row[key] or "—"][row["label"]] += row["n"]
    return [
        Distribution(group=g, counts=dict(c), total=sum(c.values()))
        for g, c in sorted(counts.items())
    ]


# ------------------------------------------------------------------------------- review


def review_candidates() -> QuerySet:
    """Users a lead can choose as reviewers of a set."""
    return (
        get_user_model()
        .objects.filter(groups__name=roles.REVIEWER, is_active=True)
        .order_by("username")
    )


def _submitted_by_assignee(**filters) -> QuerySet[AuditSheet]:
    # A sheet counts only while its reviewer is still assigned to the claim (a split or a
    # replacement can leave sheets behind that nobody is waiting for).
    return AuditSheet.objects.filter(
        status=AuditSheet.Status.SUBMITTED, claim__assignments__reviewer=F("reviewer"), **filters
    )


def _count(queryset: QuerySet, group: str) -> Coalesce:
    return Coalesce(
        Subquery(
            queryset.order_by().values(group).annotate(n=Count("pk")).values("n"),
            output_field=IntegerField(),
        ),
        Value(0),
    )


def reviewer_set_rows(*, user) -> QuerySet[AuditSet]:
    """The reviewer's home: their sets with their own assigned and done counts only."""
    mine = Assignment.objects.filter(reviewer=user, claim__answer__audit_set=OuterRef("pk"))
    done = AuditSheet.objects.filter(
        reviewer=user,
        status=AuditSheet.Status.SUBMITTED,
        claim__answer__audit_set=OuterRef("pk"),
        claim__assignments__reviewer=user,
    )
    return (
        AuditSet.objects.filter(reviewers=user)
        .annotate(
            assigned=_count(mine, "reviewer"),
            done=_count(done, "reviewer"),
        )
        .order_by("-review_opened_at", "name")
    )


def lead_set_rows(*, user) -> QuerySet[AuditSet]:
    """A lead's home: every set with its review progress over all reviewers."""
    assigned = Assignment.objects.filter(claim__answer__audit_set=OuterRef("pk"))
    submitted = _submitted_by_assignee(claim__answer__audit_set=OuterRef("pk"))
    return (
        sets_visible_to(user=user)
        .annotate(
            assigned=_count(assigned.annotate(s=F("claim__answer__audit_set")), "s"),
            done=_count(submitted.annotate(s=F("claim__answer__audit_set")), "s"),
        )
        .order_by("-created_at", "name")
    )


def _keyed(assignments: QuerySet[Assignment]) -> QuerySet[Assignment]:
    return assignments.annotate(
        k_answer=F("claim__answer_id"),
        k_top=Coalesce("claim__parent__order", "claim__order"),
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


def next_claim_id(*, reviewer, audit_set: AuditSet, after: Claim | None = None) -> int | None:
    """The reviewer's next unsubmitted claim after `after` in queue order, wrapping round."""
    unfinished = review_queue(reviewer=reviewer, audit_set=audit_set).exclude(
        sheet_status=AuditSheet.Status.SUBMITTED
    )
    if after is None:
        return unfinished.values_list("claim_id", flat=True).first()
    key = (
        after.answer_id,
        after.parent.order if after.parent_id else after.order,
        1 if after.parent_id else 0,
        after.order,
    )
    later = (
        Q(k_answer__gt=key[0])
        | Q(k_answer=key[0], k_top__gt=key[1])
        | Q(k_answer=key[0], k_top=key[1], k_atomic__gt=key[2])
        | Q(k_answer=key[0], k_top=key[1], k_atomic=key[2], k_order__gt=key[3])
    )
    following = unfinished.filter(later).values_list("claim_id", flat=True).first()
    if following is not None:
        return following
    return unfinished.exclude(claim=after).values_list("claim_id", flat=True).first()


def assigned_claim(*, user, pk: int) -> Claim | None:
    """The claim if it is assigned to the user in a set they still review, else None."""
    return (
        Claim.objects.select_related("answer__question", "answer__audit_set", "parent")
        .filter(
            pk=pk,
            assignments__reviewer=user,
            answer__audit_set__in=AuditSet.objects.filter(reviewers=user),
        )
        .first()
    )


@dataclass(frozen=True)
class ReviewerProgress:
    reviewer_id: int
    username: str
    assigned: int
    submitted: int
    drafts: int
    median_seconds: float | None
    claims_per_hour: float | None
    flags: int

    @property
    def percent(self) -> int:
        return round(100 * self.submitted / self.assigned) if self.assigned else 0


def reviewer_progress(*, audit_set: AuditSet) -> list[ReviewerProgress]:
    """Per reviewer of a set: assigned, submitted and draft claims, active time, flags."""
    in_set = {"claim__answer__audit_set": audit_set}
    assigned = dict(
        Assignment.objects.filter(**in_set)
        .values("reviewer")
        .annotate(n=Count("pk"))
        .values_list("reviewer", "n")
        .order_by()
    )
    status_counts: dict[int, Counter] = defaultdict(Counter)
    for reviewer_id, status, n in (
        AuditSheet.objects.filter(claim__assignments__reviewer=F("reviewer"), **in_set)
        .values("reviewer", "status")
        .annotate(n=Count("pk"))
        .values_list("reviewer", "status", "n")
        .order_by()
    ):
        status_counts[reviewer_id][status] = n
    seconds: dict[int, list[int]] = defaultdict(list)
    for reviewer_id, active in _submitted_by_assignee(**in_set).values_list(
        "reviewer", "active_seconds"
    ):
        seconds[reviewer_id].append(active)
    flags = dict(
        GuidelineFlag.objects.filter(audit_set=audit_set)
        .values("raised_by")
        .annotate(n=Count("pk"))
        .values_list("raised_by", "n")
        .order_by()
    )
    people = (
        get_user_model()
        .objects.filter(Q(pk__in=assigned.keys()) | Q(review_sets=audit_set))
        .distinct()
        .order_by("username")
        .values_list("pk", "username")
    )
    rows = []
    for pk, username in people:
        times = seconds.get(pk, [])
        total = sum(times)
        rows.append(
            ReviewerProgress(
                reviewer_id=pk,
                username=username,
                assigned=assigned.get(pk, 0),
                submitted=status_counts[pk][AuditSheet.Status.SUBMITTED],
                drafts=status_counts[pk][AuditSheet.Status.DRAFT],
                median_seconds=statistics.median(times) if times else None,
                claims_per_hour=round(3600 * len(times) / total, 1) if total else None,
                flags=flags.get(pk, 0),
            )
        )
    return rows


def set_flags(*, audit_set: AuditSet) -> QuerySet[GuidelineFlag]:
    return GuidelineFlag.objects.filter(audit_set=audit_set).select_related(
        "raised_by", "claim__answer"
    )


class ClaimStatus:
    """A claim's place in the review, as the lead's claims table shows it."""

    UNASSIGNED = "unassigned"
    IN_REVIEW = "in_review"
    PARTLY = "partly_submitted"
    SUBMITTED = "submitted"
    DISAGREEMENT = "disagreement"
    ADJUDICATED = "adjudicated"
    SPLIT = "split"
    CHOICES = (
        (UNASSIGNED, "Unassigned"),
        (IN_REVIEW, "In review"),
        (PARTLY, "Partly submitted"),
        (SUBMITTED, "All submitted"),
        (DISAGREEMENT, "Disagreement"),
        (ADJUDICATED, "Adjudicated"),
        (SPLIT, "Split"),
    )


def claim_rows(*, audit_set: AuditSet) -> QuerySet[Claim]:
    """The lead's claims table: status, counts and machine label, without any long text.

    Every number is a correlated subquery on an indexed foreign key, so a page of rows
    costs the same however many claims the set holds.
    """
    assigned = Assignment.objects.filter(claim=OuterRef("pk"))
    # Only a split can leave a submitted sheet without its assignment, and a split claim's
    # status is "split" whatever its sheets say: no join on assignments needed here.
    submitted = AuditSheet.objects.filter(claim=OuterRef("pk"), status=AuditSheet.Status.SUBMITTED)
    kinds = Subquery(
        submitted.order_by()
        .values("claim")
        .annotate(n=Count("judgment", distinct=True))
        .values("n"),
        output_field=IntegerField(),
    )
    return (
        Claim.objects.filter(answer__audit_set=audit_set)
        .select_related("answer")
        .only("pk", "order", "parent_id", "location", "answer_id", "answer__external_id")
        .annotate(
            snippet=Left("text", 160),
            system=F("answer__system"),
            label=F("machine_check__label"),
            assigned_count=_count(assigned, "claim"),
            submitted_count=_count(submitted, "claim"),
            judgment_kinds=Coalesce(kinds, Value(0)),
            is_adjudicated=Exists(Adjudication.objects.filter(claim=OuterRef("pk"))),
            is_split=Exists(Claim.objects.filter(parent=OuterRef("pk"))),
        )
        .annotate(
            status=Case(
                When(is_adjudicated=True, then=Value(ClaimStatus.ADJUDICATED)),
                When(is_split=True, then=Value(ClaimStatus.SPLIT)),
                When(assigned_count=0, then=Value(ClaimStatus.UNASSIGNED)),
                When(submitted_count=0, then=Value(ClaimStatus.IN_REVIEW)),
                When(submitted_count__lt=F("assigned_count"), then=Value(ClaimStatus.PARTLY)),
                When(
                    Q(severity__lt=Severity.CONFIRM) | Q(judgment_kinds__gt=1),
                    then=Value(ClaimStatus.DISAGREEMENT),
                ),
                default=Value(ClaimStatus.SUBMITTED),
                output_field=CharField(),
            )
        )
        .prefetch_related(
            Prefetch(
                "assignments",
                queryset=Assignment.objects.select_related("reviewer")
                .only("claim_id", "reviewer__username")
                .order_by("reviewer__username"),
            )
        )
        .order_by(*QUEUE_ORDER)
    )


def status_counts(*, audit_set: AuditSet) -> dict[str, int]:
    rows = claim_rows(audit_set=audit_set).prefetch_related(None).order_by()
    counts = Counter(dict(rows.values("status").annotate(n=Count("pk")).values_list("status", "n")))
    return {code: counts.get(code, 0) for code, _ in ClaimStatus.CHOICES}


def split_verdict(*, claim: Claim) -> str | None:
    """The derived verdict of a split claim, from its atomic claims' adjudications."""
    verdicts = dict(
        Adjudication.objects.filter(claim__parent=claim).values_list("claim_id", "judgment")
    )
    children = claim.atomic_claims.order_by("order").values_list("pk", flat=True)
    return judgments.derived_verdict([verdicts.get(pk) for pk in children])


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
        .select_related("reviewer", "wrong_citation_passage")
        .order_by("pk")
    )


def adjudication_queue(*, audit_set: AuditSet) -> QuerySet[Claim]:
    """Claims of the set waiting for a lead, most severe first, without any long text.

    Each row carries its submitted sheets (reviewer, judgment, active time) prefetched.
    """
    fast = AuditSheet.objects.filter(
        claim=OuterRef("pk"),
        status=AuditSheet.Status.SUBMITTED,
        active_seconds__lt=FAST_SECONDS,
    )
    return (
        Claim.objects.filter(answer__audit_set=audit_set, severity__isnull=False)
        .exclude(Exists(Adjudication.objects.filter(claim=OuterRef("pk"))))
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


def next_in_adjudication_queue(*, audit_set: AuditSet, after: Claim) -> int | None:
    """The next claim waiting for a lead after `after` in queue order, wrapping round."""
    waiting = (
        adjudication_queue(audit_set=audit_set)
        .prefetch_related(None)
        .exclude(pk=after.pk)
        .annotate(
            k_top=Coalesce("parent__order", "order"),
            k_atomic=Case(When(parent__isnull=True, then=Value(0)), default=Value(1)),
        )
    )
    if after.severity is None:
        return waiting.values_list("pk", flat=True).first()
    key = (
        after.severity,
        after.answer_id,
        after.parent.order if after.parent_id else after.order,
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


def lead_claim(*, pk: int) -> Claim | None:
    return (
        Claim.objects.select_related("answer__question", "answer__audit_set", "parent")
        .filter(pk=pk)
        .first()
    )


def set_systems(*, audit_set: AuditSet) -> list[str]:
    return list(
        Answer.objects.filter(audit_set=audit_set)
        .order_by("system")
        .values_list("system", flat=True)
        .distinct()
    )


def claims_by_ids(*, ids: list[int]) -> list[Claim]:
    """A page of claims for a list behind a dashboard number, in the order of `ids`, each
    with its gold judgment and submitted sheets; no long text."""
    rows = {
        claim.pk: claim
        for claim in Claim.objects.filter(pk__in=ids)
        .select_related("answer")
        .only("pk", "order", "parent_id", "severity", "answer__external_id", "answer__system")
        .annotate(
            snippet=Left("text", 160),
            gold=Subquery(Adjudication.objects.filter(claim=OuterRef("pk")).values("judgment")[:1]),
        )
        .prefetch_related(
            Prefetch(
                "sheets",
                queryset=AuditSheet.objects.filter(status=AuditSheet.Status.SUBMITTED)
                .select_related("reviewer")
                .only("pk", "claim_id", "judgment", "reviewer__username")
                .order_by("pk"),
                to_attr="submitted_sheets",
            )
        )
    }
    return [rows[pk] for pk in ids if pk in rows]
