"""What every HTTP layer shares: URL origins, redaction, the engine protocol and the engine-neutral errors.

It imports nothing heavy (no ``requests``, no ``http.client``): :mod:`mcpsync.transports.http.remote`,
:mod:`mcpsync.transports.http.pool` and the transports import it.

The errors are what a server's urllib3 pools (:mod:`mcpsync.transports.http.pool`) raise, urllib3's own
translated;
:func:`mcpsync.transports.http.remote.convert_request_exception` turns them into the typed
:class:`~mcpsync.errors.TransportError` subclasses; :func:`mcpsync.transports.http.calls._is_read_timeout`
recognises ``ConnectTimeout`` and ``ReadTimeout`` by class.
"""

from __future__ import annotations

import logging
from types import MappingProxyType
from typing import Any, Mapping, Optional, Protocol, Tuple
from urllib.parse import urlsplit

from ...errors import ConfigError

logger = logging.getLogger("mcpsync.transports.http.transport")

__all__ = [
    "ConnectFailed",
    "ConnectTimeout",
    "ConnectionBroken",
    "EngineError",
    "HTTPEngine",
    "ProxyRefused",
    "ReadTimeout",
    "TLSFailed",
    "TooManyRedirects",
    "check_url",
    "origin",
    "redact_url",
    "refuse_redirect",
    "same_origin",
]


class HTTPEngine(Protocol):
    """What a remote transport sends with (:class:`~mcpsync.transports.http.pool.PoolNet`, or an auth layer
    of :mod:`~mcpsync.transports.http.auth` around it). Thread-safe; answers are streamed (``status_code``,
    ``headers``, ``read1``, ``read``, ``release_conn``, ``set_read_timeout``, ``shutdown``, ``close``)."""

    kind: str  # "urllib3": the one stack

    def send(
        self,
        method: str,
        url: str,
        body: Optional[bytes],
        headers: Mapping[str, str],
        timeout: Tuple[Optional[float], Optional[float]],
        stream: bool = True,
    ) -> Any: ...

    def get(self, url: str, headers: Mapping[str, str], timeout: Tuple[Optional[float], Optional[float]]) -> Any: ...

    def delete(self, url: str, headers: Mapping[str, str], timeout: Tuple[Optional[float], Optional[float]]) -> Any: ...

    def interrupt(self) -> None: ...

    def abort(self) -> None: ...

    def close(self) -> None: ...

    def after_fork_in_child(self) -> None: ...


class EngineError(Exception):
    """A failure of an HTTP request (converted to a ``TransportError`` by the transports)."""


class ConnectFailed(EngineError):
    """The TCP connection could not be made (refused, unreachable, name not resolved)."""


class ConnectTimeout(EngineError):
    """The TCP (and TLS) connection was not made within the connect timeout."""


class ReadTimeout(EngineError):
    """No byte arrived (or could be sent) within the read timeout."""


class ConnectionBroken(EngineError):
    """The connection broke after it was made (reset, closed mid-answer, a malformed HTTP answer)."""


class TLSFailed(EngineError):
    """The TLS handshake failed (certificate not trusted, wrong host name, protocol error)."""


class ProxyRefused(EngineError):
    """The HTTP proxy answered a tunnel request (or a forwarded request) with an error status: ``status``
    (407: it wants credentials), or 0 when it broke off without an answer."""

    def __init__(self, message: str, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class TooManyRedirects(EngineError):
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
