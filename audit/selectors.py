"""Reads: the querysets views share, each already limited to what the user may see."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from django.db.models import Count, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.http import Http404

from audit.models import Answer, AuditSet, Claim, ClaimCheck
from audit.roles import is_lead


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
            verified_count=count(Q(check__label=ClaimCheck.Label.VERIFIED)),
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
