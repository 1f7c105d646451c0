"""The doors that send requests out (judges, webhooks), tried as an attacker holding a lead's
account would: no server secret reaches a receiver, no refused address is saved or sent to
(in any spelling, nor after DNS answers differently), and a slow, huge or redirecting
receiver is cut short without its body being echoed.

Every receiver here is this test's own, on 127.0.0.1; a host name is only ever resolved by a
stand-in resolver, and nothing connects to any other address."""

from __future__ import annotations

import contextlib
import ipaddress
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator

import pytest
from django.urls import reverse

from audit import egress, services
from audit.models import Job, Judge, JudgeRun, JudgeVerdict, Webhook, WebhookDelivery
from audit.services import judges
from audit.services.webhooks import webhook_deliver
from tests.conftest import refund_set_with_gold, run_queued_jobs
from tests.egress_spellings import REFUSED

# The judges here run on the refund set's three gold claims: below the operator's floor.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("small_gold_floor")]

SERVER_SECRET = "server-secret-never-leaves-0123456789"
MARKER = "INTERNAL-SERVICE-SAYS-"  # in every body a receiver here sends


class Receiver:
    """A raw HTTP receiver on 127.0.0.1: records each request's bytes, then plays `answer`
    on the connection (a function of the socket)."""

    def __init__(self, answer: Callable[[Receiver, socket.socket], None]) -> None:
        self.answer = answer
        self.requests: list[bytes] = []
        self.body_bytes_sent = 0
        self._lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0), backlog=64)
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, path: str = "/v1") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def sent(self, n: int) -> None:
        with self._lock:
            self.body_bytes_sent += n

    def close(self) -> None:
        self._listener.close()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            data = b""
            try:
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head, _, body = data.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                while len(body) < length:
                    body += conn.recv(65536)
                with self._lock:
                    self.requests.append(head + b"\r\n\r\n" + body)
                self.answer(self, conn)
            except OSError:
                pass


def ok_json(receiver: Receiver, conn: socket.socket) -> None:
    body = b'{"ok": true}'
    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))


