"""Error answers as RFC 9457 problem details: the body every refused API request gets.

A problem is a JSON object served as `application/problem+json` with:
- `type`: a URI naming the kind of problem. Each refusal the API gives on purpose has its
  own stable URI, `https://citeaudit.example/problems/<slug>`, so a client can branch on it
  without parsing `detail`; the URI identifies, it need not resolve (RFC 9457 §3.1.1). A
  status with no meaning of our own beyond HTTP's gets `about:blank`, whose title is then
  the HTTP reason phrase, as the RFC asks (§4.2.1).
- `title`: a short summary of the type, the same for every problem of that type.
- `status`: the HTTP status code, repeated for clients that lose the status line.
- `detail`: this occurrence in words, naming the field or object; kept first-class because
  clients read it.
- `errors`: always present, empty but for invalid input: one `{"field", "message"}` per
  invalid field, `field` being the dotted place of the value (`body.payload.name`).

Plain Python, so the middleware, the API and the tests build the same shape.
"""

from __future__ import annotations

from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

CONTENT_TYPE = "application/problem+json"
TYPE_BASE = "https://citeaudit.example/problems/"


@dataclass(frozen=True)
class Kind:
    slug: str
    title: str


# Every status the API refuses with on purpose, and what it means here.
KINDS: dict[int, Kind] = {
    400: Kind("bad-request", "The request is malformed"),
    401: Kind("unauthenticated", "Authentication required"),
    403: Kind("forbidden", "Not allowed"),
    404: Kind("not-found", "Not found"),
    405: Kind("method-not-allowed", "Method not allowed"),
    409: Kind("conflict", "Conflicts with the current state"),
    413: Kind("too-large", "Request body too large"),
    415: Kind("unsupported-media-type", "Unsupported media type"),
    422: Kind("invalid", "Invalid request"),
    429: Kind("rate-limited", "Too many requests"),
    503: Kind("unavailable", "Temporarily unavailable; try again"),
}


def problem_type(status: int) -> str:
    kind = KINDS.get(status)
    return TYPE_BASE + kind.slug if kind else "about:blank"


def problem_title(status: int) -> str:
    kind = KINDS.get(status)
    if kind:
        return kind.title
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def field_error(field: str, message: str) -> dict[str, str]:
    return {"field": field, "message": message}


def problem(
    status: int, detail: str, *, errors: list[dict[str, str]] | None = None, **extra: Any
) -> dict[str, Any]:
    """The problem-details body for a refusal with `status`; `extra` members (RFC 9457
    extensions) are added after the standard ones."""
    body: dict[str, Any] = {
        "type": problem_type(status),
        "title": problem_title(status),
        "status": status,
        "detail": detail or problem_title(status),
    }
    body["errors"] = errors or []
    body.update(extra)
    return body


def place(loc: list | tuple) -> str:
    """A pydantic error location as one dotted field name."""
    return ".".join(str(part) for part in loc)


class FieldInvalid(ValueError):
    """Raised by a service or endpoint for a value it refuses: the API answers 422 naming
    `field` (dotted, as `body.name`) in `detail` and in `errors`."""

    def __init__(self, field: str, message: str) -> None:
        self.field = field
        self.message = message
        super().__init__(f"{field}: {message}")
