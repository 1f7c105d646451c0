"""Roles per workspace: an owner manages the members and leads; a lead imports, assigns,
adjudicates and exports; a reviewer judges what is assigned. A site administrator
(`is_superuser`) creates workspaces and is an owner in every one.

Every question "may this user do X to this set" is answered here from the user's active
memberships, never from global groups.
"""

from __future__ import annotations

from django.db.models import QuerySet

from audit.models import AuditSet, Membership, Workspace

OWNER = Membership.Role.OWNER
LEAD = Membership.Role.LEAD
REVIEWER = Membership.Role.REVIEWER
LEADING = (OWNER, LEAD)


def is_site_admin(user) -> bool:
    return bool(user is not None and user.is_authenticated and user.is_superuser)


def _memberships(user) -> dict[int, str]:
    """{workspace id: role} of the user's active memberships, asked once per request's user
    object (the view and the page's menu both ask), so a change shows from the next request."""
    if not hasattr(user, "_citeaudit_roles"):
        user._citeaudit_roles = dict(
            Membership.objects.filter(user=user, is_active=True).values_list("workspace_id", "role")
        )
    return user._citeaudit_roles


def lead_workspaces(user) -> QuerySet[Workspace]:
    """The workspaces where the user is a lead or owner (every one for a site admin)."""
    if user is None or not user.is_authenticated:
        return Workspace.objects.none()
    if user.is_superuser:
        return Workspace.objects.all()
    return Workspace.objects.filter(
        memberships__user=user, memberships__is_active=True, memberships__role__in=LEADING
    )


def owned_workspaces(user) -> QuerySet[Workspace]:
    if user is None or not user.is_authenticated:
        return Workspace.objects.none()
    if user.is_superuser:
        return Workspace.objects.all()
    return Workspace.objects.filter(
        memberships__user=user, memberships__is_active=True, memberships__role=OWNER
    )


def member_workspaces(user) -> QuerySet[Workspace]:
    """The workspaces the user may see anything of (every one for a site admin)."""
    if user is None or not user.is_authenticated:
        return Workspace.objects.none()
    if user.is_superuser:
        return Workspace.objects.all()
    return Workspace.objects.filter(memberships__user=user, memberships__is_active=True)


def is_lead(user) -> bool:
    """Lead or owner in at least one workspace: may open the lead-only pages at all (which
    object they may open there is asked per object, see leads)."""
    if user is None or not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    return any(role in LEADING for role in _memberships(user).values())


def role_in(user, workspace_id: int) -> str | None:
    """The user's active role in a workspace, None for a non-member."""
    if user is None or not user.is_authenticated:
        return None
    if user.is_superuser:
        return OWNER
    return _memberships(user).get(workspace_id)


def leads(user, audit_set: AuditSet) -> bool:
    """May lead this set: a lead or owner of the set's workspace."""
    return role_in(user, audit_set.workspace_id) in LEADING


def owns(user, workspace: Workspace) -> bool:
    return role_in(user, workspace.pk) == OWNER
