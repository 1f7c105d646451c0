"""Every page of the foundation renders in a real browser, with no console errors or CSP
violations, and a lead can import a file through the upload form."""

import pytest

from audit.models import Answer, AuditSet
from tests.browser.conftest import screenshot, watch_errors
from tests.conftest import FIXTURES

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_lead_imports_a_file_and_reads_an_answer(new_page, lead, live_server, start_worker):
    page = new_page(lead)
    errors = watch_errors(page)

    page.goto(f"{live_server.url}/import/")
    page.fill("input[name=new_set_name]", "Browser import")
    page.set_input_files("input[name=file]", str(FIXTURES / "demo" / "handmade.jsonl"))
    page.click("form.stack button[type=submit]")
    # The job waits for a worker; its page follows it by itself once one starts.
    page.wait_for_selector("#job-status >> text=Queued.")
    screenshot(page, "import-queued")
    start_worker()
    page.wait_for_selector(".ok-box", timeout=60_000)
    summary = page.inner_text(".ok-box")
    screenshot(page, "import-summary")

    assert summary.split("\n")[1:] == [
        "Answers",
        "7",
        "Already present",
        "0",
        "Claims",
        "18",
        "Uncited claims",
        "2",
        "Cited-unknown markers",
        "2",
        "Claims not located",
        "0",
    ]
    audit_set = AuditSet.objects.get(name="Browser import")

    page.goto(f"{live_server.url}{audit_set.get_absolute_url()}")
    page.wait_for_selector("table.table")
    screenshot(page, "set-detail")
    rows = page.locator("#results tbody tr").count()
    assert rows == 7

    answer = Answer.objects.get(audit_set=audit_set, external_id="hm-5-a")
    page.goto(f"{live_server.url}{answer.get_absolute_url()}")
    screenshot(page, "answer-detail")
    assert page.locator(".answer-text .marker .unknown").inner_text() == "4?"
    page.click(".answer-text .marker a")
    assert page.evaluate("location.hash") == "#passage-2"

    page.goto(f"{live_server.url}/sets/")
    screenshot(page, "set-list")
    page.goto(f"{live_server.url}/sets/{audit_set.pk}/labels/")
    screenshot(page, "label-distribution")
    assert errors == []
