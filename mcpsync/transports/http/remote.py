"""What the remote transports share besides their endpoint: status mapping, error conversion, the fallback policy.

It imports neither transport (:mod:`mcpsync.transports.http.select` builds them); what both start from and
their lifecycle state is :class:`~mcpsync.transports.http.endpoint.RemoteEndpoint`.

* :func:`parse_www_authenticate`, :func:`error_for_status` turn an HTTP answer into the
  typed errors of :mod:`mcpsync.errors` (never with a token in the message);
  :func:`convert_request_exception` does the same for a failed request (the errors of
  :mod:`~mcpsync.transports.http.contract`).
* :func:`should_fall_back`: the ``transport="auto"`` policy (Streamable HTTP, then legacy HTTP+SSE
  only on 400/404/405); :mod:`mcpsync.transports.http.select` builds the ordered candidates (the
  client keeps which kind worked per URL in its :class:`~mcpsync.client.memory.ServerMemory`).
"""

from __future__ import annotations

import re
import time
from typing import Any, Dict, List, Optional

from ...errors import (
    AuthRequired,
    ConnectError,
    ConnectionClosed,
    HTTPStatusError,
    InsufficientScope,
    MCPError,
    ProxyError,
    RemoteError,
    TransportError,
)
from .calls import _is_read_timeout
from .contract import (
    ConnectFailed,
    ConnectTimeout,
    NetError,
    ProxyRefused,
    ReadTimeout,
    TLSFailed,
    TooManyRedirects,
    redact_url,
)

__all__ = [
    "convert_request_exception",
    "error_for_status",
    "parse_retry_after",
    "parse_www_authenticate",
    "should_fall_back",
]


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------

_TOKEN = re.compile(r"[A-Za-z0-9!#$%&'*+\-.^_`|~/]+")


def parse_www_authenticate(value: Optional[str]) -> Dict[str, str]:
    """Parse a ``WWW-Authenticate`` header into the Bearer challenge's parameters.

    Returns lower-cased parameter names (``resource_metadata``, ``scope``, ``error``,
    ``error_description``, ``realm``...) plus ``scheme``. With several challenges the
    Bearer one wins, else the first. Tolerates bad syntax (returns what it could read).
    """
    if not value:
        return {}
    text = value
    n = len(text)
    challenges: List[Dict[str, str]] = []
    current: Optional[Dict[str, str]] = None
    pos = 0
    while True:
        while pos < n and text[pos] in " \t,":
            pos += 1
        if pos >= n:
            break
        m = _TOKEN.match(text, pos)
        if not m:
            break
        tok = m.group()
        j = m.end()
        while j < n and text[j] in " \t":
            j += 1
        if j < n and text[j] == "=" and current is not None:
            k = j
            while k < n and text[k] == "=":
                k += 1
            after = k
            while after < n and text[after] in " \t":
                after += 1
            if k - j > 1 or after >= n or text[after] == ",":
                current.setdefault("token68", tok + text[j:k])
                pos = k
                continue
            pos = after
            if text[pos] == '"':
                pos += 1
                out = []
                while pos < n and text[pos] != '"':
                    if text[pos] == "\\" and pos + 1 < n:
                        pos += 1
                    out.append(text[pos])
                    pos += 1
                pos += 1
                val = "".join(out)
            else:
                end = pos
                while end < n and text[end] not in ", \t":
                    end += 1
                val = text[pos:end]
                pos = end
            current.setdefault(tok.lower(), val)
        else:
            current = {"scheme": tok}
            challenges.append(current)
            pos = j
    for ch in challenges:
        if ch.get("scheme", "").lower() == "bearer":
            return ch
    return challenges[0] if challenges else {}


def _short_body(response: Any, limit: int = 500) -> str:
    try:
        raw = response.read(limit + 1, decode_content=True) or b""
    except Exception:  # noqa: BLE001 - a body we cannot read is just absent
        return ""
    return raw[:limit].decode("utf-8", "replace")


