"""The next claim held ahead: the review and adjudication pages fetch the page of the claim
that follows while this one is worked on, and their script posts the save in the
background and shows that page at once (static/audit/citeaudit.js, "held ahead").

Two request headers say so: X-Citeaudit-Prefetch on the fetch ahead, X-Citeaudit-Swap (with
X-Citeaudit-Prefetched, the address held) on the save."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect


def is_prefetch(request: HttpRequest) -> bool:
    """A page fetched ahead: the messages waiting for the user's next page are left for
    the page that shows them."""
    return request.headers.get("X-Citeaudit-Prefetch") == "1"


def go_next(request: HttpRequest, url: str, message: str) -> HttpResponse:
    """Where the user goes after a save, and what they are told there: a redirect for a
    plain form post; for the script, the address and the message as JSON. Where the next
    page is not the one the script holds (the queue changed meanwhile), the message waits
    for the page it then loads."""
    if request.headers.get("X-Citeaudit-Swap") != "1":
        messages.success(request, message)
        return redirect(url)
    held = request.headers.get("X-Citeaudit-Prefetched", "")
    if held != url:
        messages.success(request, message)
    return JsonResponse({"next": url, "message": message, "swap": held == url})
