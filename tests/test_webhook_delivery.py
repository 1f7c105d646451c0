"""Webhook deliveries carry an id of their own, go out in order per hook (a later one waits
while an earlier one is retried or being sent by another worker), record every attempt, and
can be sent again by a lead. Deliveries go only to a server this test starts on 127.0.0.1."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import PermissionDenied
from django.utils import timezone

from audit import services
from audit.models import WebhookAttempt, WebhookDelivery
from audit.services.webhooks import webhook_deliver, webhook_redeliver
from tests.test_webhooks import _hook, receiver  # noqa: F401  (the loopback receiver)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("egress_loopback")]


def _deliveries(hook, *claims: int) -> list[WebhookDelivery]:
    made = []
    for claim in claims:
        delivery = WebhookDelivery(webhook=hook, event="claim.adjudicated")
        delivery.body = json.dumps({"delivery": str(delivery.uuid), "claim": claim})
        delivery.save()
        made.append(delivery)
    return made


def _claims(receiver) -> list[int]:  # noqa: F811
    return [body["claim"] for body in receiver.bodies()]


def test_a_later_delivery_waits_while_an_earlier_one_is_retried(opened, receiver):  # noqa: F811
    hook = _hook(opened, receiver)
    first, second = _deliveries(hook, 1, 2)
    receiver.answers = [500]

    webhook_deliver(delivery_id=first.pk)  # 500: it will be tried again
    webhook_deliver(delivery_id=second.pk)  # its turn has not come
    assert _claims(receiver) == [1]
    second.refresh_from_db()
    assert (second.status, second.attempts) == ("pending", 0)

    webhook_deliver(delivery_id=first.pk)
    webhook_deliver(delivery_id=second.pk)
    assert _claims(receiver) == [1, 1, 2]
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {"delivered"}


def test_a_delivery_another_worker_is_sending_is_not_sent_twice_nor_overtaken(
    opened,
    receiver,  # noqa: F811
):
    hook = _hook(opened, receiver)
    first, second = _deliveries(hook, 1, 2)
    # A second worker's view: the first delivery is claimed by a worker still sending it.
    WebhookDelivery.objects.filter(pk=first.pk).update(
        claimed_until=timezone.now() + timezone.timedelta(seconds=60)
    )
    webhook_deliver(delivery_id=first.pk)
    webhook_deliver(delivery_id=second.pk)
    assert receiver.received == []

    # The claim lapses (that worker died): the first goes, then the second.
    WebhookDelivery.objects.filter(pk=first.pk).update(claimed_until=None)
    webhook_deliver(delivery_id=second.pk)
    assert receiver.received == []
    webhook_deliver(delivery_id=first.pk)
    webhook_deliver(delivery_id=second.pk)
    assert _claims(receiver) == [1, 2]


def test_every_attempt_is_recorded_and_a_redelivery_keeps_the_id(
    opened,
    receiver,  # noqa: F811
    lead,
    reviewer_a,
):
    hook = _hook(opened, receiver)
    (delivery,) = _deliveries(hook, 1)
    receiver.answers = [503, 200, 200]
    webhook_deliver(delivery_id=delivery.pk)
    webhook_deliver(delivery_id=delivery.pk)

    with pytest.raises(PermissionDenied):
        webhook_redeliver(delivery=delivery, user=reviewer_a)
    redone = webhook_redeliver(delivery=delivery, user=lead)
    assert (redone.status, redone.attempts) == ("pending", 0)
    webhook_deliver(delivery_id=delivery.pk)

    ids = [headers["Citeaudit-Delivery"] for headers, _ in receiver.received]
    assert ids == [str(delivery.uuid)] * 3
    assert {body["delivery"] for body in receiver.bodies()} == {str(delivery.uuid)}
    attempts = list(WebhookAttempt.objects.filter(delivery=delivery))
    assert [(a.response_code, a.redelivery) for a in attempts] == [
        (503, False),
        (200, False),
        (200, True),
    ]
    assert "503" in attempts[0].error and attempts[1].error == ""
    assert all(a.duration_ms < 30_000 for a in attempts)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("delivered", 1)


def test_a_fired_event_names_its_delivery_in_header_and_body(
    opened,
    receiver,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    _hook(opened, receiver, "set.reviewed")
    with django_capture_on_commit_callbacks(execute=True):
        services.webhooks_fire(audit_set_id=opened.pk, event="set.reviewed", data={})
    delivery = WebhookDelivery.objects.get()
    with django_capture_on_commit_callbacks(execute=True):
        webhook_deliver(delivery_id=delivery.pk)
    ((headers, _),) = receiver.received
    assert headers["Citeaudit-Delivery"] == str(delivery.uuid)
    assert receiver.bodies()[0]["delivery"] == str(delivery.uuid)


@pytest.mark.django_db(transaction=True)
def test_two_workers_racing_over_every_delivery_send_them_in_order_once_each(
    receiver,  # noqa: F811
):
    from concurrent.futures import ThreadPoolExecutor

    from django.db import connection

    from audit.models import AuditSet
    from tests.factories import default_workspace

    audit_set = AuditSet.objects.create(workspace=default_workspace(), name="Raced")
    hook = _hook(audit_set, receiver)
    deliveries = _deliveries(hook, *range(6))
    receiver.answers = [200, 500, 200, 200, 500, 200, 200, 200]

    def worker(order: list[WebhookDelivery]) -> None:
        try:
            # Each worker goes over every delivery, again and again, until none is pending.
            for _ in range(100):
                for delivery in order:
                    webhook_deliver(delivery_id=delivery.pk)
                if not WebhookDelivery.objects.filter(status="pending").exists():
                    return
        finally:
            connection.close()

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(worker, [deliveries, deliveries[::-1]]))

    sent = _claims(receiver)
    assert sent == sorted(sent)  # never out of order, retries included
    assert sorted(set(sent)) == list(range(6))
    assert len(sent) == 6 + 2  # each once, plus the two retries after a 500
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {"delivered"}
