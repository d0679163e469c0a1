"""What the remote transports share: options, the ``requests`` session, status mapping, the fallback policy.

It imports neither transport (:mod:`mcpsync.transports.select` builds them).

``requests`` is imported inside functions only (never at ``import mcpsync`` time).

* :class:`HTTPOptions` holds the per-server HTTP settings (headers, auth, TLS, timeouts).
* :func:`build_session` makes the one ``requests.Session`` a transport uses: environment
  settings (proxies, ``REQUESTS_CA_BUNDLE``, netrc) are resolved once here and the session
  is then switched to ``trust_env=False`` so no request rescans ``os.environ``; redirects
  are followed only within the same origin; connections use TCP keep-alive.
* :func:`parse_www_authenticate`, :func:`error_for_status` turn an HTTP answer into the
  typed errors of :mod:`mcpsync.errors` (never with a token in the message).
* :func:`should_fall_back`, :func:`remember` / :func:`remembered`: the ``transport="auto"``
  policy (Streamable HTTP, then legacy HTTP+SSE only on 400/404/405) and the per-URL memory
  of what worked; :mod:`mcpsync.transports.select` builds the ordered candidates.
"""

from __future__ import annotations

import logging
import re
import socket
import ssl
import threading
import time
import weakref
from typing import Any, Dict, List, Mapping, Optional, Tuple, Union
from urllib.parse import urljoin, urlsplit

from ..__version__ import __version__ as _mcpsync_version
from ..errors import (
    AuthRequired,
    ConfigError,
    ConnectError,
    ConnectionClosed,
    HTTPStatusError,
    InsufficientScope,
    MCPError,
    RemoteError,
    TransportError,
)
from ..wire.drops import DropLog
from .base import TransportSink
from .http_calls import _is_read_timeout

__all__ = [
    "DEFAULT_MAX_MESSAGE_SIZE",
    "HTTPOptions",
    "abort_connections",
    "build_session",
    "close_session",
    "convert_request_exception",
    "error_for_status",
    "forget",
    "origin",
    "parse_www_authenticate",
    "remember",
    "remembered",
    "same_origin",
    "should_fall_back",
]

logger = logging.getLogger("mcpsync.transports.http")

DEFAULT_MAX_MESSAGE_SIZE = 64 * 1024 * 1024
USER_AGENT = "mcpsync/%s" % _mcpsync_version

VerifyType = Union[bool, str, ssl.SSLContext]


