"""Calibration pages: a reviewer's feedback against gold, once claims are adjudicated; a
set's edit page and its guideline versions with what each changed; a lead's control claims
and reviewers against gold, with a pause."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST, require_safe

from audit import selectors, services
from audit.calibration import MIN_SHEETS, guideline_diff
from audit.forms import AuditSetEditForm, ControlSettingsForm
from audit.views import access
from audit.views.access import HtmxHttpRequest


@require_safe
@login_required
def my_feedback(request: HtmxHttpRequest) -> HttpResponse:
    # Every row is the user's own sheet: selectors.feedback_sheets does the scoping.
    return render(
        request,
        "audit/my_feedback.html",
        {"feedback": selectors.reviewer_feedback(reviewer=request.user)},
    )


@login_required
def set_edit(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """A lead edits a set's name, description, training mode and guidelines."""
    audit_set = access.get_set_for_lead(request, pk)
    form = AuditSetEditForm(request.POST or None, instance=audit_set)
    if request.method == "POST" and form.is_valid():
        try:
            version = services.set_update(
                audit_set=audit_set,
                by=request.user,
                name=form.cleaned_data["name"],
                description=form.cleaned_data["description"],
                guidelines=form.cleaned_data["guidelines"],
                is_training=form.cleaned_data["is_training"],
                change_note=form.cleaned_data["change_note"],
            )
        except services.ReviewError as error:
            form.add_error("change_note", str(error))
        else:
            if version is None:
                messages.success(request, "Saved.")
            else:
                messages.success(request, f"Saved as guidelines version {version.number}.")
            return redirect("audit:set-edit", audit_set.pk)
    return render(
        request,
        "audit/set_edit.html",
        {
            "audit_set": audit_set,
            "form": form,
            "versions": selectors.guideline_versions(audit_set=audit_set),
        },
    )


@require_safe
@login_required
def guideline_history(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """The set's guideline versions, and what one changed against the one before."""
    audit_set = access.get_set_for_user(request, pk)
    versions = selectors.guideline_versions(audit_set=audit_set)
    shown = versions[0] if versions else None
    asked = request.GET.get("version", "")
    if asked:
        shown = next((v for v in versions if str(v.number) == asked), None)
        if shown is None:
            raise Http404("No such guideline version.")
    before = next((v for v in versions if shown and v.number < shown.number), None)
    return render(
        request,
        "audit/guideline_history.html",
        {
            "audit_set": audit_set,
            "versions": versions,
            "shown": shown,
            "before": before,
            "diff": guideline_diff(before.text if before else "", shown.text) if shown else [],
        },
    )


@login_required
def set_calibration(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """A lead's calibration page: control claims and their rate, and each reviewer against
    gold with a pause for those below the threshold."""
    audit_set = access.get_set_for_lead(request, pk)
    form = ControlSettingsForm(
        request.POST if request.POST.get("action") == "settings" else None,
        initial={
            "control_rate": audit_set.control_rate,
            "calibration_threshold": audit_set.calibration_threshold,
        },
    )
    if request.method == "POST":
        action = request.POST.get("action")
        try:
            if action == "settings" and form.is_valid():
                added = services.control_settings_update(
                    audit_set=audit_set,
                    by=request.user,
                    rate=form.cleaned_data["control_rate"],
                    threshold=form.cleaned_data["calibration_threshold"],
                )
                messages.success(request, f"Saved; {added} controls mixed into queues.")
                return redirect("audit:set-calibration", audit_set.pk)
            if action in ("mark", "unmark"):
                ids = [int(v) for v in request.POST.getlist("claim") if v.isdigit()]
                changed = services.controls_mark(
                    audit_set=audit_set, claim_ids=ids, by=request.user, control=action == "mark"
                )
                messages.success(request, f"{changed} claim{'s' if changed != 1 else ''} changed.")
                return redirect("audit:set-calibration", audit_set.pk)
        except services.ReviewError as error:
            form.add_error(None, str(error))
    return render(
        request,
        "audit/set_calibration.html",
        {
            "audit_set": audit_set,
            "form": form,
            "rows": selectors.set_calibration(audit_set=audit_set, viewer=request.user),
            "controls": list(selectors.set_controls(audit_set=audit_set)[:200]),
            "candidates": list(selectors.control_candidates(audit_set=audit_set)[:200]),
            "min_sheets": MIN_SHEETS,
        },
    )


@login_required
@require_POST
def reviewer_pause(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    audit_set = access.get_set_for_lead(request, pk)
    reviewer = audit_set.reviewers.filter(pk=request.POST.get("reviewer") or 0).first()
    if reviewer is None:
        messages.error(request, "Choose a reviewer of this set.")
        return redirect("audit:set-calibration", audit_set.pk)
    paused = request.POST.get("paused") == "1"
    services.reviewer_pause(audit_set=audit_set, reviewer=reviewer, by=request.user, paused=paused)
    if paused:
        messages.success(request, f"Paused {reviewer}: their submitted sheets are kept.")
    else:
        messages.success(request, f"{reviewer} may go on reviewing.")
    back = (
        "audit:set-progress" if request.POST.get("next") == "progress" else "audit:set-calibration"
    )
    return redirect(back, audit_set.pk)
