"""The per-server HTTP settings both remote transports take (:class:`HTTPOptions`)."""

from __future__ import annotations

import ssl
from dataclasses import InitVar, dataclass, field
from typing import Any, Dict, Literal, Mapping, Optional, Protocol, Tuple, Union

from ...__version__ import __version__ as _mcpsync_version
from ...errors import ConfigError

__all__ = [
    "AuthHook",
    "DEFAULT_MAX_MESSAGE_SIZE",
    "HTTPOptions",
    "TransportKind",
    "USER_AGENT",
    "VerifyType",
    "split_options",
]

DEFAULT_MAX_MESSAGE_SIZE = 64 * 1024 * 1024
USER_AGENT = "mcpsync/%s" % _mcpsync_version

VerifyType = Union[bool, str, ssl.SSLContext]
#: The remote transports a client may use: ``auto`` (Streamable HTTP, falling back to legacy SSE), ``http``, ``sse``.
TransportKind = Literal["auto", "http", "sse"]


class AuthHook(Protocol):
    """What ``auth=`` takes: a ``requests.auth.AuthBase`` (such as ``OAuthManager.auth(name)``), or any callable
    that takes the prepared request, sets its headers and returns it."""

    def __call__(self, request: Any, /) -> Any: ...


@dataclass(frozen=True)
class HTTPOptions:
    """Per-server HTTP settings shared by the Streamable HTTP and legacy SSE transports; also what
    ``Client(url, http=HTTPOptions(verify="system", read_timeout=30))`` takes. Checked when built (a bad value is
    a ``ConfigError``); a frozen dataclass (setting an attribute raises AttributeError; ``dataclasses.replace(options,
    read_timeout=5)`` builds a changed copy) and thread-safe, so one object may serve many clients. Its repr shows
    header names, never their values or a token.

    A client's own ``headers=``, ``bearer_token=``, ``auth=`` and ``connect_timeout=`` are the usual place for
    those four: a client merges its ``headers`` over these (its own win), refuses a token or auth given in both
    places, and bounds its whole open with its own ``connect_timeout``.

    Args:
        headers: extra headers sent on every request (e.g. an API key).
        bearer_token: a static token sent as ``Authorization: Bearer <token>``.
        auth: an :class:`mcpsync.Auth` flow (e.g. ``OAuthManager.auth(name)``), or any ``requests.auth.AuthBase``
            (or callable ``auth(prepared_request)``); see docs/guides/http.md "Auth".
        verify: True (default CA bundle, or ``REQUESTS_CA_BUNDLE``), False, a CA bundle path,
            an ``ssl.SSLContext``, or ``"system"`` for the operating system's trust store
            (via the ``truststore`` package when installed).
        cert: a client certificate: a path, or a ``(cert, key)`` tuple.
        proxies: explicit proxies (``{"https": "http://user:pw@proxy:3128", "no_proxy": "..."}``); by default the
            ``HTTP(S)_PROXY`` / ``ALL_PROXY`` / ``NO_PROXY`` environment and the OS settings (resolved once).
        trust_env: read proxies, CA bundle and netrc credentials from the environment (once).
        connect_timeout: seconds to establish a TCP/TLS connection.
        read_timeout: seconds without a byte before a response or event stream is abandoned;
            None (default) waits as long as the call's own timeout allows.
        max_message_size: the largest single message accepted (default 64 MiB).
        pool_maxsize: connections kept per origin (at least the number of calls in flight).
        engine: removed: urllib3 carries every request (docs/guides/client.md, "Which HTTP library carries
            which traffic"). Passing it, whatever its value, is a ``ConfigError`` that says so, as is a leftover
            ``MCPSYNC_HTTP_ENGINE=requests`` in the environment (the variable selects nothing; ``auto`` and
            ``stdlib`` there are ignored).
        transport: ``"auto"`` (default: Streamable HTTP, falling back to legacy SSE; the client remembers what worked
            per URL), ``"http"`` or ``"sse"`` to force one.
        get_stream: Streamable HTTP only: open the optional GET stream for server-initiated messages (True).
        max_stream_retries: Streamable HTTP only: how often a broken response stream is resumed (3).
        reconnect: legacy SSE only: reconnect a broken event stream (True).
        max_reconnect_attempts: legacy SSE only: how often in a row (5).
        max_retry_delay: both: the longest wait a server's ``retry:`` field may ask for between reconnects (30 s).
    """

    headers: Mapping[str, str] = field(default_factory=dict, hash=False)
    bearer_token: Optional[str] = None
    auth: Any = field(default=None, hash=False)
    verify: VerifyType = True
    cert: Union[None, str, Tuple[str, str]] = None
    proxies: Optional[Mapping[str, str]] = field(default=None, hash=False)
    trust_env: bool = True
    connect_timeout: Optional[float] = 30.0
    read_timeout: Optional[float] = None
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
    pool_maxsize: int = 128
    engine: InitVar[Optional[str]] = None
    transport: Optional[TransportKind] = None
    get_stream: Optional[bool] = None
    max_stream_retries: Optional[int] = None
    reconnect: Optional[bool] = None
    max_reconnect_attempts: Optional[int] = None
    max_retry_delay: Optional[float] = None

    def __post_init__(self, engine: Optional[str]) -> None:
        _check_engine(engine)
        bearer_token, auth = self.bearer_token, self.auth
        if bearer_token is not None and auth is not None:
            raise ConfigError("pass either bearer_token or auth, not both")
        if bearer_token is not None and (not isinstance(bearer_token, str) or not bearer_token.strip()):
            raise ConfigError("bearer_token must be a non-empty string")
        if auth is not None and not callable(auth):
            raise ConfigError("auth must be an mcpsync.Auth or a requests.auth.AuthBase (a callable taking a request)")
        if not isinstance(self.max_message_size, int) or self.max_message_size <= 0:
            raise ConfigError("max_message_size must be a positive integer")
        if self.transport not in (None, "auto", "http", "sse"):
            raise ConfigError("transport must be 'auto', 'http' or 'sse', not %r" % (self.transport,))
        for key, value in (self.headers or {}).items():
            if not isinstance(key, str) or not isinstance(value, str) or "\n" in value or "\r" in value:
                raise ConfigError("headers must map strings to single-line strings (bad header %r)" % (key,))
        # private copies (a caller's dict changed later changes nothing here) and a usable pool size
        object.__setattr__(self, "headers", dict(self.headers or {}))
        object.__setattr__(self, "proxies", dict(self.proxies) if self.proxies is not None else None)
        object.__setattr__(self, "pool_maxsize", max(1, int(self.pool_maxsize)))

    def client_arguments(self) -> Dict[str, Any]:
        """The remote transports' keyword arguments these options stand for, as a client passes them (without
        ``headers``, ``bearer_token``, ``auth`` and ``connect_timeout``, which the client merges; None: the
        transport's default)."""
        out: Dict[str, Any] = {
            "verify": self.verify,
            "cert": self.cert,
            "proxies": self.proxies,
            "trust_env": self.trust_env,
            "read_timeout": self.read_timeout,
            "pool_maxsize": self.pool_maxsize,
            "max_message_size": self.max_message_size,
            "transport": self.transport,
            "get_stream": self.get_stream,
            "max_stream_retries": self.max_stream_retries,
            "reconnect": self.reconnect,
            "max_reconnect_attempts": self.max_reconnect_attempts,
            "max_retry_delay": self.max_retry_delay,
        }
        return {k: v for k, v in out.items() if v is not None}

    def __repr__(self) -> str:  # never show headers' values or tokens
        return "HTTPOptions(headers=%r, auth=%s, verify=%r, connect_timeout=%r, read_timeout=%r)" % (
            sorted(self.headers),
            "bearer" if self.bearer_token else type(self.auth).__name__ if self.auth else None,
            self.verify if not isinstance(self.verify, ssl.SSLContext) else "SSLContext",
            self.connect_timeout,
            self.read_timeout,
        )


