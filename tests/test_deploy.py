"""Production settings pass Django's deployment checks; login attempts are throttled."""

import json
import os
import re
import subprocess
import sys

import pytest
from django.test import Client
from django.urls import reverse

from audit.models import AuditSet
from tests.conftest import ROOT
from tests.factories import UserFactory


def test_check_deploy_is_clean_with_production_settings():
    # The browser tests' async-safety opt-out is for the test process only, not production.
    env = {
        **{k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"},
        "DJANGO_PRODUCTION": "1",
        "DJANGO_SECRET_KEY": "x" * 20 + "a-long-random-production-secret-key-for-the-check",
        "DJANGO_ALLOWED_HOSTS": "citeaudit.example.com",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_outside_production_a_missing_collected_static_folder_is_not_warned_about(tmp_path):
    # The demo serves the app's static folders directly: its first lines should not say that
    # a folder only `collectstatic` makes is missing. (A process of its own: the suite's
    # configuration silences the warning in tests.)
    script = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE'] = 'audit.settings'; "
        "django.setup(); from django.conf import settings; "
        f"settings.STATIC_ROOT = {str(tmp_path / 'never-collected')!r}; "
        "from whitenoise.middleware import WhiteNoiseMiddleware; "
        "WhiteNoiseMiddleware(lambda request: None); print('started')"
    )
    env = {**os.environ, "DJANGO_DEBUG": "0"}
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True
    )

    assert (result.stdout, result.stderr) == ("started\n", "")


@pytest.mark.django_db
def test_login_is_locked_after_five_wrong_passwords(client, reviewer_a):
    for _ in range(5):
        client.post(reverse("login"), {"username": "rev_a", "password": "wrong"})

    response = client.post(reverse("login"), {"username": "rev_a", "password": "pw-for-tests"})

    assert response.status_code == 429
    assert "Too many failed logins" in response.content.decode()


@pytest.mark.django_db
def test_responses_carry_a_csp_without_unsafe_inline_scripts(client_for, lead):
    response = client_for(lead).get(reverse("audit:set-list"))

    policy = response.headers["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "unsafe-inline" not in policy


def _serve(*args: str, **env: str) -> subprocess.CompletedProcess:
    # Only the refusal is under test: a serve that went on would exec gunicorn and block
    # until the timeout, which fails the test too.
    clean = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("DJANGO_") or k == "DJANGO_SETTINGS_MODULE"
    }
    return subprocess.run(
        [sys.executable, "manage.py", "serve", "--no-migrate", *args],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_serve_refuses_the_development_settings_without_the_dev_flag():
    result = _serve("--bind=127.0.0.1:0")

    assert result.returncode == 1
    assert result.stderr.strip() == (
        "CommandError: Refusing to serve: DEBUG is on and the secret key is the public "
        "development key. For production set DJANGO_PRODUCTION=1 and DJANGO_SECRET_KEY (and "
        "DJANGO_DEBUG unset); to try it out on this machine, pass --dev."
    )


def test_serve_refuses_the_development_secret_key_even_with_debug_off():
    result = _serve("--bind=127.0.0.1:0", DJANGO_DEBUG="0")

    assert result.returncode == 1
    assert result.stderr.strip() == (
        "CommandError: Refusing to serve: the secret key is the public development key. For "
        "production set DJANGO_PRODUCTION=1 and DJANGO_SECRET_KEY (and DJANGO_DEBUG unset); "
        "to try it out on this machine, pass --dev."
    )


def test_serve_refuses_debug_in_production():
    result = _serve(
        "--bind=127.0.0.1:0",
        DJANGO_PRODUCTION="1",
        DJANGO_DEBUG="1",
        DJANGO_SECRET_KEY="x" * 50,
    )

    assert result.returncode == 1
    assert result.stderr.strip().startswith("CommandError: Refusing to serve: DEBUG is on.")


def test_serve_with_the_dev_flag_still_refuses_an_address_beyond_loopback():
    result = _serve("--dev", "--bind=0.0.0.0:8000")

    assert result.returncode == 1
    assert result.stderr.strip() == (
        "CommandError: Refusing to serve on 0.0.0.0:8000 with --dev (DEBUG is on and the "
        "secret key is the public development key): the development settings are only for "
        "a loopback address such as 127.0.0.1:8000."
    )


def _browser_of(user) -> tuple[Client, str]:
    """A logged-in browser that checks CSRF, and the token its set form carries."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    body = client.get(reverse("audit:set-create")).content.decode()
    headers = re.search(r"<body hx-headers='([^']*)'>", body).group(1)
    return client, json.loads(headers)["x-csrftoken"]


@pytest.mark.django_db
def test_a_csrf_token_from_one_users_session_is_refused_in_another_users_session():
    alice, bob = UserFactory(role="lead"), UserFactory(role="lead")
    alice_browser, alice_token = _browser_of(alice)
    bob_browser, bob_token = _browser_of(bob)
    # Everything Alice's browser holds for CSRF, cookie included where there is one.
    if "csrftoken" in alice_browser.cookies:
        bob_browser.cookies["csrftoken"] = alice_browser.cookies["csrftoken"].value

    refused = bob_browser.post(
        reverse("audit:set-create"), {"name": "Forged"}, headers={"x-csrftoken": alice_token}
    )
    accepted = bob_browser.post(
        reverse("audit:set-create"), {"name": "Own"}, headers={"x-csrftoken": bob_token}
    )

    assert (refused.status_code, accepted.status_code) == (403, 302)
    assert list(AuditSet.objects.values_list("name", flat=True)) == ["Own"]


def test_the_procfile_lists_the_web_and_worker_processes_the_operations_guide_names():
    procfile = (ROOT / "Procfile").read_text().splitlines()
    guide = (ROOT / "docs" / "operations.md").read_text()

    assert [line.split(":")[0] for line in procfile] == ["web", "worker"]
    assert procfile[1] == "worker: python manage.py db_worker --interval 0.2"
    for line in procfile:
        name, command = line.split(": ", 1)
        assert f"{name}:{' ' * (7 - len(name))}{command}" in guide
