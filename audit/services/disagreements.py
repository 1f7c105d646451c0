"""Comparing a claim's submitted sheets once they are all in: unanimous gold when the set
allows it, otherwise the claim's place (severity) in the lead's adjudication queue.

`claims_compare` is the only writer of Claim.severity; it is called by
services.claims_changed (audit/services/derived.py), the one entry point for derived rows.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations

from django.db import transaction
from django.db.models import Exists, OuterRef, Q

from audit import agreement, judgments
from audit.models import (
    Adjudication,
    Assignment,
    AuditSet,
    AuditSheet,
    Claim,
    ReviewStatus,
    Severity,
)
from audit.services.statuses import claim_statuses_refresh

# Keeps `pk IN (...)` lists far below every database's parameter limit.
CHUNK = 2000


@dataclass(frozen=True)
class CompareSummary:
    compared: int  # claims with every assigned sheet submitted
    unanimous: int  # gold records made without a lead
    queued: int  # claims now waiting for a lead


@dataclass(frozen=True)
class Comparison:
    """What a claim's submitted sheets say together: a severity, or unanimous."""

    severity: Severity | None  # None: unanimous
    evidence_jaccard: float


# A sheet's evidence as comparable sentence keys (passage position, start, end).
evidence_keys = judgments.stored_spans


def compare_sheets(sheets: Sequence[AuditSheet], *, threshold: float) -> Comparison:
    """The most severe disagreement over every pair of sheets, or unanimous.

    A lone sheet (overlap 1) is never unanimous: a lead confirms it.
    """
    pairs = list(combinations(sheets, 2))
    if not pairs:
        return Comparison(Severity.CONFIRM, 1.0)
    severities = []
    jaccards = []
    unanimous = True
    for a, b in pairs:
        a_keys, b_keys = evidence_keys(a.evidence), evidence_keys(b.evidence)
        said = {
            "a_assertions": judgments.assertion_keys(a.unsupported_assertions),
            "b_assertions": judgments.assertion_keys(b.unsupported_assertions),
        }
        found = agreement.disagreement(
            a.judgment,
            b.judgment,
            a_wrong_passage=a.wrong_citation_passage_id,
            b_wrong_passage=b.wrong_citation_passage_id,
            a_evidence=a_keys,
            b_evidence=b_keys,
            jaccard_threshold=threshold,
            **said,
        )
        jaccards.append(agreement.evidence_jaccard(a_keys, b_keys))
        if found is not None:
            severities.append(Severity(int(found.severity)))
        unanimous = unanimous and agreement.is_unanimous(
            a.judgment,
            b.judgment,
            a_wrong_passage=a.wrong_citation_passage_id,
            b_wrong_passage=b.wrong_citation_passage_id,
            a_evidence=a_keys,
            b_evidence=b_keys,
            **said,
        )
    jaccard = sum(jaccards) / len(jaccards)
    if severities:
        return Comparison(min(severities), jaccard)
    return Comparison(None if unanimous else Severity.CONFIRM, jaccard)


def claims_compare(*, claim_ids: Iterable[int]) -> CompareSummary:
    """Compare the sheets of each claim whose assigned sheets are all submitted.

    Such a claim either gets unanimous gold (its set allows it and the sheets are
    identical) or a severity that puts it in the adjudication queue; any other claim that
    is not adjudicated loses its severity. Claim rows are locked first, so two reviewers
    submitting the last two sheets at once cannot both miss the claim's completion.
    """
    ids = sorted(set(claim_ids))
    compared = unanimous = queued = 0
    for start in range(0, len(ids), CHUNK):
        summary = _compare_chunk(ids[start : start + CHUNK])
        compared += summary.compared
        unanimous += summary.unanimous
        queued += summary.queued
    return CompareSummary(compared=compared, unanimous=unanimous, queued=queued)


def set_compare(*, audit_set: AuditSet) -> CompareSummary:
    """claims_compare over every claim of the set that could be complete or is queued."""
    return claims_compare(claim_ids=comparable_claim_ids(audit_set=audit_set))


def comparable_claim_ids(*, audit_set: AuditSet) -> list[int]:
    """The claims of the set that could be complete or are queued.

    A claim whose assigned sheets are all in has the stored status "submitted" or
    "disagreement" (services keep it in step); one still waiting on a reviewer needs no
    comparison, so half-reviewed sets cost what their finished claims cost.
    """
    ids = Claim.objects.filter(answer__audit_set=audit_set).filter(
        Q(review_status__in=[ReviewStatus.SUBMITTED, ReviewStatus.DISAGREEMENT])
        | Q(severity__isnull=False)
    )
    return list(ids.values_list("pk", flat=True))


