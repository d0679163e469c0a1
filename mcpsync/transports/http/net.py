"""The HTTP connections of one remote transport, built once per server (:func:`make_net`).

Every MCP request (Streamable HTTP and legacy SSE, both eras) goes through the server's urllib3 pools,
:class:`~mcpsync.transports.http.pool.PoolNet`, whatever the configuration: an :class:`~mcpsync.httpauth.Auth` flow
(OAuth, bearer, DPoP) or a ``requests`` auth runs around it (:mod:`~mcpsync.transports.http.auth`), proxies
(``http``, ``https``, ``socks4(a)``, ``socks5(h)``) are chosen per URL by :mod:`~mcpsync.transports.http.proxy`
and netrc is read there too.
A proxy URL of any other scheme is a :class:`~mcpsync.errors.ConfigError` naming it (:func:`refuse_unknown_proxy`).
``requests`` is imported only when a ``requests`` auth is used (by :mod:`~mcpsync.transports.http.auth`).
"""

from __future__ import annotations

import logging
import ssl
import threading
from typing import TYPE_CHECKING, Mapping, Optional
from urllib.parse import urlsplit

from ...errors import ConfigError
from .contract import HTTPNet, redact_url
from .options import USER_AGENT, HTTPOptions

if TYPE_CHECKING:
    from .pool import PoolNet
    from .proxy import ProxyTable

__all__ = ["FirstUseNet", "direct_ssl_context", "make_net", "refuse_unknown_proxy"]

logger = logging.getLogger(__name__)


def _system_context() -> ssl.SSLContext:
    try:
        import truststore

        context: ssl.SSLContext = truststore.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        return context
    except ImportError:
        return ssl.create_default_context()


def direct_ssl_context(options: HTTPOptions) -> ssl.SSLContext:
    """The TLS settings of a server's connections, as ``requests`` would verify (its CA bundle rules)."""
    import os

    verify = options.verify
    if isinstance(verify, ssl.SSLContext):
        context = verify
    elif verify == "system":
        context = _system_context()
    elif verify is False:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif verify is True or isinstance(verify, str):
        bundle: Optional[str] = verify if isinstance(verify, str) else None
        if bundle is None and options.trust_env:
            bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE") or None
        if bundle is None:
            try:
                import certifi  # what requests verifies with by default

                bundle = certifi.where()
            except ImportError:  # pragma: no cover - certifi comes with requests
                bundle = None
        if bundle is not None and not os.path.exists(bundle):
            raise ConfigError("the CA bundle %r does not exist" % (bundle,))
        if bundle is not None and os.path.isdir(bundle):
            context = ssl.create_default_context(capath=bundle)
        else:
            context = ssl.create_default_context(cafile=bundle)
    else:
        raise ConfigError("verify must be a bool, a CA bundle path, an ssl.SSLContext or 'system'")
    cert = options.cert
    if cert is not None:
        if isinstance(verify, ssl.SSLContext):
            raise ConfigError("pass the client certificate inside the SSLContext given as verify")
        try:
            if isinstance(cert, str):
                context.load_cert_chain(cert)
            else:
                context.load_cert_chain(cert[0], cert[1])
        except (OSError, ssl.SSLError) as exc:
            raise ConfigError("cannot load the client certificate: %s" % (exc,)) from None
    return context


def refuse_unknown_proxy(url: str, proxies: "ProxyTable") -> None:
    """Raise :class:`~mcpsync.errors.ConfigError` when ``proxies`` (given, from the environment or from the OS
    settings) send ``url`` to a proxy whose scheme the pools do not speak (they speak
    :data:`~mcpsync.transports.http.proxy.SCHEMES`: every scheme ``requests`` with PySocks speaks). The error
    names the scheme, never the proxy's address or credentials."""
    from .proxy import SCHEMES

    found = proxies.url_for(url)
    if found is None:
        return
    scheme = urlsplit(found if "://" in found else "http://" + found).scheme.lower()
    if scheme not in SCHEMES:
        what = "a %s:// proxy" % scheme if scheme else "a proxy URL without a valid scheme"
        raise ConfigError(
            "the proxy for %s is %s; mcpsync speaks %s proxies only: fix the proxies= option or "
            "the *_PROXY / NO_PROXY environment variables"
            % (redact_url(url), what, ", ".join(k + "://" for k in SCHEMES))
        )


