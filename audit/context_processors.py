"""Template context shared by every page: the user's roles, for showing lead-only links."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest
from django.urls import reverse
from django.utils.functional import SimpleLazyObject

from audit.roles import is_lead, title


def roles(request: HttpRequest) -> dict[str, object]:
    user = getattr(request, "user", None)
    # Lazy: an htmx fragment such as an autosave's status never shows the menu, so it
    # should not pay for the group lookup.
    context: dict[str, object] = {
        "user_is_lead": SimpleLazyObject(
            lambda: bool(user and user.is_authenticated and is_lead(user))
        ),
        "user_title": SimpleLazyObject(lambda: title(user)),
    }
    if settings.OIDC_ENABLED:
        context["oidc_name"] = settings.OIDC_NAME
        context["oidc_login_url"] = reverse("openid_connect_login", kwargs={"provider_id": "sso"})
    return context
