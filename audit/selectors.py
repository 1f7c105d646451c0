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
    Max,
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
from audit.comparison import RunClaim
from audit.metrics import ClaimLabel
from audit.models import (
    QUEUE_ORDER,
    Adjudication,
    Answer,
    Assignment,
    AuditSet,
    AuditSheet,
    Claim,
    ClaimCheck,
    GuidelineFlag,
    ReviewerTally,
    ReviewStatus,
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
    return (
        Assignment.objects.filter(reviewer=user).exclude(Exists(own_submitted)).values("claim_id")
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


def _unfinished(*, reviewer, audit_set: AuditSet) -> QuerySet[Assignment]:
    submitted = AuditSheet.objects.filter(
        claim=OuterRef("claim"), reviewer=reviewer, status=AuditSheet.Status.SUBMITTED
    )
    return Assignment.objects.filter(
        reviewer=reviewer,
        claim__answer__audit_set=audit_set,
        claim__answer__audit_set__reviewers=reviewer,
    ).exclude(Exists(submitted))


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
    """The reviewer's next unsubmitted claim after `after` in queue order, wrapping round."""
    unfinished = _unfinished(reviewer=reviewer, audit_set=audit_set)
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
    here = _keyed(Assignment.objects.filter(reviewer=reviewer, claim__answer_id=claim.answer_id))
    counts = here.order_by().aggregate(in_answer=Count("pk"), position=Count("pk", filter=up_to))
    tally = (
        ReviewerTally.objects.filter(audit_set=audit_set, reviewer=reviewer)
        .values_list("assigned", "submitted")
        .first()
    ) or (0, 0)
    return QueuePlace(
        position=counts["position"],
        in_answer=counts["in_answer"],
        assigned=tally[0],
        done=tally[1],
    )


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
            answer__audit_set__in=AuditSet.objects.filter(reviewers=user),
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
            answer__audit_set__in=AuditSet.objects.filter(reviewers=user),
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


def set_flags(*, audit_set: AuditSet, viewer=None) -> QuerySet[GuidelineFlag]:
    """The set's guideline flags, less other people's flags on claims the viewer still
    reviews: a reviewer's comment can say what they think of the claim."""
    flags = GuidelineFlag.objects.filter(audit_set=audit_set)
    if viewer is not None:
        flags = flags.filter(~Q(claim_id__in=blind_claims(user=viewer)) | Q(raised_by=viewer))
    return flags.select_related("raised_by", "claim__answer")


class ClaimStatus:
    """A claim's place in the review, as the lead's claims table shows it (stored on the
    claim as Claim.review_status; see audit.services.statuses)."""

    UNASSIGNED = ReviewStatus.UNASSIGNED
    IN_REVIEW = ReviewStatus.IN_REVIEW
    PARTLY = ReviewStatus.PARTLY
    SUBMITTED = ReviewStatus.SUBMITTED
    DISAGREEMENT = ReviewStatus.DISAGREEMENT
    ADJUDICATED = ReviewStatus.ADJUDICATED
    SPLIT = ReviewStatus.SPLIT
    CHOICES = tuple(ReviewStatus.choices)


def _assigned_count() -> Coalesce:
    return _count(Assignment.objects.filter(claim=OuterRef("pk")), "claim")


def _submitted_count() -> Coalesce:
    # Only a split can leave a submitted sheet without its assignment, and a split claim's
    # status is "split" whatever its sheets say: no join on assignments needed here.
    submitted = AuditSheet.objects.filter(claim=OuterRef("pk"), status=AuditSheet.Status.SUBMITTED)
    return _count(submitted, "claim")


class ClaimRowQuerySet(QuerySet):
    """claim_rows' queryset: a slice that starts past the first row fetches the page's keys
    first (an index-only walk of the queue order), so the per-row count subqueries run for
    the page's rows, not for every skipped one."""

    def __getitem__(self, k):
        if not isinstance(k, slice) or not k.start or self._result_cache is not None:
            return super().__getitem__(k)
        keys = list(QuerySet.__getitem__(self.values_list("pk", flat=True), k))
        rows = {row.pk: row for row in self.filter(pk__in=keys)}
        return [rows[pk] for pk in keys]


def claim_rows(*, audit_set: AuditSet, viewer=None) -> QuerySet[Claim]:
    """The lead's claims table: status, counts and machine label, without any long text.

    The status is the stored, indexed Claim.review_status, and the order is the
    claim_queue_idx index's, so a page (even a deep one, or one of a rare status) does not
    sort or evaluate the whole set; the counts are correlated subqueries for the page's rows.
    A claim the viewer still reviews reads "in review" with no submitted sheet.
    """
    status = F("review_status")
    submitted_count = _submitted_count()
    blind = blind_claim_ids(user=viewer, audit_set=audit_set) if viewer is not None else ()
    if blind:
        status = Case(
            When(pk__in=blind, then=Value(ReviewStatus.IN_REVIEW)),
            default=F("review_status"),
        )
        submitted_count = Case(When(pk__in=blind, then=Value(0)), default=submitted_count)
    return (
        ClaimRowQuerySet(Claim)
        .filter(answer__audit_set=audit_set)
        .select_related("answer")
        .only(
            "pk",
            "order",
            "parent_id",
            "location",
            "answer_id",
            "review_status",
            "answer__external_id",
        )
        .annotate(
            snippet=Left("text", 160),
            system=F("answer__system"),
            label=F("machine_check__label"),
            assigned_count=_assigned_count(),
            submitted_count=submitted_count,
            status=status,
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
    rows = Claim.objects.filter(answer__audit_set=audit_set).order_by()
    counts = Counter(
        dict(rows.values("review_status").annotate(n=Count("pk")).values_list("review_status", "n"))
    )
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


# ------------------------------------------------------------------------- release metrics


@dataclass(frozen=True)
class Run:
    """A run to report on or compare: a system of the set, or one import batch."""

    key: str  # "system:<name>" or "import:<pk>"
    name: str


def set_runs(*, audit_set: AuditSet) -> list[Run]:
    runs = [Run(f"system:{name}", name) for name in set_systems(audit_set=audit_set)]
    for batch in audit_set.imports.order_by("created_at", "pk").only("pk", "filename"):
        runs.append(Run(f"import:{batch.pk}", f"import #{batch.pk} · {batch.filename}"))
    return runs


def compare_defaults(*, audit_set: AuditSet) -> tuple[str, str] | None:
    """The run keys the comparison page starts with: the set's two most recently imported
    systems, older first; the two latest import batches when it has one system only."""
    systems = list(
        Answer.objects.filter(audit_set=audit_set)
        .values("system")
        .annotate(latest=Max("created_at"), last_pk=Max("pk"))
        .order_by("-latest", "-last_pk")
        .values_list("system", flat=True)[:2]
    )
    if len(systems) == 2:
        return f"system:{systems[1]}", f"system:{systems[0]}"
    batches = list(
        audit_set.imports.order_by("-created_at", "-pk").values_list("pk", flat=True)[:2]
    )
    if len(batches) == 2:
        return f"import:{batches[1]}", f"import:{batches[0]}"
    return None


def _run_filter(run_key: str | None) -> Q:
    if not run_key:
        return Q()
    kind, _, value = run_key.partition(":")
    if kind == "system":
        return Q(answer__system=value)
    if kind == "import" and value.isdigit():
        return Q(answer__import_batch_id=int(value))
    raise Http404("No such run.")


def _evidence_spans(evidence: list) -> tuple[tuple[int, int, int], ...]:
    spans = []
    for item in evidence or []:
        try:
            spans.append((int(item["passage"]), int(item["start"]), int(item["end"])))
        except (KeyError, TypeError, ValueError):
            continue
    return tuple(spans)


@dataclass(frozen=True)
class _Verdict:
    judgment: str | None
    provisional: bool
    verification_worthy: bool
    evidence: tuple[tuple[int, int, int], ...]
    wrong_passage: int | None
    numbers_overridden: bool = False


def _verdicts(claims: QuerySet[Claim], *, viewer=None) -> dict[int, _Verdict]:
    """Gold where adjudicated; else the submitted sheets' shared judgment, provisional.

    A claim the viewer still reviews has no verdict for them (see blind_claims).
    """
    if viewer is not None:
        claims = claims.exclude(pk__in=blind_claims(user=viewer))
    verdicts: dict[int, _Verdict] = {}
    for row in Adjudication.objects.filter(claim__in=claims).values(
        "claim_id",
        "judgment",
        "verification_worthy",
        "evidence",
        "wrong_citation_passage__position",
        "numbers_overridden",
    ):
        verdicts[row["claim_id"]] = _Verdict(
            row["judgment"],
            False,
            row["verification_worthy"],
            _evidence_spans(row["evidence"]),
            row["wrong_citation_passage__position"],
            row["numbers_overridden"],
        )
    sheets: dict[int, list[dict]] = defaultdict(list)
    for row in (
        AuditSheet.objects.filter(claim__in=claims, status=AuditSheet.Status.SUBMITTED)
        .exclude(claim_id__in=list(verdicts))
        .order_by("pk")
        .values(
            "claim_id",
            "judgment",
            "verification_worthy",
            "evidence",
            "wrong_citation_passage__position",
        )
    ):
        sheets[row["claim_id"]].append(row)
    for claim_id, rows in sheets.items():
        agreed = len({row["judgment"] for row in rows}) == 1
        first = rows[0]
        verdicts[claim_id] = _Verdict(
            first["judgment"] if agreed else None,
            True,
            # Left out of the denominator only when every reviewer says so.
            any(row["verification_worthy"] for row in rows),
            _evidence_spans(first["evidence"]) if agreed else (),
            first["wrong_citation_passage__position"] if agreed else None,
        )
    return verdicts


def run_claims(*, audit_set: AuditSet, run: str | None = None, viewer=None) -> list[RunClaim]:
    """The set's top-level claims as the metrics see them (optionally one run: see
    `set_runs`), each with its question; no answer or passage text is loaded.

    A claim split into atomic claims takes the derived verdict of its atomic claims, and is
    provisional when any of them is. Topics come from the answer's `metadata.topics`.
    """
    scope = Q(answer__audit_set=audit_set) & _run_filter(run)
    claims = Claim.objects.filter(scope)
    top = list(
        claims.filter(parent__isnull=True)
        .order_by(*QUEUE_ORDER)
        .values(
            "pk",
            "text",
            "answer_id",
            "answer__system",
            "answer__question__external_id",
            "cited_unknown",
            "is_uncited",
        )
    )
    children: dict[int, list[int]] = defaultdict(list)
    for pk, parent_id in (
        claims.filter(parent__isnull=False).order_by("order").values_list("pk", "parent_id")
    ):
        children[parent_id].append(pk)
    citations: dict[int, list[int]] = defaultdict(list)
    for claim_id, position in (
        Claim.citations.through.objects.filter(claim__in=claims)
        .order_by("passage__position")
        .values_list("claim_id", "passage__position")
    ):
        citations[claim_id].append(position)
    ungrounded = {
        claim_id: sum(1 for n in numbers or [] if not n.get("grounded"))
        for claim_id, numbers in ClaimCheck.objects.filter(claim__in=claims).values_list(
            "claim_id", "numbers"
        )
    }
    topics = {}
    for pk, metadata in (
        Answer.objects.filter(claims__in=claims).distinct().values_list("pk", "metadata")
    ):
        raw = metadata.get("topics", []) if isinstance(metadata, dict) else []
        topics[pk] = (
            frozenset(t for t in raw if isinstance(t, str))
            if isinstance(raw, list)
            else frozenset()
        )
    verdicts = _verdicts(claims, viewer=viewer)
    unjudged = _Verdict(None, True, True, (), None)

    result = []
    for row in top:
        verdict = verdicts.get(row["pk"], unjudged)
        parts = children.get(row["pk"])
        if parts:
            atomic = [verdicts.get(pk, unjudged) for pk in parts]
            verdict = _Verdict(
                judgments.derived_verdict([v.judgment for v in atomic]),
                any(v.provisional for v in atomic),
                any(v.verification_worthy for v in atomic),
                tuple(span for v in atomic for span in v.evidence),
                next((v.wrong_passage for v in atomic if v.wrong_passage), None),
                # The parent's numbers are spread over its atomic claims: overridden once
                # a lead overrode every atomic claim whose own check misses a number.
                any(v.numbers_overridden for v in atomic)
                and all(
                    v.numbers_overridden
                    for pk, v in zip(parts, atomic, strict=True)
                    if ungrounded.get(pk, 0)
                ),
            )
        unknown = [m for m in row["cited_unknown"] or [] if isinstance(m, int)]
        label = ClaimLabel(
            claim_id=row["pk"],
            answer_id=row["answer_id"],
            system=row["answer__system"],
            judgment=verdict.judgment,
            provisional=verdict.provisional,
            verification_worthy=verdict.verification_worthy,
            citations=tuple(citations.get(row["pk"], ())),
            cited_unknown=tuple(unknown),
            evidence=verdict.evidence,
            wrong_citation_passage=verdict.wrong_passage,
            ungrounded_numbers=ungrounded.get(row["pk"], 0),
            numbers_overridden=verdict.numbers_overridden,
            topics=topics.get(row["answer_id"], frozenset()),
            uncited=row["is_uncited"],
        )
        result.append(RunClaim(row["answer__question__external_id"], row["text"], label))
    return result


def run_question_ids(*, audit_set: AuditSet, run: str) -> set[str]:
    """External ids of the questions a run (see `set_runs`) has an answer to."""
    kind, _, value = run.partition(":")
    answers = Answer.objects.filter(audit_set=audit_set)
    if kind == "system":
        answers = answers.filter(system=value)
    elif kind == "import" and value.isdigit():
        answers = answers.filter(import_batch_id=int(value))
    else:
        raise Http404("No such run.")
    return set(answers.values_list("question__external_id", flat=True))


def number_overrides(*, audit_set: AuditSet) -> list[Adjudication]:
    """Gold records of the set whose number check a lead overrode, by system then claim,
    each with `snippet` (the claim's first 200 characters) and `missing` (the numbers the
    matcher did not find)."""
    rows = list(
        Adjudication.objects.filter(claim__answer__audit_set=audit_set, numbers_overridden=True)
        .annotate(snippet=Left("claim__text", 200))
        .select_related("claim__answer", "lead")
        .only(
            "pk",
            "claim_id",
            "numbers_override_reason",
            "updated_at",
            "claim__answer__system",
            "lead__username",
        )
        .order_by("claim__answer__system", "claim__answer_id", "claim__order", "pk")
    )
    numbers = dict(
        ClaimCheck.objects.filter(claim_id__in=[r.claim_id for r in rows]).values_list(
            "claim_id", "numbers"
        )
    )
    for row in rows:
        row.missing = [n["token"] for n in numbers.get(row.claim_id) or [] if not n["grounded"]]
    return rows


def claim_labels(*, audit_set: AuditSet, run: str | None = None, viewer=None) -> list[ClaimLabel]:
    """metrics.ClaimLabel rows of the set's top-level claims (see `run_claims`)."""
    return [claim.label for claim in run_claims(audit_set=audit_set, run=run, viewer=viewer)]


def answer_names(*, ids: list[int]) -> dict[int, Answer]:
    """Answers by pk with their question id and system, for a page of the per-answer table."""
    return {
        answer.pk: answer
        for answer in Answer.objects.filter(pk__in=ids)
        .select_related("question")
        .only("pk", "external_id", "system", "question__external_id")
    }


def criteria_changes(*, audit_set: AuditSet) -> QuerySet:
    return audit_set.criteria_changes.select_related("by")


def criteria_locked_since(*, audit_set: AuditSet):
    """When the set's first sheet was submitted (criteria locked since), or None."""
    if audit_set.criteria_locked_at is not None:
        return audit_set.criteria_locked_at
    first = (
        AuditSheet.objects.filter(
            claim__answer__audit_set=audit_set, status=AuditSheet.Status.SUBMITTED
        )
        .order_by("submitted_at")
        .values_list("submitted_at", flat=True)
        .first()
    )
    return first
