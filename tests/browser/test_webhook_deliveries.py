"""A lead opens a hook's deliveries page and sends one again with the keyboard alone: the
delivery goes out a second time with the same id."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from audit.models import Webhook, WebhookAttempt, WebhookDelivery
from audit.services.webhooks import webhook_deliver
from tests.browser.conftest import screenshot
from tests.test_webhooks import receiver  # noqa: F401  (the loopback receiver)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("egress_loopback"),
]

OVERFLOW = "document.documentElement.scrollWidth - window.innerWidth"
# Where a reviewer of the layout wants the pictures, when it asks for them.
SHOTS = os.environ.get("CITEAUDIT_SHOTS")


def test_a_lead_redelivers_from_the_deliveries_page_with_the_keyboard(
    new_page,
    live_server,
    handmade,
    lead,
    receiver,  # noqa: F811
):
    hook = Webhook.objects.create(
        audit_set=handmade, url=receiver.url, secret="s", events=["claim.adjudicated"]
    )
    delivery = WebhookDelivery(webhook=hook, event="claim.adjudicated")
    delivery.body = json.dumps({"delivery": str(delivery.uuid), "claim": 1})
    delivery.save()
    webhook_deliver(delivery_id=delivery.pk)

    page = new_page(lead)
    page.goto(f"{live_server.url}/sets/{handmade.pk}/webhooks/")
    page.click("text=all, with redelivery")
    page.wait_for_selector(f"text={delivery.uuid}")
    for width in (1440, 1024):
        page.set_viewport_size({"width": width, "height": 900})
        shot = screenshot(page, f"webhook-deliveries-{width}")
        if SHOTS:
            Path(SHOTS, shot.name).write_bytes(shot.read_bytes())
        assert page.evaluate(OVERFLOW) <= 0

    # Tab until the Redeliver button has the focus, then press Enter.
    for _ in range(60):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.textContent.trim()") == "Redeliver":
            break
    else:
        pytest.fail("Redeliver cannot be reached with Tab")
    page.keyboard.press("Enter")
    page.wait_for_selector("text=queued to be sent again")

    delivery.refresh_from_db()
    assert delivery.status == "pending"
    webhook_deliver(delivery_id=delivery.pk)
    ids = [headers["Citeaudit-Delivery"] for headers, _ in receiver.received]
    assert ids == [str(delivery.uuid)] * 2
    assert WebhookAttempt.objects.filter(delivery=delivery, redelivery=True).count() == 1


def test_the_workspace_webhooks_page_lists_its_hooks_and_fits(
    new_page,
    live_server,
    handmade,
    lead,
    receiver,  # noqa: F811
):
    page = new_page(lead)
    page.goto(f"{live_server.url}/workspaces/")
    page.click("text=Webhooks")
    page.fill("input[name=url]", receiver.url)
    page.check("input[value='set.reviewed']")
    page.click("button:has-text('Add webhook')")
    page.wait_for_selector("text=Webhook added")
    hook = Webhook.objects.get()
    assert (hook.workspace_id, hook.audit_set_id) == (handmade.workspace_id, None)
    for width in (1440, 1024):
        page.set_viewport_size({"width": width, "height": 900})
        shot = screenshot(page, f"workspace-webhooks-{width}")
        if SHOTS:
            Path(SHOTS, shot.name).write_bytes(shot.read_bytes())
        assert page.evaluate(OVERFLOW) <= 0
