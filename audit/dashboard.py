"""The agreement dashboard of a set: reviewer agreement on submitted sheets, evidence
overlap, matcher uptake, and every imported or automatic rater against adjudicated gold.

Reads only. The statistics come from audit.agreement; this module loads their input and
caches the result under keys that change whenever the set's sheets, gold records, rater
labels or checks change, so a repeated view costs four aggregate queries.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from itertools import combinations
from operator import itemgetter

from django.core.cache import cache
from django.db.models import Count, F, Max, Q, QuerySet, TextField
from django.db.models.functions import Cast

from audit import agreement, display
from audit.agreement import (
    AgreementSummary,
    ConfusionMatrix,
    MatcherAcceptance,
    RaterReport,
    Rating,
)
from audit.models import Adjudication, AuditSet, AuditSheet, ClaimCheck, Rater, RaterLabel

CACHE_SECONDS = 24 * 3600
# Bump when Dashboard changes shape, so no process reads an old pickle.
CACHE_VERSION = 1
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
    matcher: MatcherAcceptance
    raters: tuple[RaterScore, ...]
    # Everyone with a submitted sheet under the system filter, by username: the pair choice.
    reviewers: tuple[Reviewer, ...]

    def matrix(self, which: str, scale: str) -> ConfusionMatrix | None:
        binary = scale == "binary"
        if which == REVIEWERS:
            return self.confusion_binary if binary else self.confusion
        score = self.rater(which)
        if score is None:
            return None
        return (score.binary if binary else score.full).confusion

    def rater(self, key: str) -> RaterScore | None:
        return next((r for r in self.raters if r.key == key), None)


def agreement_dashboard(
    *, audit_set: AuditSet, system: str = "", pair: tuple[int, int] | None = None
) -> Dashboard:
    """The dashboard for the set: one system's answers if `system`; one reviewer pair's
    sheets if `pair` (two user pks, in any order; a pair without sheets is ignored).

    Two cached halves: the reviewers' statistics, recomputed when a submitted sheet or a
    check changes, and the raters against gold, recomputed when gold or a rater label
    changes, so adjudicating does not redo the sheets' half.
    """
    pair = tuple(sorted(pair)) if pair else None
    sheets = _submitted(audit_set, system).aggregate(n=Count("pk"), latest=Max("updated_at"))
    checks = ClaimCheck.objects.filter(_in_set(audit_set, system)).aggregate(
        latest=Max("computed_at")
    )
    reviewers_half = _cached(
        ("sheets", audit_set.pk, system, pair, sheets["n"], sheets["latest"], checks["latest"]),
        lambda: _sheet_stats(audit_set, system, pair),
    )
    gold = Adjudication.objects.filter(_in_set(audit_set, system)).aggregate(
        n=Count("pk"), latest=Max("updated_at")
    )
    labels = RaterLabel.objects.filter(_in_set(audit_set, system)).aggregate(
        n=Count("pk"), latest=Max("pk")
    )
    gold_half = _cached(
        ("gold", audit_set.pk, system, gold["n"], gold["latest"], labels["n"], labels["latest"]),
        lambda: _gold_stats(audit_set, system),
    )
    return Dashboard(**reviewers_half, **gold_half)


def _cached(parts: tuple, compute: Callable[[], dict]) -> dict:
    digest = hashlib.sha256(repr((CACHE_VERSION, *parts)).encode()).hexdigest()[:32]
    key = f"citeaudit:dashboard:{parts[0]}:{parts[1]}:{digest}"
    found = cache.get(key)
    if found is None:
        found = compute()
        cache.set(key, found, CACHE_SECONDS)
    return found


def reviewer_pairs(reviewers: tuple[Reviewer, ...]) -> list[tuple[Reviewer, Reviewer]]:
    return list(combinations(reviewers, 2))


# ------------------------------------------------------------------------------ loading


def _in_set(audit_set: AuditSet, system: str, prefix: str = "claim__") -> Q:
    q = Q(**{f"{prefix}answer__audit_set": audit_set})
    if system:
        q &= Q(**{f"{prefix}answer__system": system})
    return q


def _submitted(audit_set: AuditSet, system: str) -> QuerySet[AuditSheet]:
    # A sheet counts while its reviewer is still assigned, as on the progress page.
    return AuditSheet.objects.filter(
        _in_set(audit_set, system),
        status=AuditSheet.Status.SUBMITTED,
        claim__assignments__reviewer=F("reviewer"),
    )


def _sheet_stats(audit_set: AuditSet, system: str, pair_pks: tuple[int, int] | None) -> dict:
    sheets = _submitted(audit_set, system)
    pair = None
    if pair_pks is None:
        reviewers = None  # read off the sheets below: one pass over them, not two
    else:
        reviewers = _reviewers(sheets)
        chosen = tuple(r for r in reviewers if r.pk in pair_pks)
        pair = chosen if len(chosen) == 2 and len(set(pair_pks)) == 2 else None
    if pair is not None:
        sheets = sheets.filter(reviewer_id__in=[pair[0].pk, pair[1].pk])
    ratings: list[Rating] = []
    evidence: dict[tuple[int, str], frozenset] = {}
    seen: dict[int, str] = {}
    # Sheet A and sheet B of each claim, as the adjudication page letters them.
    first_two: dict[int, list[str | None]] = defaultdict(lambda: [None, None])
    # The evidence as JSON text, decoded here: Django's JSONField converter costs a third
    # of a cold dashboard at 100k sheets, and most evidence lists are short or empty.
    rows = (
        sheets.order_by("pk")
        .annotate(evidence_text=Cast("evidence", TextField()))
        .values_list("claim_id", "reviewer_id", "reviewer__username", "judgment", "evidence_text")
    )
    # Two reviewers who chose the same sentences stored the same text: decode it once.
    decoded: dict[str, frozenset] = {}
    for claim_id, reviewer_id, name, judgment, text in rows:
        seen[reviewer_id] = name
        ratings.append(Rating(claim_id, name, judgment))
        keys = decoded.get(text)
        if keys is None:
            keys = decoded[text] = _evidence_keys(text)
        evidence[claim_id, name] = keys
        letters = first_two[claim_id]
        if letters[0] is None:
            letters[0] = name
        elif letters[1] is None:
            letters[1] = name
    if reviewers is None:
        reviewers = tuple(Reviewer(pk, name) for pk, name in sorted(seen.items(), key=_by_name))

    if pair is not None:
        confusion = agreement.confusion(ratings, pair[0].username, pair[1].username)
        confusion_binary = agreement.confusion(
            ratings, pair[0].username, pair[1].username, binary=True
        )
    else:
        order = {claim: (a, b) for claim, (a, b) in first_two.items() if b is not None}
        confusion = agreement.sheet_confusion(ratings, order=order)
        confusion_binary = agreement.sheet_confusion(ratings, order=order, binary=True)

    claims_rated = {claim for claim, _ in evidence}
    hints = {
        claim_id: display.hint_keys(json.loads(highlights))
        for claim_id, highlights in ClaimCheck.objects.filter(_in_set(audit_set, system))
        .annotate(highlights_text=Cast("highlights", TextField()))
        .values_list("claim_id", "highlights_text")
        if claim_id in claims_rated
    }
    return {
        "system": system,
        "pair": pair,
        "sheets": len(ratings),
        "claims": len(claims_rated),
        "full": agreement.summarize(ratings),
        "binary": agreement.summarize(ratings, binary=True),
        "confusion": confusion,
        "confusion_binary": confusion_binary,
        "evidence_jaccard": agreement.mean_evidence_jaccard(evidence),
        "matcher": agreement.matcher_acceptance(evidence, hints),
        "reviewers": reviewers,
    }


_KEY = itemgetter("passage", "start", "end")


def _evidence_keys(text: str | dict | list) -> frozenset:
    if text == "[]":
        return frozenset()
    chosen = json.loads(text) if isinstance(text, str) else text
    return frozenset(map(_KEY, chosen))


def _by_name(item: tuple[int, str]) -> tuple[str, int]:
    return item[1], item[0]


def _reviewers(sheets: QuerySet[AuditSheet]) -> tuple[Reviewer, ...]:
    return tuple(
        Reviewer(pk, name)
        for pk, name in sheets.values_list("reviewer_id", "reviewer__username")
        .distinct()
        .order_by("reviewer__username")
    )


def _gold_stats(audit_set: AuditSet, system: str) -> dict:
    gold = dict(
        Adjudication.objects.filter(_in_set(audit_set, system)).values_list("claim_id", "judgment")
    )
    return {"gold": len(gold), "raters": _rater_scores(audit_set, system, gold)}


def _rater_scores(audit_set: AuditSet, system: str, gold: dict[int, str]) -> tuple[RaterScore, ...]:
    predictions: dict[int, dict[int, str]] = defaultdict(dict)
    for rater_id, claim_id, judgment in (
        RaterLabel.objects.filter(_in_set(audit_set, system))
        .exclude(judgment="")
        .values_list("rater_id", "claim_id", "judgment")
    ):
        predictions[rater_id][claim_id] = judgment
    raters = Rater.objects.filter(pk__in=predictions).order_by("kind", "name")
    return tuple(
        RaterScore(
            rater_id=rater.pk,
            name=rater.name,
            kind=rater.kind,
            full=agreement.rater_vs_gold(predictions[rater.pk], gold),
            binary=agreement.rater_vs_gold(predictions[rater.pk], gold, binary=True),
        )
        for rater in raters
    )
