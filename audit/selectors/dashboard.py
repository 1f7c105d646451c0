"""The agreement dashboard of a set: reviewer agreement on submitted sheets, evidence
overlap, matcher uptake, and every imported or automatic rater against adjudicated gold.

Reads only. The reviewers' half is a few GROUP BY counts over the agreement facts that the
review services keep (audit.services.facts); the raters' half one GROUP BY over rater labels
joined to gold. The statistics themselves come from audit.agreement, from those counts.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from itertools import combinations

from django.contrib.auth import get_user_model
from django.db.models import Count, F, Q, QuerySet, Sum

from audit import agreement
from audit.agreement import (
    BINARY_NOT,
    AgreementSummary,
    ConfusionMatrix,
    MatcherAcceptance,
    RaterReport,
)
from audit.judgments import SUPPORTED
from audit.models import (
    Adjudication,
    AuditSet,
    ClaimFact,
    PairFact,
    Rater,
    RaterLabel,
    SheetFact,
)

REVIEWERS = "reviewers"


@dataclass(frozen=True)
class Reviewer:
    pk: int
    username: str


@dataclass(frozen=True)
class RaterScore:
    """One imported or automatic rater against gold, on the full scale and collapsed."""

    rater_id: int
    name: str
    kind: str
    full: RaterReport
    binary: RaterReport

    @property
    def key(self) -> str:
        return f"rater-{self.rater_id}"


@dataclass(frozen=True)
class Dashboard:
    system: str
    pair: tuple[Reviewer, Reviewer] | None
    sheets: int
    claims: int  # claims with at least one submitted sheet
    gold: int
    full: AgreementSummary
    binary: AgreementSummary
    confusion: ConfusionMatrix  # rows: sheet A (or the pair's first), columns: sheet B
    confusion_binary: ConfusionMatrix
    evidence_jaccard: float | None
    # Token F1 between two sheets' evidence spans and between their unsupported spans.
    evidence_f1: float | None
    unsupported_f1: float | None
    matcher: MatcherAcceptance
    raters: tuple[RaterScore, ...]
    # Everyone with a submitted sheet under the system filter, by username: the pair choice.
    reviewers: tuple[Reviewer, ...]

    def rater(self, key: str) -> RaterScore | None:
        return next((r for r in self.raters if r.key == key), None)


def agreement_dashboard(
    *, audit_set: AuditSet, system: str = "", pair: tuple[int, int] | None = None
) -> Dashboard:
    """The dashboard for the set: one system's answers if `system`; one reviewer pair's
    sheets if `pair` (two user pks, in any order; a pair without sheets is ignored).

    Six aggregate queries, whatever the size of the set.
    """
    scope = _scope(audit_set, system)
    per_reviewer = list(
        SheetFact.objects.filter(scope)
        .values("reviewer_id", "reviewer__username")
        .annotate(
            n=Count("pk"),
            checked=Count("pk", filter=Q(has_check=True)),
            highlighted=Sum("highlighted"),
            kept=Sum("kept"),
            chosen=Sum("chosen"),
            novel=Sum("novel"),
        )
        .order_by()
    )
    reviewers = tuple(
        sorted(
            (Reviewer(row["reviewer_id"], row["reviewer__username"]) for row in per_reviewer),
            key=lambda r: (r.username, r.pk),
        )
    )
    chosen = _pair(reviewers, pair)
    if chosen is not None:
        pks = {chosen[0].pk, chosen[1].pk}
        per_reviewer = [row for row in per_reviewer if row["reviewer_id"] in pks]
        half = _pair_stats(audit_set, system, chosen, per_reviewer)
    else:
        half = _set_stats(audit_set, system, reviewers)
    sums = {
        key: sum(row[key] or 0 for row in per_reviewer)
        for key in ("n", "checked", "highlighted", "kept", "chosen", "novel")
    }
    return Dashboard(
        system=system,
        pair=chosen,
        sheets=sums["n"],
        matcher=agreement.matcher_acceptance_sums(
            sheets=sums["checked"],
            highlighted=sums["highlighted"],
            kept=sums["kept"],
            chosen=sums["chosen"],
            novel=sums["novel"],
        ),
        reviewers=reviewers,
        **half,
        **_gold_stats(audit_set, system),
    )


def reviewer_pairs(reviewers: tuple[Reviewer, ...]) -> list[tuple[Reviewer, Reviewer]]:
    return list(combinations(reviewers, 2))


def cell_claims(
    *,
    audit_set: AuditSet,
    board: Dashboard,
    which: str,
    binary: bool,
    row: str,
    col: str,
) -> QuerySet | None:
    """The ids of the claims behind one heat-map cell, in id order; None for no such matrix."""
    if which == REVIEWERS:
        if board.pair is None:
            facts = ClaimFact.objects.filter(_scope(audit_set, board.system)).exclude(judgment_a="")
            return (
                facts.filter(
                    _judgment("judgment_a", row, binary), _judgment("judgment_b", col, binary)
                )
                .order_by("claim_id")
                .values_list("claim_id", flat=True)
            )
        first, second = (r.pk for r in board.pair)
        facts = PairFact.objects.filter(_scope(audit_set, board.system))
        as_listed = (
            Q(reviewer_a=first, reviewer_b=second)
            & _judgment("judgment_a", row, binary)
            & _judgment("judgment_b", col, binary)
        )
        reversed_ = (
            Q(reviewer_a=second, reviewer_b=first)
            & _judgment("judgment_b", row, binary)
            & _judgment("judgment_a", col, binary)
        )
        return (
            facts.filter(as_listed | reversed_)
            .order_by("claim_id")
            .values_list("claim_id", flat=True)
        )
    score = board.rater(which)
    if score is None:
        return None
    return (
        _rated_with_gold(audit_set, board.system, score.rater_id)
        .filter(
            _judgment("claim__adjudication__judgment", row, binary),
            _judgment("judgment", col, binary),
        )
        .order_by("claim_id")
        .values_list("claim_id", flat=True)
    )


def differing_claims(
    *, audit_set: AuditSet, board: Dashboard, which: str, binary: bool
) -> QuerySet | None:
    """The ids of the claims where a rater differs from gold, in id order."""
    score = board.rater(which)
    if score is None:
        return None
    labels = _rated_with_gold(audit_set, board.system, score.rater_id)
    if binary:
        # Only supported against anything else is a difference once collapsed.
        gold_supported = Q(claim__adjudication__judgment=SUPPORTED)
        rater_supported = Q(judgment=SUPPORTED)
        differ = (gold_supported & ~rater_supported) | (~gold_supported & rater_supported)
    else:
        differ = ~Q(judgment=F("claim__adjudication__judgment"))
    return labels.filter(differ).order_by("claim_id").values_list("claim_id", flat=True)


# ------------------------------------------------------------------------------ loading


def _scope(audit_set: AuditSet, system: str) -> Q:
    q = Q(audit_set=audit_set)
    if system:
        q &= Q(system=system)
    return q


def _in_set(audit_set: AuditSet, system: str, prefix: str = "claim__") -> Q:
    q = Q(**{f"{prefix}answer__audit_set": audit_set})
    if system:
        q &= Q(**{f"{prefix}answer__system": system})
    return q


def _judgment(field: str, label: str, binary: bool) -> Q:
    if binary and label == BINARY_NOT:
        return ~Q(**{field: SUPPORTED})
    return Q(**{field: label})


def _pair(
    reviewers: tuple[Reviewer, ...], pair_pks: tuple[int, int] | None
) -> tuple[Reviewer, Reviewer] | None:
    if pair_pks is None or len(set(pair_pks)) != 2:
        return None
    chosen = tuple(r for r in reviewers if r.pk in pair_pks)
    return (chosen[0], chosen[1]) if len(chosen) == 2 else None


def _set_stats(audit_set: AuditSet, system: str, reviewers: tuple[Reviewer, ...]) -> dict:
    """Every reviewer: units by profile, sheet A × sheet B, κ per pair of reviewers."""
    profiles: dict[agreement.Profile, int] = defaultdict(int)
    letters: dict[tuple[str, str], int] = defaultdict(int)
    claims = jaccard_n = 0
    jaccard_sum = evidence_f1_sum = unsupported_f1_sum = 0.0
    for row in (
        ClaimFact.objects.filter(_scope(audit_set, system))
        .values("profile", "judgment_a", "judgment_b")
        .annotate(
            n=Count("pk"),
            jaccards=Count("evidence_jaccard"),
            jaccard=Sum("evidence_jaccard"),
            evidence_f1=Sum("evidence_f1"),
            unsupported_f1=Sum("unsupported_f1"),
        )
        .order_by()
    ):
        claims += row["n"]
        profiles[agreement.profile_from_key(row["profile"])] += row["n"]
        if row["judgment_a"]:
            letters[row["judgment_a"], row["judgment_b"]] += row["n"]
        # The F1 columns are null exactly where the Jaccard is: below two sheets.
        jaccard_n += row["jaccards"]
        jaccard_sum += row["jaccard"] or 0.0
        evidence_f1_sum += row["evidence_f1"] or 0.0
        unsupported_f1_sum += row["unsupported_f1"] or 0.0
    rows = list(
        PairFact.objects.filter(_scope(audit_set, system))
        .values("reviewer_a", "reviewer_b", "judgment_a", "judgment_b")
        .annotate(n=Count("pk"))
        .order_by()
    )
    names = {r.pk: r.username for r in reviewers}
    # A sheet submitted between the two reads can bring a reviewer the first did not see.
    unseen = {row[key] for row in rows for key in ("reviewer_a", "reviewer_b")} - names.keys()
    if unseen:
        user_model = get_user_model()
        names |= {user.pk: user.get_username() for user in user_model.objects.filter(pk__in=unseen)}
    pairs: dict[tuple[str, str], dict[tuple[str, str], int]] = defaultdict(dict)
    for row in rows:
        table = pairs[names[row["reviewer_a"]], names[row["reviewer_b"]]]
        table[row["judgment_a"], row["judgment_b"]] = row["n"]
    return {
        "claims": claims,
        "full": agreement.summarize_counts(profiles, pairs),
        "binary": agreement.summarize_counts(profiles, pairs, binary=True),
        "confusion": agreement.confusion_counts(letters, rows="first", cols="second"),
        "confusion_binary": agreement.confusion_counts(
            letters, rows="first", cols="second", binary=True
        ),
        "evidence_jaccard": jaccard_sum / jaccard_n if jaccard_n else None,
        "evidence_f1": evidence_f1_sum / jaccard_n if jaccard_n else None,
        "unsupported_f1": unsupported_f1_sum / jaccard_n if jaccard_n else None,
    }


def _pair_stats(
    audit_set: AuditSet,
    system: str,
    pair: tuple[Reviewer, Reviewer],
    per_reviewer: list[dict],
) -> dict:
    """One pair: only their sheets count, so a unit is a claim both of them judged."""
    first, second = pair
    cells: dict[tuple[str, str], int] = defaultdict(int)
    shared = 0
    jaccard_sum = evidence_f1_sum = unsupported_f1_sum = 0.0
    for row in (
        PairFact.objects.filter(
            _scope(audit_set, system),
            Q(reviewer_a=first.pk, reviewer_b=second.pk)
            | Q(reviewer_a=second.pk, reviewer_b=first.pk),
        )
        .values("reviewer_a", "judgment_a", "judgment_b")
        .annotate(
            n=Count("pk"),
            jaccard=Sum("evidence_jaccard"),
            evidence_f1=Sum("evidence_f1"),
            unsupported_f1=Sum("unsupported_f1"),
        )
        .order_by()
    ):
        a, b = row["judgment_a"], row["judgment_b"]
        cells[(a, b) if row["reviewer_a"] == first.pk else (b, a)] += row["n"]
        shared += row["n"]
        jaccard_sum += row["jaccard"] or 0.0
        evidence_f1_sum += row["evidence_f1"] or 0.0
        unsupported_f1_sum += row["unsupported_f1"] or 0.0
    profiles: dict[agreement.Profile, int] = defaultdict(int)
    for (a, b), n in cells.items():
        profiles[agreement.unit_profile((a, b))] += n
    pairs = {(first.username, second.username): cells}
    return {
        # Claims either of them judged: each one's sheets, less the claims they share.
        "claims": sum(row["n"] for row in per_reviewer) - shared,
        "full": agreement.summarize_counts(profiles, pairs),
        "binary": agreement.summarize_counts(profiles, pairs, binary=True),
        "confusion": agreement.confusion_counts(cells, rows=first.username, cols=second.username),
        "confusion_binary": agreement.confusion_counts(
            cells, rows=first.username, cols=second.username, binary=True
        ),
        "evidence_jaccard": jaccard_sum / shared if shared else None,
        "evidence_f1": evidence_f1_sum / shared if shared else None,
        "unsupported_f1": unsupported_f1_sum / shared if shared else None,
    }


def _rated_with_gold(audit_set: AuditSet, system: str, rater_id: int) -> QuerySet[RaterLabel]:
    return RaterLabel.objects.filter(
        _in_set(audit_set, system), rater_id=rater_id, claim__adjudication__isnull=False
    ).exclude(judgment="")


def _gold_stats(audit_set: AuditSet, system: str) -> dict:
    """Raters against gold from one GROUP BY: (rater, gold judgment, rater judgment)."""
    gold = Adjudication.objects.filter(_in_set(audit_set, system)).count()
    cells: dict[int, dict[tuple[str, str], int]] = defaultdict(dict)
    for row in (
        RaterLabel.objects.filter(_in_set(audit_set, system))
        .exclude(judgment="")
        .values("rater_id", "judgment", "claim__adjudication__judgment")
        .annotate(n=Count("pk"))
        .order_by()
    ):
        table = cells[row["rater_id"]]  # a rater without any gold overlap still shows
        if row["claim__adjudication__judgment"]:
            table[row["claim__adjudication__judgment"], row["judgment"]] = row["n"]
    raters = Rater.objects.filter(pk__in=cells).order_by("kind", "name")
    return {
        "gold": gold,
        "raters": tuple(
            RaterScore(
                rater_id=rater.pk,
                name=rater.name,
                kind=rater.kind,
                full=agreement.rater_vs_gold_counts(cells[rater.pk]),
                binary=agreement.rater_vs_gold_counts(cells[rater.pk], binary=True),
            )
            for rater in raters
        ),
    }
