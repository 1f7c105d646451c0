"""The API's webhooks of a set: list, add and remove them, list a hook's deliveries with
their attempts, and send one again, each through the same service or selector as the pages.
Leads only; a hook's secret is in the answer that creates it and nowhere after."""

from __future__ import annotations

from datetime import datetime
from uuid import UUID

from django.http import Http404, HttpRequest
from ninja import Query, Schema
from ninja.responses import Status
from pydantic import Field

from audit import selectors, services
from audit.api.base import api, refusals
from audit.models import Webhook, WebhookDelivery
from audit.problems import FieldInvalid
from audit.views import access

# Deliveries per page of GET /webhooks/{id}/deliveries.
DELIVERIES_LIMIT = 100
# An offset past any list a hook could hold; a larger one would overflow the database.
MAX_OFFSET = 2**31 - 1


class WebhookOut(Schema):
    id: int
    # One of the two: a set's hook, or a workspace's (fired for every set of it).
    set: int | None
    workspace: str | None
    url: str
    events: list[str]
    created_at: datetime


class WebhookCreated(WebhookOut):
    # Shown this once: the receiver needs it to check signatures.
    secret: str


class WebhookIn(Schema):
    url: str = Field(min_length=1, max_length=500)
    events: list[str] = Field(min_length=1, max_length=20)


class AttemptOut(Schema):
    at: datetime
    response_code: int | None
    error: str
    duration_ms: int
    redelivery: bool


class DeliveryOut(Schema):
    uuid: UUID
    event: str
    status: str
    attempts: int
    response_code: int | None
    created_at: datetime
    last_attempt_at: datetime | None
    next_attempt_at: datetime | None
    attempt_log: list[AttemptOut]


def _hook_out(hook: Webhook) -> dict:
    return {
        "id": hook.pk,
        "set": hook.audit_set_id,
        "workspace": hook.workspace.slug if hook.workspace_id else None,
        "url": hook.url,
        "events": hook.events,
        "created_at": hook.created_at,
    }


def _lead_hook(request: HttpRequest, webhook_id: int) -> Webhook:
    webhook = access.get_webhook_for_lead(request, webhook_id)
    if webhook.audit_set_id is not None:
        access.get_set_for_lead(request, webhook.audit_set_id)
    return webhook


def _delivery_out(delivery: WebhookDelivery) -> dict:
    return {
        "uuid": delivery.uuid,
        "event": delivery.event,
        "status": delivery.status,
        "attempts": getattr(delivery, "tries", None) or delivery.attempt_log.count(),
        "response_code": delivery.response_code,
        "created_at": delivery.created_at,
        "last_attempt_at": delivery.last_attempt_at,
        "next_attempt_at": delivery.next_attempt_at,
        "attempt_log": [
            {
                "at": a.at,
                "response_code": a.response_code,
                "error": a.error,
                "duration_ms": a.duration_ms,
                "redelivery": a.redelivery,
            }
            for a in delivery.attempt_log.all()
        ],
    }


@api.get(
    "/sets/{set_id}/webhooks",
    response={200: list[WebhookOut], **refusals(403, 404, 422)},
    tags=["webhooks"],
    url_name="webhooks",
)
def webhooks(request: HttpRequest, set_id: int) -> list[dict]:
    """The set's webhooks (leads only), without their secrets."""
    audit_set = access.get_set_for_lead(request, set_id)
    return [_hook_out(hook) for hook in audit_set.webhooks.all()]


@api.post(
    "/sets/{set_id}/webhooks",
    response={201: WebhookCreated, **refusals(403, 404, 422)},
    tags=["webhooks"],
    url_name="webhook_create",
)
def webhook_create(request: HttpRequest, set_id: int, payload: WebhookIn) -> Status:
    """Add a webhook; the answer holds its signing secret, shown this once."""
    return _created(request, payload, audit_set=access.get_set_for_lead(request, set_id))


@api.get(
    "/workspaces/{slug}/webhooks",
    response={200: list[WebhookOut], **refusals(403, 404)},
    tags=["webhooks"],
    url_name="workspace_webhooks",
)
def workspace_webhooks(request: HttpRequest, slug: str) -> list[dict]:
    """The workspace's own webhooks (its leads only), without their secrets."""
    workspace = access.get_workspace_for_lead(request, slug)
    return [_hook_out(hook) for hook in workspace.webhooks.all()]


@api.post(
    "/workspaces/{slug}/webhooks",
    response={201: WebhookCreated, **refusals(403, 404, 422)},
    tags=["webhooks"],
    url_name="workspace_webhook_create",
)
def workspace_webhook_create(request: HttpRequest, slug: str, payload: WebhookIn) -> Status:
    """Add a webhook fired for every set of the workspace, those made later included; the
    answer holds its signing secret, shown this once."""
    return _created(request, payload, workspace=access.get_workspace_for_lead(request, slug))


def _created(request: HttpRequest, payload: WebhookIn, **owner) -> Status:
    try:
        hook = services.webhook_create(
            url=payload.url, events=payload.events, user=request.user, **owner
        )
    except services.WebhookRefused as refusal:
        field = "events" if str(refusal).startswith(("Unknown event", "Choose")) else "url"
        raise FieldInvalid(f"body.{field}", str(refusal)) from None
    return Status(201, {**_hook_out(hook), "secret": hook.secret})


@api.delete(
    "/webhooks/{webhook_id}",
    response={204: None, **refusals(403, 404, 422)},
    tags=["webhooks"],
    url_name="webhook_delete",
)
def webhook_delete(request: HttpRequest, webhook_id: int) -> Status:
    """Remove a webhook and its deliveries."""
    services.webhook_delete(webhook=_lead_hook(request, webhook_id), user=request.user)
    return Status(204, None)


@api.get(
    "/webhooks/{webhook_id}/deliveries",
    response={200: list[DeliveryOut], **refusals(403, 404, 422)},
    tags=["webhooks"],
    url_name="webhook_deliveries",
)
def deliveries(
    request: HttpRequest, webhook_id: int, offset: int = Query(0, ge=0, le=MAX_OFFSET)
) -> list[dict]:
    """A hook's deliveries, newest first, each with every attempt; 100 from `offset`."""
    webhook = _lead_hook(request, webhook_id)
    services.webhooks_resume_stalled()
    rows = selectors.webhook_deliveries(webhook=webhook, attempts=True)
    return [_delivery_out(d) for d in rows[offset : offset + DELIVERIES_LIMIT]]


@api.post(
    "/webhooks/{webhook_id}/deliveries/{delivery}/redeliver",
    response={202: DeliveryOut, **refusals(403, 404, 422)},
    tags=["webhooks"],
    url_name="webhook_redeliver",
)
def redeliver(request: HttpRequest, webhook_id: int, delivery: UUID) -> Status:
    """Send a delivery again, with the same id and body: queued, then sent in its turn."""
    webhook = _lead_hook(request, webhook_id)
    found = WebhookDelivery.objects.filter(webhook=webhook, uuid=delivery).first()
    if found is None:
        raise Http404("No such delivery.")
    return Status(202, _delivery_out(services.webhook_redeliver(delivery=found, user=request.user)))
