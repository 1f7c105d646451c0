"""The lead's agreement pages for a set: the dashboard (reviewer agreement, evidence overlap,
matcher uptake, raters against gold), the claims behind any number on it, and uploading an
automatic judge's verdicts."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from audit import judgments, selectors, services
from audit.agreement import BINARY_NOT, ConfusionMatrix
from audit.formats.records import FormatError
from audit.forms import DashboardFilterForm, SuggestionUploadForm, VerdictUploadForm
from audit.models import AuditSet, Job, RaterLabel, SuggestionSource
from audit.selectors import dashboard
from audit.selectors import suggestions as suggestion_selectors
from audit.selectors.dashboard import REVIEWERS, Dashboard, Reviewer
from audit.views import access, display

PER_PAGE = 50
LABELS = {**judgments.JUDGMENT_LABELS, BINARY_NOT: "Not fully supported"}
# Axis labels of the heat map, short enough for a 46-pixel column.
SHORT = {
    judgments.SUPPORTED: "Supported",
    judgments.PARTIAL: "Partial",
    judgments.NOT_SUPPORTED: "Not supp.",
    judgments.CONTRADICTED: "Contradicted",
    judgments.WRONG_CITATION: "Wrong cit.",
    judgments.INACCESSIBLE: "Inaccessible",
    judgments.UNCLEAR: "Unclear",
    BINARY_NOT: "Not fully",
}
CELL = 46
LABEL_WIDTH = 104
HEADER_HEIGHT = 78


def _board(request: HttpRequest, audit_set: AuditSet) -> tuple[Dashboard, DashboardFilterForm]:
    """The dashboard for the filters in the query string; unknown values are ignored."""
    systems = selectors.set_systems(audit_set=audit_set)
    system = request.GET.get("system", "")
    if system not in systems:
        system = ""
    try:
        first, second = (int(pk) for pk in request.GET.get("pair", "").split("-"))
        pair = (first, second)
    except ValueError:
        pair = None
    board = dashboard.agreement_dashboard(audit_set=audit_set, system=system, pair=pair)
    form = DashboardFilterForm(
        initial={"system": board.system, "pair": _pair_key(board.pair)},
        systems=systems,
        pairs=[
            (_pair_key((a, b)), f"{a.username} × {b.username}")
            for a, b in dashboard.reviewer_pairs(board.reviewers)
        ],
    )
    return board, form


def _pair_key(pair: tuple[Reviewer, Reviewer] | None) -> str:
    return f"{pair[0].pk}-{pair[1].pk}" if pair else ""


def _filters(board: Dashboard) -> dict[str, str]:
    params = {}
    if board.system:
        params["system"] = board.system
    if board.pair:
        params["pair"] = _pair_key(board.pair)
    return params


def _axis_names(board: Dashboard, which: str) -> tuple[str, str]:
    if which != REVIEWERS:
        score = board.rater(which)
        return "Gold", score.name if score else "rater"
    if board.pair:
        return board.pair[0].username, board.pair[1].username
    return "Sheet A", "Sheet B"


def _heatmap(
    audit_set: AuditSet, board: Dashboard, which: str, scale: str, matrix: ConfusionMatrix
) -> dict:
    """An SVG heat map: shade by count, count in every cell, each cell a link to its claims.

    Shades are SVG presentation attributes (fill-opacity), which the CSP allows, unlike
    style attributes.
    """
    rows_name, cols_name = _axis_names(board, which)
    n = len(matrix.labels)
    peak = max((max(row) for row in matrix.counts), default=0) or 1
    base = reverse("audit:agreement-claims", args=[audit_set.pk])
    cells = []
    for i, row_label in enumerate(matrix.labels):
        for j, col_label in enumerate(matrix.labels):
            count = matrix.counts[i][j]
            shade = 0.06 + 0.84 * count / peak if count else 0.0
            query = {
                **_filters(board),
                "which": which,
                "scale": scale,
                "row": row_label,
                "col": col_label,
            }
            cells.append(
                {
                    "x": LABEL_WIDTH + j * CELL,
                    "y": HEADER_HEIGHT + i * CELL,
                    "tx": LABEL_WIDTH + j * CELL + CELL // 2,
                    "ty": HEADER_HEIGHT + i * CELL + CELL // 2 + 5,
                    "count": count,
                    "shade": f"{shade:.2f}",
                    "dark": shade > 0.5,
                    "diagonal": i == j,
                    "href": f"{base}?{urlencode(query)}" if count else "",
                    "title": f"{rows_name}: {LABELS.get(row_label, row_label)} · "
                    f"{cols_name}: {LABELS.get(col_label, col_label)} — {count} "
                    f"claim{'s' if count != 1 else ''}",
                }
            )
    return {
        # Room on the right for the last column's slanted label.
        "width": LABEL_WIDTH + n * CELL + 60,
        "height": HEADER_HEIGHT + n * CELL + 4,
        "cells": cells,
        "cell": CELL,
        "rows": [
            {"y": HEADER_HEIGHT + i * CELL + CELL // 2 + 4, "text": SHORT.get(label, label)}
            for i, label in enumerate(matrix.labels)
        ],
        "cols": [
            {"x": LABEL_WIDTH + j * CELL + CELL // 2, "text": SHORT.get(label, label)}
            for j, label in enumerate(matrix.labels)
        ],
        "label_x": LABEL_WIDTH - 6,
        "header_y": HEADER_HEIGHT - 6,
        "rows_name": rows_name,
        "cols_name": cols_name,
        "n": matrix.n,
        "empty": not matrix.labels,
        "title": f"{rows_name} (rows) × {cols_name} (columns)",
    }


@login_required
def agreement(request: HttpRequest, pk: int) -> HttpResponse:
    audit_set = access.get_set_for_lead(request, pk)
    board, form = _board(request, audit_set)
    base = reverse("audit:agreement-claims", args=[audit_set.pk])
    raters = []
    for score in board.raters:
        per_label = [
            {"label": LABELS.get(code, code), "score": label_score}
            for code, label_score in score.full.per_label.items()
        ]
        differ = {**_filters(board), "which": score.key, "differ": "1"}
        raters.append(
            {
                "score": score,
                "per_label": per_label,
                "heatmap": _heatmap(audit_set, board, score.key, "full", score.full.confusion),
                "differ_url": f"{base}?{urlencode(differ)}",
            }
        )
    return render(
        request,
        "audit/agreement.html",
        {
            "audit_set": audit_set,
            "board": board,
            "form": form,
            "scales": [
                ("Full judgment scale", board.full),
                ("Fully supported vs not", board.binary),
            ],
            "kappas": _kappa_rows(board),
            "heatmaps": [
                (
                    "Full judgment scale",
                    _heatmap(audit_set, board, REVIEWERS, "full", board.confusion),
                ),
                (
                    "Fully supported vs not",
                    _heatmap(audit_set, board, REVIEWERS, "binary", board.confusion_binary),
                ),
            ],
            "raters": raters,
            # Read from the sheets, not the facts: computed only when the lead asks for it.
            "split_by_version": request.GET.get("by") == "version",
            "by_version": (
                selectors.agreement_by_guideline_version(
                    audit_set=audit_set, system=board.system, viewer=request.user
                )
                if request.GET.get("by") == "version"
                else []
            ),
            "version_url": f"?{urlencode({**_filters(board), 'by': 'version'})}#by-version",
        },
    )


def _kappa_rows(board: Dashboard) -> list[dict]:
    binary = {(p.rater_a, p.rater_b): p for p in board.binary.pairs}
    return [{"pair": p, "binary": binary.get((p.rater_a, p.rater_b))} for p in board.full.pairs]


@login_required
def agreement_claims(request: HttpRequest, pk: int) -> HttpResponse:
    """The claims behind one heat-map cell, or where a rater differs from gold."""
    audit_set = access.get_set_for_lead(request, pk)
    board, _form = _board(request, audit_set)
    which = request.GET.get("which", REVIEWERS)
    binary = request.GET.get("scale") == "binary"
    rows_name, cols_name = _axis_names(board, which)
    if request.GET.get("differ"):
        score = board.rater(which)
        items = dashboard.differing_claims(
            audit_set=audit_set, board=board, which=which, binary=binary
        )
        if score is None or items is None:
            raise Http404("No such rater in this set.")
        title = f"Claims where {score.name} differs from gold"
    else:
        row, col = request.GET.get("row", ""), request.GET.get("col", "")
        items = dashboard.cell_claims(
            audit_set=audit_set, board=board, which=which, binary=binary, row=row, col=col
        )
        if items is None:
            raise Http404("No such matrix.")
        title = f"{rows_name}: {LABELS.get(row, row)} · {cols_name}: {LABELS.get(col, col)}"
    # A claim the lead still reviews is in no list: its place would tell the other sheets.
    items = items.exclude(claim_id__in=selectors.blind_claims(user=request.user))
    page = Paginator(items, PER_PAGE).get_page(request.GET.get("page"))
    rows = selectors.claims_by_ids(ids=list(page.object_list), viewer=request.user)
    anonymous = audit_set.anonymous_adjudication
    letters = selectors.sheet_letters(audit_set=audit_set)
    for claim in rows:
        claim.gold_label = LABELS.get(claim.gold or "", "")
        claim.sheet_rows = [
            (
                display.sheet_who(
                    letters.get(s.reviewer_id) or judgments.sheet_letter(i), s, anonymous
                ),
                LABELS.get(s.judgment, s.judgment),
            )
            for i, s in enumerate(claim.submitted_sheets)
        ]
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "audit/agreement_claims.html",
        {
            "audit_set": audit_set,
            "board": board,
            "title": title,
            "page": page,
            "rows": rows,
            "query": query.urlencode(),
        },
    )


@login_required
def verdicts_upload(request: HttpRequest, pk: int) -> HttpResponse:
    audit_set = access.get_set_for_lead(request, pk)
    form = VerdictUploadForm(request.POST or None, request.FILES or None)
    ctx: dict = {"audit_set": audit_set, "form": form}
    status = 200
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            result = services.verdicts_push(
                audit_set=audit_set,
                upload=upload,
                user=request.user,
                advice=(
                    ". Import it on the server instead, where there is no such limit: "
                    "python manage.py import_verdicts FILE --set NAME"
                ),
            )
            if isinstance(result, Job):
                return redirect(result)
            ctx["summary"] = result
        except FormatError as error:
            ctx["error"] = str(error)
            status = 400
    ctx["raters"] = list(
        RaterLabel.objects.filter(claim__answer__audit_set=audit_set)
        .values("rater__name", "rater__kind")
        .annotate(n=Count("pk"))
        .order_by("rater__kind", "rater__name")
    )
    return render(request, "audit/verdicts_upload.html", ctx, status=status)


@login_required
def suggestions_upload(request: HttpRequest, pk: int) -> HttpResponse:
    """A lead uploads a model's suggestions file, or deletes a source the set has."""
    audit_set = access.get_set_for_lead(request, pk)
    if request.method == "POST" and "delete" in request.POST:
        source = SuggestionSource.objects.filter(
            audit_set=audit_set, pk=_int(request.POST["delete"])
        ).first()
        if source is None:
            raise Http404("No such source of suggestions.")
        try:
            services.source_delete(source=source, user=request.user)
        except services.SourceInUse as refusal:
            messages.error(request, str(refusal))
        except SuggestionSource.DoesNotExist:
            messages.info(request, f"{source.name} {source.version} was deleted already.")
        else:
            messages.success(
                request, f"Deleted {source.name} {source.version} and its suggestions."
            )
        return redirect("audit:suggestions-upload", pk=audit_set.pk)
    form = SuggestionUploadForm(request.POST or None, request.FILES or None)
    ctx: dict = {"audit_set": audit_set, "form": form}
    status = 200
    if request.method == "POST" and form.is_valid():
        try:
            result = services.suggestions_upload(
                audit_set=audit_set,
                user=request.user,
                name=form.cleaned_data["name"],
                version=form.cleaned_data["version"],
                description=form.cleaned_data["description"],
                upload=form.cleaned_data["file"],
            )
            if isinstance(result, Job):
                return redirect(result)
            ctx["summary"] = result
        except FormatError as error:
            ctx["error"] = str(error)
            status = 400
    ctx["sources"] = list(suggestion_selectors.pushed_sources(audit_set))
    return render(request, "audit/suggestions_upload.html", ctx, status=status)


def _int(text: str) -> int:
    return int(text) if text.isascii() and text.isdigit() and len(text) < 19 else 0
