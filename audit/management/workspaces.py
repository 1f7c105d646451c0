"""The `--workspace` option shared by the commands that name a set: which workspace a new
set is created in, and which one a set name is looked up in."""

from __future__ import annotations

from django.core.management.base import CommandError

from audit.models import AuditSet, Membership, Workspace


def add_workspace_argument(parser) -> None:
    parser.add_argument(
        "--workspace",
        default=None,
        help="the workspace's slug (may be left out when the site has only one workspace)",
    )


def command_workspace(slug: str | None) -> Workspace:
    """The named workspace, or the only one. A site without any gets a "Default" one, so a
    fresh install can import before anyone has created a workspace."""
    if slug:
        workspace = Workspace.objects.filter(slug=slug).first()
        if workspace is None:
            raise CommandError(f"no workspace with the slug “{slug}”")
        return workspace
    slugs = list(Workspace.objects.order_by("slug").values_list("slug", flat=True)[:20])
    if len(slugs) > 1:
        raise CommandError(f"name the workspace with --workspace (one of: {', '.join(slugs)})")
    if not slugs:
        return Workspace.objects.create(name="Default", slug=Workspace.DEFAULT_SLUG)
    return Workspace.objects.get(slug=slugs[0])


def set_by_name(
    name: str, slug: str | None, missing: str = "no audit set named “{name}”"
) -> AuditSet:
    """The set of that name: in the named workspace, or the only one of that name."""
    sets = AuditSet.objects.filter(name=name)
    if slug:
        sets = sets.filter(workspace__slug=slug)
    found = list(sets[:2])
    if not found:
        raise CommandError(missing.format(name=name))
    if len(found) > 1:
        raise CommandError(f"several workspaces have a set named “{name}”: add --workspace")
    return found[0]


def grant(user, role: str, workspace: Workspace | None = None) -> Membership:
    """Make the user a member with that role (owner, lead, reviewer): in the named
    workspace, or the site's only one. For scripts that build their own data."""
    workspace = workspace or command_workspace(None)
    membership, _ = Membership.objects.update_or_create(
        workspace=workspace, user=user, defaults={"role": role, "is_active": True}
    )
    return membership
