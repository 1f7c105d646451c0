"""The refusal pages: 403 and 404 rendered inside the app's layout, in plain words.

400 and 500 use Django's own handlers with templates/400.html and 500.html: those render
without the request, so a broken request or a failing database cannot break the error page.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def _reason(exception: Exception | None) -> str:
    # Only a message the app wrote is shown: the URL resolver's 404 carries the tried
    # patterns (a dict), which are nobody's business.
    message = exception.args[0] if exception is not None and exception.args else ""
    return message if isinstance(message, str) else ""


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return render(request, "403.html", {"reason": _reason(exception)}, status=403)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return render(request, "404.html", {"reason": _reason(exception)}, status=404)
