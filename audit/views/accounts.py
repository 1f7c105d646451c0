"""Password reset with limits: each request sends an email, so without them anyone could
fill a person's inbox, or make the server send mail by the thousand."""

from __future__ import annotations

import hashlib

from django.contrib.auth import views as auth_views
from django.core.cache import cache
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from audit.client_address import client_address

# Within one hour: reset emails sent to one address, and reset requests from one client.
PER_ADDRESS = 3
PER_CLIENT = 10
WINDOW_SECONDS = 3600


def _count(key: str) -> int:
    """This hour's count under `key`, this request included. In the shared cache (Redis, or
    files on one machine), so every web process counts the same requests."""
    cache.add(key, 0, WINDOW_SECONDS)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, WINDOW_SECONDS)
        return 1


def _key(kind: str, value: str) -> str:
    return f"password-reset:{kind}:{hashlib.sha256(value.encode()).hexdigest()}"


class PasswordResetView(auth_views.PasswordResetView):
    """Django's reset view, refusing a client past PER_CLIENT requests an hour (429), and
    sending no more than PER_ADDRESS emails an hour to one address. Past that the page says
    the same as ever, so it tells nobody whether the address has an account."""

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        # The person behind the proxies (CITEAUDIT_TRUSTED_PROXIES), not the proxy.
        client = client_address(request) or "unknown"
        if _count(_key("client", client)) > PER_CLIENT:
            response = render(request, "registration/password_reset_limited.html", status=429)
            response["Retry-After"] = str(WINDOW_SECONDS)
            return response
        return super().post(request, *args, **kwargs)

    def form_valid(self, form):  # noqa: ANN001, ANN201
        address = form.cleaned_data["email"].strip().casefold()
        if _count(_key("address", address)) > PER_ADDRESS:
            return super(auth_views.PasswordResetView, self).form_valid(form)
        return super().form_valid(form)
