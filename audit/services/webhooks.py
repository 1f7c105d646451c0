"""Webhooks: a lead's URLs on a set, posted a signed JSON body when something happens there.

Events are fired by the services where they happen, after their transaction commits (a
rolled-back adjudication sends nothing). Each delivery is a row and a task on the worker;
a failed attempt queues the next one later, up to WEBHOOK_MAX_ATTEMPTS. A send whose worker
died is taken up again (webhooks_resume_stalled), so a hook's queue never stops for good.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
import time
import uuid
from collections.abc import Iterable
from datetime import timedelta
from http import HTTPStatus
from urllib.parse import urlsplit

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.core.validators import URLValidator
from django.db import transaction
from django.db.models import Q
from django.tasks import task
from django.utils import timezone

from audit import egress
from audit.models import AuditSet, Webhook, WebhookAttempt, WebhookDelivery, Workspace
from audit.roles import LEADING, leads, limited_set_id, role_in

logger = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-Citeaudit-Signature"
DELIVERY_HEADER = "Citeaudit-Delivery"


class WebhookRefused(Exception):
    """A webhook a lead may not register as given (a URL that is not http(s) or goes to an
    address the server may not send to, no events)."""


def webhook_create(
    *,
    url: str,
    events: Iterable[str],
    user,
    audit_set: AuditSet | None = None,
    workspace: Workspace | None = None,
) -> Webhook:
    """Register a URL for some events of a set, or of every set of a workspace (those made
    later included), with a new secret of its own."""
    if (audit_set is None) == (workspace is None):
        raise ValueError("A webhook belongs to a set or to a workspace.")
    if audit_set is not None:
        _must_lead(user, audit_set)
    else:
        _must_lead_workspace(user, workspace)
    url = url.strip()
    not_web = WebhookRefused(
        f"“{url[:200]}” is not a web address: a webhook URL starts with http:// or https://."
    )
    if urlsplit(url).scheme not in ("http", "https"):
        raise not_web
    # The address first: its refusal says why (URLValidator would call 127.1 malformed).
    try:
        egress.check_url(url, egress.Allow.parse(settings.EGRESS_ALLOW))
    except egress.EgressRefused as refusal:
        raise WebhookRefused(str(refusal)) from None
    try:
        URLValidator(schemes=["http", "https"])(url)
    except ValidationError:
        raise not_web from None
    events = sorted(set(events))
    unknown = set(events) - set(Webhook.Event.values)
    if unknown:
        raise WebhookRefused(f"Unknown event: {', '.join(sorted(unknown))}.")
    if not events:
        raise WebhookRefused("Choose at least one event.")
    return Webhook.objects.create(
        audit_set=audit_set,
        workspace=workspace,
        url=url,
        events=events,
        secret=secrets.token_hex(32),
        created_by=user,
    )


def webhook_delete(*, webhook: Webhook, user) -> None:
    """Remove a webhook and its delivery log; retries already queued find nothing to send."""
    _must_lead_hook(user, webhook)
    webhook.delete()


def _must_lead_hook(user, webhook: Webhook) -> None:
    if webhook.audit_set_id is not None:
        _must_lead(user, webhook.audit_set)
    else:
        _must_lead_workspace(user, webhook.workspace)


def _must_lead_workspace(user, workspace: Workspace) -> None:
    # A token limited to one set leads none of its workspace's other sets.
    if limited_set_id(user) is not None or role_in(user, workspace.pk) not in LEADING:
        raise PermissionDenied("Only a lead of the workspace can manage its webhooks.")


def _must_lead(user, audit_set: AuditSet) -> None:
    # Every door (page, API, command) passes through here: none may skip who may act.
    if not leads(user, audit_set):
        raise PermissionDenied("Only a lead of the set's workspace can manage its webhooks.")


def webhooks_listen(*, audit_set_id: int, event: str) -> bool:
    """Whether any webhook of the set listens for the event (so its before and after are
    worth reading)."""
    return any(event in events for events in _hooks(audit_set_id).values())


def webhooks_fire(*, audit_set_id: int, event: str, data: dict) -> None:
    """Send the event to the set's webhooks that listen for it, once the current transaction
    commits (at once outside one)."""
    # Robust: the change is saved by then; a failure to queue is logged, not turned into an
    # error page for a save that succeeded.
    transaction.on_commit(lambda: _deliveries_queue(audit_set_id, event, data), robust=True)


def signature(secret: str, body: bytes) -> str:
    """The value of the signature header: HMAC-SHA256 of the exact body, hex."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def webhook_deliver(*, delivery_id: int) -> None:
    """Make one attempt at a delivery, if it is its hook's next; a failed one queues the next
    try, after a delay that doubles each time, until WEBHOOK_MAX_ATTEMPTS. What the worker's
    task calls.

    A hook's deliveries go out in the order they were made: only the oldest pending one is
    sent, claimed under a lock on the hook's row (SELECT FOR UPDATE on PostgreSQL, the write
    lock SQLite takes for every transaction here), so a second worker finds it claimed and
    sends nothing. Once it is delivered or given up, the next one is queued."""
    webhooks_resume_stalled()
    now = timezone.now()
    with transaction.atomic():
        hook = Webhook.objects.select_for_update().filter(deliveries__pk=delivery_id).first()
        if hook is None:  # its webhook removed
            return
        head = (
            WebhookDelivery.objects.filter(webhook=hook, status=WebhookDelivery.Status.PENDING)
            .order_by("created_at", "pk")
            .first()
        )
        if head is None or head.pk != delivery_id:
            # Delivered already or given up; or an older one still waits: this one is
            # queued again when that one is done.
            return
        if head.claimed_until and head.claimed_until > now:
            return  # another worker is sending it
        head.attempts += 1
        head.claimed_until = now + _claim_length()
        head.save(update_fields=["attempts", "claimed_until"])
    delivery = head
    attempt = delivery.attempts
    started = time.monotonic()
    code, error = _post(hook, delivery, delivery.body.encode())
    delivered = code is not None and 200 <= code < 300
    at = timezone.now()
    WebhookAttempt.objects.create(
        delivery=delivery,
        at=at,
        response_code=code,
        error=error[:500],
        duration_ms=int((time.monotonic() - started) * 1000),
        redelivery=delivery.redelivered_at is not None,
    )
    fields = {
        "response_code": code,
        "error": "" if delivered else error or f"The receiver answered {code}.",
        "last_attempt_at": at,
        "next_attempt_at": None,
        "claimed_until": None,
    }
    if delivered:
        fields["status"] = WebhookDelivery.Status.DELIVERED
    elif attempt >= settings.WEBHOOK_MAX_ATTEMPTS:
        fields["status"] = WebhookDelivery.Status.FAILED
    else:
        delay = settings.WEBHOOK_RETRY_SECONDS * 2 ** (attempt - 1)
        fields["next_attempt_at"] = at + timedelta(seconds=delay)
    WebhookDelivery.objects.filter(pk=delivery.pk).update(**fields)
    if fields["next_attempt_at"] is not None:
        _enqueue(delivery.pk, run_after=fields["next_attempt_at"])
    else:
        _next_queue(hook.pk)


