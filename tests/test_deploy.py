"""Production settings pass Django's deployment checks; login attempts are throttled."""

import os
import subprocess
import sys

import pytest
from django.urls import reverse

from tests.conftest import ROOT


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
