"""The lead's suggestions comparison: every source of a set measured against the set's gold
side by side, and, where the set withholds suggestions from a share of claims, the
anchoring comparison."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from audit import suggestion_metrics as sm
from audit.selectors import suggestion_report
from audit.views import access


@require_safe
@login_required
def suggestion_comparison(request: HttpRequest, pk: int) -> HttpResponse:
    audit_set = access.get_set_for_lead(request, pk)
    comparison = suggestion_report.source_comparison(audit_set, viewer=request.user)
    anchoring = suggestion_report.anchoring(audit_set, viewer=request.user)
    rows = [
        {
            "row": row,
            "any_at_3": cell(row.figures.any_at_3),
            "whole_at_5": cell(row.figures.whole_at_5),
            "token_f1": cell(row.figures.token_f1, percent=False),
            "accuracy": cell(row.figures.accuracy),
            "kappa": cell(row.figures.kappa, percent=False),
            "judgment_kept": cell(row.figures.judgment_kept, kept=True),
            "evidence_kept": cell(row.figures.evidence_kept, kept=True),
        }
        for row in comparison.rows
    ]
    return render(
        request,
        "audit/suggestion_report.html",
        {
            "audit_set": audit_set,
            "here": "suggestions",
            "comparison": comparison,
            "rows": rows,
            "small_n": sm.SMALL_N,
            "bias_share": sm.BIAS_SHARE,
            "bias_min": sm.BIAS_MIN_SHEETS,
            "anchoring": _anchoring(anchoring) if anchoring is not None else None,
        },
    )


def cell(figure: sm.Figure, *, percent: bool = True, kept: bool = False) -> dict:
    """A figure as the table shows it: the value, its interval, what it is over; `kept`: a
    share of suggestions kept as is, flagged when near total (possible automation bias)."""
    return {
        "value": _number(figure.value, percent),
        "interval": (
            f"{_number(figure.low, percent)}–{_number(figure.high, percent)}"
            if figure.low is not None and figure.high is not None
            else ""
        ),
        "n": figure.n,
        "small": figure.small,
        "missing": figure.value is None,
        "biased": kept and sm.biased(figure),
    }


def _number(value: float | None, percent: bool) -> str:
    if value is None:
        return "—"
    return f"{100 * value:.1f}%" if percent else f"{value:.2f}"


def _anchoring(result: sm.Anchoring) -> dict:
    def group(name: str, g: sm.AnchorGroup) -> dict:
        return {
            "name": name,
            "claims": g.claims,
            "agreement": cell(g.agreement),
            "kappa": cell(g.kappa, percent=False),
            "accuracy": cell(g.accuracy),
        }

    return {
        "groups": [
            group("Suggestions shown", result.shown),
            group("Suggestions withheld", result.withheld),
        ],
        # In the table's column order: agreement, κ, accuracy.
        "difference": [
            _signed(result.agreement_difference, percent=True),
            _signed(result.kappa_difference, percent=False),
            _signed(result.accuracy_difference, percent=True),
        ],
    }


def _signed(figure: sm.Figure, *, percent: bool) -> dict:
    """A difference in points (or κ units) with a sign, and whether its interval leaves 0 out."""

    def text(value: float | None) -> str:
        if value is None:
            return "—"
        return f"{100 * value:+.1f} pts" if percent else f"{value:+.2f}"

    excludes_zero = (
        figure.low is not None and figure.high is not None and (figure.low > 0 or figure.high < 0)
    )
    return {
        "value": text(figure.value),
        "interval": (
            f"{text(figure.low)} to {text(figure.high)}"
            if figure.low is not None and figure.high is not None
            else ""
        ),
        "n": figure.n,
        "missing": figure.value is None,
        "excludes_zero": excludes_zero,
    }
