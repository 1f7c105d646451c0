"""The API's suggestions comparison: every source of a set against the set's gold, with
intervals, and the anchoring comparison, read through the same selector as the lead's page,
so both doors show the same figures."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Schema

from audit import suggestion_metrics as sm
from audit.api.base import api, refusals
from audit.selectors import suggestion_report
from audit.views import access


class FigureOut(Schema):
    value: float | None
    low: float | None
    high: float | None
    n: int


class SourceFiguresOut(Schema):
    key: str
    name: str
    version: str
    kind: str
    pre_highlights: bool
    claims_covered: int
    evidence_claims: int
    evidence_any_at_3: FigureOut
    evidence_whole_set_at_5: FigureOut
    unsupported_token_f1: FigureOut
    judgment_accuracy: FigureOut
    judgment_kappa: FigureOut
    judgment_kept: FigureOut
    evidence_kept: FigureOut
    automation_bias: bool


class AnchorGroupOut(Schema):
    claims: int
    agreement: FigureOut
    kappa: FigureOut
    accuracy: FigureOut


class AnchoringOut(Schema):
    shown: AnchorGroupOut
    withheld: AnchorGroupOut
    agreement_difference: FigureOut
    kappa_difference: FigureOut
    accuracy_difference: FigureOut


class ComparisonOut(Schema):
    gold_claims: int
    judgment_shown: bool
    sources: list[SourceFiguresOut]
    anchoring: AnchoringOut | None


def figure_out(figure: sm.Figure) -> dict:
    return {"value": figure.value, "low": figure.low, "high": figure.high, "n": figure.n}


def _group(group: sm.AnchorGroup) -> dict:
    return {
        "claims": group.claims,
        "agreement": figure_out(group.agreement),
        "kappa": figure_out(group.kappa),
        "accuracy": figure_out(group.accuracy),
    }


@api.get(
    "/sets/{set_id}/suggestions/comparison",
    response={200: ComparisonOut, **refusals(403, 404, 422)},
    tags=["suggestions"],
    url_name="suggestion-comparison",
)
def suggestion_comparison(request: HttpRequest, set_id: int) -> dict:
    """Every suggestion source of the set measured against its gold, as the Suggestions
    page shows it, and the anchoring comparison where the set withholds a share (else
    null)."""
    audit_set = access.get_set_for_lead(request, set_id)
    comparison = suggestion_report.source_comparison(audit_set, viewer=request.user)
    anchoring = suggestion_report.anchoring(audit_set, viewer=request.user)
    return {
        "gold_claims": comparison.gold_claims,
        "judgment_shown": comparison.judgment_shown,
        "sources": [
            {
                "key": str(row.source.key),
                "name": row.source.name,
                "version": row.source.version,
                "kind": row.source.kind,
                "pre_highlights": row.pre_highlights,
                "claims_covered": row.figures.covered,
                "evidence_claims": row.figures.evidence_claims,
                "evidence_any_at_3": figure_out(row.figures.any_at_3),
                "evidence_whole_set_at_5": figure_out(row.figures.whole_at_5),
                "unsupported_token_f1": figure_out(row.figures.token_f1),
                "judgment_accuracy": figure_out(row.figures.accuracy),
                "judgment_kappa": figure_out(row.figures.kappa),
                "judgment_kept": figure_out(row.figures.judgment_kept),
                "evidence_kept": figure_out(row.figures.evidence_kept),
                "automation_bias": row.figures.automation_bias,
            }
            for row in comparison.rows
        ],
        "anchoring": None
        if anchoring is None
        else {
            "shown": _group(anchoring.shown),
            "withheld": _group(anchoring.withheld),
            "agreement_difference": figure_out(anchoring.agreement_difference),
            "kappa_difference": figure_out(anchoring.kappa_difference),
            "accuracy_difference": figure_out(anchoring.accuracy_difference),
        },
    }
