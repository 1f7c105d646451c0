"""Behind a reverse proxy every request arrives from the proxy's address. With
CITEAUDIT_TRUSTED_PROXIES set, login lock-out and the password-reset limit count the client
the proxy names in X-Forwarded-For, so one person's wrong passwords or reset requests do not
lock out everyone else; what a client writes into X-Forwarded-For itself is never read."""

from __future__ import annotations

import pytest
from django.test import Client, RequestFactory
from django.urls import reverse

from audit.client_address import client_address
from audit.views import accounts

pytestmark = pytest.mark.django_db

PROXY = "127.0.0.1"
ATTACKER = "203.0.113.7"
OWNER = "198.51.100.4"


def _through_proxy(client_ip: str, *, spoofed: str = "") -> Client:
    """A browser at `client_ip` behind one proxy on loopback that appends what it saw."""
    forwarded = f"{spoofed}, {client_ip}" if spoofed else client_ip
    return Client(REMOTE_ADDR=PROXY, HTTP_X_FORWARDED_FOR=forwarded)


def _login(client: Client, password: str) -> int:
    return client.post(reverse("login"), {"username": "rev_a", "password": password}).status_code


def test_wrong_passwords_from_one_client_do_not_lock_the_user_out_for_others(settings, reviewer_a):
    settings.CITEAUDIT_TRUSTED_PROXIES = 1
    # The attacker writes a new X-Forwarded-For of their own each time: only the address
    # the proxy appended counts, so they are still locked out.
    wrong = [
        _login(_through_proxy(ATTACKER, spoofed=f"192.0.2.{i}"), "wrong")
        for i in range(settings.AXES_FAILURE_LIMIT)
    ]
    attacker_again = _login(_through_proxy(ATTACKER, spoofed="192.0.2.99"), "pw-for-tests")
    owner = _login(_through_proxy(OWNER), "pw-for-tests")

    # The failure that reaches the limit is answered with the lock-out already.
    assert wrong == [200] * (settings.AXES_FAILURE_LIMIT - 1) + [429]
    assert attacker_again == 429
    assert owner == 302


def test_reset_requests_are_limited_per_client_behind_the_proxy(settings, reviewer_a):
    settings.CITEAUDIT_TRUSTED_PROXIES = [PROXY]
    noisy = _through_proxy(ATTACKER)
    answers = [
        noisy.post(reverse("password_reset"), {"email": f"nobody{i}@example.org"}).status_code
        for i in range(accounts.PER_CLIENT + 1)
    ]
    other = _through_proxy(OWNER).post(reverse("password_reset"), {"email": "me@example.org"})

    assert answers == [302] * accounts.PER_CLIENT + [429]
    assert other.status_code == 302


def test_without_trusted_proxies_x_forwarded_for_is_ignored(settings, reviewer_a):
    settings.CITEAUDIT_TRUSTED_PROXIES = 0
    wrong = [
        _login(Client(REMOTE_ADDR=ATTACKER, HTTP_X_FORWARDED_FOR=f"192.0.2.{i}"), "wrong")
        for i in range(settings.AXES_FAILURE_LIMIT)
    ]

    assert _login(Client(REMOTE_ADDR=ATTACKER, HTTP_X_FORWARDED_FOR=OWNER), "pw-for-tests") == 429
    assert wrong == [200] * (settings.AXES_FAILURE_LIMIT - 1) + [429]


@pytest.mark.parametrize(
    ("trusted", "remote", "forwarded", "expected"),
    [
        (0, PROXY, OWNER, PROXY),
        (1, PROXY, OWNER, OWNER),
        (1, PROXY, f"{ATTACKER}, {OWNER}", OWNER),
        (2, PROXY, f"{ATTACKER}, {OWNER}, 10.0.0.5", OWNER),
        (2, PROXY, OWNER, OWNER),  # fewer hops than proxies: the leftmost
        (1, PROXY, "", PROXY),
        (1, PROXY, "not-an-address", PROXY),
        (1, PROXY, "[2001:db8::1]:443", "2001:db8::1"),
        (1, PROXY, f"{OWNER}:51234", OWNER),
        (["127.0.0.1", "10.0.0.0/8"], PROXY, f"{ATTACKER}, {OWNER}, 10.1.2.3", OWNER),
        # A request that did not come through a trusted proxy: its header is the client's.
        (["10.0.0.0/8"], ATTACKER, OWNER, ATTACKER),
        (["::1"], "::1", OWNER, OWNER),
    ],
)
def test_the_client_address_is_read_as_the_setting_says(
    settings, trusted, remote, forwarded, expected
):
    settings.CITEAUDIT_TRUSTED_PROXIES = trusted
    request = RequestFactory().get("/", REMOTE_ADDR=remote, HTTP_X_FORWARDED_FOR=forwarded)

    assert client_address(request) == expected
