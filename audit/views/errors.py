"""The refusal pages: 403 and 404 rendered inside the app's layout, in plain words.

400 uses Django's own handler with templates/400.html, and 500 Django's too unless the
database failed; both render without the request, so a broken request or a failing
database cannot break the error page.
"""

from __future__ import annotations

import sys

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views import defaults

from audit.middleware import BUSY_MESSAGE, BUSY_RETRY_AFTER, api_problem, refusal

# Seconds a client is asked to wait when the database could not be reached: a restart or a
# failover takes that long, and the review page's autosave retries after it anyway.
OUTAGE_RETRY_AFTER = 10
OUTAGE_MESSAGE = (
    "The database cannot be reached right now, so this request was not carried out and "
    "nothing was saved. Send it again in a few seconds."
)


def _reason(exception: Exception | None) -> str:
    # Only a message the app wrote is shown: the URL resolver's 404 carries the tried
    # patterns (a dict), which are nobody's business.
    message = exception.args[0] if exception is not None and exception.args else ""
    return message if isinstance(message, str) else ""


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    return render(request, "403.html", {"reason": _reason(exception)}, status=403)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if request.path.startswith("/api/"):
        # An address no endpoint answers: the API's clients read problem details.
        return api_problem(404, "No such API address.")
    return render(request, "404.html", {"reason": _reason(exception)}, status=404)


def server_error(request: HttpRequest) -> HttpResponse:
    """Django's 500, except when the database failed (refused the connection, went away
    mid-request, or stayed locked past the busy timeout): that is a 503 with Retry-After,
    as the README promises, so clients and the review page's autosave retry instead of
    reading a lost save. Django calls this while handling the exception, so it is in
    sys.exc_info(); an error raised in a middleware never reaches process_exception."""
    exception = sys.exc_info()[1]
    if not isinstance(exception, OperationalError | InterfaceError):
        return defaults.server_error(request)
    locked = "database is locked" in str(exception)
    response = refusal(
        request,
        status=503,
        message=BUSY_MESSAGE if locked else OUTAGE_MESSAGE,
        template="503.html",
        title="The database is busy" if locked else "The database cannot be reached",
    )
    response["Retry-After"] = str(BUSY_RETRY_AFTER if locked else OUTAGE_RETRY_AFTER)
    return response