def _claim_length() -> timedelta:
    """How long a worker's claim on a send lasts: the send's deadline, and time to record
    what came back. Past it, the worker is taken for lost (webhooks_resume_stalled)."""
    return timedelta(seconds=settings.WEBHOOK_TIMEOUT_SECONDS + 30)


def webhooks_resume_stalled() -> int:
    """Take up every delivery whose send was claimed by a worker that never finished it
    (killed, or its machine lost: the claim ran out); returns how many.

    Its attempt is recorded as cut off, and the delivery is queued again as if that attempt
    had failed: tried again up to WEBHOOK_MAX_ATTEMPTS, or given up, and the hook's later
    deliveries, which wait for it, go on. Each is taken up once, by whoever clears its run-out
    claim first. Called by every delivery and event, and by the deliveries page and API, so a
    stalled hook moves on when anything next happens or anyone looks.
    """
    now = timezone.now()
    stalled = WebhookDelivery.objects.filter(
        status=WebhookDelivery.Status.PENDING, claimed_until__lt=now
    ).values_list("pk", "webhook_id", "attempts", "claimed_until", "redelivered_at")
    resumed = 0
    for pk, webhook_id, attempt, claimed_until, redelivered_at in stalled[:100]:
        error = (
            f"Attempt {attempt} was cut off: the worker sending it stopped answering (killed, "
            "or its machine lost)."
        )
        gave_up = attempt >= settings.WEBHOOK_MAX_ATTEMPTS
        started = claimed_until - _claim_length()  # when it was claimed
        fields = {
            "claimed_until": None,
            "error": error,
            "response_code": None,
            "last_attempt_at": started,
            "next_attempt_at": None,
        }
        if gave_up:
            fields["status"] = WebhookDelivery.Status.FAILED
        with transaction.atomic():
            # Only while its claim is the run-out one read above: a worker that finished
            # it meanwhile, or another caller that took it up, wins.
            taken = WebhookDelivery.objects.filter(
                pk=pk, status=WebhookDelivery.Status.PENDING, claimed_until=claimed_until
            ).update(**fields)
            if not taken:
                continue
            WebhookAttempt.objects.create(
                delivery_id=pk,
                at=started,
                response_code=None,
                error=error,
                duration_ms=0,
                redelivery=redelivered_at is not None,
            )
            if gave_up:
                _next_queue(webhook_id)
            else:
                _enqueue(pk)
        logger.warning("webhook delivery %s: its worker stopped while sending it", pk)
        resumed += 1
    return resumed


