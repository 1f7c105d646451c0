"""A set's webhooks through both doors, the page and the API: each calls the same service,
so both add the same hooks, show the same deliveries and redeliver the same way; both refuse
the same people, and a token limited elsewhere finds nothing."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from audit import services
from audit.models import AuditSet, Webhook, WebhookAttempt, WebhookDelivery, Workspace
from audit.services.webhooks import webhook_deliver
from tests.conftest import api_client
from tests.factories import default_workspace
from tests.test_webhooks import receiver  # noqa: F401  (the loopback receiver)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("egress_loopback")]


def _sent(hook: Webhook, claim: int) -> WebhookDelivery:
    delivery = WebhookDelivery(webhook=hook, event="claim.adjudicated")
    delivery.body = json.dumps({"delivery": str(delivery.uuid), "claim": claim})
    delivery.save()
    webhook_deliver(delivery_id=delivery.pk)
    delivery.refresh_from_db()
    return delivery


def test_a_lead_adds_lists_and_removes_a_hook_and_sees_its_secret_once(
    opened,
    lead,
    receiver,  # noqa: F811
):
    api = api_client(lead)
    made = api.post(
        f"/api/v1/sets/{opened.pk}/webhooks",
        {"url": receiver.url, "events": ["set.reviewed"]},
        content_type="application/json",
    )
    assert made.status_code == 201, made.content
    hook = Webhook.objects.get()
    assert made.json()["secret"] == hook.secret and len(hook.secret) == 64
    listed = api.get(f"/api/v1/sets/{opened.pk}/webhooks")
    assert listed.status_code == 200
    assert [h["url"] for h in listed.json()] == [receiver.url]
    assert hook.secret not in listed.content.decode()
    assert api.delete(f"/api/v1/webhooks/{hook.pk}").status_code == 204
    assert not Webhook.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"url": "ftp://example.org/x", "events": ["set.reviewed"]}, "body.url"),
        ({"url": "http://127.0.0.1:9/x", "events": ["nope"]}, "body.events"),
    ],
)
def test_bad_input_is_a_422_naming_the_field(opened, lead, body, field):
    made = api_client(lead).post(
        f"/api/v1/sets/{opened.pk}/webhooks", body, content_type="application/json"
    )
    assert made.status_code == 422
    assert field in made.json()["detail"]


def test_only_leads_and_only_within_the_token_limit(
    opened,
    lead,
    reviewer_a,
    receiver,  # noqa: F811
):
    hook = Webhook.objects.create(audit_set=opened, url=receiver.url, secret="s", events=["x"])
    delivery = _sent(hook, 1)
    paths = [
        ("get", f"/api/v1/sets/{opened.pk}/webhooks"),
        ("get", f"/api/v1/webhooks/{hook.pk}/deliveries"),
        ("post", f"/api/v1/webhooks/{hook.pk}/deliveries/{delivery.uuid}/redeliver"),
        ("delete", f"/api/v1/webhooks/{hook.pk}"),
    ]
    reviewer = api_client(reviewer_a)
    for method, path in paths:
        assert getattr(reviewer, method)(path).status_code in (403, 404), path

    other = AuditSet.objects.create(workspace=default_workspace(), name="Elsewhere")
    _token, text = services.token_create(user=lead, name="t", scope="write", audit_set=other)
    from django.test import Client

    limited = Client(HTTP_AUTHORIZATION=f"Bearer {text}")
    for method, path in paths:
        assert getattr(limited, method)(path).status_code == 404, path
    assert Webhook.objects.filter(pk=hook.pk).exists()
    assert WebhookAttempt.objects.count() == 1


def test_page_and_api_show_the_same_deliveries_and_redeliver_alike(
    opened,
    lead,
    client_for,
    receiver,  # noqa: F811
):
    hook = Webhook.objects.create(
        audit_set=opened, url=receiver.url, secret="s", events=["claim.adjudicated"]
    )
    first, second = _sent(hook, 1), _sent(hook, 2)
    api = api_client(lead)
    page = client_for(lead)

    shown = page.get(reverse("audit:webhook-deliveries", args=[hook.pk])).content.decode()
    listed = api.get(f"/api/v1/webhooks/{hook.pk}/deliveries").json()
    assert [d["uuid"] for d in listed] == [str(second.uuid), str(first.uuid)]
    assert all(d["uuid"] in shown for d in listed)
    assert listed[1]["attempt_log"][0]["response_code"] == 200

    # One redelivery through each door: the same change, a new attempt, the same id.
    by_page = page.post(reverse("audit:webhook-redeliver", args=[hook.pk, first.uuid]))
    assert by_page.status_code == 302
    webhook_deliver(delivery_id=first.pk)
    by_api = api.post(f"/api/v1/webhooks/{hook.pk}/deliveries/{second.uuid}/redeliver")
    assert by_api.status_code == 202 and by_api.json()["status"] == "pending"
    webhook_deliver(delivery_id=second.pk)

    ids = [headers["Citeaudit-Delivery"] for headers, _ in receiver.received]
    assert ids == [str(first.uuid), str(second.uuid), str(first.uuid), str(second.uuid)]
    listed = api.get(f"/api/v1/webhooks/{hook.pk}/deliveries").json()
    assert [[a["redelivery"] for a in d["attempt_log"]] for d in listed] == [
        [False, True],
        [False, True],
    ]
    missing = "00000000-0000-0000-0000-000000000000"
    assert api.post(f"/api/v1/webhooks/{hook.pk}/deliveries/{missing}/redeliver").status_code == 404


# --------------------------------------------------------------------------- workspace hooks


def test_a_hook_belongs_to_a_set_or_a_workspace_never_both_nor_neither(opened):
    from django.db import IntegrityError, transaction

    for owner in ({"audit_set": opened, "workspace": opened.workspace}, {}):
        with pytest.raises(IntegrityError), transaction.atomic():
            Webhook.objects.create(url="http://127.0.0.1/x", secret="s", events=["x"], **owner)


def test_a_workspace_hook_fires_for_a_set_made_after_it(
    lead,
    client_for,
    receiver,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    workspace = default_workspace()
    page = client_for(lead)
    listed = page.get(reverse("audit:workspace-list")).content.decode()
    assert reverse("audit:workspace-webhooks", args=[workspace.slug]) in listed
    added = page.post(
        reverse("audit:workspace-webhooks", args=[workspace.slug]),
        {"url": receiver.url, "events": ["set.reviewed"]},
    )
    assert added.status_code == 200
    hook = Webhook.objects.get()
    assert (hook.workspace, hook.audit_set) == (workspace, None)
    # Its secret shows on the answer to its creation, and never again.
    assert hook.secret in added.content.decode()
    again = page.get(reverse("audit:workspace-webhooks", args=[workspace.slug])).content.decode()
    assert hook.secret not in again

    later = AuditSet.objects.create(workspace=workspace, name="Made later")
    elsewhere = AuditSet.objects.create(
        workspace=Workspace.objects.create(name="Other", slug="other"), name="Elsewhere"
    )
    with django_capture_on_commit_callbacks(execute=True):
        services.webhooks_fire(audit_set_id=later.pk, event="set.reviewed", data={})
        services.webhooks_fire(audit_set_id=elsewhere.pk, event="set.reviewed", data={})
    delivery = WebhookDelivery.objects.get()
    assert delivery.webhook == hook and json.loads(delivery.body)["set"] == later.pk
    webhook_deliver(delivery_id=delivery.pk)
    assert receiver.received[0][0]["Citeaudit-Delivery"] == str(delivery.uuid)
    shown = page.get(reverse("audit:webhook-deliveries", args=[hook.pk])).content.decode()
    assert str(delivery.uuid) in shown


def test_workspace_hooks_through_the_api_for_its_leads_only(
    opened,
    lead,
    reviewer_a,
    receiver,  # noqa: F811
):
    slug = opened.workspace.slug
    made = api_client(lead).post(
        f"/api/v1/workspaces/{slug}/webhooks",
        {"url": receiver.url, "events": ["set.reviewed"]},
        content_type="application/json",
    )
    assert made.status_code == 201, made.content
    assert (made.json()["workspace"], made.json()["set"]) == (slug, None)
    hook = Webhook.objects.get()
    assert made.json()["secret"] == hook.secret
    listed = api_client(lead).get(f"/api/v1/workspaces/{slug}/webhooks").json()
    assert [h["id"] for h in listed] == [hook.pk] and "secret" not in listed[0]

    _token, text = services.token_create(user=lead, name="t", scope="write", audit_set=opened)
    from django.test import Client

    for client in (Client(HTTP_AUTHORIZATION=f"Bearer {text}"), api_client(reviewer_a)):
        assert client.get(f"/api/v1/workspaces/{slug}/webhooks").status_code in (403, 404)
        assert client.delete(f"/api/v1/webhooks/{hook.pk}").status_code in (403, 404)
        assert client.get(f"/api/v1/webhooks/{hook.pk}/deliveries").status_code in (403, 404)
    # The set-limited token is a lead's: it is refused as outside its limit, not as a reviewer.
    limited = Client(HTTP_AUTHORIZATION=f"Bearer {text}")
    assert limited.get(f"/api/v1/workspaces/{slug}/webhooks").status_code == 404
    assert Webhook.objects.filter(pk=hook.pk).exists()