def huge(declared: bool) -> Callable[[Receiver, socket.socket], None]:
    """300 MB of reply, with its length declared or chunked, starting with MARKER."""

    def answer(receiver: Receiver, conn: socket.socket) -> None:
        total, piece = 300 * 1024 * 1024, (MARKER.encode() + b"x" * (1 << 20))[: 1 << 20]
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        head += (
            b"Content-Length: %d\r\n\r\n" % total
            if declared
            else b"Transfer-Encoding: chunked\r\n\r\n"
        )
        conn.sendall(head)
        for _ in range(total // len(piece)):
            conn.sendall(piece if declared else b"%x\r\n%s\r\n" % (len(piece), piece))
            receiver.sent(len(piece))

    return answer


def trickle(in_head: bool) -> Callable[[Receiver, socket.socket], None]:
    """A reply that never stalls long enough for a per-read timeout: a byte every 50 ms,
    400 bytes in all (20 s), in a header or in the body; `body_bytes_sent` counts them."""

    def answer(receiver: Receiver, conn: socket.socket) -> None:
        if in_head:
            conn.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
        else:
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 400\r\n\r\n")
        for _ in range(400):
            conn.sendall(b"a")
            receiver.sent(1)
            time.sleep(0.05)

    return answer


def redirect_to(target: str) -> Callable[[Receiver, socket.socket], None]:
    def answer(receiver: Receiver, conn: socket.socket) -> None:
        body = (MARKER + "moved").encode()
        conn.sendall(
            b"HTTP/1.1 302 Found\r\nLocation: %s\r\nContent-Length: %d\r\n\r\n%s"
            % (target.encode(), len(body), body)
        )

    return answer


@pytest.fixture
def receivers() -> Iterator[Callable[..., Receiver]]:
    started: list[Receiver] = []

    def start(answer=ok_json) -> Receiver:
        started.append(Receiver(answer))
        return started[-1]

    yield start
    for receiver in started:
        receiver.close()


@pytest.fixture
def loopback_allowed(settings):
    settings.EGRESS_ALLOW = ["127.0.0.1"]
    settings.JUDGE_KEY_HOSTS = ["CITEAUDIT_JUDGE_KEY_TEST=127.0.0.1"]


@pytest.fixture
def server_secrets(monkeypatch):
    for name in ("DJANGO_SECRET_KEY", "DATABASE_PASSWORD_FOR_TEST", "CITEAUDIT_JUDGE_KEY_TEST"):
        monkeypatch.setenv(name, SERVER_SECRET)


def _fields(base_url: str, **extra) -> dict:
    return {
        "name": "house",
        "base_url": base_url,
        "model": "fake-1",
        "max_concurrency": 3,
        "timeout_seconds": 5.0,
        "min_kappa": 0.0,
        "min_gold": 3,
        **extra,
    }


def _run_all(judge: Judge, lead) -> tuple[Job, list[str]]:
    run = judges.judge_run_start(judge=judge, subset=JudgeRun.Subset.ALL, user=lead)
    (job,) = run_queued_jobs()
    return job, list(JudgeVerdict.objects.filter(run=run).values_list("error", flat=True))


# ---------------------------------------------------------------------------- secrets


@pytest.mark.parametrize(
    "name", ["DJANGO_SECRET_KEY", "DATABASE_URL", "EMAIL_HOST_PASSWORD", "OIDC_CLIENT_SECRET"]
)
def test_a_judge_naming_a_server_setting_is_refused_when_saved(lead, loopback_allowed, name):
    audit_set, _claims = refund_set_with_gold(lead)

    with pytest.raises(judges.JudgeRefused) as refusal:
        judges.judge_create(
            audit_set=audit_set,
            fields=_fields("http://127.0.0.1:9/v1", api_key_env=name),
            user=lead,
        )

    assert refusal.value.field == "api_key_env"
    assert "CITEAUDIT_JUDGE_KEY_<NAME>" in str(refusal.value)
    assert not Judge.objects.exists()


def test_the_judge_form_refuses_a_server_setting_and_shows_no_value(
    client_for, lead, loopback_allowed, server_secrets
):
    audit_set, _claims = refund_set_with_gold(lead)
    client = client_for(lead)
    url = reverse("audit:judge-list", args=[audit_set.pk])
    template = client.get(url).context["form"]["template"].initial

    response = client.post(
        url,
        {
            **_fields("http://127.0.0.1:9/v1", api_key_env="DJANGO_SECRET_KEY"),
            "temperature": "0",
            "template": template,
        },
    )

    assert response.status_code == 200
    assert list(response.context["form"].errors) == ["api_key_env"]
    assert SERVER_SECRET not in response.content.decode()
    assert not Judge.objects.exists()


def test_a_judge_key_goes_only_to_the_hosts_the_operator_named_for_it(
    lead, receivers, settings, loopback_allowed, server_secrets, caplog
):
    caplog.set_level("DEBUG")
    audit_set, _claims = refund_set_with_gold(lead)
    receiver = receivers()
    settings.JUDGE_KEY_HOSTS = [
        "CITEAUDIT_JUDGE_KEY_OPENAI=api.openai.com",
        "CITEAUDIT_JUDGE_KEY_TEST=127.0.0.1",
    ]

    with pytest.raises(judges.JudgeRefused, match="CITEAUDIT_JUDGE_KEY_OPENAI may not be sent"):
        judges.judge_create(
            audit_set=audit_set,
            fields=_fields(receiver.url(), api_key_env="CITEAUDIT_JUDGE_KEY_OPENAI"),
            user=lead,
        )
    judge = judges.judge_create(
        audit_set=audit_set,
        fields=_fields(receiver.url(), api_key_env="CITEAUDIT_JUDGE_KEY_TEST"),
        user=lead,
    )
    _job, errors = _run_all(judge, lead)

    assert len(receiver.requests) >= 3
    bearer = b"authorization: bearer " + SERVER_SECRET.lower().encode()
    assert all(bearer in r.lower() for r in receiver.requests)
    assert all(SERVER_SECRET not in e for e in errors)
    assert SERVER_SECRET not in caplog.text


def test_a_judge_saved_before_the_rules_never_sends_a_server_secret(
    client_for, lead, receivers, loopback_allowed, server_secrets
):
    audit_set, _claims = refund_set_with_gold(lead)
    receiver = receivers()
    judge = judges.judge_create(
        audit_set=audit_set,
        fields=_fields(receiver.url(), api_key_env="CITEAUDIT_JUDGE_KEY_TEST"),
        user=lead,
    )
    run = judges.judge_run_start(judge=judge, subset=JudgeRun.Subset.ALL, user=lead)
    # As a row written before the rule (or by any path that skipped it) would be.
    Judge.objects.filter(pk=judge.pk).update(api_key_env="DJANGO_SECRET_KEY")

    (job,) = run_queued_jobs()

    assert job.status == Job.Status.FAILED
    assert job.error.startswith("This judge cannot run: A judge’s key variable is named")
    assert receiver.requests == []
    page = client_for(lead).get(judge.get_absolute_url()).content.decode()
    assert "This judge cannot run until its settings are changed" in page
    run_page = client_for(lead).get(reverse("audit:judge-run", args=[run.pk])).content.decode()
    assert SERVER_SECRET not in page + run_page + job.error
    with pytest.raises(judges.JudgeError, match="This judge cannot run"):
        judges.judge_run_start(judge=judge, subset=JudgeRun.Subset.ALL, user=lead)


# -------------------------------------------------------------- refused addresses


@pytest.mark.parametrize("url", REFUSED)
def test_every_spelling_of_a_refused_address_is_refused_for_a_judge_and_a_webhook(
    lead, handmade, url
):
    with pytest.raises(judges.JudgeRefused) as refusal:
        judges.judge_create(audit_set=handmade, fields=_fields(url), user=lead)
    assert refusal.value.field == "base_url"
    with pytest.raises(services.WebhookRefused) as refusal:
        services.webhook_create(audit_set=handmade, url=url, events=["set.reviewed"], user=lead)
    assert "CITEAUDIT_EGRESS_ALLOW" in str(refusal.value)
    assert not Judge.objects.exists() and not Webhook.objects.exists()


def test_editing_a_judge_to_a_refused_url_or_a_server_setting_is_refused(
    client_for, lead, loopback_allowed
):
    audit_set, _claims = refund_set_with_gold(lead)
    judge = judges.judge_create(
        audit_set=audit_set, fields=_fields("http://127.0.0.1:9/v1"), user=lead
    )
    client = client_for(lead)
    form = client.get(judge.get_absolute_url()).context["form"]
    data = {name: form[name].value() for name in form.fields}
    data["price_per_million"] = ""

    to_metadata = client.post(
        judge.get_absolute_url(), {**data, "base_url": "http://[::ffff:169.254.169.254]/v1"}
    )
    to_secret = client.post(judge.get_absolute_url(), {**data, "api_key_env": "DATABASE_URL"})

    assert list(to_metadata.context["form"].errors) == ["base_url"]
    assert (
        to_metadata.context["form"]
        .errors["base_url"][0]
        .startswith(
            "::ffff:169.254.169.254 (::ffff:a9fe:a9fe) is a link-local address (cloud metadata "
            "lives there), written as IPv6: "
        )
    )
    assert list(to_secret.context["form"].errors) == ["api_key_env"]
    # The saved judge can still run: the page does not take the refused edit for it.
    assert "This judge cannot run" not in to_secret.content.decode()
    judge.refresh_from_db()
    assert (judge.base_url, judge.api_key_env) == ("http://127.0.0.1:9/v1", "")


def test_the_webhook_form_says_why_it_refuses_a_metadata_address(client_for, lead, handmade):
    response = client_for(lead).post(
        reverse("audit:set-webhooks", args=[handmade.pk]),
        {"url": "http://169.254.169.254/latest/meta-data/", "events": ["set.reviewed"]},
    )

    assert response.status_code == 200
    (error,) = response.context["form"].errors["url"]
    assert error.startswith("169.254.169.254 is a link-local address")


def test_a_webhook_saved_to_loopback_before_the_rules_is_refused_when_sent(
    opened, receivers, django_capture_on_commit_callbacks
):
    receiver = receivers()
    delivery = _delivered(opened, receiver.url("/hook"), django_capture_on_commit_callbacks)

    assert delivery.error.startswith("Refused: 127.0.0.1 is a loopback address")
    assert receiver.requests == []


def _rebinding(monkeypatch) -> dict:
    """A stand-in resolver for *.example.org: a public address until `state["rebound"]`, then
    127.0.0.1. Nothing connects while it answers the public one."""
    state = {"rebound": False, "asked": 0}
    real = socket.getaddrinfo

    def resolver(host, port, *args, **kwargs):
        if not str(host).endswith(".example.org"):
            return real(host, port, *args, **kwargs)
        state["asked"] += 1
        address = "127.0.0.1" if state["rebound"] else "93.184.216.34"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, int(port or 80)))]

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    return state


