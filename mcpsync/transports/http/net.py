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
from typing import TYPE_CHECKING, Optional
from urllib.parse import urlsplit

from ...errors import ConfigError
from .contract import HTTPNet, redact_url
from .options import USER_AGENT, HTTPOptions

if TYPE_CHECKING:
    from .proxy import ProxyTable

__all__ = ["direct_ssl_context", "make_net", "refuse_unknown_proxy"]

logger = logging.getLogger("mcpsync.transports.http.transport")


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
