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
import dataclasses
import json
import math
from collections.abc import Callable
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from ninja import NinjaAPI, Schema, Swagger
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.security import HttpBearer
from pydantic import Field

from audit import problems, services
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


class CiteauditAPI(NinjaAPI):
    """ninja documents every response as application/json; a refusal is served as
    application/problem+json (audit.problems), so its schema says so."""

    def get_openapi_schema(self, **kwargs: Any) -> Any:
        schema = super().get_openapi_schema(**kwargs)
        for operations in schema["paths"].values():
            for operation in operations.values():
                for status, answer in operation.get("responses", {}).items():
                    content = answer.get("content", {})
                    if int(status) >= 400 and "application/json" in content:
                        content[problems.CONTENT_TYPE] = content.pop("application/json")
        return schema


api = CiteauditAPI(
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


def problem_response(
    status: int, detail: str, *, errors: list[dict[str, str]] | None = None, **extra: Any
) -> HttpResponse:
    """An error answer: RFC 9457 problem details (audit.problems says why each member);
    `extra` members are the problem type's own extensions."""
    return JsonResponse(
        problems.problem(status, detail, errors=errors, **extra),
        status=status,
        content_type=problems.CONTENT_TYPE,
        json_dumps_params={"ensure_ascii": False},
    )


@api.exception_handler(Http404)
def _not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return problem_response(404, str(exc) or "Not found.")


@api.exception_handler(PermissionDenied)
def _forbidden(request: HttpRequest, exc: PermissionDenied) -> HttpResponse:
    return problem_response(403, str(exc) or "You may not do this.")


@api.exception_handler(AuthenticationError)
def _unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    response = problem_response(401, "Authentication required: send Authorization: Bearer <token>.")
    response["WWW-Authenticate"] = "Bearer"
    return response


@api.exception_handler(RateLimited)
def _rate_limited(request: HttpRequest, exc: RateLimited) -> HttpResponse:
    # retry_after: the header's seconds, for clients that read only the body.
    response = problem_response(429, str(exc), retry_after=exc.retry_after)
    response["Retry-After"] = str(exc.retry_after)
    return response


@api.exception_handler(HttpError)
def _http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    response = problem_response(exc.status_code, str(exc))
    if exc.status_code == 401:
        response["WWW-Authenticate"] = 'Bearer error="invalid_token"'
    return response


@api.exception_handler(problems.FieldInvalid)
def _field_invalid(request: HttpRequest, exc: problems.FieldInvalid) -> HttpResponse:
    return problem_response(
        422,
        f"Invalid request: {exc.field}: {exc.message}",
        errors=[problems.field_error(exc.field, exc.message)],
    )


@api.exception_handler(ValidationError)
def _invalid(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    errors = [
        problems.field_error(problems.place(e.get("loc", ())), str(e.get("msg", "invalid")))
        for e in exc.errors
    ]
    listed = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
    return problem_response(422, "Invalid request: " + listed, errors=errors)


def plain(value: Any) -> Any:
    """JSON-safe: dataclasses as dicts, tuples as lists, NaN and infinities as null."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, frozenset, set)):
        return [plain(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


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


class FieldError(Schema):
    field: str = Field(description="Where the value is, dotted: `body.payload.name`.")
    message: str


class Problem(Schema):
    """RFC 9457 problem details, served as application/problem+json (audit.problems)."""

    type: str = Field(description="A URI naming the kind of problem; stable, branch on it.")
    title: str = Field(description="A short summary of the kind of problem.")
    status: int
    detail: str = Field(description="This occurrence in words, naming the field or object.")
    errors: list[FieldError] = Field(description="One per invalid field; empty otherwise.")
    retry_after: int | None = Field(
        None, description="On a 429 only: seconds until the token's budget is renewed."
    )


# Any operation can meet these: a NUL character in the request (400, refused before the
# API), no or a bad token (401), a token over its request budget (429, audit.api.ratelimit),
# and the database busy or unreachable (503).
ALWAYS = (400, 401, 429, 503)


def refusals(*statuses: int) -> dict[int, type[Problem]]:
    """The error entries of an operation's `response={...}`: `statuses` and ALWAYS, each
    documented with the Problem model."""
    return dict.fromkeys(sorted({*ALWAYS, *statuses}), Problem)


def _file_schema(content_type: str) -> dict[str, Any]:
    # A JSON file (the audit-sheets export) is an array of records; any other, its text.
    if content_type.startswith("application/json"):
        return {"type": "array", "items": {"type": "object"}}
    return {"type": "string"}


def streamed(description: str, *content_types: str) -> dict[str, Any]:
    """The `openapi_extra` of an operation answering 200 with a streamed file, not JSON, in
    one of `content_types`."""
    content = {kind: {"schema": _file_schema(kind)} for kind in sorted(set(content_types))}
    return {"responses": {200: {"description": description, "content": content}}}


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
