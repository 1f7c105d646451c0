"""Personal API tokens: made (the secret shown once), revoked, and checked on each request."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.utils import timezone

from audit import roles, selectors
from audit.models import ApiToken, AuditSet, Workspace

# Tokens read "cit_<prefix>_<secret>": the prefix finds the row, the secret proves it.
TOKEN_PREFIX = "cit_"
# last_used_at is written at most this often: not a write on every request.
_TOUCH_EVERY = timedelta(minutes=1)


@dataclass(frozen=True)
class TokenRejected(Exception):
    """A token that is malformed, unknown, revoked or expired (the API answers 401)."""

    reason: str

    def __str__(self) -> str:
        return self.reason


class TokenScopeRefused(Exception):
    """A workspace or set a new token may not be limited to, said to its owner as it is."""


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def token_create(
    *,
    user,
    name: str,
    scope: str,
    expires_at: datetime | None = None,
    workspace: Workspace | None = None,
    audit_set: AuditSet | None = None,
) -> tuple[ApiToken, str]:
    """Make a token for the user; returns it with its whole text, which is never stored.

    `workspace` limits it to one workspace the user is a member of, `audit_set` to one set of
    that workspace the user may open (a set alone implies its workspace); TokenScopeRefused
    otherwise. Neither: every workspace of the user's, as they are when it is used.
    """
    if audit_set is not None and workspace is None:
        workspace = audit_set.workspace
    if workspace is not None and not roles.member_workspaces(user).filter(pk=workspace.pk).exists():
        raise TokenScopeRefused(f"You are not a member of the workspace “{workspace.name}”.")
    if audit_set is not None and (
        audit_set.workspace_id != workspace.pk
        or not selectors.sets_visible_to(user=user).filter(pk=audit_set.pk).exists()
    ):
        raise TokenScopeRefused(
            f"The workspace “{workspace.name}” has no set “{audit_set.name}” that you may open."
        )
    prefix = secrets.token_hex(6)
    text = f"{TOKEN_PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
    token = ApiToken.objects.create(
        user=user,
        name=name.strip()[:100] or "token",
        prefix=prefix,
        secret_hash=_digest(text),
        scope=scope,
        expires_at=expires_at,
        workspace=workspace,
        audit_set=audit_set,
    )
    return token, text


def token_revoke(*, token: ApiToken) -> None:
    """Revoke the token; one revoked already (in another tab at the same moment, too) keeps
    the time it was first revoked at."""
    ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())
    token.refresh_from_db(fields=["revoked_at"])


def token_authenticate(*, text: str) -> ApiToken:
    """The active token `text` names, its user loaded; TokenRejected otherwise."""
    head, _, _secret = text.removeprefix(TOKEN_PREFIX).partition("_")
    if not text.startswith(TOKEN_PREFIX) or not head or not _secret:
        raise TokenRejected("The token is malformed: expected cit_<prefix>_<secret>.")
    token = ApiToken.objects.select_related("user").filter(prefix=head).first()
    if token is None or not hmac.compare_digest(token.secret_hash, _digest(text)):
        raise TokenRejected("Unknown token.")
    now = timezone.now()
    if token.revoked_at is not None:
        raise TokenRejected("This token was revoked.")
    if token.expires_at is not None and token.expires_at <= now:
        raise TokenRejected("This token has expired.")
    if not token.user.is_active:
        raise TokenRejected("The token's owner is no longer active.")
    if token.last_used_at is None or now - token.last_used_at > _TOUCH_EVERY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token
