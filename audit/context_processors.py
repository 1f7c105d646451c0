"""Template context shared by every page: the user's roles, for showing lead-only links."""

from __future__ import annotations

from django.http import HttpRequest
from django.utils.functional import SimpleLazyObject

from audit.roles import is_lead


def roles(request: HttpRequest) -> dict[str, object]:
    user = getattr(request, "user", None)
    # Lazy: an htmx fragment such as an autosave's status never shows the menu, so it
    # should not pay for the group lookup.
    return {
        "user_is_lead": SimpleLazyObject(
            lambda: bool(user and user.is_authenticated and is_lead(user))
        )
    }
