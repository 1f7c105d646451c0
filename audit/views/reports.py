"""The lead's release pages for a set: the report (metrics, judgment bars, release decision
per system), the claims behind a failed criterion, the criteria editor and run comparison."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_safe

from audit import comparison, judgments, selectors, services
from audit.criteria import (
    CriteriaError,
    CriteriaReasonRequired,
    Criterion,
    criteria_from_dicts,
)
from audit.forms import CompareForm, CriteriaForm
from audit.metrics import (
    JudgmentCounts,
)
from audit.models import AuditSet
from audit.selectors import judges as judge_selectors
from audit.views import access, display

PER_PAGE = 50
BAR_WIDTH = 520
BAR_HEIGHT = 26
BAR_GAP = 10
BAR_LABEL = 170  # room for the system name left of the bars
BAR_TOTAL = 60  # room for the total right of the bars
# Narrower segments carry no count inside: it would not fit; the <title> still says it.
MIN_LABELLED = 22
STATUS_LABELS = {
    comparison.BECAME_SUPPORTED: "Became supported",
    comparison.STOPPED_SUPPORTED: "Stopped being supported",
    comparison.CHANGED: "Judgment changed",
    comparison.UNCHANGED: "Unchanged",
    comparison.NEWLY_JUDGED: "Judged in B only",
    comparison.NOT_JUDGED: "Not judged in B",
}


def _criteria(audit_set: AuditSet) -> tuple[tuple[Criterion, ...], str]:
    """The set's criteria, and an error message if the stored JSON cannot be read."""
    return selectors.set_criteria(audit_set=audit_set)


def _described(items: list) -> list[str]:
    """Readable lines for stored criteria; raw JSON for any that no longer parse."""
    lines = []
    for item in items:
        try:
            lines.append(criteria_from_dicts([item])[0].describe())
        except CriteriaError:
            lines.append(str(item))
    return lines


def _history(audit_set: AuditSet) -> list[dict]:
    return [
        {"change": change, "before": _described(change.before), "after": _described(change.after)}
        for change in selectors.criteria_changes(audit_set=audit_set)
    ]


def judgment_bars(distribution: dict[str, JudgmentCounts]) -> dict:
    """Geometry of the stacked bars, one per system; every bar is scaled to the longest, so
    lengths compare claim counts."""
    longest = max((counts.total for counts in distribution.values()), default=0)
    bars = []
    for i, (system, counts) in enumerate(distribution.items()):
        y = i * (BAR_HEIGHT + BAR_GAP)
        x = float(BAR_LABEL)
        segments = []
        for bucket, name, count, _share in counts.segments():
            if not count:
                continue
            width = BAR_WIDTH * count / longest
            segments.append(
                {
                    "bucket": bucket,
                    "name": name,
                    "count": count,
                    "x": round(x, 2),
                    "width": round(width, 2),
                    "tx": round(x + width / 2, 2),
                    "show_count": width >= MIN_LABELLED,
                    "title": f"{system}: {name} {count} of {counts.total}",
                }
            )
            x += width
        bars.append(
            {
                "system": system,
                "y": y,
                "ty": y + BAR_HEIGHT / 2 + 5,
                "total": counts.total,
                "total_x": round(x + 6, 2),
                "segments": segments,
                "counts": counts,
            }
        )
    return {
        "bars": bars,
        "width": BAR_LABEL + BAR_WIDTH + BAR_TOTAL,
        "height": max(len(bars) * (BAR_HEIGHT + BAR_GAP) - BAR_GAP, 0),
        "label_x": BAR_LABEL - 8,
        "bar_height": BAR_HEIGHT,
        "legend": [(bucket, name) for bucket, name, _c, _s in JudgmentCounts().segments()],
    }


@require_safe
@login_required
def set_report(request: HttpRequest, pk: int) -> HttpResponse:
    audit_set = access.get_set_for_lead(request, pk)
    overview = selectors.release_overview(audit_set=audit_set, viewer=request.user)
    page = Paginator(list(overview.answers.values()), PER_PAGE).get_page(request.GET.get("page"))
    names = selectors.answer_names(ids=[summary.key for summary in page.object_list])
    inaccessible = selectors.overview_claims_named(overview=overview, inaccessible=PER_PAGE)
    answer_rows = [(names.get(summary.key), summary) for summary in page.object_list]
    changes = _history(audit_set)
    return render(
        request,
        "audit/set_report.html",
        {
            "audit_set": audit_set,
            "here": "report",
            "overview": overview,
            "bars": judgment_bars(overview.distribution),
            "page": page,
            "answer_rows": answer_rows,
            "changes": changes,
            "changed_after_lock": any(item["change"].after_lock for item in changes),
            "locked_since": selectors.criteria_locked_since(audit_set=audit_set),
            "criteria_provenance": overview.provenance,
            "overrides": selectors.number_overrides(audit_set=audit_set),
            "inaccessible": inaccessible,
            "provenance": judge_selectors.release_provenance(audit_set=audit_set),
            "accepted_judge": judge_selectors.accepted_version(audit_set=audit_set),
        },
    )


