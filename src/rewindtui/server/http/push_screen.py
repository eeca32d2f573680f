"""Which push notification URLs the embedded server will POST to (a task and its token).

Whoever holds the server's token may register a push URL; without screening, a server run with
``--host 0.0.0.0`` could be made to call internal services (another loopback port, the cloud
metadata address 169.254.169.254, a private network). So a URL is refused when its host
**resolves** to an address that is not public unicast -- loopback, link-local, private (RFC 1918,
IPv6 unique local), shared (100.64.0.0/10), multicast, reserved, unspecified; an IPv4-mapped IPv6
address is judged as the IPv4 address it carries (the policy of a2a-sdk's
``a2a/utils/push_url_validator.py``, 1.3) -- unless the server's ``push_allow`` setting allows that
range (``--push-allow`` / ``REWINDTUI_PUSH_ALLOW``: ``loopback``, ``private``, ``link-local`` or a
CIDR / address, comma separated).

The check runs when a config is registered (the caller is told why at once) and again before every
delivery, and the delivery connects to the address that was checked (the URL's host is only the
``Host`` header and, over https, the TLS server name), so a name that resolves elsewhere the second
time (DNS rebinding) cannot move the POST to an address that was not checked.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address
#: (host, port) -> the addresses it resolves to
Resolver = Callable[[str, int], Awaitable[list[str]]]

#: the words ``push_allow`` takes besides a CIDR or an address
RANGES: dict[str, tuple[str, ...]] = {
    "loopback": ("127.0.0.0/8", "::1/128"),
    "link-local": ("169.254.0.0/16", "fe80::/10"),
    "private": ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10", "fc00::/7"),
}


class PushURLRefused(ValueError):
    """A push URL the server will not POST to; ``str()`` says why and which setting allows it."""


def parse_allow(entries: Iterable[str]) -> tuple[Network, ...]:
    """The networks ``push_allow`` names. ValueError (naming the entry) for one that is neither a
    known word nor a CIDR / address."""
    found: list[Network] = []
    for raw in entries:
        for entry in (e.strip().lower() for e in raw.split(",")):
            if not entry:
                continue
            if entry in RANGES:
                found.extend(ipaddress.ip_network(n) for n in RANGES[entry])
                continue
            try:
                found.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                raise ValueError(
                    f"push allow {entry!r}: expected {', '.join(RANGES)}, a CIDR (10.1.0.0/16) or an address"
                ) from None
    return tuple(found)


def _address(text: str) -> Address | None:
    try:
        addr = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None
    mapped = getattr(addr, "ipv4_mapped", None)
    return mapped if mapped is not None else addr


def not_public(addr: Address) -> bool:
    """Not a public unicast destination (a2a-sdk's policy, see the module)."""
    return (
        not addr.is_global
        or addr.is_loopback
        or addr.is_link_local
        or addr.is_multicast
        or addr.is_reserved
        or addr.is_unspecified
    )


def _kind(addr: Address) -> str:
    if addr.is_loopback:
        return "loopback"
    if addr.is_link_local:
        return "link-local (e.g. cloud metadata)"
    if addr.is_private or not addr.is_global:
        return "private"
    return "not a public address"


async def system_resolver(host: str, port: int) -> list[str]:
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


@dataclass(frozen=True)
class Target:
    """Where a delivery goes: ``url`` with the checked address as its host, the ``Host`` header
    and (https) the TLS server name of the URL the client gave."""

    url: str
    host_header: str
    sni: str | None


@dataclass
class PushScreen:
    allow: Sequence[Network] = ()
    resolve: Resolver = system_resolver

    def _allowed(self, addr: Address) -> bool:
        return any(addr.version == net.version and addr in net for net in self.allow)

    async def check(self, url: str) -> Target:
        """The URL's target when every address its host resolves to may be posted to;
        PushURLRefused (why, and the setting) otherwise."""
        try:
            parts = urlsplit(url)
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            raise PushURLRefused(f"a push notification URL that cannot be read: {url!r}") from None
        if parts.scheme not in ("http", "https"):
            raise PushURLRefused(f"a push notification URL must be http(s), not {url!r}")
        host = parts.hostname
        if not host:
            raise PushURLRefused(f"a push notification URL names no host: {url!r}")
        literal = _address(host)
        if literal is not None:
            addresses = [str(literal)]
        else:
            try:
                addresses = await self.resolve(host, port)
            except OSError:
                raise PushURLRefused(f"the push notification host {host!r} cannot be resolved") from None
        if not addresses:
            raise PushURLRefused(f"the push notification host {host!r} resolves to no address")
        checked: Address | None = None
        for text in addresses:
            addr = _address(text)
            if addr is None:
                raise PushURLRefused(f"the push notification host {host!r} resolves to {text!r}, not an address")
            if not_public(addr) and not self._allowed(addr):
                named = host if literal is not None else f"{host} ({addr})"
                raise PushURLRefused(
                    f"push notifications to {named} are refused: a {_kind(addr)} address; "
                    "the server's push allow setting (--push-allow / REWINDTUI_PUSH_ALLOW) lets a range through"
                )
            checked = checked or addr
        assert checked is not None
        netloc = f"[{checked}]" if checked.version == 6 else str(checked)
        if parts.port is not None:
            netloc += f":{parts.port}"
        userinfo, _, host_header = parts.netloc.rpartition("@")
        if userinfo:
            netloc = f"{userinfo}@{netloc}"  # credentials in the URL still go (as httpx sends them)
        target = urlunsplit((parts.scheme, netloc, parts.path or "/", parts.query, ""))
        return Target(target, host_header, host if parts.scheme == "https" and literal is None else None)
