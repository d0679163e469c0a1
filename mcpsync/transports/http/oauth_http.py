"""The ``requests`` sessions that carry a server's OAuth traffic along its MCP route (:class:`OAuthHTTP`).

OAuth discovery (including the unauthenticated probe POSTed to the MCP URL), dynamic client registration and
the token endpoint use ``requests`` (see the README "Which HTTP library carries which traffic"), but on behalf
of one server they must go where that server's MCP requests go: a user whose MCP server is reachable only
through a corporate proxy, or only with a private CA or a client certificate, needs the authorization server
reached the same way. :class:`OAuthHTTP` turns a server's :class:`~mcpsync.transports.http.options.HTTPOptions`
into such a session:

- proxies: chosen per URL (and again per redirect) by the engine's own table
  (:func:`~mcpsync.transports.http.proxy.proxy_table`: explicit ``proxies=`` with their ``no_proxy``, else the
  ``*_PROXY`` / ``NO_PROXY`` environment with CIDR and ``*``, else the OS settings; nothing when
  ``trust_env=False``), then handed to ``requests`` explicitly; ``requests``' own environment reading is off.
  A ``socks*://`` proxy needs ``requests``' SOCKS support (PySocks: ``pip install 'requests[socks]'``); without
  it the request fails with a :class:`~mcpsync.errors.ConfigError` saying so, before anything is sent.
  A forward proxy's ``407`` is raised as ``requests.exceptions.ProxyError`` (as a refused CONNECT is), so the
  OAuth code reports a typed :class:`~mcpsync.errors.AuthError` rather than taking it for the server's answer.
- TLS: every ``https`` connection (and an ``https://`` proxy) uses the engine's own
  :func:`~mcpsync.transports.http.net.direct_ssl_context` (``verify=`` bool, CA bundle path, ``SSLContext`` or
  ``"system"``, ``REQUESTS_CA_BUNDLE`` when ``trust_env``, ``cert=``).
- netrc credentials are not added (``requests`` would add them to token requests when ``trust_env``).

Thread-safety: an :class:`OAuthHTTP` is immutable; each :meth:`OAuthHTTP.session` call builds a new session,
which (like any ``requests.Session`` used for independent requests) may be shared by threads.
"""

from __future__ import annotations

import ssl
from typing import Any, Dict, Mapping, Optional, Tuple
from urllib.parse import urlsplit

from ...errors import ConfigError
from .netbase import redact_url
from .options import HTTPOptions

__all__ = ["OAuthHTTP", "SOCKS_INSTALL_HINT", "oauth_http_from"]

SOCKS_INSTALL_HINT = "pip install 'requests[socks]'"


def _key_part(value: Any) -> Any:
    if isinstance(value, ssl.SSLContext):
        return ("ssl.SSLContext", id(value))
    if isinstance(value, (list, tuple)):
        return tuple(value)
    return value


