"""Writes on workspaces and their members: creating a workspace, inviting people by a
single-use link, accepting it, changing a member's role, and deactivating a member."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone
from django.utils.text import slugify

from audit import roles
from audit.models import Assignment, AuditSet, AuditSheet, Invitation, Membership, Workspace
from audit.services.derived import claims_changed
from audit.services.locks import audit_set_lock


class MembershipError(Exception):
    """A refused change to a workspace's members, said to the owner as it is."""


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def workspace_create(*, name: str, by: AbstractBaseUser, owner=None) -> Workspace:
    """A new workspace (site administrators only), with `owner` as its first owner."""
    if not roles.is_site_admin(by):
        raise PermissionDenied("Only a site administrator creates workspaces.")
    name = name.strip()
    slug = slugify(name)
    if not name or not slug:
        raise MembershipError("Give the workspace a name with letters or digits.")
    if Workspace.objects.filter(name=name).exists() or Workspace.objects.filter(slug=slug).exists():
        raise MembershipError(f"A workspace named “{name}” exists already.")
    with transaction.atomic():
        workspace = Workspace.objects.create(name=name, slug=slug)
        if owner is not None:
            Membership.objects.create(workspace=workspace, user=owner, role=roles.OWNER)
    return workspace


def invitation_create(
    *, workspace: Workspace, email: str, role: str, by: AbstractBaseUser
) -> tuple[Invitation, str]:
    """An invitation and its token, which is returned once and stored only hashed: the
    link made from it is the only way to accept."""
    if not roles.owns(by, workspace):
        raise PermissionDenied("Only an owner of the workspace invites people.")
    if role not in Membership.Role.values:
        raise MembershipError(f"Unknown role “{role}”.")
    token = secrets.token_urlsafe(32)
    invitation = Invitation.objects.create(
        workspace=workspace,
        email=email.strip(),
        role=role,
        token_hash=token_hash(token),
        invited_by=by,
        expires_at=timezone.now() + timedelta(seconds=settings.INVITATION_MAX_AGE),
    )
    return invitation, token


def invitation_usable(token: str) -> Invitation | None:
    """The invitation the token opens, if it is neither used, revoked nor expired."""
    return (
        Invitation.objects.select_related("workspace")
        .filter(
            token_hash=token_hash(token),
            accepted_at__isnull=True,
            revoked_at__isnull=True,
            expires_at__gt=timezone.now(),
        )
        .first()
    )


def invitation_accept(
    *, token: str, user: AbstractBaseUser | None = None, username: str = "", password: str = ""
) -> Membership:
    """Use an invitation: a signed-in `user` gains the membership; otherwise a new account
    is made with `username` and `password`. The invitation cannot be used again."""
    with transaction.atomic():
        invitation = invitation_usable(token)
        if invitation is None:
            raise MembershipError("This invitation link is used, withdrawn or expired.")
        # Locked so that two tabs accepting at once make one membership, not two.
        invitation = Invitation.objects.select_for_update().get(pk=invitation.pk)
        if invitation.accepted_at is not None:
            raise MembershipError("This invitation link is used, withdrawn or expired.")
        if user is None:
            User = get_user_model()
            if User.objects.filter(username__iexact=username).exists():
                raise MembershipError("This username is taken; choose another.")
            user = User.objects.create_user(
                username=username, email=invitation.email, password=password
            )
        membership, created = Membership.objects.get_or_create(
            workspace=invitation.workspace,
            user=user,
            defaults={"role": invitation.role},
        )
        if not created:
            # Coming back after a deactivation: the invitation's role, active again.
            membership.role, membership.is_active = invitation.role, True
            membership.save(update_fields=["role", "is_active"])
        invitation.accepted_at, invitation.accepted_by = timezone.now(), user
        invitation.save(update_fields=["accepted_at", "accepted_by"])
    return membership


def invitation_revoke(*, invitation: Invitation, by: AbstractBaseUser) -> None:
    if not roles.owns(by, invitation.workspace):
        raise PermissionDenied("Only an owner of the workspace withdraws invitations.")
    Invitation.objects.filter(pk=invitation.pk, accepted_at__isnull=True).update(
        revoked_at=timezone.now()
    )