def test_dns_rebinding_to_loopback_after_a_webhook_is_saved_is_refused_when_sent(
    lead, opened, receivers, monkeypatch, django_capture_on_commit_callbacks
):
    receiver = receivers()
    state = _rebinding(monkeypatch)
    services.webhook_create(
        audit_set=opened,
        url=f"http://rebind.example.org:{receiver.port}/hook",
        events=["set.reviewed"],
        user=lead,
    )
    state["rebound"] = True
    with django_capture_on_commit_callbacks(execute=True):
        services.webhooks_fire(audit_set_id=opened.pk, event="set.reviewed", data={})
    (delivery,) = WebhookDelivery.objects.all()

    webhook_deliver(delivery_id=delivery.pk)

    delivery.refresh_from_db()
    assert delivery.error == (
        "Refused: rebind.example.org (127.0.0.1) is a loopback address: the server sends "
        "requests only to public addresses, unless its operator allows the host in "
        "CITEAUDIT_EGRESS_ALLOW."
    )
    assert receiver.requests == [] and state["asked"] == 2


def test_dns_rebinding_to_loopback_after_a_judge_is_saved_is_refused_when_run(
    lead, receivers, monkeypatch
):
    audit_set, _claims = refund_set_with_gold(lead)
    receiver = receivers()
    state = _rebinding(monkeypatch)
    judge = judges.judge_create(
        audit_set=audit_set,
        fields=_fields(f"http://judge.example.org:{receiver.port}/v1"),
        user=lead,
    )
    state["rebound"] = True

    job, errors = _run_all(judge, lead)

    assert job.status == Job.Status.SUCCEEDED
    assert (
        errors
        == [
            "Refused: judge.example.org (127.0.0.1) is a loopback address: the server sends "
            "requests only to public addresses, unless its operator allows the host in "
            "CITEAUDIT_EGRESS_ALLOW."
        ]
        * 3
    )
    assert receiver.requests == []