def error_for_status(response: Any, body: Optional[str] = None, *, what: str = "request", **context: Any) -> MCPError:
    """The typed error for an unexpected HTTP status (the caller closes the response)."""
    status = response.status_code
    if body is None:
        body = _short_body(response)
    if status == 401:
        challenge = parse_www_authenticate(response.headers.get("WWW-Authenticate"))
        desc = challenge.get("error_description") or challenge.get("error") or ""
        return AuthRequired(
            "HTTP 401: authorization required" + (" (%s)" % desc if desc else ""),
            www_authenticate=challenge,
            status_code=401,
            **context,
        )
    if status == 403:
        challenge = parse_www_authenticate(response.headers.get("WWW-Authenticate"))
        if challenge.get("error") == "insufficient_scope":
            return InsufficientScope(
                "HTTP 403: insufficient scope" + (" (needs %s)" % challenge["scope"] if challenge.get("scope") else ""),
                www_authenticate=challenge,
                status_code=403,
                **context,
            )
    reason = getattr(response, "reason", "") or ""
    return HTTPStatusError(
        "HTTP %d %s for %s to %s" % (status, reason, what, redact_url(response.url or "")),
        status_code=status,
        body=body,
        retry_after=parse_retry_after(response.headers.get("Retry-After")),
        **context,
    )


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date); None when absent or invalid."""
    if not isinstance(value, str) or not value.strip():
        return None
    value = value.strip()
    if value.isdigit():
        return float(int(value))
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when is None or when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def convert_request_exception(exc: BaseException, url: str, **context: Any) -> TransportError:
    """Turn a failed request (the errors of :mod:`~mcpsync.transports.http.contract`) or a socket error into a
    :class:`TransportError`.

    An :class:`~mcpsync.MCPError` (e.g. ``AuthRequired`` raised by an ``auth=`` flow such as OAuth) is returned
    unchanged, with the context filled in; anything else (an ``OSError``, or what a user's ``requests`` auth
    raised) is a ``ConnectionClosed`` with its text (query strings removed).
    """
    if isinstance(exc, MCPError):
        return exc.with_context(**context)  # type: ignore[return-value]
    where = redact_url(url)
    if isinstance(exc, NetError):  # the pools' own (their messages name the URL, redacted)
        if isinstance(exc, ProxyRefused):
            return ProxyError(str(exc), status_code=exc.status, **context)
        if isinstance(exc, (ConnectFailed, ConnectTimeout, TLSFailed)):
            return ConnectError(str(exc), **context)
        if isinstance(exc, ReadTimeout):
            return ConnectionClosed("no data from %s within the read timeout" % where, **context)
        if isinstance(exc, TooManyRedirects):
            return HTTPStatusError("too many redirects from %s" % where, status_code=0, **context)
        return ConnectionClosed(str(exc), **context)
    if _is_read_timeout(exc):
        return ConnectionClosed("no data from %s within the read timeout" % where, **context)
    return ConnectionClosed("HTTP request to %s failed: %s" % (where, _exc_text(exc)), **context)


def _exc_text(exc: BaseException) -> str:
    """A short reason without URLs' query strings (they may hold credentials)."""
    text = str(exc)
    text = re.sub(r"(https?://[^\s'\"?]*)\?[^\s'\")]*", r"\1?...", text)
    return text[:300]


# ---------------------------------------------------------------------------
# Transport selection: "auto" = Streamable HTTP, then legacy HTTP+SSE
# ---------------------------------------------------------------------------

_FALLBACK_STATUSES = (400, 404, 405)


def should_fall_back(exc: BaseException) -> bool:
    """True when a Streamable HTTP connect/negotiation failure means "try legacy HTTP+SSE".

    Only an HTTP 400, 404 or 405 without a recognised modern JSON-RPC error body
    qualifies (the spec's backward-compatibility rule). 401/403 (auth), 5xx,
    network errors, timeouts and JSON-RPC errors never do: they would be masked.
    """
    if isinstance(exc, RemoteError):
        return False
    if isinstance(exc, HTTPStatusError):
        return exc.status_code in _FALLBACK_STATUSES
    cause = getattr(exc, "__cause__", None)
    if isinstance(cause, HTTPStatusError) and isinstance(exc, TransportError):
        return cause.status_code in _FALLBACK_STATUSES
    return False
