"""The two roles, as auth groups: reviewers judge claims, leads import, assign and adjudicate."""

from __future__ import annotations

REVIEWER = "reviewer"
LEAD = "lead"


def is_lead(user) -> bool:
    if not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    # Asked by the view and again by the page's menu: once per request's user object, so a
    # change of groups shows from the next request.
    if not hasattr(user, "_citeaudit_is_lead"):
        user._citeaudit_is_lead = user.groups.filter(name=LEAD).exists()
    return user._citeaudit_is_lead


def is_reviewer(user) -> bool:
    return user.is_authenticated and user.groups.filter(name=REVIEWER).exists()
