"""Reads for the suggestions comparison: every source of a set measured against the set's
gold side by side, how reviewers kept what each showed, and the anchoring comparison of
sheets with suggestions shown against those with them withheld.

Only claims whose assigned reviewers have all submitted count (nothing here may show a
sheet, or a gold record, that a reviewer still working could learn from)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Exists, OuterRef, QuerySet

from audit import judgments
from audit import suggestion_metrics as sm
from audit.models import Adjudication, Assignment, AuditSet, AuditSheet, Claim, ClaimCheck, Passage
from audit.selectors import suggestions as suggestion_selectors
from audit.selectors.blindness import blind_claims
from audit.selectors.release import evidence_spans
from audit.sentences import sentence_spans
from audit.suggestions import MATCHER, SourceKey


@dataclass(frozen=True)
class SourceRow:
    source: suggestion_selectors.SourceInfo
    figures: sm.SourceFigures
    pre_highlights: bool  # the source the set's review page pre-highlights from


@dataclass(frozen=True)
class SourceComparison:
    gold_claims: int
    judgment_shown: bool  # the set shows suggested judgments to reviewers
    rows: tuple[SourceRow, ...]


def complete_claims(audit_set: AuditSet, *, viewer=None) -> QuerySet[Claim]:
    """The set's claims every assigned reviewer has submitted a sheet on, with no draft
    left; less those still blind to `viewer` (a lead who also reviews)."""
    submitted = AuditSheet.objects.filter(
        claim=OuterRef("claim"), reviewer=OuterRef("reviewer"), status=AuditSheet.Status.SUBMITTED
    )
    waiting = Assignment.objects.filter(claim=OuterRef("pk")).exclude(Exists(submitted))
    draft = AuditSheet.objects.filter(claim=OuterRef("pk")).exclude(
        status=AuditSheet.Status.SUBMITTED
    )
    claims = Claim.objects.filter(answer__audit_set=audit_set).exclude(Exists(waiting))
    claims = claims.exclude(Exists(draft))
    if viewer is not None:
        claims = claims.exclude(pk__in=blind_claims(user=viewer))
    return claims


def gold_claims(audit_set: AuditSet, *, viewer=None) -> list[sm.GoldClaim]:
    """The set's gold (adjudicated or unanimous) on complete claims, with the sentences of
    the passages its evidence is in."""
    rows = list(
        Adjudication.objects.filter(claim__in=complete_claims(audit_set, viewer=viewer))
        .values(
            "claim_id",
            "judgment",
            "evidence",
            "unsupported_assertions",
            "claim__text",
            "claim__answer_id",
        )
        .order_by("claim_id")
    )
    wanted = {
        (row["claim__answer_id"], passage)
        for row in rows
        for passage, _, _ in evidence_spans(row["evidence"])
    }
    sentences: dict[tuple[int, int], list[tuple[int, int]]] = {}
    if wanted:
        answers = {answer for answer, _ in wanted}
        for answer_id, position, text in Passage.objects.filter(answer_id__in=answers).values_list(
            "answer_id", "position", "text"
        ):
            if (answer_id, position) in wanted:
                sentences[(answer_id, position)] = sentence_spans(text)
    found = []
    for row in rows:
        spans = evidence_spans(row["evidence"])
        found.append(
            sm.GoldClaim(
                claim_id=row["claim_id"],
                judgment=row["judgment"],
                evidence=spans,
                unsupported=_claim_spans(row["unsupported_assertions"]),
                text=row["claim__text"],
                sentences={p: sentences.get((row["claim__answer_id"], p), ()) for p, _, _ in spans},
            )
        )
    return found


def _claim_spans(stored: list) -> tuple[tuple[int, int], ...]:
    # Free-text assertions have no offsets in the claim and name no words to compare.
    return tuple(
        (item["start"], item["end"])
        for item in stored or ()
        if isinstance(item, dict)
        and isinstance(item.get("start"), int)
        and isinstance(item.get("end"), int)
    )


def source_comparison(audit_set: AuditSet, *, viewer=None) -> SourceComparison:
    """Every source of the set against its gold, each figure with its interval."""
    gold = gold_claims(audit_set, viewer=viewer)
    complete = complete_claims(audit_set, viewer=viewer)
    sheets = list(
        AuditSheet.objects.filter(claim__in=complete, suggestions_withheld=False)
        .exclude(suggestion_source_shown="")
        .values("claim_id", "judgment", "evidence", "suggestion_source_shown")
        .order_by("pk")
    )
    shown_by_key: dict[str, list[dict]] = defaultdict(list)
    for sheet in sheets:
        shown_by_key[sheet["suggestion_source_shown"]].append(sheet)
    judgment_shown = audit_set.show_suggested_judgment
    current = SourceKey.parse(audit_set.suggestion_source) or SourceKey(MATCHER)
    rows = []
    for source in suggestion_selectors.sources(audit_set):
        shown = shown_by_key.get(str(source.key), [])
        wanted = {g.claim_id for g in gold} | {s["claim_id"] for s in shown}
        suggested = suggestion_selectors.suggestions(audit_set, source.key, claim_ids=wanted)
        marks = _matcher_marks(shown) if source.key.kind == MATCHER else None
        shown_sheets = [
            _shown_sheet(sheet, suggested.get(sheet["claim_id"]), marks) for sheet in shown
        ]
        figures = sm.source_figures(
            gold,
            suggested,
            [s for s in shown_sheets if s is not None],
            judgment_shown=judgment_shown,
        )
        rows.append(SourceRow(source, figures, source.key == current))
    return SourceComparison(gold_claims=len(gold), judgment_shown=judgment_shown, rows=tuple(rows))


def _matcher_marks(shown: list[dict]) -> dict[int, frozenset]:
    # The matcher's marks are read from its stored highlights on their own scale, exactly as
    # the review page picks them.
    return {
        claim_id: judgments.hint_keys(highlights)
        for claim_id, highlights in ClaimCheck.objects.filter(
            claim_id__in={s["claim_id"] for s in shown}
        ).values_list("claim_id", "highlights")
    }


def _shown_sheet(sheet: dict, suggested, marks: dict | None) -> sm.ShownSheet | None:  # noqa: ANN001
    if suggested is None:
        return None
    marked = (
        marks.get(sheet["claim_id"], frozenset())
        if marks is not None
        else sm.marked(suggested.evidence)
    )
    return sm.ShownSheet(
        claim_id=sheet["claim_id"],
        judgment=sheet["judgment"],
        evidence=frozenset(evidence_spans(sheet["evidence"])),
        suggested_judgment=suggested.judgment,
        marked=marked,
    )


def anchoring(audit_set: AuditSet, *, viewer=None) -> sm.Anchoring | None:
    """Sheets with suggestions shown against those withheld, on complete claims; None where
    the set has withheld none (nothing to compare)."""
    complete = complete_claims(audit_set, viewer=viewer)
    by_claim: dict[int, list[tuple[str, bool]]] = defaultdict(list)
    for claim_id, judgment, withheld in (
        AuditSheet.objects.filter(claim__in=complete)
        .order_by("claim_id", "pk")
        .values_list("claim_id", "judgment", "suggestions_withheld")
    ):
        by_claim[claim_id].append((judgment, withheld))
    if not any(withheld for sheets in by_claim.values() for _, withheld in sheets):
        return None
    gold = dict(
        Adjudication.objects.filter(claim_id__in=list(by_claim)).values_list("claim_id", "judgment")
    )
    claims = []
    for claim_id, sheets in by_claim.items():
        withheld = {w for _, w in sheets}
        if len(withheld) > 1:
            # A claim's reviewers see it the same way; one that differs (the share changed
            # between them) belongs to neither group.
            continue
        claims.append(
            sm.AnchorClaim(
                claim_id=claim_id,
                withheld=withheld.pop(),
                judgments=tuple(j for j, _ in sheets if j),
                gold=gold.get(claim_id, ""),
            )
        )
    return sm.anchoring(claims)
