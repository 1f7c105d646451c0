"""The client's exceptions: one hierarchy under CiteauditError, one subclass per status a
caller acts on, read from the API's JSON error body or an RFC 9457 problem-details body."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import httpx2


class CiteauditError(Exception):
    """Any failure of a request. The server answers RFC 9457 problem details, read into
    `status` (None when no answer came), `type` (a URI naming the kind of problem, stable to
    branch on), `title` (its summary), `detail` (this occurrence, naming the field or
    object) and `errors` (the field errors of a 422, each with `field` and `message`)."""

    def __init__(
        self,
        detail: str,
        *,
        status: int | None = None,
        errors: list[dict[str, Any]] | None = None,
        title: str = "",
        type: str = "",  # noqa: A002 - the problem-details member's name
    ) -> None:
        self.status = status
        self.detail = detail
        self.errors = errors or []
        self.title = title
        self.type = type
        super().__init__(f"HTTP {status}: {detail}" if status is not None else detail)


class AuthError(CiteauditError):
    """401: no token, or an unknown, expired or revoked one."""


class Forbidden(CiteauditError):
    """403: the token's owner may not do this, or a read-only token tried to write."""


class NotFound(CiteauditError):
    """404: no such object, or one the token's owner may not see."""


class Conflict(CiteauditError):
    """409: a name already taken, or a job in a state that refuses the action."""


class TooLarge(CiteauditError):
    """413: a file over the server's size limit."""


class Invalid(CiteauditError):
    """422: invalid input; for a file, `detail` names the file, line and field."""


class ConnectionFailed(CiteauditError):
    """No answer from the server (refused, reset, timed out) after every retry."""


class WaitTimeout(CiteauditError, TimeoutError):
    """job_wait gave up before the job ended; the job goes on on the server."""


BY_STATUS: dict[int, type[CiteauditError]] = {
    401: AuthError,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    413: TooLarge,
    422: Invalid,
}


def error_from_response(response: httpx2.Response) -> CiteauditError:
    """The exception for an error answer. The body is read here, so a streamed response
    must be read (or closed) by the caller afterwards as usual."""
    status = response.status_code
    body: Any = None
    with contextlib.suppress(ValueError):
        body = json.loads(response.read() or b"null")
    if isinstance(body, dict):
        detail = body.get("detail")
        title = body.get("title")
        errors = body.get("errors")
        message = (
            detail
            if isinstance(detail, str) and detail
            else (title if isinstance(title, str) and title else response.reason_phrase)
        )
        return BY_STATUS.get(status, CiteauditError)(
            message,
            status=status,
            errors=[e for e in errors if isinstance(e, dict)] if isinstance(errors, list) else [],
            title=title if isinstance(title, str) else "",
            type=str(body.get("type") or ""),
        )
    text = response.text.strip()[:500] if body is None else ""
    return BY_STATUS.get(status, CiteauditError)(
        text or response.reason_phrase or "error", status=status
    )
