"""The outgoing-address policy on its own (audit/egress.py): every spelling of a loopback,
private, link-local, multicast, reserved or unspecified address is refused as written, and
the operator's allow-list lets named hosts and ranges through. No request is sent here."""

from __future__ import annotations

import ipaddress
import socket

import pytest

from audit import egress
from tests.egress_spellings import REFUSED

NOBODY = egress.Allow()


@pytest.mark.parametrize("url", REFUSED)
def test_every_spelling_of_a_non_public_address_is_refused_as_written(url):
    with pytest.raises(egress.EgressRefused) as refusal:
        egress.check_url(url, NOBODY, resolve=False)
    assert egress.ALLOW_SETTING in str(refusal.value)


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("2130706433", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("10.1.257", "10.1.1.1"),
        ("0", "0.0.0.0"),
        ("8.8.8.8.", "8.8.8.8"),
        ("[::ffff:127.0.0.1]", "::ffff:7f00:1"),
        ("example.org", None),
        ("1.2.3.example", None),
    ],
)
def test_a_host_is_read_as_the_resolver_reads_it(host, address):
    found = egress.literal_address(host)
    assert (str(found) if found else None) == address


@pytest.mark.parametrize("host", ["0400.0.0.1", "1.2.3.4.5", "09.0.0.1", "256.1.1.1", "[::1::]"])
def test_a_number_no_resolver_could_read_is_refused(host):
    with pytest.raises(egress.EgressRefused):
        egress.literal_address(host)


@pytest.mark.parametrize(
    "url",
    ["ftp://example.org/", "javascript:alert(1)", "file:///etc/passwd", "example.org/v1"],
)
def test_only_http_and_https_are_accepted(url):
    with pytest.raises(egress.EgressRefused, match="http:// or https://"):
        egress.check_url(url, NOBODY, resolve=False)


def test_a_url_with_credentials_in_it_is_refused():
    # "http://api.example.org@127.0.0.1/" goes to 127.0.0.1, whatever it looks like.
    with pytest.raises(egress.EgressRefused, match="user name or password"):
        egress.check_url("http://api.example.org@127.0.0.1/", NOBODY, resolve=False)


@pytest.mark.parametrize(
    "url", ["https://8.8.8.8/v1", "https://[2606:4700:4700::1111]/v1", "https://api.example.org"]
)
def test_public_addresses_and_names_pass_as_written(url):
    assert egress.check_url(url, NOBODY, resolve=False).host


def test_a_name_that_resolves_to_a_private_address_is_refused_when_saved(monkeypatch):
    def resolver(host, port, *args, **kwargs):
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.1.2.3", port))]

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    with pytest.raises(egress.EgressRefused, match=r"judge\.example\.org \(10\.1\.2\.3\)"):
        egress.check_url("https://judge.example.org/v1", NOBODY)


def test_a_name_that_does_not_resolve_is_accepted_when_saved(monkeypatch):
    def resolver(*args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", resolver)
    assert egress.check_url("https://not-yet.example.org/v1", NOBODY).host == (
        "not-yet.example.org"
    )


def test_the_allow_list_lets_named_hosts_and_ranges_through():
    allow = egress.Allow.parse(["localhost", "127.0.0.0/8", " ::1 ", "10.0.0.5"])
    for url in [
        "http://localhost:8001/v1",
        "http://LOCALHOST.:8001/v1",
        "http://127.0.0.1:8001/v1",
        "http://2130706433:8001/v1",
        "http://[::1]:8001/v1",
        "http://10.0.0.5/v1",
    ]:
        egress.check_url(url, allow, resolve=False)
    for url in ["http://10.0.0.6/v1", "http://169.254.169.254/", "http://[::ffff:10.0.0.6]/"]:
        with pytest.raises(egress.EgressRefused):
            egress.check_url(url, allow, resolve=False)


def test_an_allow_list_entry_that_is_neither_name_nor_range_is_an_error():
    with pytest.raises(ValueError, match="CITEAUDIT_EGRESS_ALLOW"):
        egress.Allow.parse(["http://localhost/"])


@pytest.mark.parametrize(
    "address", ["8.8.8.8", "1.1.1.1", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"]
)
def test_public_addresses_are_not_refused(address):
    assert egress.address_refusal(ipaddress.ip_address(address)) is None