@require_safe
@login_required
def set_report_claims(request: HttpRequest, pk: int) -> HttpResponse:
    """The claims of one system that fail one criterion (by its number on the report)."""
    audit_set = access.get_set_for_lead(request, pk)
    system = request.GET.get("system", "")
    if system not in selectors.set_systems(audit_set=audit_set):
        raise Http404("No such system in this set.")
    decision = selectors.system_decision(audit_set=audit_set, system=system, viewer=request.user)
    try:
        number = int(request.GET.get("criterion", ""))
        if decision is None or number < 1:
            raise IndexError(number)
        result = decision.results[number - 1]
    except (ValueError, IndexError):
        raise Http404("No such criterion.") from None
    page = Paginator(list(result.failing_claim_ids), PER_PAGE).get_page(request.GET.get("page"))
    rows = selectors.claims_by_ids(ids=list(page.object_list), viewer=request.user)
    anonymous = audit_set.anonymous_adjudication
    letters = selectors.sheet_letters(audit_set=audit_set)
    for claim in rows:
        claim.gold_label = judgments.JUDGMENT_LABELS.get(claim.gold or "", "")
        claim.sheet_rows = [
            (
                display.sheet_who(
                    letters.get(s.reviewer_id) or judgments.sheet_letter(i), s, anonymous
                ),
                judgments.JUDGMENT_LABELS.get(s.judgment, s.judgment),
            )
            for i, s in enumerate(claim.submitted_sheets)
        ]
    query = urlencode({"system": system, "criterion": request.GET["criterion"]})
    return render(
        request,
        "audit/set_report_claims.html",
        {
            "audit_set": audit_set,
            "system": system,
            "result": result,
            "page": page,
            "rows": rows,
            "query": query,
        },
    )


@login_required
def set_criteria(request: HttpRequest, pk: int) -> HttpResponse:
    audit_set = access.get_set_for_lead(request, pk)
    # Not `request.POST or None`: unchecking every criterion posts nothing but is a choice.
    data = request.POST if request.method == "POST" else None
    locked_since = selectors.criteria_locked_since(audit_set=audit_set)
    form = CriteriaForm(
        data,
        initial=CriteriaForm.initial_for(audit_set.criteria),
        locked=locked_since is not None,
    )
    if request.method == "POST" and form.is_valid():
        try:
            change = services.criteria_update(
                audit_set=audit_set,
                criteria=form.criteria(),
                by=request.user,
                reason=form.cleaned_data["reason"],
            )
        except CriteriaReasonRequired as error:
            form.add_error("reason", str(error))
        except CriteriaError as error:
            form.add_error(None, str(error))
        else:
            if change is None:
                messages.info(request, "The criteria are unchanged.")
            elif change.after_lock:
                messages.warning(
                    request,
                    f"Criteria saved as version {change.version}. Review had started: every "
                    "decision on them says so, with your reason.",
                )
            else:
                messages.success(request, f"Criteria saved as version {change.version}.")
            return redirect("audit:set-report", pk=audit_set.pk)
    return render(
        request,
        "audit/set_criteria.html",
        {
            "audit_set": audit_set,
            "here": "criteria",
            "form": form,
            "locked_since": locked_since,
            "current": _criteria(audit_set)[0],
            "changes": _history(audit_set),
        },
    )


@require_safe
@login_required
def set_compare(request: HttpRequest, pk: int) -> HttpResponse:
    audit_set = access.get_set_for_lead(request, pk)
    runs = selectors.set_runs(audit_set=audit_set)
    form = CompareForm(
        request.GET or None, runs=runs, defaults=selectors.compare_defaults(audit_set=audit_set)
    )
    ctx: dict = {"audit_set": audit_set, "here": "compare", "form": form}
    if form.is_bound and form.is_valid():
        try:
            compared = selectors.run_comparison(
                audit_set=audit_set,
                a=form.cleaned_data["a"],
                b=form.cleaned_data["b"],
                viewer=request.user,
            )
        except selectors.UnknownRun:
            raise Http404("No such run.") from None
        result = compared.result
        ctx.update(
            {
                "result": result,
                "name_a": compared.a.name,
                "name_b": compared.b.name,
                "groups": [
                    (status, STATUS_LABELS[status], result.with_status(status))
                    for status in (
                        comparison.BECAME_SUPPORTED,
                        comparison.STOPPED_SUPPORTED,
                        comparison.CHANGED,
                        comparison.UNCHANGED,
                        comparison.NEWLY_JUDGED,
                        comparison.NOT_JUDGED,
                    )
                ],
                "judgment_labels": judgments.JUDGMENT_LABELS,
                "report_url": reverse("audit:set-report", args=[audit_set.pk]),
            }
        )
    return render(request, "audit/set_compare.html", ctx)
