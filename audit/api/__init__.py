"""The versioned HTTP API (/api/v1/), built on django-ninja: `api` holds every endpoint, one
module per area (sets, jobs, claims, results, lead, judges, suggestions and their
comparison, webhooks) registering its own on import."""

from __future__ import annotations

from audit.api import (  # noqa: F401 - registers the endpoints on `api`
    claims,
    jobs,
    judges,
    lead,
    results,
    sets,
    suggestion_report,
    suggestions,
    webhooks,
)
from audit.api.base import api

__all__ = ["api"]
