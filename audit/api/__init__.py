"""The versioned HTTP API (/api/v1/), built on django-ninja: `api` holds every endpoint."""

from __future__ import annotations

from audit.api import endpoints  # noqa: F401 - registers the endpoints on `api`
from audit.api.base import api

__all__ = ["api"]
