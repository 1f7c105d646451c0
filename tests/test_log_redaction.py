"""Invitation and password-reset links carry their token in the address. A real gunicorn
started by `manage.py serve` writes access-log lines (request line and Referer) and Django
writes its own log lines for them with the token masked."""

from __future__ import annotations

import http.client
import logging
import signal
import socket
import subprocess
import sys
import time

import pytest
from django.contrib.auth.tokens import default_token_generator
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from audit.log_redaction import MASK, TokenFilter, redact
from audit.services import workspaces
from tests.conftest import ROOT, _worker_env
from tests.factories import UserFactory, default_workspace


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _get(port: int, path: str, **headers: str) -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("GET", path, headers={"Host": "127.0.0.1", **headers})
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def _wait_until_listening(server: subprocess.Popen, port: int) -> None:
    # Collecting static files and booting a worker take a few seconds on a loaded machine.
    for _ in range(1200):
        assert server.poll() is None, "serve exited before listening"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    pytest.fail("gunicorn did not listen within two minutes")


@pytest.fixture
def gunicorn(transactional_db, tmp_path):
    """`manage.py serve` on a free loopback port, on this test's database; its stdout (the
    access log) and stderr (gunicorn's and Django's logs) go to files."""
    port = _free_port()
    out, err = tmp_path / "stdout.log", tmp_path / "stderr.log"
    with out.open("w") as stdout, err.open("w") as stderr:
        server = subprocess.Popen(
            [
                sys.executable,
                "manage.py",
                "serve",
                "--dev",
                "--no-migrate",
                f"--bind=127.0.0.1:{port}",
                "--workers=1",
                "--threads=1",
            ],
            cwd=ROOT,
            env={**_worker_env(), "LOG_LEVEL": "INFO"},
            stdout=stdout,
            stderr=stderr,
        )
    try:
        _wait_until_listening(server, port)
        yield port, lambda: out.read_text() + err.read_text()
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=30)


def test_gunicorn_and_django_logs_mask_invitation_and_reset_tokens(gunicorn):
    port, logs = gunicorn
    owner = UserFactory(username="olga", role="owner")
    person = UserFactory(username="pat", email="pat@example.org")
    _invitation, token = workspaces.invitation_create(
        workspace=default_workspace(), email="new@example.org", role="reviewer", by=owner
    )
    uid = urlsafe_base64_encode(force_bytes(person.pk))
    reset_token = default_token_generator.make_token(person)
    unknown = "unknown-invitation-token-5521"

    answers = [
        _get(port, f"/invitations/{token}/"),
        _get(port, f"/password/reset/{uid}/{reset_token}/"),
        _get(port, "/static/audit/citeaudit.css", Referer=f"http://127.0.0.1/invitations/{token}/"),
        _get(port, f"/invitations/{unknown}/"),
    ]
    # The log lines are written as each request ends; the last one may trail its answer.
    for _ in range(100):
        if logs().count("/invitations/") >= 4:
            break
        time.sleep(0.1)
    text = logs()

    assert answers == [200, 302, 200, 404]
    for secret in (token, reset_token, unknown):
        assert secret not in text
    assert f'"GET /invitations/{MASK}/ HTTP/1.1" 200' in text
    assert f'"GET /password/reset/{MASK}/{MASK}/ HTTP/1.1" 302' in text
    assert f"http://127.0.0.1/invitations/{MASK}/" in text
    # Django's own warning for the unknown link, from the app's log handler.
    assert f"Not Found: /invitations/{MASK}/" in text


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("GET /invitations/abc-DEF_1/ HTTP/1.1", f"GET /invitations/{MASK}/ HTTP/1.1"),
        ("/password/reset/MQ/cz1-abc/", f"/password/reset/{MASK}/{MASK}/"),
        ("/password/reset/MQ/set-password/", f"/password/reset/{MASK}/set-password/"),
        ("/password/reset/sent/ and /password/reset/done/", None),
        ("/workspaces/main/invitations/12/revoke/", None),
    ],
)
def test_redact_masks_only_tokens(line, expected):
    assert redact(line) == (line if expected is None else expected)


def test_the_filter_masks_a_formatted_record():
    record = logging.LogRecord(
        "django.request", logging.WARNING, __file__, 1, "Not Found: %s", ("/invitations/s3/",), None
    )

    assert TokenFilter().filter(record) is True
    assert record.getMessage() == f"Not Found: /invitations/{MASK}/"


def test_every_handler_that_django_logs_reach_masks_tokens():
    """Django's own DEBUG console handler would write a second, unmasked copy: each handler
    a record of Django's, the runserver's or axes' reaches carries the filter."""
    reached = []
    for name in ("django.request", "django.server", "django.security.csrf", "axes"):
        logger: logging.Logger | None = logging.getLogger(name)
        while logger is not None:
            reached += [h for h in logger.handlers if not type(h).__module__.startswith("_pytest")]
            logger = logger.parent if logger.propagate else None

    assert reached
    assert all(any(isinstance(f, TokenFilter) for f in h.filters) for h in reached)