class HTTPOptions:
    """Per-server HTTP settings shared by the Streamable HTTP and legacy SSE transports.

    Args:
        headers: extra headers sent on every request (e.g. an API key).
        bearer_token: a static token sent as ``Authorization: Bearer <token>``.
        auth: any ``requests.auth.AuthBase`` (or callable ``auth(prepared_request)``), e.g. the OAuth flow.
        verify: True (default CA bundle, or ``REQUESTS_CA_BUNDLE``), False, a CA bundle path,
            an ``ssl.SSLContext``, or ``"system"`` for the operating system's trust store
            (via the ``truststore`` package when installed).
        cert: a client certificate: a path, or a ``(cert, key)`` tuple.
        proxies: explicit proxies (``{"https": "http://proxy:3128"}``); by default the
            ``HTTP(S)_PROXY`` / ``NO_PROXY`` environment is honoured (resolved once).
        trust_env: read proxies, CA bundle and netrc credentials from the environment (once).
        connect_timeout: seconds to establish a TCP/TLS connection.
        read_timeout: seconds without a byte before a response or event stream is abandoned;
            None (default) waits as long as the call's own timeout allows.
        max_message_size: the largest single message accepted (default 64 MiB).
        pool_maxsize: connections kept per origin (at least the number of calls in flight).
    """

    def __init__(
        self,
        *,
        headers: Optional[Mapping[str, str]] = None,
        bearer_token: Optional[str] = None,
        auth: Any = None,
        verify: VerifyType = True,
        cert: Union[None, str, Tuple[str, str]] = None,
        proxies: Optional[Mapping[str, str]] = None,
        trust_env: bool = True,
        connect_timeout: Optional[float] = 30.0,
        read_timeout: Optional[float] = None,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        pool_maxsize: int = 128,
    ) -> None:
        if bearer_token is not None and auth is not None:
            raise ConfigError("pass either bearer_token or auth, not both")
        if bearer_token is not None and (not isinstance(bearer_token, str) or not bearer_token.strip()):
            raise ConfigError("bearer_token must be a non-empty string")
        if auth is not None and not callable(auth):
            raise ConfigError("auth must be a requests.auth.AuthBase (a callable taking the prepared request)")
        if not isinstance(max_message_size, int) or max_message_size <= 0:
            raise ConfigError("max_message_size must be a positive integer")
        for key, value in (headers or {}).items():
            if not isinstance(key, str) or not isinstance(value, str) or "\n" in value or "\r" in value:
                raise ConfigError("headers must map strings to single-line strings (bad header %r)" % (key,))
        self.headers: Dict[str, str] = dict(headers or {})
        self.bearer_token = bearer_token
        self.auth = auth
        self.verify = verify
        self.cert = cert
        self.proxies = dict(proxies) if proxies is not None else None
        self.trust_env = trust_env
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.max_message_size = max_message_size
        self.pool_maxsize = max(1, int(pool_maxsize))

    def __repr__(self) -> str:  # never show headers' values or tokens
        return "HTTPOptions(headers=%r, auth=%s, verify=%r, connect_timeout=%r, read_timeout=%r)" % (
            sorted(self.headers),
            "bearer" if self.bearer_token else type(self.auth).__name__ if self.auth else None,
            self.verify if not isinstance(self.verify, ssl.SSLContext) else "SSLContext",
            self.connect_timeout,
            self.read_timeout,
        )


_OPTION_NAMES = (
    "headers",
    "bearer_token",
    "auth",
    "verify",
    "cert",
    "proxies",
    "trust_env",
    "connect_timeout",
    "read_timeout",
    "max_message_size",
    "pool_maxsize",
)


def split_options(options: Dict[str, Any]) -> Tuple[HTTPOptions, Dict[str, Any]]:
    """Split keyword options into an :class:`HTTPOptions` and the rest (transport-specific)."""
    http_kw = {k: options.pop(k) for k in list(options) if k in _OPTION_NAMES}
    return HTTPOptions(**http_kw), options


# ---------------------------------------------------------------------------
# URLs and origins
# ---------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------
# The requests session
# ---------------------------------------------------------------------------

_classes: Dict[str, Any] = {}
_classes_lock = threading.Lock()


