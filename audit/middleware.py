"""htmx requests from a session that has ended get a 401 instead of a login redirect."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import resolve_url


class HtmxLoginRequiredMiddleware:
    """htmx follows a redirect and swaps the login page into the fragment it asked for;
    a 401 lets the page say that the session ended instead (citeaudit.js handles it)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            getattr(request, "htmx", False)
            and response.status_code == 302
            and not request.user.is_authenticated
            and urlsplit(response["Location"]).path == resolve_url(settings.LOGIN_URL)
        ):
            return HttpResponse("Your session has ended. Sign in again.", status=401)
        return response
