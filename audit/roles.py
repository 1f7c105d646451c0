"""Roles per workspace: an owner manages the members and leads; a lead imports, assigns,
adjudicates and exports; a reviewer judges what is assigned. A site administrator
(`is_superuser`) creates workspaces and is an owner in every one.

Every question "may this user do X to this set" is answered here from the user's active
memberships, never from global groups. An API token may limit its request's user to one
workspace, or one set of it (limit_to_token): every answer here, and the set and job
selectors built on them, then leave out everything else, so a lookup answers 404.
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


def limit_to_token(user, *, workspace_id: int | None, set_id: int | None) -> None:
    """Limit `user` to a workspace (None: all of theirs) and one set of it (None: the whole
    workspace). Set on the user object that an API request's token loaded for that request
    alone; a page's user is never limited."""
    user._citeaudit_limit = (workspace_id, set_id)
    user.__dict__.pop("_citeaudit_roles", None)


def _limit(user) -> tuple[int | None, int | None]:
    return getattr(user, "_citeaudit_limit", (None, None))


def limited_set_id(user) -> int | None:
    """The one set the user's token is limited to, or None."""
    return _limit(user)[1]


def within_limit(user, sets: QuerySet[AuditSet]) -> QuerySet[AuditSet]:
    """`sets` less those outside the user's token's set (its workspace is left out already
    by the workspaces below)."""
    set_id = limited_set_id(user)
    return sets if set_id is None else sets.filter(pk=set_id)


def _within(user, workspaces: QuerySet[Workspace]) -> QuerySet[Workspace]:
    workspace_id = _limit(user)[0]
    return workspaces if workspace_id is None else workspaces.filter(pk=workspace_id)


def _memberships(user) -> dict[int, str]:
    """{workspace id: role} of the user's active memberships, asked once per request's user
    object (the view and the page's menu both ask), so a change shows from the next request."""
    if not hasattr(user, "_citeaudit_roles"):
        found = Membership.objects.filter(user=user, is_active=True)
        if _limit(user)[0] is not None:
            found = found.filter(workspace_id=_limit(user)[0])
        user._citeaudit_roles = dict(found.values_list("workspace_id", "role"))
    return user._citeaudit_roles


def lead_workspaces(user) -> QuerySet[Workspace]:
    """The workspaces where the user is a lead or owner (every one for a site admin)."""
    if user is None or not user.is_authenticated:
        return Workspace.objects.none()
    if user.is_superuser:
        return _within(user, Workspace.objects.all())
    return _within(
        user,
        Workspace.objects.filter(
            memberships__user=user, memberships__is_active=True, memberships__role__in=LEADING
        ),
    )


def owned_workspaces(user) -> QuerySet[Workspace]:
    if user is None or not user.is_authenticated:
        return Workspace.objects.none()
    if user.is_superuser:
        return _within(user, Workspace.objects.all())
    return _within(
        user,
        Workspace.objects.filter(
            memberships__user=user, memberships__is_active=True, memberships__role=OWNER
        ),
    )


def member_workspaces(user) -> QuerySet[Workspace]:
    """The workspaces the user may see anything of (every one for a site admin)."""
    if user is None or not user.is_authenticated:
        return Workspace.objects.none()
    if user.is_superuser:
        return _within(user, Workspace.objects.all())
    return _within(
        user, Workspace.objects.filter(memberships__user=user, memberships__is_active=True)
    )


def is_lead(user) -> bool:
    """Lead or owner in at least one workspace: may open the lead-only pages at all (which
    object they may open there is asked per object, see leads)."""
    if user is None or not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    return any(role in LEADING for role in _memberships(user).values())


def title(user) -> str:
    """The user's highest role, as the top bar names it: "owner", "lead" or "reviewer"
    ("admin" for a site admin)."""
    if user is None or not user.is_authenticated:
        return ""
    if user.is_superuser:
        return "admin"
    held = set(_memberships(user).values())
    for role in (OWNER, LEAD):
        if role in held:
            return str(role)
    return "reviewer"


def role_in(user, workspace_id: int) -> str | None:
    """The user's active role in a workspace, None for a non-member."""
    if user is None or not user.is_authenticated:
        return None
    if user.is_superuser:
        return OWNER if _limit(user)[0] in (None, workspace_id) else None
    return _memberships(user).get(workspace_id)


def leads(user, audit_set: AuditSet) -> bool:
    """May lead this set: a lead or owner of the set's workspace."""
    if limited_set_id(user) not in (None, audit_set.pk):
        return False
    return role_in(user, audit_set.workspace_id) in LEADING


def owns(user, workspace: Workspace) -> bool:
    return role_in(user, workspace.pk) == OWNER
