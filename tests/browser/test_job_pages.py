"""A lead asks for the export of a large set, follows the job's page until it offers the
download, and registers a webhook whose delivery log shows on the set's page."""

from __future__ import annotations

import pytest
from django.utils import timezone

from audit import services
from audit.models import Job, Webhook, WebhookDelivery
from tests.browser.conftest import screenshot
from tests.conftest import queue_import
from tests.formats.helpers import jsonl, native_line
from tests.test_jobs_end import _part_way, matcher_workers

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OVERFLOW = "document.documentElement.scrollWidth - window.innerWidth"


@pytest.fixture
def worker(transactional_db, tmp_path):
    """`manage.py db_worker` processes that fork matcher processes, as in production."""
    with matcher_workers(tmp_path) as start:
        yield start


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
    # Its secret is shown on this page, the answer to its creation, and never again.
    assert page.locator(".secret").inner_text() == hook.secret
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
    page.goto(page.url)

    assert page.locator(".secret").count() == 0
    assert page.locator("#hooks tbody tr").count() == 3
    for width in (1440, 1024):
        page.set_viewport_size({"width": width, "height": 900})
        screenshot(page, f"webhooks-{width}")
        assert page.evaluate(OVERFLOW) <= 0


def _queue_import(lead, lines: int) -> Job:
    data = jsonl(*(native_line(question_id=f"q{i}", answer_id=f"a{i}") for i in range(lines)))
    return queue_import(lead, data, name="nightly.jsonl", set_name="Nightly")


def test_the_page_of_a_job_whose_worker_was_killed_says_so_and_runs_it_again(
    new_page, live_server, lead, settings, worker
):
    settings.JOB_STALE_SECONDS = 3
    # Signed in first: on SQLite the running import holds the write lock a login needs.
    page = new_page(lead)
    job = _queue_import(lead, 3000)
    killed = worker()
    _part_way(job, 3000, killed)
    killed.kill()
    killed.wait(timeout=30)

    page.goto(f"{live_server.url}{job.get_absolute_url()}")

    status = page.locator("#job-status")
    status.get_by_text("Nothing was imported.").wait_for(timeout=30_000)
    assert "stopped answering: no heartbeat for over 3 s (killed, or its machine lost)" in (
        status.inner_text()
    )
    assert "Nothing of it was kept; running it again starts from the beginning." in (
        status.inner_text()
    )
    screenshot(page, "job-killed-worker")
    page.click("button:has-text('Run again')")
    page.wait_for_selector("text=Queued again: it runs from the start.")
    rerun = worker("--batch")
    assert rerun.wait(timeout=300) == 0, rerun.log.read_text()
    page.wait_for_selector("#job-status >> text=Imported into", timeout=30_000)


def test_a_lead_cancels_a_running_job_and_sees_it_cancelling_then_cancelled(
    new_page, live_server, lead, worker
):
    page = new_page(lead)
    job = _queue_import(lead, 20_000)
    # With matcher processes: the pool is ended while they are busy.
    running = worker()
    page.goto(f"{live_server.url}{job.get_absolute_url()}")
    page.wait_for_selector("#job-status >> text=Running.", timeout=60_000)
    _part_way(job, 20_000, running)

    page.click("#job-status button:has-text('Cancel')")

    page.wait_for_selector("#job-status >> text=Cancelling…", timeout=5_000)
    assert page.locator("#job-status button:has-text('Cancel')").count() == 0
    screenshot(page, "job-cancelling")
    page.wait_for_selector("#job-status >> text=Cancelled.", timeout=30_000)
    job.refresh_from_db()
    assert job.status == "cancelled"
    assert running.poll() is None  # the worker goes on to its next job
