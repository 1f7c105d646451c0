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
from tests.conftest import api_client
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


# ------------------------------------------------------- a worker lost in the middle of a send


def _cut_off(delivery: WebhookDelivery, attempts: int = 1) -> None:
    """As a worker leaves a delivery when it dies sending it: claimed, counted, and never
    finished; here its claim has already run out."""
    WebhookDelivery.objects.filter(pk=delivery.pk).update(
        attempts=attempts, claimed_until=timezone.now() - timezone.timedelta(seconds=1)
    )


def test_a_send_whose_worker_died_is_recorded_cut_off_and_sent_again_and_the_hook_goes_on(
    opened,
    lead,
    receiver,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    hook = _hook(opened, receiver)
    first, second = _deliveries(hook, 1, 2)
    _cut_off(first)

    with django_capture_on_commit_callbacks() as queued:
        listed = api_client(lead).get(f"/api/v1/webhooks/{hook.pk}/deliveries")
    assert listed.status_code == 200
    first.refresh_from_db()
    assert (first.status, first.attempts, first.claimed_until) == ("pending", 1, None)
    assert first.error.startswith("Attempt 1 was cut off: the worker sending it stopped")
    shown = {d["uuid"]: d for d in listed.json()}[str(first.uuid)]
    assert shown["attempts"] == 1
    assert [a["error"][:21] for a in shown["attempt_log"]] == ["Attempt 1 was cut off"]
    assert len(queued) == 1  # sent again, once
    assert services.webhooks_resume_stalled() == 0  # taken up once only

    webhook_deliver(delivery_id=first.pk)
    webhook_deliver(delivery_id=second.pk)
    assert _claims(receiver) == [1, 2]
    first.refresh_from_db()
    assert (first.status, first.attempts) == ("delivered", 2)
    assert WebhookAttempt.objects.filter(delivery=first).count() == 2


def test_the_next_delivery_s_task_takes_up_a_send_whose_worker_died(
    opened,
    receiver,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    hook = _hook(opened, receiver)
    first, second = _deliveries(hook, 1, 2)
    _cut_off(first)

    with django_capture_on_commit_callbacks() as queued:
        webhook_deliver(delivery_id=second.pk)  # still waits for the first, now sent again
    assert _claims(receiver) == [] and len(queued) == 1

    webhook_deliver(delivery_id=first.pk)
    webhook_deliver(delivery_id=second.pk)
    assert _claims(receiver) == [1, 2]


def test_a_cut_off_last_attempt_gives_the_delivery_up_and_the_next_one_is_sent(
    opened,
    receiver,  # noqa: F811
    settings,
    django_capture_on_commit_callbacks,
):
    hook = _hook(opened, receiver)
    first, second = _deliveries(hook, 1, 2)
    _cut_off(first, attempts=settings.WEBHOOK_MAX_ATTEMPTS)

    with django_capture_on_commit_callbacks(execute=False) as queued:
        assert services.webhooks_resume_stalled() == 1
    first.refresh_from_db()
    assert first.status == "failed" and "cut off" in first.error
    assert len(queued) == 1  # the next delivery's turn

    webhook_deliver(delivery_id=second.pk)
    assert _claims(receiver) == [2]


def test_a_send_still_within_its_claim_is_left_to_its_worker(opened, receiver):  # noqa: F811
    hook = _hook(opened, receiver)
    (first,) = _deliveries(hook, 1)
    WebhookDelivery.objects.filter(pk=first.pk).update(
        attempts=1, claimed_until=timezone.now() + timezone.timedelta(seconds=60)
    )

    assert services.webhooks_resume_stalled() == 0
    first.refresh_from_db()
    assert first.claimed_until is not None and first.error == ""
    assert not WebhookAttempt.objects.filter(delivery=first).exists()
