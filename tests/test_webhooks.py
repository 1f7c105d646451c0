"""Webhooks: a lead registers http(s) URLs for a set's events; each event is posted, signed
with the hook's secret, after its transaction commits, and tried again later when the
receiver fails. Deliveries go only to a server this test starts on 127.0.0.1."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import transaction
from django.urls import reverse
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from audit import selectors, services
from audit.models import Answer, AuditSet, Claim, Webhook, WebhookDelivery
from audit.services.webhooks import webhook_deliver
from tests.conftest import api_client, run_queued_jobs
from tests.factories import claim_at, default_workspace, submit_sheet
from tests.formats.helpers import jsonl, native_line

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("egress_loopback")]


@dataclass
class Receiver:
    """What the local server was sent, and the statuses it answers with, in turn."""

    url: str
    answers: list[int] = field(default_factory=list)
    received: list[tuple[dict[str, str], bytes]] = field(default_factory=list)

    def bodies(self) -> list[dict]:
        return [json.loads(body) for _, body in self.received]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """An HTTP server on 127.0.0.1 (an ephemeral port) in a thread, for this test only."""
    state = Receiver(url="")

    class Handler(BaseHTTPRequestHandler):
        timeout = 10

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            state.received.append((dict(self.headers), self.rfile.read(min(length, 1 << 20))))
            self.send_response(state.answers.pop(0) if state.answers else 200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args) -> None:  # quiet
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_port}/hook"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def _hook(audit_set, receiver: Receiver, *events: str) -> Webhook:
    return Webhook.objects.create(
        audit_set=audit_set,
        url=receiver.url,
        secret="s3cret",
        events=list(events or Webhook.Event.values),
    )


def _deliver_pending() -> list[WebhookDelivery]:
    """Make one attempt at every pending delivery, as the worker's task would."""
    pending = list(WebhookDelivery.objects.filter(status="pending").order_by("pk"))
    for delivery in pending:
        webhook_deliver(delivery_id=delivery.pk)
        delivery.refresh_from_db()
    return pending