# ------------------------------------------------------- slow, huge, redirecting


def test_a_trickling_webhook_receiver_is_cut_at_the_total_deadline(
    opened, receivers, settings, loopback_allowed, django_capture_on_commit_callbacks
):
    settings.WEBHOOK_TIMEOUT_SECONDS = 1
    receiver = receivers(trickle(in_head=True))
    delivery = _delivered(opened, receiver.url("/hook"), django_capture_on_commit_callbacks)

    # Hung up on within 5 s (20 bytes a second): a per-read timeout would have taken all 400.
    assert receiver.body_bytes_sent < 100
    assert (delivery.status, delivery.response_code) == ("pending", None)
    assert delivery.error == "Could not reach it: No complete reply from 127.0.0.1 within 1 s."


def test_a_trickling_judge_is_cut_at_its_timeout_for_the_whole_request(
    lead, receivers, loopback_allowed
):
    audit_set, _claims = refund_set_with_gold(lead)
    receiver = receivers(trickle(in_head=False))
    judge = judges.judge_create(
        audit_set=audit_set, fields=_fields(receiver.url(), timeout_seconds=1.0), user=lead
    )

    job, errors = _run_all(judge, lead)

    # Each of the 3 requests hung up on within 5 s, not after the 20 s the receiver takes.
    assert len(receiver.requests) == 3 and receiver.body_bytes_sent < 300
    assert job.status == Job.Status.SUCCEEDED
    assert errors == ["Timeout: no reply within 1.0 s."] * 3


