"""The lead's release pages for a set: the report (metrics, judgment bars, release decision
per system), the claims behind a failed criterion, the criteria editor and run comparison."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
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
    CriterionResult,
    Decision,
    Outcome,
    criteria_from_dicts,
    decide_counts,
    decision_badge,
    evaluate,
)
from audit.forms import CompareForm, CriteriaForm
from audit.metrics import (
    JudgmentCounts,
    MetricSummary,
    ReleaseCounts,
    judgment_distribution,
    release_counts,
    release_flags,
    summarize,
)
from audit.models import AuditSet, Claim
from audit.selectors import judges as judge_selectors
from audit.tables import sheet_letter
from audit.views import access

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


@dataclass
class SystemRelease:
    system: str
    # Full metrics on the report; the counts behind the share and the decision on the set page.
    summary: MetricSummary | ReleaseCounts
    decision: Decision | Outcome | None
    badge: str = field(init=False)  # "pass", "fail", "provisional" or "none"
    # The report's results with their failing claims named (set by the report's view).
    explained: list[Explained] = field(init=False, default_factory=list)
    # The same system with the accepted judge filling its unjudged claims, if one is accepted.
    judged: JudgedRelease | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.badge = decision_badge(self.decision)


@dataclass
class Overview:
    systems: list[SystemRelease]
    overall: MetricSummary
    answers: dict[int, MetricSummary]
    distribution: dict[str, JudgmentCounts]
    criteria: tuple[Criterion, ...]
    criteria_error: str
    # Claims judged source inaccessible, in queue order: a lead replaces their passages.
    inaccessible_ids: list[int] = field(default_factory=list)
    # The same systems with an accepted judge's verdicts standing for the claims no human
    # judged (empty without one): shown beside the figures above, never in their place.
    with_judge: list[JudgedRelease] = field(default_factory=list)


@dataclass
class JudgedRelease(SystemRelease):
    """A system's figures and decision with the accepted judge filling its unjudged claims."""

    filled: int = 0  # claims of the system the judge's verdict stands for
    filled_ids: frozenset[int] = frozenset()  # which (all systems'), to mark them by name


@dataclass(frozen=True)
class Explained:
    """A criterion's result with its failing claims named: claim, answer and reason."""

    result: CriterionResult
    claims: list[tuple[Claim, str]]


# How many failing claims a report names under a criterion; the link lists them all.
NAMED = 10


def named_claims(result: CriterionResult, *, every_failing: bool = False) -> list[tuple[int, str]]:
    """(claim, reason) of the claims a report names under a criterion, up to NAMED: those
    with a reason; with `every_failing`, every failing claim, reason or not (under the
    judge's decision a lead must see which claims carry the judge's verdict)."""
    if not every_failing:
        return list(result.reasons[:NAMED])
    reasons = dict(result.reasons)
    return [(pk, reasons.get(pk, "")) for pk in result.failing_claim_ids[:NAMED]]


def explained(
    decision: Decision, names: dict[int, Claim], *, every_failing: bool = False
) -> list[Explained]:
    return [
        Explained(
            result,
            [
                (names[pk], reason)
                for pk, reason in named_claims(result, every_failing=every_failing)
                if pk in names
            ],
        )
        for result in decision.results
    ]


@dataclass(frozen=True)
class ReleaseSummary:
    """What the set page shows: per system the supported share and pass or fail."""

    systems: list[SystemRelease]
    overall: ReleaseCounts


def release_summary(audit_set: AuditSet, viewer=None) -> ReleaseSummary:
    """The set page's release summary, summed from the stored release facts: one GROUP BY
    whatever the size of the set, and never stale, since every change rewrites its facts in
    its own transaction (services.claims_changed). A viewer who still reviews claims of the
    set gets it from the labels instead, with those claims unjudged (see blind_claims)."""
    if viewer is not None and selectors.blind_claim_ids(user=viewer, audit_set=audit_set):
        flags: dict[str, list] = {}
        for label in selectors.claim_labels(audit_set=audit_set, viewer=viewer):
            flags.setdefault(label.system, []).append(release_flags(label))
        counts = {system: release_counts(flags[system]) for system in sorted(flags)}
    else:
        counts = selectors.release_counts_by_system(audit_set=audit_set)
    criteria, _error = _criteria(audit_set)
    return ReleaseSummary(
        systems=[
            SystemRelease(system, summary, decide_counts(criteria, summary) if criteria else None)
            for system, summary in counts.items()
        ],
        overall=sum(counts.values(), ReleaseCounts()),
    )


