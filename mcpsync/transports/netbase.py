"""What both HTTP engines share: URL origins, redaction, and the engine-neutral errors.

It imports nothing heavy (no ``requests``, no ``http.client``): :mod:`mcpsync.transports.remote`,
:mod:`mcpsync.transports.http_direct` and the transports import it.

The errors are what the standard-library engine (:mod:`mcpsync.transports.http_direct`) raises;
:func:`mcpsync.transports.remote.convert_request_exception` turns them, like the ``requests``
engine's exceptions, into the typed :class:`~mcpsync.errors.TransportError` subclasses. Their
class names follow ``requests`` (``ConnectTimeout``, ``ReadTimeout``), which is what
:func:`mcpsync.transports.http_calls._is_read_timeout` recognises.
"""

from __future__ import annotations

from typing import Tuple
from urllib.parse import urlsplit

from ..errors import ConfigError

__all__ = [
    "ConnectFailed",
    "ConnectTimeout",
    "ConnectionBroken",
    "EngineError",
    "ReadTimeout",
    "TLSFailed",
    "TooManyRedirects",
    "check_url",
    "origin",
    "redact_url",
    "same_origin",
]


class EngineError(Exception):
    """A failure of the standard-library HTTP engine (converted to a ``TransportError`` by the transports)."""


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


class TooManyRedirects(EngineError):
    """More than five redirects in a row."""


_DEFAULT_PORTS = {"http": 80, "https": 443}


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