@pytest.mark.parametrize("declared", [True, False], ids=["content-length", "chunked"])
def test_a_huge_judge_reply_is_refused_without_reading_it_whole_or_echoing_it(
    client_for, lead, receivers, loopback_allowed, declared
):
    audit_set, _claims = refund_set_with_gold(lead)
    receiver = receivers(huge(declared))
    judge = judges.judge_create(audit_set=audit_set, fields=_fields(receiver.url()), user=lead)

    job, errors = _run_all(judge, lead)

    assert job.status == Job.Status.SUCCEEDED
    assert (
        errors
        == ["Reply refused: The reply from 127.0.0.1 is larger than 2 MiB; it was not read."] * 3
    )
    # What the receiver got out before the judge hung up: at most the cap and the sockets'
    # buffers per request, never the 900 MB it had to send.
    assert receiver.body_bytes_sent < 3 * 24 * 1024 * 1024
    run = JudgeRun.objects.get()
    page = client_for(lead).get(reverse("audit:judge-run", args=[run.pk])).content.decode()
    assert MARKER not in page
    assert not JudgeVerdict.objects.exclude(raw_reply="").exists()


def test_a_judge_redirect_is_not_followed_nor_echoed(lead, receivers, loopback_allowed):
    audit_set, _claims = refund_set_with_gold(lead)
    elsewhere = receivers()
    receiver = receivers(redirect_to(elsewhere.url()))
    judge = judges.judge_create(audit_set=audit_set, fields=_fields(receiver.url()), user=lead)

    _job, errors = _run_all(judge, lead)

    assert (
        errors
        == [
            "Reply refused: 127.0.0.1 answered with a redirect (HTTP 302); redirects are not "
            "followed."
        ]
        * 3
    )
    assert elsewhere.requests == []


def test_a_webhook_redirect_is_not_followed(
    opened, receivers, loopback_allowed, django_capture_on_commit_callbacks
):
    elsewhere = receivers()
    receiver = receivers(redirect_to(elsewhere.url("/hook")))
    delivery = _delivered(opened, receiver.url("/hook"), django_capture_on_commit_callbacks)

    assert delivery.error == (
        "Could not reach it: 127.0.0.1 answered with a redirect (HTTP 302); redirects are "
        "not followed."
    )
    assert len(receiver.requests) == 1 and elsewhere.requests == []


def _self_signed(tmp_path) -> tuple[str, str]:
    """A certificate for localhost and 127.0.0.1 that no system trusts."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_file, key_file = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return str(cert_file), str(key_file)


def test_https_to_a_pinned_address_still_checks_the_certificate(tmp_path, settings):
    cert, key = _self_signed(tmp_path)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    received: list[bytes] = []

    def serve() -> None:
        conn, _ = listener.accept()
        with contextlib.suppress(OSError), context.wrap_socket(conn, server_side=True) as tls:
            received.append(tls.recv(65536))

    threading.Thread(target=serve, daemon=True).start()
    try:
        with pytest.raises(egress.EgressError, match="CERTIFICATE_VERIFY_FAILED"):
            egress.fetch(
                "POST",
                f"https://localhost:{port}/hook",
                allow=egress.Allow.parse(["localhost"]),
                time_limit=5,
                max_bytes=0,
                body=SERVER_SECRET.encode(),
            )
    finally:
        listener.close()
    assert received == []


def _delivered(audit_set, url: str, capture_on_commit) -> WebhookDelivery:
    """A webhook to `url` on the set, fired once and its delivery attempted."""
    Webhook.objects.create(audit_set=audit_set, url=url, secret="x", events=["set.reviewed"])
    with capture_on_commit(execute=True):
        services.webhooks_fire(audit_set_id=audit_set.pk, event="set.reviewed", data={})
    (delivery,) = WebhookDelivery.objects.all()
    webhook_deliver(delivery_id=delivery.pk)
    delivery.refresh_from_db()
    return delivery
