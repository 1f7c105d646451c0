"""A lead tries, in a real browser, to point a judge or a webhook where the server may not
send, or to have a judge send a server setting as its key: each form refuses and says why.
Nothing is sent anywhere: every refusal here comes before any connection."""

import pytest
from playwright.sync_api import expect

from audit.models import Judge, Webhook
from tests.browser.conftest import screenshot, watch_errors
from tests.conftest import refund_set_with_gold

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _judge_form(page, base_url: str, key_variable: str = "") -> None:
    page.fill("input[name=name]", "house")
    page.fill("input[name=base_url]", base_url)
    page.fill("input[name=model]", "fake-1")
    page.fill("input[name=api_key_env]", key_variable)
    page.click("button:has-text('Set up judge')")


@pytest.mark.usefixtures("egress_loopback")
def test_the_judge_form_refuses_a_metadata_url_and_a_server_setting_as_key(
    new_page, live_server, lead
):
    audit_set, _claims = refund_set_with_gold(lead)
    page = new_page(lead)
    errors = watch_errors(page)
    page.goto(f"{live_server.url}/sets/{audit_set.pk}/judges/")

    _judge_form(page, "http://169.254.169.254/latest/v1")

    field = page.locator("input[name=base_url]").locator("xpath=..")
    expect(field).to_contain_text(
        "169.254.169.254 is a link-local address (cloud metadata lives there): the server "
        "sends requests only to public addresses, unless its operator allows the host in "
        "CITEAUDIT_EGRESS_ALLOW."
    )
    screenshot(page, "egress-judge-url-refused")

    # A model server on this machine, which the operator allowed; the key is the server's.
    _judge_form(page, "http://127.0.0.1:9/v1", key_variable="DJANGO_SECRET_KEY")

    field = page.locator("input[name=api_key_env]").locator("xpath=..")
    expect(field).to_contain_text(
        "A judge’s key variable is named CITEAUDIT_JUDGE_KEY_<NAME> (capitals, digits, _), "
        "set by the operator where the worker runs; no other variable can be used."
    )
    screenshot(page, "egress-judge-key-refused")
    assert not Judge.objects.exists()
    assert errors == []


def test_the_webhook_form_refuses_loopback_written_as_a_number(new_page, live_server, lead):
    audit_set, _claims = refund_set_with_gold(lead)
    page = new_page(lead)
    page.goto(f"{live_server.url}/sets/{audit_set.pk}/webhooks/")

    page.fill("input[name=url]", "http://2130706433:5432/hook")
    page.click("button:has-text('Add webhook')")

    expect(page.locator(".webhook-form")).to_contain_text(
        "2130706433 (127.0.0.1) is a loopback address: the server sends requests only to "
        "public addresses, unless its operator allows the host in CITEAUDIT_EGRESS_ALLOW."
    )
    screenshot(page, "egress-webhook-refused")
    assert not Webhook.objects.exists()
