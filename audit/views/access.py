"""Permission lookups shared by the lead pages, with the app's one refusal policy.

Anonymous users are sent to the login page (an htmx request gets a 401 instead, see
audit.middleware). A signed-in user who is not a lead gets a 403 on every lead page: the
role is checked before any object is looked up, so the answer is the same whether the
object exists or not. An object the user may not know exists (a set they are not a member
of, a claim not assigned to them) is a 404, never a hint.
"""

from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest

from audit import selectors
from audit.models import AuditSet, Claim
from audit.roles import is_lead

LEAD_ONLY = "This page is for leads. Reviewers see their own claims from the home page."


def require_lead(request: HttpRequest) -> None:
    if not is_lead(request.user):
        raise PermissionDenied(LEAD_ONLY)


def get_set_for_lead(request: HttpRequest, pk: int) -> AuditSet:
    require_lead(request)
    return selectors.set_for_user(user=request.user, pk=pk)


def get_claim_for_lead(request: HttpRequest, pk: int) -> Claim:
    require_lead(request)
    claim = selectors.lead_claim(pk=pk)
    if claim is None:
        raise Http404("No such claim.")
    return claim
