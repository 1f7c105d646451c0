"""Workspace pages: the list of one's workspaces (where a site administrator creates new
ones), an owner's members page (invite, change roles, deactivate), and the page an
invitation link opens."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import UserCreationForm
from django.core.exceptions import PermissionDenied
from django.core.mail import send_mail
from django.db.models import Count, Q
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from audit import roles
from audit.forms import InvitationForm, MemberRoleForm, WorkspaceForm
from audit.models import Invitation, Membership, Workspace
from audit.services import workspaces as services
from audit.views.access import HtmxHttpRequest

OWNER_ONLY = "This page is for workspace owners."


def _get_workspace_for_owner(request: HtmxHttpRequest, slug: str) -> Workspace:
    """A workspace the user owns. Owning none is a 403 (asked before the lookup, so the
    answer does not depend on the workspace existing); another workspace is a 404."""
    if not roles.owned_workspaces(request.user).exists():
        raise PermissionDenied(OWNER_ONLY)
    workspace = roles.owned_workspaces(request.user).filter(slug=slug).first()
    if workspace is None:
        raise Http404("No such workspace.")
    return workspace


@login_required
def workspace_list(request: HtmxHttpRequest) -> HttpResponse:
    """Everyone's workspaces and roles; a site administrator also sees and creates all."""
    admin = roles.is_site_admin(request.user)
    form = WorkspaceForm(request.POST or None) if admin else None
    if request.method == "POST":
        if not admin:
            raise PermissionDenied("Only a site administrator creates workspaces.")
        if form.is_valid():
            try:
                workspace = services.workspace_create(
                    name=form.cleaned_data["name"], by=request.user, owner=request.user
                )
            except services.MembershipError as error:
                form.add_error("name", str(error))
            else:
                messages.success(request, f"Created workspace “{workspace.name}”.")
                return redirect(workspace)
    mine = dict(
        Membership.objects.filter(user=request.user, is_active=True).values_list(
            "workspace_id", "role"
        )
    )
    # Counted over the workspaces' own rows: member_workspaces joins the user's memberships,
    # and counting through that join would count only the user.
    workspaces = Workspace.objects.filter(
        pk__in=roles.member_workspaces(request.user).values("pk")
    ).annotate(
        members=Count("memberships", filter=Q(memberships__is_active=True), distinct=True),
        set_count=Count("sets", distinct=True),
    )
    rows = [
        {
            "workspace": w,
            "role": Membership.Role(mine[w.pk]).label if w.pk in mine else "Site administrator",
            "owns": roles.owns(request.user, w),
            "leads": roles.role_in(request.user, w.pk) in roles.LEADING,
        }
        for w in workspaces.order_by("name")
    ]
    status = 400 if form is not None and form.errors else 200
    return render(request, "audit/workspace_list.html", {"rows": rows, "form": form}, status=status)


@login_required
def workspace_members(request: HtmxHttpRequest, slug: str) -> HttpResponse:
    """Members and pending invitations; posting the form invites someone."""
    workspace = _get_workspace_for_owner(request, slug)
    form = InvitationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        invitation, token = services.invitation_create(
            workspace=workspace,
            email=form.cleaned_data["email"],
            role=form.cleaned_data["role"],
            by=request.user,
        )
        link = request.build_absolute_uri(reverse("audit:invitation-accept", args=[token]))
        send_mail(
            f"Join {workspace.name} on Citeaudit",
            f"{request.user.get_username()} invites you to the workspace “{workspace.name}” "
            f"as {invitation.get_role_display().lower()}.\n\nOpen this link to accept "
            f"(it works once, until {invitation.expires_at:%Y-%m-%d %H:%M} UTC):\n{link}\n",
            None,
            [invitation.email],
        )
        # Shown once: the link is not stored, only its hash. The owner may pass it on
        # themselves where the mail does not arrive.
        messages.success(request, f"Invitation sent to {invitation.email}. Its link: {link}")
        return redirect(workspace)
    members = (
        Membership.objects.filter(workspace=workspace)
        .select_related("user")
        .order_by("-is_active", "user__username")
    )
    pending = Invitation.objects.filter(
        workspace=workspace, accepted_at__isnull=True, revoked_at__isnull=True
    ).order_by("-created_at")
    return render(
        request,
        "audit/workspace_members.html",
        {
            "workspace": workspace,
            "members": [(m, MemberRoleForm(initial={"role": m.role})) for m in members],
            "pending": pending,
            "form": form,
        },
        status=400 if form.errors else 200,
    )


@require_POST
@login_required
def member_update(request: HtmxHttpRequest, slug: str, pk: int) -> HttpResponse:
    """Change a member's role, deactivate or reactivate them (the button pressed says)."""
    workspace = _get_workspace_for_owner(request, slug)
    membership = Membership.objects.filter(workspace=workspace, pk=pk).select_related("user")
    membership = membership.first()
    if membership is None:
        raise Http404("No such member.")
    action = request.POST.get("action")
    name = membership.user.get_username()
    try:
        if action == "deactivate":
            summary = services.member_deactivate(membership=membership, by=request.user)
            messages.success(
                request,
                f"Deactivated {name}: {summary.returned} unsubmitted claims went back to the "
                f"pool; sheets submitted and kept: {summary.kept}.",
            )
        elif action == "reactivate":
            services.member_reactivate(membership=membership, by=request.user)
            messages.success(request, f"{name} is a member again.")
        else:
            form = MemberRoleForm(request.POST)
            if not form.is_valid():
                return HttpResponse("Choose a role.", status=400)
            services.member_role_change(
                membership=membership, role=form.cleaned_data["role"], by=request.user
            )
            messages.success(request, f"{name} is now {membership.get_role_display().lower()}.")
    except services.MembershipError as error:
        messages.error(request, str(error))
    return redirect(workspace)


@require_POST
@login_required
def invitation_revoke(request: HtmxHttpRequest, slug: str, pk: int) -> HttpResponse:
    workspace = _get_workspace_for_owner(request, slug)
    invitation = Invitation.objects.filter(workspace=workspace, pk=pk).first()
    if invitation is None:
        raise Http404("No such invitation.")
    services.invitation_revoke(invitation=invitation, by=request.user)
    messages.success(request, f"Withdrew the invitation to {invitation.email}.")
    return redirect(workspace)


def invitation_accept(request: HtmxHttpRequest, token: str) -> HttpResponse:
    """Open to anyone holding the link: a signed-in person joins with one button; anyone
    else chooses a username and password, which makes their account."""
    invitation = services.invitation_usable(token)
    if invitation is None:
        raise Http404("This invitation link is used, withdrawn or expired.")
    signed_in = request.user.is_authenticated
    data = request.POST if request.method == "POST" else None
    form = None if signed_in else UserCreationForm(data)
    if request.method == "POST" and (signed_in or form.is_valid()):
        try:
            membership = services.invitation_accept(
                token=token,
                user=request.user if signed_in else None,
                username="" if signed_in else form.cleaned_data["username"],
                password="" if signed_in else form.cleaned_data["password1"],
            )
        except services.MembershipError as error:
            messages.error(request, str(error))
        else:
            if not signed_in:
                login(request, membership.user, backend="django.contrib.auth.backends.ModelBackend")
            messages.success(
                request,
                f"You joined “{membership.workspace.name}” as "
                f"{membership.get_role_display().lower()}.",
            )
            return redirect("audit:home")
    status = 400 if form is not None and form.errors else 200
    return render(
        request,
        "audit/invitation_accept.html",
        {"invitation": invitation, "form": form},
        status=status,
    )