def _requests_classes() -> Dict[str, Any]:
    """Build (once) the requests subclasses; requests is imported here, lazily."""
    with _classes_lock:
        if _classes:
            return _classes
        import requests
        from requests.adapters import HTTPAdapter
        from urllib3.connection import HTTPConnection

        class _SameOriginSession(requests.Session):
            """Follows a redirect only when it stays on the same origin."""

            def get_redirect_target(self, resp):  # type: ignore[no-untyped-def]
                target = super().get_redirect_target(resp)
                if target is None:
                    return None
                absolute = urljoin(resp.url, target if isinstance(target, str) else target.decode("latin-1"))
                if not same_origin(absolute, resp.url):
                    logger.warning(
                        "not following a redirect from %s to another origin (%s)",
                        redact_url(resp.url),
                        redact_url(absolute),
                    )
                    return None
                return target

        class _Adapter(HTTPAdapter):
            """Keep-alive sockets, an optional SSLContext, a pool as large as the calls in flight."""

            def __init__(self, ssl_context: Optional[ssl.SSLContext] = None, **kwargs: Any) -> None:
                self._mcpsync_ssl_context = ssl_context
                # every connection this adapter's pools made (weakly): close() wakes the threads blocked on them
                self._mcpsync_conns: "weakref.WeakSet[Any]" = weakref.WeakSet()
                super().__init__(**kwargs)

            def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
                self._mcpsync_pool_kwargs(kwargs)
                super().init_poolmanager(*args, **kwargs)
                self._mcpsync_track(self.poolmanager)

            def proxy_manager_for(self, proxy: str, **kwargs: Any) -> Any:
                self._mcpsync_pool_kwargs(kwargs)
                manager = super().proxy_manager_for(proxy, **kwargs)
                self._mcpsync_track(manager)
                return manager

            def _mcpsync_track(self, manager: Any) -> None:
                """Make the pools of ``manager`` register each new connection in ``_mcpsync_conns``."""
                if getattr(manager, "_mcpsync_tracked", False):
                    return
                conns = self._mcpsync_conns
                new_pool = manager._new_pool

                def tracked_pool(*args: Any, **kwargs: Any) -> Any:
                    pool = new_pool(*args, **kwargs)
                    new_conn = pool._new_conn

                    def tracked_conn() -> Any:
                        conn = new_conn()
                        conns.add(conn)
                        return conn

                    pool._new_conn = tracked_conn
                    return pool

                manager._new_pool = tracked_pool
                manager._mcpsync_tracked = True

            def mcpsync_abort(self) -> None:
                """Shut down every socket of this adapter's connections, in use or idle (never raises)."""
                for conn in list(self._mcpsync_conns):
                    sock = getattr(conn, "sock", None)
                    if sock is not None:
                        try:
                            sock.shutdown(socket.SHUT_RDWR)
                        except OSError:
                            pass

            def _mcpsync_pool_kwargs(self, kwargs: Dict[str, Any]) -> None:
                options = list(HTTPConnection.default_socket_options)
                options.append((socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1))
                kwargs.setdefault("socket_options", options)
                if self._mcpsync_ssl_context is not None:
                    kwargs["ssl_context"] = self._mcpsync_ssl_context

            def __getstate__(self) -> Dict[str, Any]:  # pragma: no cover - pickling a session
                state: Dict[str, Any] = super().__getstate__()  # type: ignore[misc]
                state.pop("_mcpsync_ssl_context", None)
                state.pop("_mcpsync_conns", None)
                return state

        class _BearerAuth(requests.auth.AuthBase):
            """``Authorization: Bearer <token>``; the token never appears in repr()."""

            def __init__(self, token: str) -> None:
                self._token = token

            def __call__(self, r):  # type: ignore[no-untyped-def]
                r.headers["Authorization"] = "Bearer " + self._token
                return r

            def __repr__(self) -> str:
                return "<BearerAuth ***>"

        _classes.update(session=_SameOriginSession, adapter=_Adapter, bearer=_BearerAuth, requests=requests)
        return _classes


def _system_context() -> ssl.SSLContext:
    try:
        import truststore

        context: ssl.SSLContext = truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        return context
    except ImportError:
        return ssl.create_default_context()


def build_session(url: str, options: HTTPOptions) -> Any:
    """One ``requests.Session`` for one server, with the environment resolved once."""
    classes = _requests_classes()
    requests = classes["requests"]
    session = classes["session"]()
    session.max_redirects = 5
    verify = options.verify
    ssl_context: Optional[ssl.SSLContext] = None
    if isinstance(verify, ssl.SSLContext):
        ssl_context, verify = verify, True
    elif verify == "system":
        ssl_context, verify = _system_context(), True
    elif not isinstance(verify, (bool, str)):
        session.close()
        raise ConfigError("verify must be a bool, a CA bundle path, an ssl.SSLContext or 'system'")
    for prefix in ("https://", "http://"):
        session.mount(
            prefix,
            classes["adapter"](
                ssl_context=ssl_context,
                pool_connections=4,
                pool_maxsize=options.pool_maxsize,
                max_retries=0,
            ),
        )
    if options.trust_env:
        env_proxies = requests.utils.get_environ_proxies(url)
        proxies = dict(env_proxies)
        if verify is True and ssl_context is None:
            import os

            bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE")
            if bundle:
                verify = bundle
    else:
        proxies = {}
    if options.proxies is not None:
        proxies = dict(options.proxies)
    auth = options.auth
    if options.bearer_token is not None:
        auth = classes["bearer"](options.bearer_token)
    elif auth is None and options.trust_env:
        auth = requests.utils.get_netrc_auth(url)
    session.trust_env = False  # everything from the environment is resolved above, once
    session.proxies = proxies
    session.verify = verify
    session.cert = options.cert
    session.auth = auth
    session.headers = requests.structures.CaseInsensitiveDict(
        {"User-Agent": USER_AGENT, "Accept-Encoding": "gzip, deflate"}
    )
    session.headers.update(options.headers)
    return session


