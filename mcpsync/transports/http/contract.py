"""The contract between the layers of the HTTP stack: what a transport sends with, what that raises, URL rules.

* :class:`HTTPNet`: what a transport sends with, a server's urllib3 pools
  (:class:`~mcpsync.transports.http.pool.PoolNet`) or an auth around them
  (:class:`~mcpsync.transports.http.auth.AuthNet`).
* :class:`NetError` and its subclasses: what a net raises, urllib3's and the socket's errors translated by
  :mod:`~mcpsync.transports.http.pool`; :func:`mcpsync.transports.http.remote.convert_request_exception` turns
  them into the typed :class:`~mcpsync.errors.TransportError` subclasses.
* :func:`origin`, :func:`same_origin`, :func:`check_url`, :func:`redact_url`, :func:`refuse_redirect`.

It imports nothing heavy (no urllib3, no ``http.client``): every layer imports it.
"""

from __future__ import annotations

import logging
from types import MappingProxyType
from typing import Any, Mapping, Optional, Protocol, Tuple
from urllib.parse import urlsplit

from ...errors import ConfigError

logger = logging.getLogger(__name__)

#: ``(connect, read)`` timeouts in seconds of one request (None: unbounded).
Timeouts = Tuple[Optional[float], Optional[float]]

__all__ = [
    "ConnectFailed",
    "ConnectTimeout",
    "ConnectionBroken",
    "NetError",
    "HTTPNet",
    "ProxyRefused",
    "ReadTimeout",
    "TLSFailed",
    "Timeouts",
    "TooManyRedirects",
    "check_url",
    "origin",
    "redact_url",
    "refuse_redirect",
    "same_origin",
]


class HTTPNet(Protocol):
    """What a remote transport sends with (:class:`~mcpsync.transports.http.pool.PoolNet`, or an auth layer
    of :mod:`~mcpsync.transports.http.auth` around it). Thread-safe; answers are streamed (``status_code``,
    ``headers``, ``read1``, ``read``, ``release_conn``, ``set_read_timeout``, ``shutdown``, ``close``)."""

    kind: str  # "urllib3": the one stack

    def send(self, method: str, url: str, body: Optional[bytes], headers: Mapping[str, str], timeout: Timeouts) -> Any:
        """Send one request; the answer's body is streamed (see :class:`~mcpsync.transports.http.pool.PoolNet`)."""

    def get(self, url: str, headers: Mapping[str, str], timeout: Timeouts) -> Any: ...

    def delete(self, url: str, headers: Mapping[str, str], timeout: Timeouts) -> Any: ...

    def interrupt(self) -> None: ...

    def abort(self) -> None: ...

    def close(self) -> None: ...

    def after_fork_in_child(self) -> None: ...


class NetError(Exception):
    """A failed HTTP request, as a net raises it (converted to a ``TransportError`` by the transports)."""


class ConnectFailed(NetError):
    """The TCP connection could not be made (refused, unreachable, name not resolved)."""


class ConnectTimeout(NetError):
    """The TCP (and TLS) connection was not made within the connect timeout."""


class ReadTimeout(NetError):
    """No byte arrived (or could be sent) within the read timeout."""


class ConnectionBroken(NetError):
    """The connection broke after it was made (reset, closed mid-answer, a malformed HTTP answer)."""


class TLSFailed(NetError):
    """The TLS handshake failed (certificate not trusted, wrong host name, protocol error)."""


class ProxyRefused(NetError):
    """The HTTP proxy answered a tunnel request (or a forwarded request) with an error status: ``status``
    (407: it wants credentials), or 0 when it broke off without an answer."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class TooManyRedirects(NetError):
    """More than five redirects in a row."""


_DEFAULT_PORTS = MappingProxyType({"http": 80, "https": 443})


def origin(url: str) -> Tuple[str, str, int]:
    """``(scheme, host, port)`` of ``url``, with the default port filled in and the host lower-cased."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = None
    return scheme, (parts.hostname or "").lower(), port or _DEFAULT_PORTS.get(scheme, 0)


def same_origin(a: str, b: str) -> bool:
    """True when both URLs share scheme, host and port (RFC 6454)."""
    return origin(a) == origin(b)


def check_url(url: str) -> str:
    """Validate an MCP endpoint URL (http or https, with a host)."""
    if not isinstance(url, str):
        raise ConfigError("the server URL must be a string")
    parts = urlsplit(url)
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise ConfigError("not an http(s) URL: %r" % (redact_url(url),))
    return url


def redact_url(url: str) -> str:
    """``url`` without userinfo and query string (they may hold credentials), for logs and errors."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<invalid URL>"
    host = parts.hostname or ""
    if parts.port:
        host = "%s:%d" % (host, parts.port)
    return "%s://%s%s%s" % (parts.scheme, host, parts.path, "?..." if parts.query else "")


def refuse_redirect(from_url: str, to_url: str) -> bool:
    """True (with a warning) when a redirect from ``from_url`` leads to another origin: never followed
    (credentials and session ids must not leave the server's origin)."""
    if same_origin(to_url, from_url):
        return False
    logger.warning("not following a redirect from %s to another origin (%s)", redact_url(from_url), redact_url(to_url))
    return True