def _compare_chunk(ids: list[int]) -> CompareSummary:
    with transaction.atomic():
        claims = list(
            Claim.objects.select_for_update(of=("self",), no_key=True)
            .filter(pk__in=ids)
            .annotate(
                is_adjudicated=Exists(Adjudication.objects.filter(claim=OuterRef("pk"))),
                is_split=Exists(Claim.objects.filter(parent=OuterRef("pk"))),
            )
            .select_related("answer__audit_set")
            .only(
                "pk",
                "severity",
                "evidence_jaccard",
                "answer__audit_set__overlap",
                "answer__audit_set__auto_gold",
                "answer__audit_set__evidence_jaccard_threshold",
            )
            .order_by("pk")
        )
        assignees: dict[int, set[int]] = defaultdict(set)
        for claim_id, reviewer_id in Assignment.objects.filter(claim_id__in=ids).values_list(
            "claim_id", "reviewer_id"
        ):
            assignees[claim_id].add(reviewer_id)
        sheets: dict[int, list[AuditSheet]] = defaultdict(list)
        for sheet in (
            AuditSheet.objects.filter(claim_id__in=ids, status=AuditSheet.Status.SUBMITTED)
            .only(
                "pk",
                "claim_id",
                "reviewer_id",
                "judgment",
                "wrong_citation_passage_id",
                "evidence",
                "unsupported_assertions",
                "verification_worthy",
                "answers_question",
                "reopened_after_all_in",
            )
            .order_by("pk")
        ):
            if sheet.reviewer_id in assignees[sheet.claim_id]:
                sheets[sheet.claim_id].append(sheet)

        changed: list[Claim] = []
        golds: list[tuple[Adjudication, list[AuditSheet]]] = []
        compared = 0
        for claim in claims:
            if claim.is_adjudicated:
                continue
            audit_set = claim.answer.audit_set
            people = assignees[claim.pk]
            mine = sheets[claim.pk]
            complete = (
                not claim.is_split
                and len(people) >= max(audit_set.overlap, 1)
                and len(mine) == len(people)
            )
            severity, jaccard = None, None
            if complete:
                compared += 1
                result = compare_sheets(mine, threshold=audit_set.evidence_jaccard_threshold)
                jaccard = round(result.evidence_jaccard, 4)
                # A sheet reopened once the others were in may echo them: a lead decides.
                independent = not any(s.reopened_after_all_in for s in mine)
                if result.severity is None and audit_set.auto_gold and independent:
                    golds.append((_unanimous_gold(claim, mine), mine))
                else:
                    severity = result.severity if result.severity is not None else Severity.CONFIRM
            if (claim.severity, claim.evidence_jaccard) != (severity, jaccard):
                claim.severity, claim.evidence_jaccard = severity, jaccard
                changed.append(claim)
        # One UPDATE per outcome: few distinct outcomes, where bulk_update builds a CASE
        # per row and is many times slower on a whole set.
        outcomes: dict[tuple, list[int]] = defaultdict(list)
        for claim in changed:
            outcomes[claim.severity, claim.evidence_jaccard].append(claim.pk)
        for (severity, jaccard), pks in outcomes.items():
            Claim.objects.filter(pk__in=pks).update(severity=severity, evidence_jaccard=jaccard)
        _create_golds(golds)
        # Severity, gold and the sheets that led here decide the stored status too.
        claim_statuses_refresh(claim_ids=ids)
    queued = sum(1 for c in changed if c.severity is not None)
    return CompareSummary(compared=compared, unanimous=len(golds), queued=queued)


def _unanimous_gold(claim: Claim, sheets: list[AuditSheet]) -> Adjudication:
    first = sheets[0]
    # The sheets name the same assertions (is_unanimous); their notes are all kept.
    assertions = judgments.merged_assertions(s.unsupported_assertions for s in sheets)
    return Adjudication(
        claim_id=claim.pk,
        judgment=first.judgment,
        wrong_citation_passage_id=first.wrong_citation_passage_id,
        evidence=first.evidence,
        unsupported_assertions=assertions,
        # Worth verifying if any reviewer thought so: the cautious reading.
        verification_worthy=any(s.verification_worthy for s in sheets),
        # Answers the question if any reviewer thought so: the cautious reading again.
        answers_question=any(s.answers_question for s in sheets),
        source=Adjudication.Source.UNANIMOUS,
    )


def _create_golds(golds: list[tuple[Adjudication, list[AuditSheet]]]) -> None:
    if not golds:
        return
    records = [gold for gold, _ in golds]
    Adjudication.objects.bulk_create(records)
    Adjudication.sheets.through.objects.bulk_create(
        Adjudication.sheets.through(adjudication_id=gold.pk, auditsheet_id=sheet.pk)
        for gold, sheets in golds
        for sheet in sheets
    )
    Adjudication.history.bulk_history_create(records, default_change_reason="unanimous")
