"""The refusals no view renders itself: an htmx request from an ended session, a request
with the wrong method (a bookmarked form address), and a write that found the database busy
get the app's answer."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

from django.conf import settings
from django.db import OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render, resolve_url

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
        if response.status_code == 405 and not htmx and not response.content:
            styled = render(request, "405.html", status=405)
            styled["Allow"] = response["Allow"]
            return styled
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not (isinstance(exception, OperationalError) and "database is locked" in str(exception)):
            return None
        if request.path.startswith("/api/"):
            response = JsonResponse({"detail": BUSY_MESSAGE}, status=503)
        elif getattr(request, "htmx", False):
            response = HttpResponse(BUSY_MESSAGE, status=503)
        else:
            response = render(request, "503.html", {"message": BUSY_MESSAGE}, status=503)
        response["Retry-After"] = str(BUSY_RETRY_AFTER)
        return response
