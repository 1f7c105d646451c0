"""Requests the app refuses before any view can fail on them: a NUL character anywhere in
the address, query or body is a 400 that says so (never a 500), and a database that cannot
be reached is a 503 with Retry-After, so the review page's autosave keeps the draft and
tries again."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse

from audit.views.errors import OUTAGE_MESSAGE, OUTAGE_RETRY_AFTER
from tests.conftest import api_client, log_in
from tests.factories import closed_loopback_port

HTMX = {"HTTP_HX_REQUEST": "true"}


def _api_gets(set_id: int) -> list[str]:
    """The API reads that take free text in their query (a name or a system filter)."""
    return [
        "/api/v1/sets?name=a%00b",
        f"/api/v1/sets/{set_id}/answers?system=%00",
        f"/api/v1/sets/{set_id}/claims?system=sys%00",
        f"/api/v1/sets/{set_id}/agreement?system=%00",
        f"/api/v1/sets/{set_id}/decision?system=%00",
    ]


@pytest.mark.django_db
def test_a_nul_in_an_api_query_is_a_400_that_says_so(opened, lead):
    client = api_client(lead)

    responses = [client.get(url) for url in _api_gets(opened.pk)]

    assert [r.status_code for r in responses] == [400] * 5
    for response in responses:
        assert response["Content-Type"] == "application/problem+json"
        assert "NUL character" in response.json()["detail"]
        assert "query" in response.json()["detail"]


@pytest.mark.django_db
def test_a_nul_in_an_api_json_body_is_a_400(opened, lead):
    client = api_client(lead)

    created = client.post(
        "/api/v1/sets",
        json.dumps({"workspace": opened.workspace.slug, "name": "Nightly\u0000"}),
        content_type="application/json",
    )
    patched = client.patch(
        f"/api/v1/sets/{opened.pk}/settings",
        json.dumps({"name": "x\u0000y"}),
        content_type="application/json",
    )
    untyped = client.generic(
        "PATCH",
        f"/api/v1/sets/{opened.pk}/settings",
        json.dumps({"description": "x\u0000y"}),
        content_type="text/plain",
    )
    # The escape written as text (a backslash, then u0000) is no NUL and goes through.
    escaped = client.patch(
        f"/api/v1/sets/{opened.pk}/settings",
        json.dumps({"name": "backslash \\u0000 kept"}),
        content_type="application/json",
    )

    assert (created.status_code, patched.status_code, untyped.status_code) == (400, 400, 400)
    assert "JSON body" in created.json()["detail"]
    assert escaped.status_code == 200
    opened.refresh_from_db()
    assert opened.name == "backslash \\u0000 kept"


@pytest.mark.django_db
def test_a_nul_in_a_page_query_or_form_is_a_400_page(client, opened, lead):
    log_in(client, lead)

    listed = client.get(reverse("audit:set-claims", args=[opened.pk]), {"text": "a\x00"})
    searched = client.get(reverse("audit:set-list"), {"name": "\x00"})
    fragment = client.get(reverse("audit:set-claims", args=[opened.pk]), {"text": "\x00"}, **HTMX)
    login = Client().post(reverse("login"), {"username": "lead\x00", "password": "x"})

    assert [r.status_code for r in (listed, searched, fragment, login)] == [400] * 4
    assert "NUL character" in listed.content.decode()
    assert "<html" in listed.content.decode()
    assert fragment.content.decode().startswith("The request holds a NUL character")
    assert "form" in login.content.decode()


@pytest.fixture
def database_down(transactional_db, tmp_path):
    """The default connection pointed at a database that is not there: a file in a missing
    folder on SQLite, a loopback port nothing listens on for PostgreSQL."""
    saved = dict(connection.settings_dict)

    def down() -> None:
        connection.close()
        if connection.vendor == "sqlite":
            connection.settings_dict["NAME"] = str(tmp_path / "gone" / "db.sqlite3")
        else:
            connection.settings_dict.update(HOST="127.0.0.1", PORT=str(closed_loopback_port()))

    yield down
    connection.close()
    connection.settings_dict.clear()
    connection.settings_dict.update(saved)


def test_a_database_outage_is_a_503_with_retry_after(database_down, opened, reviewer_a, claim):
    browser = log_in(Client(raise_request_exception=False), reviewer_a)
    api = api_client(reviewer_a, scope="read")
    api.raise_request_exception = False
    save = reverse("audit:review-save", args=[claim.pk])
    database_down()

    autosave = browser.post(save, {"version": 1, "notes": "kept in the page"}, **HTMX)
    page = browser.get(reverse("audit:home"))
    listed = api.get("/api/v1/sets")

    for response in (autosave, page, listed):
        assert response.status_code == 503
        assert response["Retry-After"] == str(OUTAGE_RETRY_AFTER)
    assert autosave.content.decode() == OUTAGE_MESSAGE
    assert "The database cannot be reached" in page.content.decode()
    assert listed["Content-Type"] == "application/problem+json"
    assert (listed.json()["status"], listed.json()["detail"]) == (503, OUTAGE_MESSAGE)


@pytest.mark.django_db
def test_any_other_server_error_stays_a_500():
    """The 503 is for the database only: a bug is still a 500, without Retry-After."""
    from audit.views import errors

    request = Client().get("/").wsgi_request
    try:
        raise ValueError("a bug")
    except ValueError:
        response = errors.server_error(request)

    assert response.status_code == 500
    assert not response.has_header("Retry-After")
