"""Template context shared by every page: the user's roles, for showing lead-only links."""

from __future__ import annotations

from django.http import HttpRequest

from audit.roles import is_lead


def roles(request: HttpRequest) -> dict[str, bool]:
    user = getattr(request, "user", None)
    return {"user_is_lead": bool(user and user.is_authenticated and is_lead(user))}