def _signed(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def _disputed(reviewer_a, reviewer_b):
    claim = claim_at("hm-2-a", 0)
    sheet = submit_sheet(reviewer_a, claim, "contradicted")
    submit_sheet(reviewer_b, claim, "not_supported")
    return claim, sheet


# --------------------------------------------------------------------------- the page


def test_a_lead_registers_a_webhook_and_sees_its_secret(client_for, lead, handmade):
    client = client_for(lead)
    url = reverse("audit:set-webhooks", args=[handmade.pk])

    response = client.post(
        url, {"url": "https://ci.example.org/hook", "events": ["claim.adjudicated"]}
    )

    hook = Webhook.objects.get()
    assert response.status_code == 200
    assert response["Cache-Control"] == "no-store"
    assert (hook.audit_set, hook.url, hook.events, hook.created_by) == (
        handmade,
        "https://ci.example.org/hook",
        ["claim.adjudicated"],
        lead,
    )
    assert len(hook.secret) == 64
    # The secret is on the answer to its creation only, as a new token's is.
    assert hook.secret in response.content.decode()
    page = client.get(url).content.decode()
    assert hook.secret not in page and "Nothing sent yet." in page
    assert "shown once, when the webhook was added" in page


@pytest.mark.parametrize(
    "bad",
    ["ftp://example.org/hook", "javascript:alert(1)", "file:///etc/passwd", "example.org/hook"],
)
def test_only_http_and_https_urls_are_accepted(client_for, lead, handmade, bad):
    response = client_for(lead).post(
        reverse("audit:set-webhooks", args=[handmade.pk]),
        {"url": bad, "events": ["set.reviewed"]},
    )

    assert response.status_code == 200
    assert response.context["form"].errors["url"] == [
        f"“{bad}” is not a web address: a webhook URL starts with http:// or https://."
    ]
    assert not Webhook.objects.exists()


def test_removing_a_webhook_removes_its_log(client_for, lead, handmade, receiver):
    hook = _hook(handmade, receiver)
    WebhookDelivery.objects.create(webhook=hook, event="set.reviewed", body="{}")

    response = client_for(lead).post(reverse("audit:webhook-delete", args=[hook.pk]))

    assert response.url == reverse("audit:set-webhooks", args=[handmade.pk])
    assert not Webhook.objects.exists() and not WebhookDelivery.objects.exists()


# ---------------------------------------------------------------------------- delivery


def test_an_adjudication_is_posted_signed_and_retried_after_a_500(
    client_for,
    lead,
    opened,
    reviewer_a,
    reviewer_b,
    receiver,
    settings,
    django_capture_on_commit_callbacks,
):
    settings.WEBHOOK_RETRY_SECONDS = 60
    hook = _hook(opened, receiver, "claim.adjudicated")
    claim, sheet = _disputed(reviewer_a, reviewer_b)
    receiver.answers = [500]

    with django_capture_on_commit_callbacks(execute=True):
        gold = services.adjudication_save(
            claim=claim, lead=lead, version=0, take=sheet.pk, reason="reviewer_error"
        )
    (delivery,) = WebhookDelivery.objects.all()
    with django_capture_on_commit_callbacks(execute=True):
        _deliver_pending()

    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.response_code) == ("pending", 1, 500)
    assert delivery.error == "The receiver answered 500 Internal Server Error."
    # The next attempt is queued for the worker a minute later, not made at once.
    tasks = list(
        DBTaskResult.objects.filter(task_path="audit.services.webhooks.deliver_webhook").order_by(
            "enqueued_at"
        )
    )
    assert [t.args_kwargs["args"] for t in tasks] == [[delivery.pk], [delivery.pk]]
    assert tasks[1].run_after == delivery.next_attempt_at
    assert 50 <= (tasks[1].run_after - timezone.now()).total_seconds() <= 60

    _deliver_pending()

    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.response_code) == ("delivered", 2, 200)
    assert len(receiver.received) == 2
    headers, body = receiver.received[1]
    assert receiver.received[0][1] == body  # the same signed bytes each time
    assert headers["X-Citeaudit-Signature"] == _signed("s3cret", body)
    assert headers["X-Citeaudit-Event"] == "claim.adjudicated"
    assert headers["Content-Type"] == "application/json"
    sent = json.loads(body)
    assert sent.pop("timestamp")
    assert sent.pop("delivery") == str(delivery.uuid) == headers["Citeaudit-Delivery"]
    assert sent == {
        "event": "claim.adjudicated",
        "set": opened.pk,
        "claim": claim.pk,
        "answer": claim.answer_id,
        "adjudication": gold.pk,
        "version": 1,
    }
    page = client_for(lead).get(reverse("audit:set-webhooks", args=[opened.pk])).content.decode()
    assert '<td>Delivered</td><td class="num">2</td><td class="num">200</td>' in page
    assert hook.secret not in page


def test_a_delivery_gives_up_after_the_last_attempt(
    opened, receiver, settings, django_capture_on_commit_callbacks
):
    settings.WEBHOOK_MAX_ATTEMPTS = 2
    _hook(opened, receiver, "set.reviewed")
    receiver.answers = [503, 503, 503]

    with django_capture_on_commit_callbacks(execute=True):
        services.webhooks_fire(audit_set_id=opened.pk, event="set.reviewed", data={})
    _deliver_pending()
    _deliver_pending()
    (delivery,) = WebhookDelivery.objects.all()

    assert (delivery.status, delivery.attempts, delivery.response_code) == ("failed", 2, 503)
    assert delivery.next_attempt_at is None
    assert _deliver_pending() == []
    assert len(receiver.received) == 2


def test_an_unreachable_url_is_logged_as_such(opened, django_capture_on_commit_callbacks):
    # A port nothing listens on, on this machine only.
    Webhook.objects.create(
        audit_set=opened, url="http://127.0.0.1:9/hook", secret="x", events=["set.reviewed"]
    )

    with django_capture_on_commit_callbacks(execute=True):
        services.webhooks_fire(audit_set_id=opened.pk, event="set.reviewed", data={})
    _deliver_pending()
    (delivery,) = WebhookDelivery.objects.all()

    assert (delivery.status, delivery.response_code) == ("pending", None)
    assert delivery.error.startswith("Could not reach it: ")


def test_nothing_is_sent_for_a_transaction_that_rolls_back(
    opened, receiver, django_capture_on_commit_callbacks
):
    _hook(opened, receiver)

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        try:
            with transaction.atomic():
                services.webhooks_fire(audit_set_id=opened.pk, event="set.reviewed", data={})
                raise RuntimeError
        except RuntimeError:
            pass

    assert callbacks == []
    assert not WebhookDelivery.objects.exists()


