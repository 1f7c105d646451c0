"""Where the server may send a request, and the one way it sends one: every outgoing request
(judges, webhooks, anything later) goes through `fetch`, which checks the address after DNS,
connects to the address it checked, follows no redirect and caps time and size.

Pure Python, no Django: the operator's allow-list comes in as an argument (`Allow`).
"""

from __future__ import annotations

import contextlib
import http.client
import ipaddress
import re
import socket
import ssl
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network

ALLOW_SETTING = "CITEAUDIT_EGRESS_ALLOW"
# Read in pieces this size, so a reply refused for its size never sits in memory whole.
_CHUNK = 64 * 1024
# Headers a caller may not set: the connection's own framing and target are decided here,
# and a compressed reply could grow past the size cap once decoded.
_OWN_HEADERS = {"host", "content-length", "transfer-encoding", "connection", "accept-encoding"}

# Ranges the standard library does not flag on every Python version, named for the message.
_SHARED = ipaddress.IPv4Network("100.64.0.0/10")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
_NUMBER = re.compile(r"0x[0-9a-f]*|[0-9]+")


class EgressError(Exception):
    """An outgoing request that was refused or failed; the message says what, for a lead,
    and never holds what the other side sent."""


class EgressRefused(EgressError):
    """The address (as written, or as resolved) is not one the server may send to."""


class EgressTimeout(EgressError):
    """No complete reply within the request's total deadline."""


class EgressTooLarge(EgressError):
    """The reply was larger than the cap; it was not read past the cap."""


class EgressRedirect(EgressError):
    """The other side answered with a redirect, which is never followed."""


@dataclass(frozen=True)
class Allow:
    """The operator's exceptions: host names (exact, any case) and address ranges that may be
    sent to although they are not public, e.g. a model server on the same machine."""

    hosts: frozenset[str] = frozenset()
    networks: tuple[Network, ...] = ()

    @classmethod
    def parse(cls, entries: Iterable[str]) -> Allow:
        """From host names and CIDR ranges (a single address is a range of one); raises
        ValueError naming an entry that is neither."""
        hosts, networks = set(), []
        for raw in entries:
            entry = raw.strip().lower()
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry.strip("[]"), strict=False))
                continue
            except ValueError:
                pass
            name = entry.rstrip(".")
            if not re.fullmatch(r"[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?", name):
                raise ValueError(f"{ALLOW_SETTING}: {raw!r} is neither a host name nor a range.")
            hosts.add(name)
        return cls(hosts=frozenset(hosts), networks=tuple(networks))

    def names(self, host: str) -> bool:
        return _plain_host(host) in self.hosts

    def covers(self, address: Address) -> bool:
        return any(address.version == n.version and address in n for n in self.networks)


def address_refusal(address: Address) -> str | None:
    """Why the server may not send to this address (a few words), or None for a public one.
    An IPv6 address that carries an IPv4 one (mapped, 6to4, NAT64) is judged by that."""
    if isinstance(address, ipaddress.IPv6Address):
        inner = address.ipv4_mapped or address.sixtofour
        if inner is None and address in _NAT64:
            inner = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if inner is not None:
            why = address_refusal(inner)
            return f"{why}, written as IPv6" if why else None
        if address.teredo or address in _NAT64_LOCAL:
            return "a tunnelled address"
    if address.is_unspecified:
        return "the unspecified address"
    if address.is_loopback:
        return "a loopback address"
    if address.is_link_local:
        return "a link-local address (cloud metadata lives there)"
    if address.is_multicast:
        return "a multicast address"
    if isinstance(address, ipaddress.IPv4Address) and address in _SHARED:
        return "a shared (carrier-grade NAT) address"
    if isinstance(address, ipaddress.IPv6Address) and address.is_site_local:
        return "a site-local address"
    if address.is_private:
        return "a private address"
    if address.is_reserved or not address.is_global:
        return "a reserved address"
    return None


