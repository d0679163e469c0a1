"""The OAuth requests of a manager no transport has routed (:class:`DirectHTTP`): plain urllib3.

Used for a server whose HTTP settings nobody handed over (an :class:`~mcpsync.auth.OAuthManager` used on its
own, e.g. ``requests.get(url, auth=oauth.auth(name))``): TLS verified with the manager's ``verify=`` (a bool, a CA
bundle path or an ``ssl.SSLContext``), proxies from the ``*_PROXY`` / ``NO_PROXY`` environment (the standard
library's reading of it), redirects followed as :class:`~mcpsync.auth.http_hook.OAuthHTTPCall` says.

Thread-safe (urllib3's pool managers are); :meth:`DirectHTTP.close` may be called from any thread.
"""

from __future__ import annotations

import os
import ssl
import threading
from dataclasses import dataclass
from typing import Any, Dict, Mapping, Optional
from urllib.parse import urljoin, urlsplit

from ..errors import ConfigError, ConnectError, ProxyError, TransportError
from .http_hook import MAX_BODY

__all__ = ["DirectAnswer", "DirectHTTP"]

_MAX_REDIRECTS = 5


@dataclass(frozen=True)
class DirectAnswer:
    """An answer read whole (:class:`~mcpsync.auth.http_hook.OAuthAnswer`)."""

    status: int
    headers: Mapping[str, str]
    body: bytes
    url: str


def _context(verify: Any) -> Optional[ssl.SSLContext]:
    if isinstance(verify, ssl.SSLContext):
        return verify
    if verify is False:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    if isinstance(verify, (str, os.PathLike)) and str(verify) != "system":
        path = os.fspath(verify)
        if not os.path.exists(path):
            raise ConfigError("the CA bundle %r does not exist (verify=)" % str(path))
        if os.path.isdir(path):
            return ssl.create_default_context(capath=path)
        return ssl.create_default_context(cafile=path)
    return ssl.create_default_context()


class DirectHTTP:
    """urllib3 with the environment's proxies (see the module docstring). ``verify`` as the manager's."""

    def __init__(self, verify: Any = True) -> None:
        self._verify = verify
        self._lock = threading.Lock()
        self._managers: Dict[Optional[str], Any] = {}
        self._closed = False

    def _manager(self, url: str) -> Any:
        import urllib.request

        import urllib3

        host = urlsplit(url).hostname or ""
        proxy: Optional[str] = None
        if not urllib.request.proxy_bypass(host):
            found = urllib.request.getproxies_environment()
            proxy = found.get(urlsplit(url).scheme.lower()) or found.get("all")
        with self._lock:
            if self._closed:
                raise TransportError("the OAuth HTTP connections are closed")
            manager = self._managers.get(proxy)
            if manager is None:
                context = _context(self._verify)
                kw: Dict[str, Any] = {"ssl_context": context}
                if self._verify is False:
                    kw["cert_reqs"] = "CERT_NONE"
                if proxy is None:
                    manager = urllib3.PoolManager(**kw)
                elif proxy.lower().startswith("socks"):
                    try:
                        from urllib3.contrib.socks import SOCKSProxyManager
                    except ImportError:
                        raise ConfigError(
                            "the proxy for %s is a SOCKS proxy, which needs PySocks: pip install 'mcpsync[socks]'"
                            % url.split("?")[0]
                        ) from None
                    manager = SOCKSProxyManager(proxy, **kw)
                else:
                    manager = urllib3.ProxyManager(proxy if "://" in proxy else "http://" + proxy, **kw)
                self._managers[proxy] = manager
            return manager, proxy

    def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str],
        body: Optional[bytes] = None,
        timeout: float = 30.0,
        follow_redirects: bool = True,
    ) -> DirectAnswer:
        """One request, its answer read whole (blocks up to ``timeout`` per wait; see the module docstring)."""
        from urllib3 import exceptions as u3

        for _ in range(_MAX_REDIRECTS + 1):
            manager, proxy = self._manager(url)
            try:
                resp = manager.urlopen(
                    method,
                    url,
                    body=body,
                    headers=dict(headers),
                    retries=False,
                    redirect=False,
                    timeout=timeout,
                    preload_content=False,
                )
                try:
                    data = resp.read(MAX_BODY + 1)
                finally:
                    resp.release_conn()
            except u3.ProxyError as exc:
                raise ProxyError("the proxy refused or broke off the request to %s" % _where(url)) from exc
            except (u3.NewConnectionError, u3.ConnectTimeoutError, u3.SSLError) as exc:
                raise ConnectError("cannot connect to %s: %s" % (_where(url), type(exc).__name__)) from exc
            except (u3.HTTPError, OSError) as exc:
                raise TransportError("the request to %s failed: %s" % (_where(url), type(exc).__name__)) from exc
            if len(data) > MAX_BODY:
                raise TransportError("the answer of %s is larger than %d bytes" % (_where(url), MAX_BODY))
            if resp.status == 407 and proxy is not None:
                raise ProxyError("the proxy refused the request (HTTP 407 Proxy Authentication Required)")
            location = resp.headers.get("Location")
            if not (follow_redirects and method == "GET" and resp.status in (301, 302, 303, 307, 308) and location):
                return DirectAnswer(resp.status, resp.headers, data, url)
            url = urljoin(url, location)
        raise TransportError("more than %d redirects from %s" % (_MAX_REDIRECTS, _where(url)))

    def close(self) -> None:
        """Close every pooled connection (idempotent)."""
        with self._lock:
            self._closed = True
            managers, self._managers = list(self._managers.values()), {}
        for manager in managers:
            manager.clear()


def _where(url: str) -> str:
    parts = urlsplit(url)
    return "%s://%s" % (parts.scheme, parts.hostname or "")
