"""A real database outage while a reviewer works: the server answers the autosave 503 with
Retry-After, the review page keeps the draft and says so, and sends it again once the
database is back."""

from __future__ import annotations

import pytest
from django.db import connection

from audit.models import AuditSheet, Claim
from tests.browser.conftest import saved
from tests.factories import closed_loopback_port

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="PostgreSQL only: the live server's SQLite connection is a file already open, "
    "which no outage can take away without taking the test's database with it",
)
def test_an_autosave_during_an_outage_is_kept_and_sent_again(
    new_page, live_server, opened, reviewer_a
):
    claim = Claim.objects.get(answer__external_id="hm-1-a", order=0)
    page = new_page(reviewer_a)
    page.goto(f"{live_server.url}/claims/{claim.pk}/review/")
    answers: list[tuple[int, str | None]] = []
    page.on(
        "response",
        lambda r: (
            answers.append((r.status, r.headers.get("retry-after")))
            if "/review/save/" in r.url
            else None
        ),
    )
    # The outage: the live server's connection is cut, and reconnecting reaches a loopback
    # port nothing listens on. The settings dict is shared by every thread's connection.
    settings_dict = connection.settings_dict
    saved_port, saved_host = settings_dict["PORT"], settings_dict["HOST"]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    settings_dict.update(HOST="127.0.0.1", PORT=str(closed_loopback_port()))
    try:
        page.keyboard.press("3")
        page.wait_for_selector("#save-status[data-state=error]")
        message = page.inner_text("#save-status .save-message")
    finally:
        settings_dict.update(HOST=saved_host, PORT=saved_port)
    saved(page)

    assert message.startswith("Not saved yet: the database is busy or cannot be reached.")
    assert answers[0] == (503, "10")
    assert answers[-1][0] == 200
    assert AuditSheet.objects.get(claim=claim, reviewer=reviewer_a).judgment == "not_supported"