def abort_connections(session: Any) -> None:
    """Shut down the sockets of every connection ``session`` made, in use or idle (never raises).

    A thread blocked waiting for an answer on one of them (a POST whose server stalls) wakes up
    with an error at once; ``close()`` calls this so no caller outlives it.
    """
    for adapter in list(getattr(session, "adapters", {}).values()):
        abort = getattr(adapter, "mcpsync_abort", None)
        if abort is not None:
            abort()


def close_session(session: Any) -> None:
    """Close a ``requests.Session`` and every pooled connection it holds, now (never raises).

    ``Session.close()`` alone only forgets the pools with urllib3 >= 2.x's PoolManager.clear(),
    leaving their idle keep-alive sockets open until garbage collection; each pool is closed
    here first (a connection still in use is closed when it is handed back).
    """
    try:
        for adapter in list(getattr(session, "adapters", {}).values()):
            managers = [getattr(adapter, "poolmanager", None)]
            managers.extend(list(getattr(adapter, "proxy_manager", {}).values()))
            for manager in managers:
                pools = getattr(manager, "pools", None)
                if pools is None:
                    continue
                for key in list(pools.keys()):
                    try:
                        pool = pools[key]
                    except KeyError:
                        continue
                    pool.close()
    except Exception:  # noqa: BLE001 - closing must not raise
        logger.debug("closing the connection pools failed", exc_info=True)
    try:
        session.close()
    except Exception:  # noqa: BLE001
        pass


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
        raw = response.raw.read(limit + 1, decode_content=True) or b""
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
    """Turn a ``requests`` / socket exception into a :class:`TransportError`.

    An :class:`~mcpsync.MCPError` (e.g. ``AuthRequired`` raised by an ``auth=`` hook such as the OAuth
    flow) is returned unchanged, with the context filled in.
    """
    if isinstance(exc, MCPError):
        return exc.with_context(**context)  # type: ignore[return-value]
    requests = _requests_classes()["requests"]
    where = redact_url(url)
    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return ConnectError("timed out connecting to %s" % where, **context)
    if isinstance(exc, requests.exceptions.SSLError):
        return ConnectError("TLS error talking to %s: %s" % (where, _exc_text(exc)), **context)
    if isinstance(exc, requests.exceptions.ProxyError):
        return ConnectError("proxy error reaching %s: %s" % (where, _exc_text(exc)), **context)
    if isinstance(exc, requests.exceptions.ReadTimeout) or _is_read_timeout(exc):
        # requests' ReadTimeout, and urllib3's ReadTimeoutError / socket.timeout raised while a body is read
        # (the transports turn a call's read timeout into RequestTimeout before getting here)
        return ConnectionClosed("no data from %s within the read timeout" % where, **context)
    if isinstance(exc, requests.exceptions.ConnectionError):
        text = _exc_text(exc)
        if _is_connect_failure(exc):
            return ConnectError("cannot connect to %s: %s" % (where, text), **context)
        return ConnectionClosed("connection to %s broken: %s" % (where, text), **context)
    if isinstance(exc, requests.exceptions.TooManyRedirects):
        return HTTPStatusError("too many redirects from %s" % where, status_code=0, **context)
    return ConnectionClosed("HTTP request to %s failed: %s" % (where, _exc_text(exc)), **context)