def make_net(url: str, options: HTTPOptions, name: str = "server") -> HTTPNet:
    """The HTTP connections of one transport to ``url``: a :class:`~mcpsync.transports.http.pool.PoolNet` with
    ``options``' headers, TLS settings, proxies and netrc credentials resolved now, once, and its auth run around it
    (:func:`~mcpsync.transports.http.auth.with_auth`). Raises :class:`~mcpsync.errors.ConfigError` for settings it
    cannot honour (a proxy of an unknown scheme, a missing CA bundle, an unreadable client certificate)."""
    from .pool import PoolNet
    from .proxy import netrc_authorization, proxy_table

    proxies = proxy_table(options)
    refuse_unknown_proxy(url, proxies)

    headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "gzip, deflate"}
    headers.update(options.headers)
    if options.bearer_token is not None:
        headers["Authorization"] = "Bearer " + options.bearer_token
    elif options.auth is None and options.trust_env and not any(k.lower() == "authorization" for k in headers):
        credentials = netrc_authorization(url)  # as requests does: only when nothing else authorizes
        if credentials is not None:
            headers["Authorization"] = credentials
    context = None
    if urlsplit(url).scheme.lower() == "https":
        context = direct_ssl_context(options)
        if options.verify is False:  # said once per transport, as urllib3's InsecureRequestWarning would
            logger.warning("TLS certificate verification is off for %s (verify=False)", redact_url(url))
    from .auth import with_auth

    if proxies.needs_tls():  # an https:// proxy is verified as a server would be (verify=, cert=)
        proxies.tls = context if context is not None else direct_ssl_context(options)
    net = PoolNet(
        url, headers, ssl_context=context, pool_maxsize=options.pool_maxsize, name=name, proxies=proxies or None
    )
    return with_auth(net, options.auth)


class FirstUseNet:
    """The connections of requests made on a server's or a user's behalf beside MCP calls (a server's OAuth
    requests, the registry client): a :class:`~mcpsync.transports.http.pool.PoolNet` made from ``options`` on the
    first request (a ``PoolNet`` starts from a first URL) with ``headers`` on every request.

    The proxies and TLS settings are resolved when it is made (a :class:`~mcpsync.errors.ConfigError` for a CA
    bundle that does not exist or an unreadable certificate); nothing is opened before the first request. No
    netrc, no static ``Authorization``. Thread-safe; :meth:`close` may be called from any thread, never blocks.
    """

    def __init__(
        self,
        options: HTTPOptions,
        headers: Mapping[str, str],
        *,
        name: str,
        pool_maxsize: int,
        deadlines: bool = False,
    ) -> None:
        from .proxy import proxy_table

        self._proxies = proxy_table(options)
        self._context = direct_ssl_context(options)
        if self._proxies.needs_tls():  # an https:// proxy is verified as the server would be
            self._proxies.tls = self._context
        self._headers = dict(headers)
        self._name = name
        self._maxsize = pool_maxsize
        self._deadlines = deadlines
        self._lock = threading.Lock()
        self._net: Optional["PoolNet"] = None
        self._closed = False

    def pool(self, url: str) -> Optional["PoolNet"]:
        """The connections to send ``url`` on (made now on the first call), or None once closed. Raises
        :class:`~mcpsync.errors.ConfigError` when ``url`` goes to a proxy of an unknown scheme."""
        from .pool import PoolNet

        refuse_unknown_proxy(url, self._proxies)
        with self._lock:
            if self._closed:
                return None
            if self._net is None:
                self._net = PoolNet(
                    url,
                    self._headers,
                    ssl_context=self._context,
                    pool_maxsize=self._maxsize,
                    name=self._name,
                    proxies=self._proxies or None,
                    deadlines=self._deadlines,
                )
            return self._net

    def close(self) -> None:
        """Close every connection (idempotent; :meth:`pool` returns None afterwards)."""
        with self._lock:
            self._closed = True
            net, self._net = self._net, None
        if net is not None:
            net.close()
