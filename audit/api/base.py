"""The HTTP API's frame: token authentication, JSON errors and cursor pages.

Every request carries `Authorization: Bearer <token>`; its user becomes `request.user`, so
the pages' permission helpers (audit.views.access) and selectors decide what it may see,
unchanged; a token limited to a workspace or set limits that user (audit.roles), so they
answer 404 outside it. Session cookies are not read here: a page's cookie never authorizes
a write.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from ninja import NinjaAPI, Schema, Swagger
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.security import HttpBearer

from audit import services
from audit.api.ratelimit import RateLimited, rate_count
from audit.models import ApiToken, Workspace
from audit.roles import lead_workspaces, limit_to_token, limited_set_id

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
MAX_LIMIT = 500


class TokenAuth(HttpBearer):
    """A personal token; a read-only one may not write (403)."""

    openapi_description = "A personal API token (`cit_…`), made on the API tokens page."

    def authenticate(self, request: HttpRequest, token: str) -> ApiToken:
        try:
            found = services.token_authenticate(text=token)
        except services.TokenRejected as rejected:
            raise HttpError(401, str(rejected)) from None
        if found.scope != ApiToken.Scope.WRITE and request.method not in SAFE_METHODS:
            raise HttpError(403, "This token is read-only; make a read-write token to write.")
        rate_count(token_id=found.pk, write=request.method not in SAFE_METHODS)
        limit_to_token(found.user, workspace_id=found.workspace_id, set_id=found.audit_set_id)
        request.user = found.user
        return found


class LocalSwagger(Swagger):
    """The docs page with Swagger UI from our static files. ninja renders its CDN page
    unless it is an installed app, and it is not one (settings.NINJA_DIR says why)."""

    def render_page(self, request: HttpRequest, api: NinjaAPI, **kwargs: Any) -> HttpResponse:
        self.settings["url"] = self.get_openapi_url(api, kwargs)
        context = {
            "swagger_settings": json.dumps(self.settings, indent=1),
            "api": api,
            # Bearer tokens only: no cookie authenticates a request, so no CSRF token.
            "add_csrf": False,
        }
        return render(request, self.template, context)


api = NinjaAPI(
    title="Citeaudit API",
    version="1",
    description=(
        "Push answers and verdicts, pull labelled data and gold, and ask whether a system "
        "passes its release criteria. Authenticate with `Authorization: Bearer <token>`."
    ),
    urls_namespace="api",
    auth=TokenAuth(),
    docs=LocalSwagger(),
)


def _error(request: HttpRequest, message: str, status: int, **extra: Any) -> HttpResponse:
    return api.create_response(request, {"detail": message, **extra}, status=status)


@api.exception_handler(Http404)
def _not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return _error(request, str(exc) or "Not found.", 404)


@api.exception_handler(PermissionDenied)
def _forbidden(request: HttpRequest, exc: PermissionDenied) -> HttpResponse:
    return _error(request, str(exc) or "You may not do this.", 403)


@api.exception_handler(AuthenticationError)
def _unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    response = _error(request, "Authentication required: send Authorization: Bearer <token>.", 401)
    response["WWW-Authenticate"] = "Bearer"
    return response


@api.exception_handler(RateLimited)
def _rate_limited(request: HttpRequest, exc: RateLimited) -> HttpResponse:
    response = _error(request, str(exc), 429, retry_after=exc.retry_after)
    response["Retry-After"] = str(exc.retry_after)
    return response


@api.exception_handler(HttpError)
def _http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    response = _error(request, str(exc), exc.status_code)
    if exc.status_code == 401:
        response["WWW-Authenticate"] = 'Bearer error="invalid_token"'
    return response


@api.exception_handler(ValidationError)
def _invalid(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    problems = []
    for error in exc.errors:
        where = ".".join(str(part) for part in error.get("loc", ()))
        problems.append(f"{where}: {error.get('msg', 'invalid')}")
    errors = [
        {"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg", ""))}
        for e in exc.errors
    ]
    return _error(request, "Invalid request: " + "; ".join(problems), 422, errors=errors)


def encode_cursor(pk: int) -> str:
    return base64.urlsafe_b64encode(f"after:{pk}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> int:
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        kind, _, value = text.partition(":")
        if kind != "after" or not value.isdigit():
            raise ValueError
        return int(value)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise HttpError(400, "Invalid cursor: pass next_cursor from the previous page.") from None


def cursor_page(
    queryset: QuerySet, *, cursor: str | None, limit: int, row: Callable[[Any], dict]
) -> dict:
    """A page of `queryset` in primary-key order after the cursor's key. New rows get higher
    keys, so paging through while others insert neither repeats nor skips a row. A queryset
    may name as `walk` a column equal to its key that an index holds in that order (a
    claim's check's claim_id, after its label)."""
    walk = getattr(queryset, "walk", "pk")
    if cursor:
        after = decode_cursor(cursor)
        # Both: PostgreSQL does not carry a bound across the join's equality, and without
        # it merge-joined the claims from the first one (90 ms at 100k claims).
        queryset = queryset.filter(**{"pk__gt": after, f"{walk}__gt": after})
    rows = list(queryset.order_by(walk)[: limit + 1])
    more = len(rows) > limit
    rows = rows[:limit]
    return {
        "items": [row(item) for item in rows],
        "next_cursor": encode_cursor(rows[-1].pk) if more and rows else None,
    }


# Shapes every area of the API answers with.
class Message(Schema):
    detail: str


class Page(Schema):
    items: list[dict[str, Any]]
    next_cursor: str | None


def lead_workspace(request: HttpRequest, slug: str) -> Workspace:
    """The workspace a new set goes in: the one named, among those the user leads, or the
    only one they lead."""
    if limited_set_id(request.user) is not None:
        raise HttpError(403, "This token is limited to one set; it makes no new set.")
    workspaces = lead_workspaces(request.user)
    if slug:
        workspace = workspaces.filter(slug=slug).first()
        if workspace is None:
            raise HttpError(404, f"You lead no workspace “{slug}”.")
        return workspace
    found = list(workspaces.order_by("slug")[:21])
    if len(found) != 1:
        slugs = ", ".join(w.slug for w in found[:20])
        raise HttpError(422, f"Invalid request: name the workspace (one of: {slugs}).")
    return found[0]