_REMOVED = (
    "the engine option is gone: urllib3 carries every request mcpsync makes (MCP calls, OAuth, the registry), "
    "whatever the auth (mcpsync.Auth, bearer tokens, DPoP, requests.auth.AuthBase), proxy (http, https, socks4, "
    "socks5) and netrc configuration"
)


def _check_engine(engine: Optional[str]) -> None:
    """Nothing when ``engine`` is None; a ``ConfigError`` for any ``engine=`` (the option is gone) and for a
    leftover ``MCPSYNC_HTTP_ENGINE=requests`` (or a value that never was an engine)."""
    import os

    if engine is None:
        stale = (os.environ.get("MCPSYNC_HTTP_ENGINE") or "").strip()
        if stale.lower() == "requests":
            raise ConfigError("MCPSYNC_HTTP_ENGINE=requests: %s; unset the variable" % _REMOVED)
        if stale and stale.lower() not in ("auto", "stdlib"):
            raise ConfigError("MCPSYNC_HTTP_ENGINE=%r is not an engine (unset the variable)" % (stale[:40],))
        return
    raise ConfigError("engine=%r: %s; drop the engine argument" % (str(engine)[:40], _REMOVED))


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
    "engine",
)


def split_options(options: Dict[str, Any]) -> Tuple[HTTPOptions, Dict[str, Any]]:
    """Split keyword options into an :class:`HTTPOptions` and the rest (transport-specific)."""
    http_kw = {k: options.pop(k) for k in list(options) if k in _OPTION_NAMES}
    return HTTPOptions(**http_kw), options