def _check_owner_left(membership: Membership, *, role: str, active: bool) -> None:
    """A workspace keeps at least one active owner, so someone can still manage it."""
    if membership.role != roles.OWNER or (role == roles.OWNER and active):
        return
    others = Membership.objects.filter(
        workspace=membership.workspace, role=roles.OWNER, is_active=True
    ).exclude(pk=membership.pk)
    if not others.exists():
        raise MembershipError("A workspace needs an owner: make someone else owner first.")


def _owners_lock(membership: Membership) -> None:
    """Lock the member's workspace row and read the membership again, inside the caller's
    transaction: two owners demoting or deactivating each other at the same moment must
    not both see the other as the owner who stays."""
    Workspace.objects.select_for_update(no_key=True).get(pk=membership.workspace_id)
    membership.refresh_from_db()


def member_role_change(*, membership: Membership, role: str, by: AbstractBaseUser) -> Membership:
    if not roles.owns(by, membership.workspace):
        raise PermissionDenied("Only an owner of the workspace changes roles.")
    if role not in Membership.Role.values:
        raise MembershipError(f"Unknown role “{role}”.")
    with transaction.atomic():
        _owners_lock(membership)
        _check_owner_left(membership, role=role, active=membership.is_active)
        membership.role = role
        membership.save(update_fields=["role"])
    return membership


@dataclass(frozen=True)
class DeactivateSummary:
    returned: int  # unsubmitted assignments handed back to the set's pool
    kept: int  # submitted sheets that stay, attributed to the member


def member_deactivate(*, membership: Membership, by: AbstractBaseUser) -> DeactivateSummary:
    """Take a member out of the workspace: they see nothing of it from their next request.

    Their unsubmitted assignments go back to the pool (the claims are one reviewer short
    until a lead opens the set for review again, which fills them from the other
    reviewers); every sheet they submitted stays, counted and attributed to them.
    """
    if not roles.owns(by, membership.workspace):
        raise PermissionDenied("Only an owner of the workspace deactivates members.")
    with transaction.atomic():
        _owners_lock(membership)
        _check_owner_left(membership, role=membership.role, active=False)
        membership.is_active = False
        membership.save(update_fields=["is_active"])
        return member_assignments_return(membership=membership)


def member_assignments_return(*, membership: Membership) -> DeactivateSummary:
    """Hand an inactive member's unsubmitted assignments in the workspace back to the pool
    and take them off its sets' reviewers; their submitted sheets stay. Part of
    member_deactivate, and what the admin runs when a superuser unticks "active" there."""
    user = membership.user
    returned = kept = 0
    with transaction.atomic():
        set_ids = AuditSet.objects.filter(
            workspace=membership.workspace, answers__claims__assignments__reviewer=user
        ).values_list("pk", flat=True)
        for set_id in sorted(set(set_ids)):
            audit_set = audit_set_lock(audit_set_id=set_id)
            submitted = AuditSheet.objects.filter(
                claim=OuterRef("claim"), reviewer=user, status=AuditSheet.Status.SUBMITTED
            )
            mine = Assignment.objects.filter(
                reviewer=user, claim__answer__audit_set=audit_set
            ).annotate(is_submitted=Exists(submitted))
            kept += mine.filter(is_submitted=True).count()
            open_ones = mine.filter(is_submitted=False)
            touched = set(open_ones.values_list("claim_id", flat=True))
            returned += len(touched)
            Assignment.objects.filter(pk__in=open_ones.values("pk")).delete()
            audit_set.reviewers.remove(user)
            claims_changed(audit_set_id=audit_set.pk, claim_ids=touched, reviewer_ids=[user.pk])
    return DeactivateSummary(returned=returned, kept=kept)


def member_reactivate(*, membership: Membership, by: AbstractBaseUser) -> Membership:
    if not roles.owns(by, membership.workspace):
        raise PermissionDenied("Only an owner of the workspace reactivates members.")
    membership.is_active = True
    membership.save(update_fields=["is_active"])
    return membership
