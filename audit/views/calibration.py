"""Calibration pages: a reviewer's feedback against gold, once claims are adjudicated; a
set's edit page and its guideline versions with what each changed."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_safe

from audit import selectors, services
from audit.calibration import guideline_diff
from audit.forms import AuditSetEditForm
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
