"""The lead's automatic-judge pages: a set's judges, one judge's settings, threshold and runs
(progress polled by htmx), a run's verdicts and errors, and a judge's calibration against
gold, from which the lead accepts it."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import IntegrityError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from audit import selectors
from audit.forms import JudgeForm, JudgeRunForm, JudgeThresholdForm
from audit.judge_calibration import Calibration, Interval, meets
from audit.judge_prompt import DEFAULT_TEMPLATE
from audit.judgments import JUDGMENT_LABELS
from audit.models import Judge, JudgeRun, JudgeVersion
from audit.selectors import judges as judge_selectors
from audit.services import JobRefused, jobs_reap_stale
from audit.services import judges as judge_services
from audit.views import access
from audit.views.access import HtmxHttpRequest


def _get_judge_for_lead(request: HtmxHttpRequest, pk: int) -> Judge:
    access.require_lead(request)
    judge = judge_selectors.judge_of_set(pk=pk)
    if judge is None:
        raise Http404("No such judge.")
    # The set lookup decides whether this lead may see the judge at all.
    judge.audit_set = access.get_set_for_lead(request, judge.audit_set_id)
    return judge


def _get_run_for_lead(request: HtmxHttpRequest, pk: int) -> JudgeRun:
    access.require_lead(request)
    run = JudgeRun.objects.select_related("version", "job").filter(pk=pk).first()
    if run is None:
        raise Http404("No such run.")
    run.judge = _get_judge_for_lead(request, run.judge_id)
    return run


@require_http_methods(["GET", "HEAD", "POST"])
@login_required
def judge_list(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    audit_set = access.get_set_for_lead(request, pk)
    form = JudgeForm(request.POST or None, initial={"template": DEFAULT_TEMPLATE})
    if request.method == "POST" and form.is_valid():
        fields = {name: form.cleaned_data[name] for name in JudgeForm.Meta.fields}
        try:
            judge = judge_services.judge_create(
                audit_set=audit_set,
                fields=fields,
                template=form.cleaned_data["template"],
                user=request.user,
            )
        except judge_services.JudgeRefused as refusal:
            form.add_error(refusal.field, str(refusal))
        except IntegrityError:
            form.add_error("name", "This set already has a judge of that name.")
        else:
            messages.success(request, f"Judge “{judge.name}” set up.")
            return redirect(judge)
    accepted = judge_selectors.accepted_version(audit_set=audit_set)
    ctx = {
        "audit_set": audit_set,
        "here": "judges",
        "judges": judge_selectors.judges_of_set(audit_set=audit_set).prefetch_related("versions"),
        "accepted": accepted,
        "form": form,
    }
    return render(request, "audit/judge_list.html", ctx)


@require_http_methods(["GET", "HEAD", "POST"])
@login_required
def judge_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    judge = _get_judge_for_lead(request, pk)
    current = judge_services.judge_current_version(judge)
    form = JudgeForm(request.POST or None, instance=judge, initial={"template": current.template})
    if request.method == "POST" and form.is_valid():
        fields = {name: form.cleaned_data[name] for name in JudgeForm.Meta.fields}
        try:
            version = judge_services.judge_update(
                judge=judge,
                fields=fields,
                template=form.cleaned_data["template"],
                user=request.user,
            )
        except judge_services.JudgeRefused as refusal:
            form.add_error(refusal.field, str(refusal))
        except IntegrityError:
            form.add_error("name", "This set already has a judge of that name.")
        else:
            if version != current:
                messages.success(request, f"Saved as version {version.number}.")
            else:
                messages.success(request, "Saved; the version is unchanged.")
            return redirect(judge)
    # The form set what was posted on the judge; the page shows what is saved.
    judge.refresh_from_db(fields=["name", "base_url", "api_key_env"])
    return access.render_page_or_partial(
        request, "audit/judge_detail.html", "judge-runs", _detail_context(judge, form)
    )


def _detail_context(judge: Judge, form: JudgeForm | None = None, **extra) -> dict:
    current = judge_services.judge_current_version(judge)
    runs = list(judge.runs.select_related("version", "job")[:20])
    numbers = judge_selectors.run_numbers(judge=judge)
    rows = []
    for run in runs:
        cost = judge_selectors.run_cost(run=run)
        run.number = numbers[run.pk]
        run.outcome = judge_selectors.run_outcome(run=run, cost=cost)
        rows.append((run, cost, selectors.job_progress(run.job) if run.job else None))
    standing = None
    if judge.has_threshold:
        # Whether the current version meets its threshold, as its calibration page says.
        overall, _splits = judge_selectors.judge_calibration(version=current)
        standing = meets(judge_services.judge_threshold(judge), overall)
    systems = selectors.set_systems(audit_set=judge.audit_set)
    return {
        "audit_set": judge.audit_set,
        "here": "judges",
        "judge": judge,
        "current": current,
        "versions": judge.versions.select_related("acceptance"),
        "form": form or JudgeForm(instance=judge, initial={"template": current.template}),
        "threshold_form": JudgeThresholdForm(
            initial={"min_kappa": judge.min_kappa, "min_gold": judge.min_gold}
        ),
        "threshold_changes": judge.threshold_changes.select_related("by"),
        "run_form": JudgeRunForm(systems=systems),
        "rows": rows,
        "standing": standing,
        "polling": any(run.job and not run.job.finished for run in runs),
        "refusal": judge_services.judge_refusal(judge),
        **extra,
    }


@require_POST
@login_required
def judge_threshold(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    judge = _get_judge_for_lead(request, pk)
    form = JudgeThresholdForm(request.POST)
    if not form.is_valid():
        ctx = _detail_context(judge)
        ctx["threshold_form"] = form
        return render(request, "audit/judge_detail.html", ctx, status=400)
    try:
        judge_services.judge_threshold_set(
            judge=judge,
            min_kappa=form.cleaned_data["min_kappa"],
            min_gold=form.cleaned_data["min_gold"],
            user=request.user,
        )
    except judge_services.JudgeError as refusal:
        form.add_error(None, str(refusal))
        ctx = _detail_context(judge)
        ctx["threshold_form"] = form
        return render(request, "audit/judge_detail.html", ctx, status=400)
    if judge.threshold_locked_at:
        messages.warning(request, "Threshold changed after the first run: the change is logged.")
    else:
        messages.success(request, "Threshold written down; the first run locks it.")
    return redirect(judge)


@require_POST
@login_required
def judge_run(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    judge = _get_judge_for_lead(request, pk)
    form = JudgeRunForm(request.POST, systems=selectors.set_systems(audit_set=judge.audit_set))
    if not form.is_valid():
        ctx = _detail_context(judge)
        ctx["run_form"] = form
        return render(request, "audit/judge_detail.html", ctx, status=400)
    try:
        run = judge_services.judge_run_start(
            judge=judge,
            subset=form.cleaned_data["subset"],
            system=form.cleaned_data["system"],
            user=request.user,
        )
    except judge_services.JudgeError as refusal:
        messages.error(request, str(refusal))
    else:
        messages.success(request, f"Run {run.pk} queued: {len(run.claim_ids)} claims.")
    return redirect(judge)


@require_POST
@login_required
def judge_run_resume(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    run = _get_run_for_lead(request, pk)
    try:
        judge_services.judge_run_resume(run=run, user=request.user)
    except JobRefused as refusal:
        messages.error(request, str(refusal))
    else:
        messages.success(request, f"Run {run.pk} resumed: claims it has a verdict on are skipped.")
    return redirect(run.judge)


@require_safe
@login_required
def judge_run_detail(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    jobs_reap_stale()
    run = _get_run_for_lead(request, pk)
    verdicts = run.verdicts.select_related("claim__answer").order_by("-error", "pk")[:500]
    cost = judge_selectors.run_cost(run=run)
    run.number = judge_selectors.run_numbers(judge=run.judge)[run.pk]
    run.outcome = judge_selectors.run_outcome(run=run, cost=cost)
    ctx = {
        "audit_set": run.judge.audit_set,
        "here": "judges",
        "judge": run.judge,
        "run": run,
        "cost": cost,
        "progress": selectors.job_progress(run.job) if run.job else None,
        "verdicts": verdicts,
    }
    return render(request, "audit/judge_run.html", ctx)


def _version_or_404(judge: Judge, number: str | None) -> JudgeVersion:
    versions = judge.versions.select_related("acceptance", "rater")
    if number:
        try:
            version = versions.filter(number=int(number)).first()
        except ValueError:
            version = None
        if version is None:
            raise Http404("No such version.")
        return version
    return versions.order_by("-number").first()


@require_safe
@login_required
def judge_calibration(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    judge = _get_judge_for_lead(request, pk)
    version = _version_or_404(judge, request.GET.get("version"))
    ctx = {
        "audit_set": judge.audit_set,
        "here": "judges",
        "judge": judge,
        "version": version,
        "versions": judge.versions.all(),
        "threshold_changed": judge.threshold_changes.filter(after_lock=True).exists(),
    }
    # The figures stay hidden until a threshold is written: it is chosen before looking.
    if judge.has_threshold:
        overall, splits = judge_selectors.judge_calibration(version=version)
        ok, why = meets(judge_services.judge_threshold(judge), overall)
        ctx.update(
            overall=_shown(overall),
            splits=[(split.by, [_shown(group) for group in split.groups]) for split in splits],
            meets=ok,
            why=why,
        )
    return render(request, "audit/judge_calibration.html", ctx)


def _shown(calibration: Calibration) -> dict:
    """One calibration as the page shows it: labels in words, the matrix as rows."""
    report = calibration.report
    labels = report.confusion.labels
    return {
        "name": calibration.name,
        "n": calibration.n,
        "accuracy": report.accuracy,
        "accuracy_ci": _interval(calibration.accuracy_ci, percent=True),
        "kappa": report.kappa,
        "kappa_ci": _interval(calibration.kappa_ci),
        "per_label": [
            (JUDGMENT_LABELS.get(label, label), score) for label, score in report.per_label.items()
        ],
        "labels": [JUDGMENT_LABELS.get(label, label) for label in labels],
        "matrix": [
            (JUDGMENT_LABELS.get(label, label), row)
            for label, row in zip(labels, report.confusion.counts, strict=True)
        ],
        "differing": report.differing,
    }


def _interval(interval: Interval, *, percent: bool = False) -> str:
    """An interval as text, "—" when there is none (too few claims, or κ undefined)."""
    if interval.low is None or interval.high is None:
        return "—"
    if percent:
        return f"{100 * interval.low:.1f}%–{100 * interval.high:.1f}%"
    return f"{interval.low:.2f}–{interval.high:.2f}"


@require_POST
@login_required
def judge_accept(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    judge = _get_judge_for_lead(request, pk)
    version = _version_or_404(judge, request.POST.get("version"))
    try:
        judge_services.judge_accept(version=version, user=request.user)
    except judge_services.JudgeError as refusal:
        messages.error(request, str(refusal))
    else:
        messages.success(request, f"{judge.name} v{version.number} accepted for this set.")
    return redirect(f"{judge.get_absolute_url()}calibration/?version={version.number}")