def webhook_redeliver(*, delivery: WebhookDelivery, user) -> WebhookDelivery:
    """Send a delivery again, same id and body, as a new round of attempts; it goes out when
    it is its hook's oldest pending delivery. The page and the API both call this."""
    _must_lead_hook(user, delivery.webhook)
    with transaction.atomic():
        Webhook.objects.select_for_update().filter(pk=delivery.webhook_id).first()
        WebhookDelivery.objects.filter(pk=delivery.pk).update(
            status=WebhookDelivery.Status.PENDING,
            attempts=0,
            next_attempt_at=None,
            redelivered_at=timezone.now(),
        )
        _next_queue(delivery.webhook_id)
    delivery.refresh_from_db()
    return delivery


def _next_queue(webhook_id: int) -> None:
    """Queue the hook's oldest pending delivery, whose turn it now is."""
    head = (
        WebhookDelivery.objects.filter(webhook_id=webhook_id, status=WebhookDelivery.Status.PENDING)
        .order_by("created_at", "pk")
        .values_list("pk", flat=True)
        .first()
    )
    if head is not None:
        _enqueue(head)


def _hooks(audit_set_id: int) -> dict[int, list[str]]:
    """The set's own hooks and its workspace's (read when the event fires, so a set an
    import made a moment ago has them too)."""
    workspace = AuditSet.objects.filter(pk=audit_set_id).values("workspace_id")
    found = Webhook.objects.filter(Q(audit_set_id=audit_set_id) | Q(workspace_id__in=workspace))
    return dict(found.values_list("pk", "events"))


def _deliveries_queue(audit_set_id: int, event: str, data: dict) -> None:
    hooks = [pk for pk, events in _hooks(audit_set_id).items() if event in events]
    if not hooks:
        return
    webhooks_resume_stalled()
    timestamp = timezone.now().isoformat()
    for pk in hooks:
        delivery_id = uuid.uuid4()
        body = json.dumps(
            {
                "event": event,
                "delivery": str(delivery_id),
                "set": audit_set_id,
                "timestamp": timestamp,
                **data,
            },
            sort_keys=True,
        )
        with transaction.atomic():
            WebhookDelivery.objects.create(webhook_id=pk, uuid=delivery_id, event=event, body=body)
            # Its turn only if nothing older of the hook is pending.
            _next_queue(pk)


@task
def deliver_webhook(delivery_id: int) -> None:
    """The worker's task: it only names the delivery's row, written when the event fired."""
    webhook_deliver(delivery_id=delivery_id)


def _enqueue(delivery_id: int, run_after=None) -> None:
    queued = deliver_webhook.using(run_after=run_after) if run_after else deliver_webhook
    transaction.on_commit(lambda: queued.enqueue(delivery_id))


def _post(webhook: Webhook, delivery: WebhookDelivery, body: bytes) -> tuple[int | None, str]:
    """One attempt, through the guard: the address checked again after DNS, no redirect
    (the signed body goes to the registered URL only), WEBHOOK_TIMEOUT_SECONDS for the whole
    delivery, and the receiver's answer not read past its status."""
    try:
        reply = egress.fetch(
            "POST",
            webhook.url,
            allow=egress.Allow.parse(settings.EGRESS_ALLOW),
            time_limit=settings.WEBHOOK_TIMEOUT_SECONDS,
            max_bytes=0,
            body=body,
            headers={
                "Content-Type": "application/json",
                "User-Agent": "Citeaudit-Webhook/1",
                "X-Citeaudit-Event": delivery.event,
                DELIVERY_HEADER: str(delivery.uuid),
                SIGNATURE_HEADER: signature(webhook.secret, body),
            },
        )
    except egress.EgressRefused as refusal:
        return None, f"Refused: {refusal}"[:500]
    except egress.EgressError as failure:
        return None, f"Could not reach it: {failure}"[:500]
    if 200 <= reply.status < 300:
        return reply.status, ""
    # The standard reason, not the receiver's own words.
    try:
        reason = f" {HTTPStatus(reply.status).phrase}"
    except ValueError:
        reason = ""
    return reply.status, f"The receiver answered {reply.status}{reason}."
