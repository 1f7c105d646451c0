"""Calibration pages: a reviewer's feedback against gold, once claims are adjudicated; a
set's edit page and its guideline versions with what each changed; a lead's control claims
and reviewers against gold, with a pause."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from audit import selectors, services
from audit.calibration import MIN_SHEETS, guideline_diff
from audit.forms import (
    AuditSetEditForm,
    CommentForm,
    ControlSettingsForm,
    SuggestionSettingsForm,
)
from audit.models import Claim
from audit.roles import is_lead, leads
from audit.selectors.suggestions import sources as suggestion_sources
from audit.services.suggestion_settings import set_suggestion_settings
from audit.views import access, display
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
    """A lead edits a set's name, description, training mode and guidelines, and, in a form
    of its own, where the review page's suggestions come from."""
    audit_set = access.get_set_for_lead(request, pk)
    posted = request.POST if request.method == "POST" else None
    suggesting = posted is not None and posted.get("action") == "suggestions"
    form = AuditSetEditForm(None if suggesting else posted, instance=audit_set)
    suggestion_form = _suggestion_form(audit_set, posted if suggesting else None)
    if suggesting and suggestion_form.is_valid():
        percent = suggestion_form.cleaned_data["withhold_percent"]
        try:
            change = set_suggestion_settings(
                audit_set=audit_set,
                user=request.user,
                source_key=suggestion_form.cleaned_data["source_key"],
                show_judgment=suggestion_form.cleaned_data["show_judgment"],
                withhold_share=round((percent or 0) / 100, 4),
            )
        except services.SetRefused as refusal:
            field = "withhold_percent" if refusal.field == "withhold_share" else refusal.field
            suggestion_form.add_error(field, str(refusal))
        else:
            messages.success(request, "Suggestion settings saved." if change else "No change.")
            return redirect("audit:set-edit", audit_set.pk)
    elif posted is not None and not suggesting and form.is_valid():
        try:
            change = services.set_settings_update(
                audit_set=audit_set,
                by=request.user,
                changes={
                    key: form.cleaned_data[key]
                    for key in ("name", "description", "guidelines", "is_training")
                },
                guidelines_note=form.cleaned_data["change_note"],
            )
        except services.SetNameTaken:
            form.add_error("name", "This workspace already has a set with this name.")
        except services.SetRefused as refusal:
            field = "change_note" if refusal.field == "guidelines_note" else refusal.field
            form.add_error(field, str(refusal))
        else:
            version = change.guidelines
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
            "suggestion_form": suggestion_form,
            "versions": selectors.guideline_versions(audit_set=audit_set),
        },
    )


def _suggestion_form(audit_set, data) -> SuggestionSettingsForm:
    locked_since = selectors.criteria_locked_since(audit_set=audit_set)
    return SuggestionSettingsForm(
        data,
        sources=suggestion_sources(audit_set),
        locked_since=locked_since,
        initial={
            "source_key": audit_set.suggestion_source,
            "show_judgment": audit_set.show_suggested_judgment,
            "withhold_percent": round(audit_set.withhold_share * 100, 2),
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
                if added:
                    messages.success(request, f"Saved; {added} controls mixed into queues.")
                else:
                    reason = selectors.controls_unmixed_reason(audit_set=audit_set)
                    messages.success(request, f"Saved; no control mixed into a queue: {reason}")
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


def thread_context(request: HtmxHttpRequest, claim: Claim) -> dict:
    """The claim's discussion as a page shows it; empty for someone who may not read it."""
    if not selectors.may_discuss(user=request.user, claim=claim):
        return {"discussion": None}
    anonymous = claim.answer.audit_set.anonymous_adjudication and leads(
        request.user, claim.answer.audit_set
    )
    thread = selectors.claim_thread(claim=claim, anonymous=anonymous)
    return {
        "discussion": {
            "claim": claim,
            "comments": [
                {
                    "author": name,
                    "at": comment.created_at,
                    "html": display.comment_html(comment.body, thread.mentionable),
                }
                for comment, name in thread.comments
            ],
        }
    }


def _claim_for_discussion(request: HtmxHttpRequest, pk: int) -> Claim:
    # A lead reaches any claim; a reviewer only one in their own queue.
    if is_lead(request.user):
        claim = selectors.lead_claim(user=request.user, pk=pk)
        if claim is not None:
            return claim
    return access.get_claim_for_reviewer(request, pk)


@login_required
@require_POST
def comment_create(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    claim = _claim_for_discussion(request, pk)
    form = CommentForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Write a comment first.")
    else:
        try:
            services.comment_post(claim=claim, user=request.user, body=form.cleaned_data["body"])
        except (services.ReviewError, PermissionDenied) as error:
            # The claim is theirs: saying why is no hint about anything they may not see.
            messages.error(request, str(error))
        else:
            messages.success(request, "Comment added.")
    lead = leads(request.user, claim.answer.audit_set)
    back = "audit:adjudicate" if lead else "audit:review-claim"
    if lead and selectors.assigned_claim(user=request.user, pk=claim.pk):
        back = "audit:review-claim"
    return redirect(reverse(back, args=[claim.pk]) + "#discussion")


@login_required
@require_POST
def flag_settle(request: HtmxHttpRequest, pk: int) -> HttpResponse:
    """A lead resolves, dismisses or reopens a guideline flag, or opens it as a thread."""
    audit_set = access.get_set_for_lead(request, pk)
    flag = (
        selectors.set_flags(audit_set=audit_set, viewer=request.user)
        .filter(pk=request.POST.get("flag") or 0)
        .first()
    )
    if flag is None:
        messages.error(request, "No such flag in this set.")
        return redirect("audit:set-progress", audit_set.pk)
    action = request.POST.get("action", "")
    try:
        if action == "discuss":
            services.flag_discuss(flag=flag, by=request.user)
            return redirect(reverse("audit:adjudicate", args=[flag.claim_id]) + "#discussion")
        services.flag_settle(
            flag=flag,
            by=request.user,
            status={"resolve": "resolved", "dismiss": "dismissed"}.get(
                action, "open" if action == "reopen" else action
            ),
        )
    except services.ReviewError as error:
        messages.error(request, str(error))
    return redirect(reverse("audit:set-progress", args=[audit_set.pk]) + "#flags")
