"""Which URLs a card may make mcpsync fetch or connect to (:class:`URLPolicy`).

Rules, for a catalog, a card, every redirect on the way and the remote a card describes:

- the scheme is ``https``; plain ``http`` only for a host allowed with ``allow_local``; ``file://`` and every
  other scheme are refused, and so is a URL with credentials (``user:pass@``);
- the host is not loopback, private, link-local, multicast, reserved or unspecified (IPv4 and IPv6, IPv4-mapped
  included), nor ``localhost``/``*.localhost``, nor a name that resolves to such an address -- unless the host
  is allowed with ``allow_local`` (``True``: every local host, for local development; or a list of hosts such
  as ``["127.0.0.1"]``);
- a card's remote lives on the card's own domain: the host the card was asked for, a subdomain of it, or a
  parent domain of it (``allow_other_domains=True`` lifts this).

A name is resolved (``socket.getaddrinfo``) to check its addresses; a name that does not resolve passes here
(connecting will fail). The check and the connection resolve separately: a DNS answer that changes in between
(rebinding) is not caught here, so keep an egress rule where that matters. Immutable; thread-safe.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from typing import Callable, FrozenSet, Iterable, List, Optional, Union
from urllib.parse import urlsplit

from .errors import CardDomainMismatch, CardUnsafeURL

__all__ = ["AllowLocal", "URLPolicy", "host_of", "same_site"]

AllowLocal = Union[bool, Iterable[str]]
Resolver = Callable[[str], List[str]]


def _resolve(host: str) -> List[str]:
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return []
    return [str(info[4][0]) for info in infos]


def _non_public(address: str) -> bool:
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return bool(ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_multicast or ip.is_reserved
                or ip.is_unspecified or not ip.is_global)


def host_of(url: str) -> str:
    """The lower-cased host of ``url`` (no brackets, no trailing dot); "" when it has none."""
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        return ""
    return host.rstrip(".").lower()


def same_site(host: str, anchor: str) -> bool:
    """True when ``host`` is ``anchor``, a subdomain of it, or a parent domain of it (never a bare top-level
    label, and IP addresses only when equal)."""
    host, anchor = host.rstrip(".").lower(), anchor.rstrip(".").lower()
    if not host or not anchor:
        return False
    if host == anchor:
        return True
    for value in (host, anchor):
        try:
            ipaddress.ip_address(value)
            return False
        except ValueError:
            pass
    if "." not in host or "." not in anchor:
        return False
    return host.endswith("." + anchor) or anchor.endswith("." + host)


@dataclass(frozen=True)
class URLPolicy:
    """The rules above, with their two opt-ins. ``resolver`` (default ``socket.getaddrinfo``) maps a host name
    to its addresses."""

    allow_local: Union[bool, FrozenSet[str]] = False
    allow_other_domains: bool = False
    resolver: Optional[Resolver] = None

    @classmethod
    def make(cls, allow_local: AllowLocal = False, allow_other_domains: bool = False,
             resolver: Optional[Resolver] = None) -> "URLPolicy":
        """A policy from the public keyword arguments (``allow_local`` a bool or an iterable of hosts)."""
        local: Union[bool, FrozenSet[str]]
        if isinstance(allow_local, bool):
            local = allow_local
        elif isinstance(allow_local, str):
            local = frozenset([allow_local.strip("[]").rstrip(".").lower()])
        else:
            local = frozenset(h.strip("[]").rstrip(".").lower() for h in allow_local)
        return cls(local, bool(allow_other_domains), resolver)

    def _local_ok(self, host: str) -> bool:
        return self.allow_local is True or (isinstance(self.allow_local, frozenset) and host in self.allow_local)

    def check(self, url: str, what: str = "URL") -> str:
        """``url`` if it may be fetched or connected to; else raises :class:`~.errors.CardUnsafeURL`."""
        if not isinstance(url, str) or len(url) > 8192 or any(c in url for c in "\x00\r\n\t "):
            raise CardUnsafeURL("%s %r is not a usable URL" % (what, str(url)[:200]), url=str(url)[:200])
        try:
            parts = urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise CardUnsafeURL("%s %r is not a usable URL: %s" % (what, url[:200], exc), url=url[:200]) from None
        del port
        scheme = parts.scheme.lower()
        host = host_of(url)
        if scheme not in ("https", "http"):
            raise CardUnsafeURL("%s %r: only https URLs are used (not %s)" % (what, url[:200], scheme or "a "
                                                                            "relative URL"), url=url[:200])
        if not host:
            raise CardUnsafeURL("%s %r has no host" % (what, url[:200]), url=url[:200])
        if parts.username is not None or parts.password is not None:
            raise CardUnsafeURL("%s %r carries credentials" % (what, url[:200]), url=url[:200])
        local_ok = self._local_ok(host)
        if scheme == "http" and not local_ok:
            raise CardUnsafeURL("%s %r: plain http is refused (https, or allow_local for a local host)"
                                % (what, url[:200]), url=url[:200])
        if local_ok:
            return url
        if host == "localhost" or host.endswith(".localhost") or _non_public(host):
            raise CardUnsafeURL("%s %r points at a local or private address (allow_local=[%r] allows it)"
                                % (what, url[:200], host), url=url[:200])
        try:
            ipaddress.ip_address(host)
            return url  # a public address literal
        except ValueError:
            pass
        for address in (self.resolver or _resolve)(host):
            if _non_public(address):
                raise CardUnsafeURL("%s %r: %s resolves to the non-public address %s (allow_local=[%r] allows it)"
                                    % (what, url[:200], host, address, host), url=url[:200])
        return url

    def check_remote(self, url: str, anchor_url: str) -> str:
        """``url`` (a remote's, variables filled in) checked like :meth:`check` and against the card's domain
        (the host of ``anchor_url``, where the card was asked for). Raises CardUnsafeURL, CardDomainMismatch."""
        self.check(url, "the card's remote")
        anchor = host_of(anchor_url)
        if not self.allow_other_domains and anchor and not same_site(host_of(url), anchor):
            raise CardDomainMismatch(
                "the card served from %s points at %s, another domain (allow_other_domains=True accepts it)"
                % (anchor, host_of(url)), url=url[:200])
        return url
