"""A write that finds SQLite's one writer held by a long job (an import runs in one
transaction, to stay atomic) is refused with 503 and Retry-After, writes nothing, and goes
through once the job has finished: never a 500, never a lost save."""

import sqlite3

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import OperationalError, connection
from django.http import HttpResponse
from django.urls import reverse

from audit.middleware import BUSY_MESSAGE, RefusalMiddleware
from audit.models import AuditSheet

HTMX = {"HTTP_HX_REQUEST": "true"}


def _middleware():
    return RefusalMiddleware(lambda request: HttpResponse("ok"))


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("path", "htmx", "content_type"),
    [
        ("/claims/1/review/save/", True, "text/html"),
        ("/claims/1/review/", False, "text/html"),
        ("/api/v1/sets/1/imports", False, "application/problem+json"),
    ],
)
def test_a_locked_database_is_a_503_with_retry_after(rf, path, htmx, content_type):
    request = rf.post(path)
    request.htmx = htmx
    request.user = AnonymousUser()

    response = _middleware().process_exception(request, OperationalError("database is locked"))

    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert response["Content-Type"].startswith(content_type)
    assert "database is busy" in response.content.decode()


def test_any_other_database_error_is_left_alone(rf):
    request = rf.post("/claims/1/review/save/")

    assert _middleware().process_exception(request, OperationalError("disk I/O error")) is None
    assert _middleware().process_exception(request, ValueError("database is locked")) is None


@pytest.mark.skipif(
    connection.vendor != "sqlite",
    reason="SQLite only: PostgreSQL has no whole-database write lock for a job to hold",
)
@pytest.mark.django_db(transaction=True)
def test_an_autosave_while_a_job_holds_the_write_lock_is_refused_then_goes_through(
    client_for, opened, reviewer_a, claim
):
    client = client_for(reviewer_a)
    url = reverse("audit:review-save", args=[claim.pk])
    form = {"version": 1, "verification_worthy": "on", "active_seconds": 0, "notes": "draft"}
    # A second connection to the same file takes the write lock and keeps it, as an import
    # job's transaction does; this request's connection gives up after 0.1 s, not 20.
    job = sqlite3.connect(connection.settings_dict["NAME"], isolation_level=None)
    job.execute("BEGIN IMMEDIATE")
    connection.ensure_connection()
    connection.connection.execute("PRAGMA busy_timeout = 100")
    try:
        refused = client.post(url, form, **HTMX)
    finally:
        job.execute("ROLLBACK")
        job.close()

    assert refused.status_code == 503
    assert refused["Retry-After"] == "5"
    assert refused.content.decode() == BUSY_MESSAGE
    assert not AuditSheet.objects.filter(claim=claim, reviewer=reviewer_a).exists()

    again = client.post(url, form, **HTMX)

    assert again.status_code == 200
    assert AuditSheet.objects.get(claim=claim, reviewer=reviewer_a).notes == "draft"