def _is_connect_failure(exc: BaseException) -> bool:
    from urllib3 import exceptions as urllib3_errors

    connect_errors: Tuple[type, ...] = (urllib3_errors.NewConnectionError, ConnectionRefusedError)
    # urllib3 < 2 has no NameResolutionError (its name failures are NewConnectionErrors)
    name_error = getattr(urllib3_errors, "NameResolutionError", None)
    if isinstance(name_error, type):
        connect_errors += (name_error,)
    seen = set()
    cur: Optional[BaseException] = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        if isinstance(cur, connect_errors):
            return True
        reason = getattr(cur, "reason", None)
        if isinstance(reason, BaseException):
            cur = reason
            continue
        args = getattr(cur, "args", ())
        nxt = args[0] if args and isinstance(args[0], BaseException) else None
        cur = nxt or cur.__cause__ or cur.__context__
    return False


def _exc_text(exc: BaseException) -> str:
    """A short reason without URLs' query strings (they may hold credentials)."""
    text = str(exc)
    text = re.sub(r"(https?://[^\s'\"?]*)\?[^\s'\")]*", r"\1?...", text)
    return text[:300]


# ---------------------------------------------------------------------------
# Transport selection: "auto" = Streamable HTTP, then legacy HTTP+SSE
# ---------------------------------------------------------------------------

_FALLBACK_STATUSES = (400, 404, 405)
_memory: Dict[str, str] = {}
_memory_lock = threading.Lock()


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


def _memory_key(url: str) -> str:
    parts = urlsplit(url)
    return "%s://%s%s?%s" % (parts.scheme.lower(), (parts.netloc or "").lower(), parts.path or "/", parts.query)


def remember(url: str, kind: str) -> None:
    """Record that ``kind`` ("http" or "sse") worked for ``url`` (process-wide)."""
    if kind not in ("http", "sse"):
        raise ValueError("kind must be 'http' or 'sse'")
    with _memory_lock:
        _memory[_memory_key(url)] = kind


def remembered(url: str) -> Optional[str]:
    """The transport kind that last worked for ``url``, or None."""
    with _memory_lock:
        return _memory.get(_memory_key(url))


def forget(url: Optional[str] = None) -> None:
    """Forget what worked for ``url`` (or for every URL)."""
    with _memory_lock:
        if url is None:
            _memory.clear()
        else:
            _memory.pop(_memory_key(url), None)


class RemoteState:
    """The attributes :func:`init_remote` gives every remote transport (declared for type checkers)."""

    url: str
    options: HTTPOptions
    name: str
    _max_retry_delay: float
    _http: Any  # the requests.Session (requests is imported lazily)
    _fast: Any  # the FastSender over _http (the per-call path, see http_fast.py)
    _sink: Optional[TransportSink]
    _lock: threading.Lock
    _closed: bool
    _closing: threading.Event
    _close_reported: bool
    _drops: DropLog  # malformed events and frames dropped by the readers (rate-limited log)


def init_remote(
    transport: RemoteState, url: str, name: Optional[str], options: Dict[str, Any], max_retry_delay: float, what: str
) -> None:
    """The state every remote transport starts with: URL, options, name, one requests.Session, flags."""
    transport.url = check_url(url)
    transport.options, rest = split_options(dict(options))
    if rest:
        raise ConfigError("unknown %s transport option(s): %s" % (what, ", ".join(sorted(rest))))
    transport.name = name or urlsplit(url).hostname or "server"
    transport._max_retry_delay = float(max_retry_delay)
    transport._http = build_session(transport.url, transport.options)
    from .http_fast import FastSender

    transport._fast = FastSender(transport._http)
    transport._sink = None
    transport._lock = threading.Lock()
    transport._closed = False
    transport._closing = threading.Event()
    transport._close_reported = False
    transport._drops = DropLog(logger, transport.name)