def test_only_hooks_of_the_set_listening_for_the_event_are_sent_it(
    opened, receiver, django_capture_on_commit_callbacks
):
    listening = _hook(opened, receiver, "set.reviewed")
    _hook(opened, receiver, "import.finished")
    _hook(
        AuditSet.objects.create(workspace=default_workspace(), name="Other"),
        receiver,
        "set.reviewed",
    )

    with django_capture_on_commit_callbacks(execute=True):
        services.webhooks_fire(audit_set_id=opened.pk, event="set.reviewed", data={})

    assert list(WebhookDelivery.objects.values_list("webhook", flat=True)) == [listening.pk]


# ------------------------------------------------------------------------------ events


def test_the_last_sheet_submitted_fires_set_reviewed_once(
    opened, reviewer_a, reviewer_b, receiver, django_capture_on_commit_callbacks
):
    _hook(opened, receiver, "set.reviewed")
    claims = list(
        Claim.objects.filter(assignments__reviewer=reviewer_a)
        .order_by("pk")
        .values_list("pk", flat=True)
    )

    with django_capture_on_commit_callbacks(execute=True):
        for pk in claims:
            claim = Claim.objects.get(pk=pk)
            submit_sheet(reviewer_a, claim, "not_supported")
            submit_sheet(reviewer_b, claim, "not_supported")

    deliveries = list(WebhookDelivery.objects.values_list("event", "body"))
    assert [event for event, _ in deliveries] == ["set.reviewed"]
    sent = json.loads(deliveries[0][1])
    assert (sent["set"], sent["claim"]) == (opened.pk, claims[-1])


def test_a_decision_that_changes_is_sent_with_before_and_after(
    lead, opened, reviewer_a, reviewer_b, receiver, django_capture_on_commit_callbacks
):
    services.criteria_update(audit_set=opened, criteria=[{"kind": "no_contradicted"}], by=lead)
    _hook(opened, receiver, "decision.changed")
    claim = claim_at("hm-2-a", 0)

    def sent_after(action) -> list[tuple]:
        with django_capture_on_commit_callbacks(execute=True):
            action()
        bodies = [
            json.loads(b)
            for b in WebhookDelivery.objects.order_by("pk").values_list("body", flat=True)
        ]
        WebhookDelivery.objects.all().delete()
        return [(b["event"], b["system"], b["before"], b["after"], b["claims"]) for b in bodies]

    # A contradicted sheet makes the provisional decision fail; the other reviewer's
    # disagreement leaves the claim without a label again; the lead's gold decides it.
    sheet = None

    def first():
        nonlocal sheet
        sheet = submit_sheet(reviewer_a, claim, "contradicted")

    changed = ("decision.changed", "handmade v1")
    assert sent_after(first) == [(*changed, "provisional-pass", "provisional-fail", [claim.pk])]
    assert sent_after(lambda: submit_sheet(reviewer_b, claim, "not_supported")) == [
        (*changed, "provisional-fail", "provisional-pass", [claim.pk])
    ]
    assert sent_after(lambda: submit_sheet(reviewer_a, claim_at("hm-3-a", 0), "unclear")) == []
    assert sent_after(
        lambda: services.adjudication_save(
            claim=claim, lead=lead, version=0, take=sheet.pk, reason="reviewer_error"
        )
    ) == [(*changed, "provisional-pass", "provisional-fail", [claim.pk])]


def _decisions_sent(receiver: Receiver) -> list[tuple]:
    """Deliver what is pending to the local server; the decision changes it was sent."""
    _deliver_pending()
    sent = [
        (b["system"], b["before"], b["after"], b["claims"])
        for b in receiver.bodies()
        if b["event"] == "decision.changed"
    ]
    receiver.received.clear()
    return sent


def test_a_criteria_edit_that_changes_a_decision_is_sent_once(
    lead, opened, reviewer_a, receiver, django_capture_on_commit_callbacks
):
    services.criteria_update(audit_set=opened, criteria=[{"kind": "no_contradicted"}], by=lead)
    submit_sheet(reviewer_a, claim_at("hm-2-a", 0), "contradicted")
    _hook(opened, receiver, "decision.changed")
    client = api_client(lead)

    def patch(criteria: list[dict]) -> None:
        with django_capture_on_commit_callbacks(execute=True):
            response = client.patch(
                f"/api/v1/sets/{opened.pk}/settings",
                {"criteria": criteria, "criteria_reason": "the webhook's test"},
                content_type="application/json",
            )
        assert response.status_code == 200, response.content

    # The contradicted sheet fails "no contradicted"; no claim moved the decision.
    patch([{"kind": "max_wrong_citations", "limit": 3}])
    assert _decisions_sent(receiver) == [
        ("handmade v1", "provisional-fail", "provisional-pass", [])
    ]
    # Another criterion that passes as well: the decision stays, nothing is sent.
    patch(
        [{"kind": "max_wrong_citations", "limit": 3}, {"kind": "min_supported_share", "percent": 0}]
    )
    assert _decisions_sent(receiver) == []
    patch([{"kind": "no_contradicted"}])
    assert _decisions_sent(receiver) == [
        ("handmade v1", "provisional-pass", "provisional-fail", [])
    ]