def literal_address(host: str) -> Address | None:
    """The address a host written as a number means, in every spelling a resolver accepts
    (IPv6 with or without brackets, dotted, decimal, octal, hex, short forms like 127.1), or
    None for a host name. A number no resolver could read is refused."""
    host = _plain_host(host)
    if ":" in host:
        try:
            return ipaddress.IPv6Address(host.split("%", 1)[0])
        except ValueError:
            raise EgressRefused(f"“{host}” is not a valid IPv6 address.") from None
    parts = host.split(".")
    if not all(_NUMBER.fullmatch(p) for p in parts):
        return None
    # The inet_aton rules, which getaddrinfo applies to a numeric host: up to four parts,
    # each decimal, octal (leading 0) or hex (0x); the last fills the bytes left.
    try:
        values = [_number(p) for p in parts]
    except ValueError:
        raise EgressRefused(f"“{host}” is not a valid address.") from None
    if len(values) > 4 or any(v > 255 for v in values[:-1]):
        raise EgressRefused(f"“{host}” is not a valid address.")
    last_bits = 8 * (5 - len(values))
    if values[-1] >= 1 << last_bits:
        raise EgressRefused(f"“{host}” is not a valid address.")
    number = 0
    for value in values[:-1]:
        number = number << 8 | value
    return ipaddress.IPv4Address(number << last_bits | values[-1])


def _number(part: str) -> int:
    if part.startswith("0x"):
        return int(part[2:] or "0", 16)
    if len(part) > 1 and part.startswith("0"):
        return int(part, 8)
    return int(part)


def _plain_host(host: str) -> str:
    # One trailing dot names the same host ("localhost." is localhost).
    host = host.strip().lower().strip("[]")
    return host[:-1] if host.endswith(".") else host


@dataclass(frozen=True)
class Target:
    scheme: str
    host: str
    port: int
    path: str
    by_name: bool  # allowed as a name: its addresses are the operator's business


def check_url(url: str, allow: Allow, *, resolve: bool = True) -> Target:
    """Check a URL before it is saved or used. Raises EgressRefused (the message says why).

    With `resolve`, a host name is looked up and every address it has now is checked too;
    a name that does not resolve is accepted (it is checked again when used).
    """
    target = _target(url, allow)
    if resolve and not target.by_name and literal_address(target.host) is None:
        try:
            addresses = _resolve(target.host, target.port, time.monotonic() + 5)
        except EgressError:
            return target
        _check_addresses(target, addresses, allow)
    return target


def _target(url: str, allow: Allow) -> Target:
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        raise EgressRefused(f"“{url[:200]}” is not a valid URL.") from None
    if parts.scheme not in ("http", "https"):
        raise EgressRefused("Give an http:// or https:// URL.")
    if parts.username is not None or parts.password is not None:
        raise EgressRefused("A URL with a user name or password in it is not accepted.")
    host = _plain_host(parts.hostname or "")
    if not host:
        raise EgressRefused(f"“{url[:200]}” names no host.")
    port = port or (443 if parts.scheme == "https" else 80)
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    target = Target(parts.scheme, host, port, path, by_name=allow.names(host))
    if target.by_name:
        return target
    address = literal_address(host)
    if address is not None:
        _check_addresses(target, [address], allow)
    elif host == "localhost" or host.endswith(".localhost"):
        raise EgressRefused(_refusal(host, "a loopback address"))
    return target


def _check_addresses(target: Target, addresses: Iterable[Address], allow: Allow) -> None:
    for address in addresses:
        why = address_refusal(address)
        if why and not allow.covers(address):
            shown = target.host if str(address) == target.host else f"{target.host} ({address})"
            raise EgressRefused(_refusal(shown, why))


def _refusal(shown: str, why: str) -> str:
    return (
        f"{shown} is {why}: the server sends requests only to public addresses, "
        f"unless its operator allows the host in {ALLOW_SETTING}."
    )


def _resolve(host: str, port: int, end: float) -> list[Address]:
    """Every address of the host, looked up once; the lookup is given until `end`."""
    found: dict = {}

    def lookup() -> None:
        try:
            found["infos"] = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as failure:
            found["error"] = failure

    thread = threading.Thread(target=lookup, daemon=True)
    thread.start()
    thread.join(max(0.0, end - time.monotonic()))
    if thread.is_alive():
        raise EgressTimeout(f"Looking up {host} took too long.")
    if "error" in found:
        raise EgressError(f"{host} could not be looked up.")
    addresses = []
    for _family, _type, _proto, _name, sockaddr in found["infos"]:
        address = ipaddress.ip_address(sockaddr[0].split("%", 1)[0])
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise EgressError(f"{host} has no address.")
    return addresses


@dataclass
class Reply:
    status: int
    headers: list[tuple[str, str]] = field(default_factory=list)
    body: bytes = b""


