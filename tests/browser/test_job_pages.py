"""A lead asks for the export of a large set, follows the job's page until it offers the
download, and registers a webhook whose delivery log shows on the set's page."""

from __future__ import annotations

import pytest
from django.utils import timezone

from audit import services
from audit.models import Job, Webhook, WebhookDelivery
from tests.browser.conftest import screenshot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OVERFLOW = "document.documentElement.scrollWidth - window.innerWidth"


def test_a_large_export_is_prepared_by_a_job_then_downloaded(
    new_page, live_server, handmade, lead, settings
):
    settings.WEB_DIRECT_MAX_ANSWERS = 1
    page = new_page(lead)
    page.goto(f"{live_server.url}{handmade.get_absolute_url()}")

    page.click("text=Claims table")
    page.click("text=Prepare the export")
    page.wait_for_selector("text=Queued.")
    # As a worker would; the page polls until it offers the file.
    services.job_run(job_id=Job.objects.get().pk)
    page.wait_for_selector("a:has-text('Download')")

    with page.expect_download() as download:
        page.click("a:has-text('Download')")
    assert download.value.suggested_filename == "calibration-csv.csv"
    for width in (1440, 1024):
        page.set_viewport_size({"width": width, "height": 900})
        screenshot(page, f"export-job-{width}")
        assert page.evaluate(OVERFLOW) <= 0


def test_a_lead_adds_a_webhook_and_reads_its_delivery_log(new_page, live_server, handmade, lead):
    page = new_page(lead)
    page.goto(f"{live_server.url}/sets/{handmade.pk}/webhooks/")

    page.fill("input[name=url]", "ftp://example.org/hook")
    page.click("text=Add webhook")
    assert page.locator(".errorlist").inner_text() == (
        "“ftp://example.org/hook” is not a web address: a webhook URL starts with "
        "http:// or https://."
    )
    page.fill("input[name=url]", "https://ci.example.org/hooks/citeaudit")
    page.uncheck("input[value='import.finished']")
    page.click("text=Add webhook")
    page.wait_for_selector("text=Webhook added.")
    hook = Webhook.objects.get()
    assert hook.events == ["claim.adjudicated", "decision.changed", "set.reviewed"]
    now = timezone.now()
    for status, attempts, code, error, next_at in (
        ("delivered", 1, 200, "", None),
        ("pending", 2, 500, "The receiver answered 500 Internal Server Error.", now),
        ("failed", 5, None, "Could not reach it: [Errno 111] Connection refused", None),
    ):
        WebhookDelivery.objects.create(
            webhook=hook,
            event="set.reviewed",
            body="{}",
            status=status,
            attempts=attempts,
            response_code=code,
            error=error,
            last_attempt_at=now,
            next_attempt_at=next_at,
        )
    page.reload()

    assert page.locator(".secret").inner_text() == hook.secret
    assert page.locator("#hooks tbody tr").count() == 3
    for width in (1440, 1024):
        page.set_viewport_size({"width": width, "height": 900})
        screenshot(page, f"webhooks-{width}")
        assert page.evaluate(OVERFLOW) <= 0