def test_settings_and_criteria_changed_in_one_request_send_one_change(
    lead, opened, reviewer_a, receiver, django_capture_on_commit_callbacks
):
    services.criteria_update(audit_set=opened, criteria=[{"kind": "no_contradicted"}], by=lead)
    submit_sheet(reviewer_a, claim_at("hm-2-a", 0), "contradicted")
    _hook(opened, receiver, "decision.changed")

    with django_capture_on_commit_callbacks(execute=True):
        response = api_client(lead).patch(
            f"/api/v1/sets/{opened.pk}/settings",
            {
                "criteria": [{"kind": "max_wrong_citations", "limit": 3}],
                "criteria_reason": "the webhook's test",
                "auto_gold": False,
            },
            content_type="application/json",
        )

    assert response.status_code == 200, response.content
    assert _decisions_sent(receiver) == [
        ("handmade v1", "provisional-fail", "provisional-pass", [])
    ]


def test_a_reopened_sheet_that_changes_a_decision_is_sent_once(
    lead, opened, reviewer_a, receiver, django_capture_on_commit_callbacks
):
    services.criteria_update(audit_set=opened, criteria=[{"kind": "no_contradicted"}], by=lead)
    claim = claim_at("hm-2-a", 0)
    sheet = submit_sheet(reviewer_a, claim, "contradicted")
    _hook(opened, receiver, "decision.changed")

    with django_capture_on_commit_callbacks(execute=True):
        services.sheet_reopen(sheet=sheet, user=reviewer_a)

    assert _decisions_sent(receiver) == [
        ("handmade v1", "provisional-fail", "provisional-pass", [claim.pk])
    ]


def _imported(audit_set, lead, answer: str, question: str, capture) -> str | None:
    """One answer of system v1 imported as a job; the system's decision after it."""
    passage = {"title": "Warranty", "url": "https://example.com/w", "text": "It lasts 2 years."}
    line = native_line(question_id=question, system="v1", answer=answer, passages=[passage])
    services.job_import_create(
        upload=SimpleUploadedFile(f"{question}.jsonl", jsonl(line)),
        audit_set=audit_set,
        new_set_name="",
        fmt="auto",
        user=lead,
    )
    with capture(execute=True):
        run_queued_jobs()
    return selectors.release_outcomes(audit_set_id=audit_set.pk).get("v1")


def test_imports_that_change_a_decision_are_sent_once_each(
    lead, audit_set, receiver, django_capture_on_commit_callbacks
):
    services.criteria_update(audit_set=audit_set, criteria=[{"kind": "numbers_grounded"}], by=lead)
    _hook(audit_set, receiver, "decision.changed")
    capture = django_capture_on_commit_callbacks

    # The system's first answer gives it a decision; a number its cited passage does not
    # give turns it; a second grounded answer leaves it as it is.
    assert _imported(audit_set, lead, "It lasts 2 years [1].", "q1", capture) == "provisional-pass"
    assert _decisions_sent(receiver) == [("v1", None, "provisional-pass", [])]
    assert _imported(audit_set, lead, "It lasts 7 years [1].", "q2", capture) == "provisional-fail"
    assert _decisions_sent(receiver) == [("v1", "provisional-pass", "provisional-fail", [])]
    assert _imported(audit_set, lead, "It lasts 2 years [1].", "q3", capture) == "provisional-fail"
    assert _decisions_sent(receiver) == []