def fetch(
    method: str,
    url: str,
    *,
    allow: Allow,
    time_limit: float,
    max_bytes: int,
    headers: dict[str, str] | None = None,
    body: bytes = b"",
) -> Reply:
    """Send one request and read its reply, guarded: the host is resolved once and every
    address checked, the connection goes to a checked address (a second lookup cannot
    change it), a redirect is an error, the whole exchange ends within `time_limit` seconds
    however slowly the other side sends, and a reply body over `max_bytes` is refused
    without reading it whole (0: the body is not read, only the status).

    Raises EgressError (or a subclass) with a message that never holds the reply's body.
    """
    end = time.monotonic() + time_limit
    target = _target(url, allow)
    addresses = _resolve(target.host, target.port, end)
    if not target.by_name:
        _check_addresses(target, addresses, allow)
    sock = _connect(target, addresses, end)
    # A timer closes the socket at the deadline: a per-read timeout alone lets a receiver
    # that sends one byte a second keep the request open for as long as it likes.
    cut = threading.Event()
    watchdog = threading.Timer(max(0.0, end - time.monotonic()), _cut, args=(sock, cut))
    watchdog.daemon = True
    watchdog.start()
    connection = http.client.HTTPConnection(target.host, target.port)
    connection.sock = sock
    try:
        sent = {k: v for k, v in (headers or {}).items() if k.lower() not in _OWN_HEADERS}
        sent["Accept-Encoding"] = "identity"
        connection.request(method, target.path, body=body or None, headers=sent)
        reply = _read(connection.getresponse(), target, max_bytes)
        if not cut.is_set():
            return reply
    except EgressError:
        raise
    except (OSError, http.client.HTTPException, ValueError) as failure:
        if not (cut.is_set() or isinstance(failure, TimeoutError)):
            raise EgressError(f"The exchange with {target.host} failed: {_why(failure)}.") from None
    finally:
        watchdog.cancel()
        connection.close()
    # A reply cut at the deadline may look complete (the socket just ends): never kept.
    raise EgressTimeout(f"No complete reply from {target.host} within {time_limit:g} s.")


def _read(response: http.client.HTTPResponse, target: Target, max_bytes: int) -> Reply:
    status = response.status
    if 300 <= status < 400:
        raise EgressRedirect(
            f"{target.host} answered with a redirect (HTTP {status}); redirects are not followed."
        )
    headers = [
        (k, v)
        for k, v in response.getheaders()
        if k.lower() not in ("transfer-encoding", "content-encoding", "connection")
    ]
    if max_bytes == 0:
        return Reply(status, headers)
    too_large = EgressTooLarge(
        f"The reply from {target.host} is larger than {_size(max_bytes)}; it was not read."
    )
    length = response.getheader("Content-Length")
    if length and length.strip().isdigit() and int(length) > max_bytes:
        raise too_large
    chunks, size = [], 0
    while True:
        chunk = response.read(min(_CHUNK, max_bytes + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            raise too_large
    return Reply(status, headers, b"".join(chunks))


def _connect(target: Target, addresses: list[Address], end: float) -> socket.socket:
    failure: OSError | None = None
    for address in addresses:
        remaining = end - time.monotonic()
        if remaining <= 0:
            break
        try:
            sock = socket.create_connection((str(address), target.port), timeout=remaining)
        except OSError as error:
            failure = error
            continue
        if target.scheme != "https":
            return sock
        try:
            sock.settimeout(max(0.01, end - time.monotonic()))
            # The certificate is checked against the host name, not the pinned address.
            return ssl.create_default_context().wrap_socket(sock, server_hostname=target.host)
        except (OSError, ssl.SSLError) as error:
            sock.close()
            failure = error
    if failure is None or isinstance(failure, TimeoutError):
        raise EgressTimeout(f"Could not connect to {target.host} in time.")
    raise EgressError(f"Could not connect to {target.host}: {_why(failure)}.")


def _cut(sock: socket.socket, cut: threading.Event) -> None:
    cut.set()
    with contextlib.suppress(OSError):  # closed already
        sock.shutdown(socket.SHUT_RDWR)


def _why(failure: BaseException) -> str:
    # Never the exception's text for a malformed reply: http.client puts the offending
    # line of the reply in it, which is the other side's words.
    if isinstance(failure, ssl.SSLError):  # before ValueError: a failed check is both
        verify = getattr(failure, "verify_message", None)
        return f"TLS {failure.reason or 'handshake failed'}" + (f" ({verify})" if verify else "")
    if isinstance(failure, http.client.HTTPException | ValueError):
        return "not a valid HTTP reply"
    text = getattr(failure, "strerror", None) or type(failure).__name__
    return " ".join(str(text).split())[:120]


def _size(n: int) -> str:
    if n >= 1 << 20 and n % (1 << 20) == 0:
        return f"{n >> 20} MiB"
    if n >= 1 << 10 and n % (1 << 10) == 0:
        return f"{n >> 10} KiB"
    return f"{n} bytes"
