"""The two roles, as auth groups: reviewers judge claims, leads import, assign and adjudicate."""

from __future__ import annotations

REVIEWER = "reviewer"
LEAD = "lead"


def is_lead(user) -> bool:
    if not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    return user.groups.filter(name=LEAD).exists()


def is_reviewer(user) -> bool:
    return user.is_authenticated and user.groups.filter(name=REVIEWER).exists()