def test_an_answer_deleted_in_the_admin_that_changes_a_decision_is_sent_once(
    lead, audit_set, receiver, admin_client, django_capture_on_commit_callbacks
):
    services.criteria_update(audit_set=audit_set, criteria=[{"kind": "numbers_grounded"}], by=lead)
    capture = django_capture_on_commit_callbacks
    _imported(audit_set, lead, "It lasts 2 years [1].", "q1", capture)
    assert _imported(audit_set, lead, "It lasts 7 years [1].", "q2", capture) == "provisional-fail"
    _hook(audit_set, receiver, "decision.changed")
    wrong = Answer.objects.get(audit_set=audit_set, question__external_id="q2")
    claims = sorted(wrong.claims.values_list("pk", flat=True))

    with capture(execute=True):
        response = admin_client.post(
            reverse("admin:audit_answer_delete", args=[wrong.pk]), {"post": "yes"}
        )

    assert response.status_code == 302
    assert _decisions_sent(receiver) == [("v1", "provisional-fail", "provisional-pass", claims)]


def test_a_finished_import_job_is_sent(
    lead, handmade, receiver, django_capture_on_commit_callbacks
):
    _hook(handmade, receiver, "import.finished")
    job = services.job_import_create(
        upload=SimpleUploadedFile("more.jsonl", jsonl(native_line(question_id="x"))),
        audit_set=handmade,
        new_set_name="",
        fmt="auto",
        user=lead,
    )

    with django_capture_on_commit_callbacks(execute=True):
        run_queued_jobs()
    _deliver_pending()

    ((headers, body),) = receiver.received
    sent = json.loads(body)
    assert (sent["event"], sent["job"], sent["status"], sent["answers"]) == (
        "import.finished",
        job.pk,
        "succeeded",
        1,
    )


# ------------------------------------------------------------------- a worker process


@pytest.mark.usefixtures("role_groups")
@pytest.mark.django_db(transaction=True)
def test_a_worker_process_delivers_and_retries_after_a_500(receiver, settings, start_worker):
    settings.WEBHOOK_RETRY_SECONDS = 0
    audit_set = AuditSet.objects.create(workspace=default_workspace(), name="Hooked")
    hook = _hook(audit_set, receiver, "set.reviewed")
    receiver.answers = [500]

    # Outside a transaction: queued at once, as after a commit.
    services.webhooks_fire(audit_set_id=audit_set.pk, event="set.reviewed", data={"claim": 7})
    worker = start_worker("--batch")
    _, errors = worker.communicate(timeout=120)

    assert worker.returncode == 0, errors
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.response_code) == ("delivered", 2, 200)
    assert [json.loads(body)["claim"] for _, body in receiver.received] == [7, 7]
    headers, body = receiver.received[1]
    assert headers["X-Citeaudit-Signature"] == _signed(hook.secret, body)


@pytest.mark.usefixtures("role_groups")
@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_while_sending_leaves_a_send_that_is_taken_up_and_delivered(
    settings, start_worker
):
    arrived, release = threading.Event(), threading.Event()
    received: list[bytes] = []

    class Holding(BaseHTTPRequestHandler):
        # The first request is held open, as by a slow receiver, while its sender is killed.
        def do_POST(self) -> None:
            received.append(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            if len(received) == 1:
                arrived.set()
                release.wait(60)
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Holding)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        audit_set = AuditSet.objects.create(workspace=default_workspace(), name="Hooked")
        Webhook.objects.create(
            audit_set=audit_set,
            url=f"http://127.0.0.1:{server.server_port}/hook",
            secret="s3cret",
            events=["set.reviewed"],
        )
        services.webhooks_fire(audit_set_id=audit_set.pk, event="set.reviewed", data={"claim": 7})
        worker = start_worker()
        assert arrived.wait(120), "the worker never sent the delivery"

        worker.kill()  # SIGKILL, in the middle of the send
        worker.wait(timeout=30)
        delivery = WebhookDelivery.objects.get()
        assert (delivery.status, delivery.attempts) == ("pending", 1)
        assert delivery.claimed_until > timezone.now()  # the dead worker's claim still holds
        release.set()
        # Time passes: the claim runs out (it lasts the send's deadline and 30 s).
        WebhookDelivery.objects.update(claimed_until=timezone.now() - timezone.timedelta(seconds=1))

        assert services.webhooks_resume_stalled() == 1
        second = start_worker("--batch")
        _, errors = second.communicate(timeout=120)
    finally:
        release.set()
        server.shutdown()
        server.server_close()

    assert second.returncode == 0, errors
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, delivery.response_code) == ("delivered", 2, 200)
    assert [json.loads(body)["claim"] for body in received] == [7, 7]
    log = list(delivery.attempt_log.order_by("at", "pk").values_list("response_code", "error"))
    assert log[0][0] is None and log[0][1].startswith("Attempt 1 was cut off")
    assert log[1] == (200, "")
