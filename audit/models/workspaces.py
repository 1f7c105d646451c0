"""Workspaces and tokens: teams, their members and invitations, and API tokens."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse


class Workspace(models.Model):
    """A team's sets and the people who may see them; nothing crosses between workspaces."""

    DEFAULT_SLUG = "default"

    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=100, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("audit:workspace-members", args=[self.slug])


class Membership(models.Model):
    """One person's role in one workspace. Deactivated members keep their row (and the
    sheets they submitted stay attributed to them) but see nothing of the workspace."""

    class Role(models.TextChoices):
        OWNER = "owner", "Owner"
        LEAD = "lead", "Lead"
        REVIEWER = "reviewer", "Reviewer"

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.REVIEWER)
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["workspace", "user__username"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "user"], name="one_membership_per_user")
        ]

    def __str__(self) -> str:
        return f"{self.user} · {self.get_role_display()} in {self.workspace}"

    @property
    def leads(self) -> bool:
        return self.role in (self.Role.OWNER, self.Role.LEAD)


class Invitation(models.Model):
    """A single-use, expiring link to join a workspace with a role. Only the token's
    SHA-256 is stored: the link itself exists in the message sent to the invitee."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="invitations")
    email = models.EmailField()
    role = models.CharField(
        max_length=10, choices=Membership.Role.choices, default=Membership.Role.REVIEWER
    )
    token_hash = models.CharField(max_length=64, unique=True)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.email} to {self.workspace} as {self.role}"


class ApiToken(models.Model):
    """A personal token for the HTTP API (/api/v1/): requests made with it act as its owner,
    within the token's workspace and set when it names them (audit.roles.limit_to_token).

    Only a hash of the secret is stored; the secret is shown once, when the token is made.
    The prefix (the token's first characters, not secret) finds the row in one lookup.
    """

    class Scope(models.TextChoices):
        READ = "read", "Read only"
        WRITE = "write", "Read and write"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, unique=True)
    # sha256 of the whole token: the secret has 256 random bits, so a fast hash is enough
    # (a slow password hasher protects guessable passwords, which this is not).
    secret_hash = models.CharField(max_length=64)
    scope = models.CharField(max_length=5, choices=Scope.choices, default=Scope.READ)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Null: every workspace of the owner (tokens made before tokens had a scope). Deleting
    # the workspace or set deletes the token: it never outlives its limit to become wider.
    workspace = models.ForeignKey(
        Workspace, null=True, blank=True, on_delete=models.CASCADE, related_name="api_tokens"
    )
    # Null: the whole workspace. A set of the token's workspace (services.token_create).
    audit_set = models.ForeignKey(
        "AuditSet", null=True, blank=True, on_delete=models.CASCADE, related_name="api_tokens"
    )

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(audit_set__isnull=True) | models.Q(workspace__isnull=False),
                name="api_token_set_within_workspace",
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    def reach(self) -> str:
        """Where the token works, as its list says: "workspace X · set Y"."""
        if self.workspace_id is None:
            return "all your workspaces"
        if self.audit_set_id is None:
            return f"workspace {self.workspace.name}"
        return f"workspace {self.workspace.name} · set {self.audit_set.name}"

    def is_active(self, now) -> bool:
        return self.revoked_at is None and (self.expires_at is None or self.expires_at > now)
