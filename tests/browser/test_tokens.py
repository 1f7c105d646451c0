"""The API tokens page in a real browser: a lead makes a read-write token limited to one
set with the keyboard only, sees its secret once and its scope in the list, and the token
then answers for that set and for no other."""

import json
import urllib.error
import urllib.request

import pytest

from audit.models import ApiToken
from tests.browser.conftest import screenshot, watch_errors
from tests.factories import AuditSetFactory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _api_status(url: str, token: str) -> int:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            json.load(response)
            return response.status
    except urllib.error.HTTPError as refused:
        return refused.code


def test_a_token_limited_to_a_set_is_made_with_the_keyboard_and_shown_with_its_scope(
    new_page, live_server, lead
):
    chosen = AuditSetFactory(name="Refunds nightly")
    other = AuditSetFactory(name="Warranty")
    page = new_page(lead)
    errors = watch_errors(page)
    page.goto(f"{live_server.url}/tokens/")
    assert "No tokens yet." in page.inner_text("#tokens")

    # Keyboard only: focus the name field, then Tab through the form's fields in order.
    page.focus("#id_name")
    page.keyboard.type("CI of the RAG repo")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "id_scope"
    page.select_option("#id_scope", ApiToken.Scope.WRITE)
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "id_workspace"
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.id") == "id_audit_set"
    page.select_option("#id_audit_set", str(chosen.pk))
    page.focus("button:has-text('Create token')")
    page.keyboard.press("Enter")
    page.wait_for_selector("#new-token")

    secret = page.inner_text("code.token-secret").strip()
    assert secret.startswith("cit_")
    row = page.inner_text("#tokens tbody tr")
    assert "CI of the RAG repo" in row
    assert "Read and write" in row
    assert "set Refunds nightly" in row
    assert secret not in row  # the list shows only the prefix
    page.set_viewport_size({"width": 1440, "height": 900})
    screenshot(page, "tokens-1440")
    page.set_viewport_size({"width": 1024, "height": 768})
    screenshot(page, "tokens-1024")

    # The secret is shown once: a reload no longer has it.
    page.goto(f"{live_server.url}/tokens/")
    assert page.query_selector("#new-token") is None
    assert secret not in page.content()

    # The token reaches its set and nothing else: the other set is unknown to it.
    assert _api_status(f"{live_server.url}/api/v1/sets/{chosen.pk}", secret) == 200
    assert _api_status(f"{live_server.url}/api/v1/sets/{other.pk}", secret) == 404
    assert errors == []
