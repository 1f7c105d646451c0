"""A typed Python client for Citeaudit's HTTP API (/api/v1/): push runs, follow their jobs,
pull claims, sheets and gold, push verdicts, and gate a release on its decision."""

from __future__ import annotations

from citeaudit_client.client import (
    ERROR,
    FAIL,
    PASS,
    PROVISIONAL,
    Client,
    __version__,
    describe,
)
from citeaudit_client.errors import (
    AuthError,
    CiteauditError,
    Conflict,
    ConnectionFailed,
    Forbidden,
    Invalid,
    NotFound,
    TooLarge,
    WaitTimeout,
)
from citeaudit_client.jobs import Job

__all__ = [
    "ERROR",
    "FAIL",
    "PASS",
    "PROVISIONAL",
    "AuthError",
    "CiteauditError",
    "Client",
    "Conflict",
    "ConnectionFailed",
    "Forbidden",
    "Invalid",
    "Job",
    "NotFound",
    "TooLarge",
    "WaitTimeout",
    "__version__",
    "describe",
]
