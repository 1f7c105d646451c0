"""The refusals no view renders itself: an htmx request from an ended session, and a
request with the wrong method (a bookmarked form address), get the app's answer."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render, resolve_url


class RefusalMiddleware:
    """htmx follows a login redirect and would swap the login page into the fragment it asked
    for: a 401 lets the page say that the session ended instead (citeaudit.js handles it).
    Django's 405 is an empty page: a person who opens a form's address gets a styled one."""

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
