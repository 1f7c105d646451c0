"""The refusals no view renders itself: an htmx request from an ended session, a request
with the wrong method (a bookmarked form address), a write that found the database busy,
and a request carrying a NUL character get the app's answer."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from urllib.parse import urlsplit

from django.conf import settings
from django.db import OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render, resolve_url
from django.template import loader

from audit import problems

# Seconds a client is asked to wait before sending a refused write again.
BUSY_RETRY_AFTER = 5
BUSY_MESSAGE = (
    "The database is busy with a long write (an import or a recomputation) and this change "
    "was not saved. Nothing was written; send it again in a few seconds."
)


class RefusalMiddleware:
    """htmx follows a login redirect and would swap the login page into the fragment it asked
    for: a 401 lets the page say that the session ended instead (citeaudit.js handles it).
    Django's 405 is an empty page: a person who opens a form's address gets a styled one.

    SQLite has one writer: a request that waited `SQLITE_BUSY_TIMEOUT` for the write lock
    while a job held it (an import runs in one transaction, to stay atomic) fails with
    "database is locked". Its transaction wrote nothing, so it is answered 503 with
    Retry-After, which the review page's autosave treats as "try again" and keeps the draft,
    instead of a 500 that reads like a lost save."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        htmx = getattr(request, "htmx", False)
        if (
            htmx
            and response.status_code == 302
            and not request.user.is_authenticated
            and urlsplit(response["Location"]).path == resolve_url(settings.LOGIN_URL)
        ):
            return HttpResponse("Your session has ended. Sign in again.", status=401)
        if response.status_code == 405 and request.path.startswith("/api/"):
            answer = api_problem(405, f"{request.method} is not allowed here.")
            answer["Allow"] = response["Allow"]
            return answer
        if response.status_code == 405 and not htmx and not response.content:
            styled = render(request, "405.html", status=405)
            styled["Allow"] = response["Allow"]
            return styled
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not (isinstance(exception, OperationalError) and "database is locked" in str(exception)):
            return None
        if request.path.startswith("/api/"):
            response = api_problem(503, BUSY_MESSAGE)
        elif getattr(request, "htmx", False):
            response = HttpResponse(BUSY_MESSAGE, status=503)
        else:
            response = render(request, "503.html", {"message": BUSY_MESSAGE}, status=503)
        response["Retry-After"] = str(BUSY_RETRY_AFTER)
        return response


def api_problem(status: int, message: str) -> HttpResponse:
    """An API refusal given before the API's own handlers: problem details like theirs."""
    return JsonResponse(
        problems.problem(status, message),
        status=status,
        content_type=problems.CONTENT_TYPE,
        json_dumps_params={"ensure_ascii": False},
    )


NUL_MESSAGE = (
    "The request holds a NUL character (\\x00, %00 or \\u0000) in its {where}. No text "
    "here may contain one: remove it and send the request again."
)
# A JSON string can spell NUL only as this escape (a raw NUL byte is not valid JSON at all).
_JSON_NUL = re.compile(rb"\\u0000", re.IGNORECASE)


def refusal(
    request: HttpRequest, *, status: int, message: str, template: str, title: str = ""
) -> HttpResponse:
    """The app's answer for a request it refuses before (or without) a view: JSON for the
    API, plain text for htmx, a page otherwise. The page renders without the request, so
    it needs neither a session nor the database."""
    if request.path.startswith("/api/"):
        return api_problem(status, message)
    if request.headers.get("HX-Request") == "true":
        return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")
    body = loader.render_to_string(template, {"message": message, "title": title})
    return HttpResponse(body, status=status)


class NulRefusalMiddleware:
    """A NUL character is no part of any text this app stores or looks up, and PostgreSQL
    refuses it in a string ("A string literal cannot contain NUL"): left to the views, a
    filter, a login or an API body holding one was a 500. It is refused here, first, with a
    400 that says where it was."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        where = nul_found_in(request)
        if where:
            return refusal(
                request,
                status=400,
                message=NUL_MESSAGE.format(where=where),
                template="400.html",
            )
        return self.get_response(request)


def nul_found_in(request: HttpRequest) -> str:
    """Where the request holds a NUL character ("address", "query", "form", "JSON body"),
    or "". Uploaded files are left to the import, which names the line."""
    if "\x00" in request.path:
        return "address"
    if any(
        "\x00" in key or any("\x00" in v for v in values) for key, values in request.GET.lists()
    ):
        return "query"
    if request.method not in ("POST", "PUT", "PATCH", "DELETE"):
        return ""
    content_type = request.content_type or ""
    if content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
        if any(
            "\x00" in key or any(isinstance(v, str) and "\x00" in v for v in values)
            for key, values in request.POST.lists()
        ):
            return "form"
    elif (
        content_type == "application/json"
        or content_type.endswith("+json")
        # The API reads a body as JSON whatever type it is sent as.
        or request.path.startswith("/api/")
    ):
        body = request.body
        if b"\x00" in body:
            return "JSON body"
        if _JSON_NUL.search(body) and _json_holds_nul(body):
            return "JSON body"
    return ""


def _json_holds_nul(body: bytes) -> bool:
    try:
        value = json.loads(body)
    except (ValueError, RecursionError):
        return False  # the view says what is wrong with it
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False
