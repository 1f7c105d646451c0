"""Who may see what, asked in one place: one permission lookup per object kind, the app's one
refusal policy, and the one rule for when a view renders a fragment instead of its page.

Anonymous users are sent to the login page (an htmx request gets a 401 instead, see
audit.middleware, so plain `login_required` is right for every view). A signed-in user who
is a lead in no workspace gets a 403 on every lead page: the role is checked before any
object is looked up, so the answer is the same whether the object exists or not. An object
the user may not know exists (a set of another workspace, a claim not assigned to them) is
a 404, never a hint: a lead of workspace A gets the same 404 on workspace B's objects as a
stranger. A refusal the user may know about (a lead page of a set they review but do not
lead; splitting a claim they review, in a set that does not allow it) is a 403.

Workspace scoping lives in these helpers and the selectors they call, so a view that uses
them is scoped without doing anything more.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django_htmx.middleware import HtmxDetails

from audit import selectors
from audit.models import Answer, AuditSet, Claim, Webhook, Workspace
from audit.roles import is_lead, lead_workspaces, leads, limited_set_id

LEAD_ONLY = "This page is for leads. Reviewers see their own claims from the home page."


class HtmxHttpRequest(HttpRequest):
    """A request that went through django-htmx's middleware (every request in this app)."""

    htmx: HtmxDetails


def require_lead(request: HttpRequest) -> None:
    if not is_lead(request.user):
        raise PermissionDenied(LEAD_ONLY)


def get_set_for_user(request: HttpRequest, pk: int) -> AuditSet:
    """A set the user reviews in, or any set for a lead."""
    return _set_or_404(request, pk)


def get_set_for_lead(request: HttpRequest, pk: int) -> AuditSet:
    """A set of a workspace the user leads. A set they only review is a 403 (they know it
    exists); any other set a 404."""
    require_lead(request)
    audit_set = _set_or_404(request, pk)
    if not leads(request.user, audit_set):
        raise PermissionDenied(LEAD_ONLY)
    return audit_set


def get_webhook_for_lead(request: HttpRequest, pk: int) -> Webhook:
    """A webhook of a set the lead may open."""
    require_lead(request)
    webhook = Webhook.objects.filter(pk=pk).first()
    if webhook is None:
        raise Http404("No such webhook.")
    if webhook.audit_set_id is not None:
        _set_or_404(request, webhook.audit_set_id)
    else:
        get_workspace_for_lead(request, webhook.workspace.slug)
    return webhook


def get_workspace_for_lead(request: HttpRequest, slug: str) -> Workspace:
    """A workspace the user leads or owns; a token limited to one set leads no workspace.
    Any other workspace is a 404."""
    require_lead(request)
    workspace = lead_workspaces(request.user).filter(slug=slug).first()
    if workspace is None or limited_set_id(request.user) is not None:
        raise Http404("No such workspace.")
    return workspace


def get_answer_for_user(request: HttpRequest, pk: int) -> Answer:
    answer = selectors.answer_for_user(user=request.user, pk=pk)
    if answer is None:
        raise Http404("No such answer.")
    return answer


def _set_or_404(request: HttpRequest, pk: int) -> AuditSet:
    audit_set = selectors.set_for_user(user=request.user, pk=pk)
    if audit_set is None:
        raise Http404("No such audit set.")
    return audit_set


def get_claim_for_lead(request: HttpRequest, pk: int) -> Claim:
    require_lead(request)
    claim = selectors.lead_claim(user=request.user, pk=pk)
    if claim is None:
        raise Http404("No such claim.")
    return claim


def get_claim_for_reviewer(request: HttpRequest, pk: int) -> Claim:
    """The claim if it is assigned to the user; anything else is a 404, never a hint."""
    claim = selectors.assigned_claim(user=request.user, pk=pk)
    if claim is None:
        raise Http404("No such claim in your review queue.")
    return claim


def get_claim_for_splitting(request: HttpRequest, pk: int) -> Claim:
    """A lead may split any claim of a set they lead; a reviewer one they review, where
    the set allows it."""
    if is_lead(request.user):
        claim = selectors.lead_claim(user=request.user, pk=pk)
        if claim is not None:
            return claim
    claim = get_claim_for_reviewer(request, pk)
    if not claim.answer.audit_set.allow_reviewer_split:
        raise PermissionDenied("This set does not let reviewers split claims.")
    return claim


def wants_partial(request: HtmxHttpRequest) -> bool:
    """htmx asked for a fragment to swap in. A history-restore request (Back after the
    page's cache was evicted) wants the whole page, though it carries the htmx header."""
    return bool(request.htmx) and not request.htmx.history_restore_request


def render_page_or_partial(
    request: HtmxHttpRequest,
    template: str,
    partial: str,
    context: dict[str, Any],
    status: int | None = None,
) -> HttpResponse:
    """The page, or only its `{% partialdef %}` fragment when htmx asks for one."""
    name = f"{template}#{partial}" if wants_partial(request) else template
    return render(request, name, context, status=status)