class OAuthHTTP:
    """What the OAuth requests made for one server need of its HTTP settings (see the module docstring).

    ``key`` compares equal for equal settings, so an OAuth manager handed the same settings again (each
    reconnect builds a new transport) keeps its session and its pooled connections.
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
        return "OAuthHTTP(%r)" % (self.options,)

    def session(self, default_verify: Any = True) -> Any:
        """A new ``requests.Session`` following these settings; ``default_verify`` (the OAuth manager's own
        ``verify=``) applies when the server's ``verify`` is the default ``True``. Raises
        :class:`~mcpsync.errors.ConfigError` for a CA bundle that does not exist or an unreadable certificate."""
        from .proxy import proxy_table

        options = self.options
        if options.verify is True and default_verify is not True:
            fallback = HTTPOptions(verify=default_verify, cert=options.cert, trust_env=options.trust_env)
            context = _context(fallback)
            verify_off = default_verify is False
        else:
            context = _context(options)
            verify_off = options.verify is False
        return _make_session(proxy_table(options), context, verify_off)


def oauth_http_from(options: Mapping[str, Any]) -> Optional[OAuthHTTP]:
    """The :class:`OAuthHTTP` of a client built with keyword ``options`` (``Client``'s; those that are not HTTP
    settings are ignored), or None when its HTTP settings are invalid (building the client reports that)."""
    from .options import split_options

    kwargs = {k: v for k, v in options.items() if k not in ("auth", "bearer_token")}
    try:
        http_options, _ = split_options(kwargs)
    except ConfigError:
        return None
    return OAuthHTTP(http_options)


def _context(options: HTTPOptions) -> ssl.SSLContext:
    from .net import direct_ssl_context

    return direct_ssl_context(options)


def _make_session(table: Any, context: ssl.SSLContext, verify_off: bool) -> Any:
    import requests
    from requests.adapters import HTTPAdapter

    class _Adapter(HTTPAdapter):
        """Every pool (direct or through a proxy) verifies with the engine's ``SSLContext`` (which holds the
        client certificate too), whatever ``requests`` would pick from ``verify`` (its preloaded context for
        ``True``, ``ca_certs`` for a path)."""

        def get_connection_with_tls_context(
            self, request: Any, verify: Any, proxies: Any = None, cert: Any = None
        ) -> Any:
            from requests.exceptions import InvalidURL
            from requests.utils import select_proxy

            parts = urlsplit(request.url)
            try:
                port = parts.port
            except ValueError as exc:
                raise InvalidURL(exc, request=request) from None
            host_params = {"scheme": parts.scheme.lower(), "host": parts.hostname, "port": port}
            pool_kwargs = {"ssl_context": context, "cert_reqs": "CERT_NONE" if verify_off else "CERT_REQUIRED"}
            proxy = select_proxy(request.url, proxies)
            if proxy:
                manager = self.proxy_manager_for(proxy if "://" in proxy else "http://" + proxy)
            else:
                manager = self.poolmanager
            return manager.connection_from_host(**host_params, pool_kwargs=pool_kwargs)

        def proxy_manager_for(self, proxy: str, **kwargs: Any) -> Any:
            if proxy.lower().startswith("https://"):  # TLS to the proxy itself: verified as the server would be
                kwargs.setdefault("proxy_ssl_context", context)
            return super().proxy_manager_for(proxy, **kwargs)

    class _RoutedSession(requests.Session):
        """A session whose proxy for each URL is the engine's choice (module docstring)."""

        def _route(self, url: str) -> Dict[str, str]:
            proxy = table.url_for(url)
            if proxy is None:
                return {}
            scheme = urlsplit(proxy if "://" in proxy else "http://" + proxy).scheme.lower()
            if scheme.startswith("socks"):
                try:
                    import socks  # noqa: F401  (PySocks: what requests' SOCKS support needs)
                except ImportError:
                    raise ConfigError(
                        "the proxy for %s is a %s:// proxy: OAuth requests (discovery, registration, token) go "
                        "through requests, whose SOCKS support needs PySocks: %s"
                        % (redact_url(url), scheme, SOCKS_INSTALL_HINT)
                    ) from None
            target = urlsplit(url).scheme.lower() or "http"
            return {target: proxy}

        def request(self, method: Any, url: Any, *args: Any, **kwargs: Any) -> Any:
            kwargs["proxies"] = self._route(str(url))
            response = super().request(method, url, *args, **kwargs)
            _refuse_proxy_answer(response, self._route(response.url or str(url)))
            return response

        def rebuild_proxies(self, prepared_request: Any, proxies: Optional[Mapping[str, str]]) -> Dict[str, str]:
            """A redirect is routed afresh for its own URL (its host may be in ``no_proxy``, or not)."""
            routed: Dict[str, str] = super().rebuild_proxies(  # type: ignore[no-untyped-call]
                prepared_request, self._route(prepared_request.url)
            )
            return routed

    session = _RoutedSession()
    session.trust_env = False  # the engine's table already read the environment (when the server's trust_env)
    session.verify = not verify_off
    adapter = _Adapter()
    session.mount("https://", adapter)
    session.mount("http://", _Adapter())
    return session


def _refuse_proxy_answer(response: Any, proxies: Mapping[str, str]) -> None:
    """A ``407`` through a forward proxy is the proxy's answer, not the server's: raise it as ``requests``
    raises a refused CONNECT (``ProxyError``, naming no proxy address or credentials)."""
    if response.status_code != 407 or not proxies:
        return
    import requests

    response.close()
    raise requests.exceptions.ProxyError("the proxy refused the request (HTTP 407 Proxy Authentication Required)")
