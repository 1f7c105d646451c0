"""The address of the person at the other end of a request, behind the operator's reverse
proxies: what login lock-out and the password-reset limit count per client."""

from __future__ import annotations

import ipaddress
from functools import lru_cache

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def client_address(request: HttpRequest) -> str:
    """The client's address per settings.CITEAUDIT_TRUSTED_PROXIES.

    Unset (0, empty): REMOTE_ADDR, and X-Forwarded-For is ignored, since anyone can send
    one. A number N: the app sits behind exactly N proxies, each appending the address it
    saw to X-Forwarded-For, so the client is the N-th address from the right of
    X-Forwarded-For + REMOTE_ADDR; whatever a client wrote further left is never read.
    A list of addresses or networks: walking from REMOTE_ADDR leftwards, the first address
    that is not a trusted proxy. A hop that is not an address (a proxy wrote garbage) is
    never returned: the nearest trusted hop to its right stands for it.
    """
    remote = request.META.get("REMOTE_ADDR", "") or ""
    trusted = settings.CITEAUDIT_TRUSTED_PROXIES
    if not trusted:
        return remote
    forwarded = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    chain = [_address(hop) for hop in forwarded if hop] + [_address(remote)]
    if isinstance(trusted, int):
        position = max(len(chain) - 1 - trusted, 0)
    else:
        networks = _networks(tuple(trusted))
        if not _trusted(chain[-1], networks):
            return remote
        position = 0
        for index in range(len(chain) - 1, -1, -1):
            if not _trusted(chain[index], networks):
                position = index
                break
    for address in chain[position:]:
        if address:
            return address
    return remote


def _address(hop: str) -> str:
    """The hop as a normalised address, or "" if it is none. Some proxies add a port
    ("203.0.113.7:51234", "[2001:db8::1]:443")."""
    text = hop.strip().strip('"')
    if text.startswith("["):
        text = text[1:].partition("]")[0]
    elif text.count(":") == 1:
        text = text.partition(":")[0]
    try:
        return str(ipaddress.ip_address(text))
    except ValueError:
        return ""


def _trusted(address: str, networks: tuple[Network, ...]) -> bool:
    if not address:
        return False
    ip = ipaddress.ip_address(address)
    return any(ip in network for network in networks)


@lru_cache(maxsize=8)
def _networks(entries: tuple[str, ...]) -> tuple[Network, ...]:
    return parse_networks(entries)


def parse_networks(entries: tuple[str, ...] | list[str]) -> tuple[Network, ...]:
    try:
        return tuple(ipaddress.ip_network(entry.strip(), strict=False) for entry in entries)
    except ValueError as error:
        raise ImproperlyConfigured(
            f"CITEAUDIT_TRUSTED_PROXIES: {error}. Give the number of proxies in front of "
            "the app, or their addresses or networks separated by commas."
        ) from error
