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
:class:`~mcpsync.errors.ProxyError`). It implements :class:`~mcpsync.wire.http_call.OAuthHTTPCall`, the
narrow interface the OAuth code (which never imports the transports) sends through. It sends no static
headers of the server's (its ``Authorization`` belongs to the MCP endpoint) and no netrc credentials.

Thread-safety: an :class:`OAuthRoute` is immutable; an :class:`OAuthNet` serves any number of threads and its
:meth:`OAuthNet.close` may be called from any thread.
"""

from __future__ import annotations

import ssl
from typing import TYPE_CHECKING, Any, Mapping, Optional, Tuple

from ...errors import ConfigError, ConnectError, ProxyError, TransportError
from ...wire.http_call import MAX_BODY, OAuthAnswer, OAuthHTTPCall
from .contract import ConnectFailed, ConnectTimeout, NetError, ProxyRefused, TLSFailed
from .options import USER_AGENT, HTTPOptions

if TYPE_CHECKING:
    from .net import FirstUseNet

__all__ = ["OAuthNet", "OAuthRoute", "oauth_route_from"]


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
        from .net import FirstUseNet

        options = self.options
        if options.verify is True and default_verify is not True:
            options = HTTPOptions(
                verify=default_verify, cert=options.cert, trust_env=options.trust_env, proxies=options.proxies
            )
        headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "gzip, deflate"}
        return OAuthNet(FirstUseNet(options, headers, name="oauth", pool_maxsize=self.options.pool_maxsize))


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


class OAuthNet(OAuthHTTPCall):
    """The urllib3 connections of one server's OAuth requests (module docstring), made on the first request."""

    def __init__(self, nets: "FirstUseNet") -> None:
        self._nets = nets

    def exchange(
        self, method: str, url: str, headers: Mapping[str, str], body: Optional[bytes], timeout: float, follow: bool
    ) -> OAuthAnswer:
        """One request, at most ``MAX_BODY + 1`` bytes of its answer; same-origin redirects followed when
        ``follow`` (the pools' rules). Blocks up to ``timeout`` for the connect and for each read."""
        net = self._nets.pool(url)
        if net is None:
            raise TransportError("the OAuth HTTP connections are closed")
        try:
            resp = net.send(method, url, body, headers, (timeout, timeout), follow=follow)
            try:
                data = resp.read(MAX_BODY + 1)
            finally:
                resp.close()
        except ProxyRefused as exc:
            raise ProxyError(str(exc)) from None
        except (ConnectFailed, ConnectTimeout, TLSFailed) as exc:
            raise ConnectError(str(exc)) from None
        except NetError as exc:
            raise TransportError(str(exc)) from None
        return OAuthAnswer(resp.status_code, resp.headers, data, resp.url)

    def close(self) -> None:
        """Close every connection (idempotent; later requests fail)."""
        self._nets.close()
