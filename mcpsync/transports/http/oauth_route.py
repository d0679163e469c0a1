"""A server's OAuth requests on its MCP route: :class:`OAuthRoute` and the :class:`OAuthNet` it opens.

OAuth discovery (including the unauthenticated probe POSTed to the MCP URL), dynamic client registration and
the token endpoint are sent, on behalf of one server, where that server's MCP requests go and the same way: a
user whose MCP server is reachable only through a corporate proxy, or only with a private CA or a client
certificate, needs the authorization server reached like that too. :class:`OAuthNet` is a
:class:`~mcpsync.transports.http.pool.PoolNet` (urllib3) built from the server's
:class:`~mcpsync.transports.http.options.HTTPOptions` as the transport's own is: the same proxy table
(explicit ``proxies=`` with their ``no_proxy``, else the ``*_PROXY`` / ``NO_PROXY`` environment with CIDR and
``*``, else the OS settings; nothing when ``trust_env=False``; SOCKS through the ``socks`` extra), the same
TLS context (``verify=``, ``cert=``), the same request checks and error mapping (a forward proxy's ``407`` is a
:class:`~mcpsync.errors.ProxyError`). It implements :class:`~mcpsync.auth.http_hook.OAuthHTTPCall`, the
narrow interface the OAuth code (which never imports the transports) sends through. It sends no static
headers of the server's (its ``Authorization`` belongs to the MCP endpoint) and no netrc credentials.

Thread-safety: an :class:`OAuthRoute` is immutable; an :class:`OAuthNet` serves any number of threads and its
:meth:`OAuthNet.close` may be called from any thread.
"""

from __future__ import annotations

import ssl
import threading
from typing import Any, Mapping, Optional, Tuple
from urllib.parse import urljoin

from ...errors import ConfigError, ConnectError, ProxyError, TransportError
from .contract import ConnectFailed, ConnectTimeout, NetError, ProxyRefused, TLSFailed, redact_url
from .options import USER_AGENT, HTTPOptions

__all__ = ["MAX_OAUTH_BODY", "OAuthAnswer", "OAuthNet", "OAuthRoute", "oauth_route_from"]

#: The largest OAuth answer read (as the auth package's ``MAX_BODY``).
MAX_OAUTH_BODY = 1 << 20
_MAX_REDIRECTS = 5


def _key_part(value: Any) -> Any:
    if isinstance(value, ssl.SSLContext):
        return ("ssl.SSLContext", id(value))
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return value


class OAuthRoute:
    """What the OAuth requests made for one server need of its HTTP settings (see the module docstring).

    ``key`` compares equal for equal settings, so an OAuth manager handed the same settings again (each
    reconnect builds a new transport) keeps its connections.
    """

    __slots__ = ("options", "key")

    def __init__(self, options: HTTPOptions) -> None:
        self.options = options
        proxies = options.proxies
        self.key: Tuple[Any, ...] = (
            _key_part(options.verify),
            _key_part(options.cert),
            tuple(sorted(proxies.items())) if proxies is not None else None,
            options.trust_env,
        )

    def __repr__(self) -> str:  # never the proxies' credentials
        return "OAuthRoute(%r)" % (self.options,)

    def session(self, default_verify: Any = True) -> "OAuthNet":
        """New connections following these settings; ``default_verify`` (the OAuth manager's own ``verify=``)
        applies when the server's ``verify`` is the default ``True``. Raises :class:`~mcpsync.errors.ConfigError`
        for a CA bundle that does not exist or an unreadable certificate. Opens nothing yet."""
        from .net import direct_ssl_context
        from .proxy import proxy_table

        options = self.options
        if options.verify is True and default_verify is not True:
            options = HTTPOptions(
                verify=default_verify, cert=options.cert, trust_env=options.trust_env, proxies=options.proxies
            )
        proxies = proxy_table(options)
        context = direct_ssl_context(options)
        if proxies.needs_tls():
            proxies.tls = context
        return OAuthNet(proxies, context, options.pool_maxsize)


def oauth_route_from(options: Mapping[str, Any]) -> Optional[OAuthRoute]:
    """The :class:`OAuthRoute` of a client built with keyword ``options`` (``Client``'s; those that are not HTTP
    settings are ignored), or None when its HTTP settings are invalid (building the client reports that)."""
    from .options import split_options

    kwargs = {k: v for k, v in options.items() if k not in ("auth", "bearer_token")}
    try:
        http_options, _ = split_options(kwargs)
    except ConfigError:
        return None
    return OAuthRoute(http_options)


class OAuthAnswer:
    """An answer read whole (:class:`~mcpsync.auth.http_hook.OAuthAnswer`)."""

    __slots__ = ("status", "headers", "body", "url")

    def __init__(self, status: int, headers: Mapping[str, str], body: bytes, url: str) -> None:
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url


class OAuthNet:
    """The urllib3 connections of one server's OAuth requests (module docstring). The pool is made on the
    first request (a :class:`~mcpsync.transports.http.pool.PoolNet` needs a first URL)."""

    def __init__(self, proxies: Any, context: ssl.SSLContext, pool_maxsize: int = 10) -> None:
        self._proxies = proxies
        self._context = context
        self._maxsize = pool_maxsize
        self._lock = threading.Lock()
        self._net: Any = None
        self._closed = False

    def _pool(self, url: str) -> Any:
        from .net import refuse_unknown_proxy
        from .pool import PoolNet

        refuse_unknown_proxy(url, self._proxies)
        with self._lock:
            if self._closed:
                raise TransportError("the OAuth HTTP connections are closed")
            if self._net is None:
                self._net = PoolNet(
                    url,
                    {"User-Agent": USER_AGENT, "Accept-Encoding": "gzip, deflate"},
                    ssl_context=self._context,
                    pool_maxsize=self._maxsize,
                    name="oauth",
                    proxies=self._proxies or None,
                )
            return self._net

    def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str],
        body: Optional[bytes] = None,
        timeout: float = 30.0,
        follow_redirects: bool = True,
    ) -> OAuthAnswer:
        """One request, its answer read whole (:class:`~mcpsync.auth.http_hook.OAuthHTTPCall`): blocks up to
        ``timeout`` for the connect and for each read."""
        for _ in range(_MAX_REDIRECTS + 1):
            net = self._pool(url)
            try:
                resp = net.send(method, url, body, headers, (timeout, timeout), follow=follow_redirects)
                try:
                    data = resp.read(MAX_OAUTH_BODY + 1)
                finally:
                    resp.close()
            except ProxyRefused as exc:
                raise ProxyError(str(exc)) from None
            except (ConnectFailed, ConnectTimeout, TLSFailed) as exc:
                raise ConnectError(str(exc)) from None
            except NetError as exc:
                raise TransportError(str(exc)) from None
            if len(data) > MAX_OAUTH_BODY:
                raise TransportError("the answer of %s is larger than %d bytes" % (redact_url(url), MAX_OAUTH_BODY))
            location = resp.headers.get("Location")
            redirect = resp.status_code in (301, 302, 303, 307, 308) and location
            if not (follow_redirects and method == "GET" and redirect):
                return OAuthAnswer(resp.status_code, resp.headers, data, resp.url)
            url = urljoin(resp.url, location)  # a discovery document on another origin (no credential is sent)
        raise TransportError("more than %d redirects from %s" % (_MAX_REDIRECTS, redact_url(url)))

    def close(self) -> None:
        """Close every connection (idempotent; later requests fail)."""
        with self._lock:
            self._closed = True
            net, self._net = self._net, None
        if net is not None:
            net.close()