def release_overview(audit_set: AuditSet, viewer=None) -> Overview:
    """Metrics and release decisions of every system of the set, from gold or provisional
    labels; claims the viewer still reviews count as unjudged (see blind_claims). With an
    accepted judge, the same again with its verdicts on the claims no human judged."""
    labels = selectors.claim_labels(audit_set=audit_set, viewer=viewer)
    metrics = summarize(labels)
    criteria, error = _criteria(audit_set)
    systems = [
        SystemRelease(system, summary, _decide(criteria, labels, system))
        for system, summary in metrics.systems.items()
    ]
    with_judge = []
    fill = judge_selectors.judge_filled_labels(audit_set=audit_set, labels=labels, viewer=viewer)
    if fill is not None:
        filled = Counter(c.system for c in fill.labels if c.claim_id in fill.filled)
        for system, summary in summarize(fill.labels).systems.items():
            judged = JudgedRelease(
                system,
                summary,
                _decide(criteria, fill.labels, system),
                filled=filled[system],
                filled_ids=fill.filled,
            )
            with_judge.append(judged)
        by_system = {judged.system: judged for judged in with_judge}
        for release in systems:
            release.judged = by_system.get(release.system)
    return Overview(
        systems=systems,
        overall=metrics.overall,
        answers=metrics.answers,
        distribution=judgment_distribution(labels),
        criteria=criteria,
        criteria_error=error,
        inaccessible_ids=[c.claim_id for c in labels if c.inaccessible],
        with_judge=with_judge,
    )


def _decide(criteria: tuple[Criterion, ...], labels: list, system: str) -> Decision | None:
    if not criteria:
        return None
    return evaluate(criteria, [c for c in labels if c.system == system], system=system)


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
    overview = release_overview(audit_set, viewer=request.user)
    page = Paginator(list(overview.answers.values()), PER_PAGE).get_page(request.GET.get("page"))
    names = selectors.answer_names(ids=[summary.key for summary in page.object_list])
    # The judge's decisions name every failing claim, to tag those carrying its verdict.
    releases = [(release, False) for release in overview.systems] + [
        (judged, True) for judged in overview.with_judge
    ]
    named = {
        pk
        for release, every_failing in releases
        if release.decision
        for result in release.decision.results
        for pk, _ in named_claims(result, every_failing=every_failing)
    }
    claim_names = selectors.claim_names(ids=[*named, *overview.inaccessible_ids[:PER_PAGE]])
    for release, every_failing in releases:
        if release.decision:
            release.explained = explained(
                release.decision, claim_names, every_failing=every_failing
            )
    inaccessible = [claim_names[pk] for pk in overview.inaccessible_ids[:PER_PAGE]]
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
            "criteria_provenance": selectors.criteria_provenance(audit_set=audit_set),
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
    criteria, _error = _criteria(audit_set)
    try:
        criterion = criteria[int(request.GET.get("criterion", "")) - 1]
    except (ValueError, IndexError):
        raise Http404("No such criterion.") from None
    labels = selectors.claim_labels(
        audit_set=audit_set, run=f"system:{system}", viewer=request.user
    )
    result = criterion.check(labels)
    page = Paginator(list(result.failing_claim_ids), PER_PAGE).get_page(request.GET.get("page"))
    rows = selectors.claims_by_ids(ids=list(page.object_list), viewer=request.user)
    anonymous = audit_set.anonymous_adjudication
    for claim in rows:
        claim.gold_label = judgments.JUDGMENT_LABELS.get(claim.gold or "", "")
        claim.sheet_rows = [
            (
                sheet_letter(i) if anonymous else f"{sheet_letter(i)} · {s.reviewer.username}",
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
    names = {run.key: run.name for run in runs}
    form = CompareForm(
        request.GET or None, runs=runs, defaults=selectors.compare_defaults(audit_set=audit_set)
    )
    ctx: dict = {"audit_set": audit_set, "here": "compare", "form": form}
    if form.is_bound and form.is_valid():
        a, b = form.cleaned_data["a"], form.cleaned_data["b"]
        try:
            result = comparison.compare_runs(
                selectors.run_claims(audit_set=audit_set, run=a, viewer=request.user),
                selectors.run_claims(audit_set=audit_set, run=b, viewer=request.user),
                name_a=names[a],
                name_b=names[b],
                questions_a=selectors.run_question_ids(audit_set=audit_set, run=a),
                questions_b=selectors.run_question_ids(audit_set=audit_set, run=b),
            )
        except selectors.UnknownRun:
            raise Http404("No such run.") from None
        ctx.update(
            {
                "result": result,
                "name_a": names[a],
                "name_b": names[b],
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
