"""The HTTP connections of the registry client and of ``.mcpb`` downloads: the same urllib3 stack as MCP calls.

:class:`RegistryNet` sends with a :class:`~mcpsync.transports.http.pool.PoolNet` built the way a server's
transport builds one: proxies from the environment or the OS settings (``HTTP(S)_PROXY``, ``ALL_PROXY``,
``NO_PROXY``; SOCKS with the ``socks`` extra), TLS verified as for a server (``REQUESTS_CA_BUNDLE`` /
``CURL_CA_BUNDLE``, else certifi, else the system store), ``retries=False``. Each GET carries the call's
:class:`~.deadline.Deadline`: every read, the status line and headers included, waits at most what is left of it
(no thread). Redirects are followed here (at most five): to any ``https`` URL, or to ``http`` only from ``http``
(never a downgrade); an ``.mcpb`` download (``https_only``) follows ``https`` only.

Thread-safety: the connections may be used by several threads; :meth:`close` ends them (idempotent).
"""

from __future__ import annotations

import threading
from typing import Any, Dict, Mapping, Optional
from urllib.parse import urljoin, urlsplit

from .deadline import Deadline
from .errors import RegistryUnavailable

__all__ = ["RegistryNet"]

_MAX_REDIRECTS = 5


def _may_follow(from_url: str, to_url: str, https_only: bool) -> bool:
    to_scheme = urlsplit(to_url).scheme.lower()
    if to_scheme == "https":
        return True
    return not https_only and to_scheme == "http" and urlsplit(from_url).scheme.lower() == "http"


class RegistryNet:
    """urllib3 connections for GET requests with an overall deadline (module docstring). ``headers`` go with
    every request."""

    def __init__(self, headers: Mapping[str, str]) -> None:
        self._headers = dict(headers)
        self._lock = threading.Lock()
        self._net: Any = None
        self._proxies: Any = None
        self._closed = False

    def _pool(self, url: str) -> Any:
        from ..transports.http.net import direct_ssl_context, refuse_unknown_proxy
        from ..transports.http.options import HTTPOptions
        from ..transports.http.pool import PoolNet
        from ..transports.http.proxy import proxy_table

        with self._lock:
            if self._closed:
                raise RegistryUnavailable("the registry connections are closed", url=url)
            if self._proxies is None:
                self._proxies = proxy_table(HTTPOptions())
            refuse_unknown_proxy(url, self._proxies)
            if self._net is None:
                options = HTTPOptions()
                context = direct_ssl_context(options)
                if self._proxies.needs_tls():
                    self._proxies.tls = context
                self._net = PoolNet(url, self._headers, ssl_context=context, pool_maxsize=4, name="registry",
                                    proxies=self._proxies or None, deadlines=True)
            return self._net

    def get(self, url: str, deadline: Deadline, per_read: float, *, headers: Optional[Dict[str, str]] = None,
            https_only: bool = False, what: str = "") -> Any:
        """GET ``url`` and return the answer (a ``PoolResponse``, body still to read: the caller closes it).

        Blocks until the status line and headers arrive: the connect and each read wait at most ``per_read``
        seconds, and all of it at most what is left of ``deadline``. Raises
        :class:`~.errors.RegistryUnavailable` (with ``url``) for a network failure, a refused request, a
        redirect it does not follow or a passed deadline."""
        from ..errors import MalformedHTTPRequest
        from ..transports.http.contract import NetError

        what = what or "reaching %s" % url
        current = url
        for _ in range(_MAX_REDIRECTS + 1):
            step = deadline.clip(per_read, url)
            try:
                resp = self._pool(current).send("GET", current, None, headers or {}, (step, step), follow=False,
                                                deadline=deadline)
            except (NetError, MalformedHTTPRequest, ValueError) as exc:  # ValueError: a URL urllib3 cannot split
                if deadline.expired():
                    raise deadline.error(url) from None
                raise RegistryUnavailable("%s failed: %s" % (what, exc), url=url) from None
            if not resp.is_redirect:
                return resp
            resp.close()
            try:
                target = urljoin(current, resp.headers["Location"])
                follow = _may_follow(current, target, https_only)
            except ValueError:  # a Location no URL parser reads (an unclosed IPv6 bracket...)
                raise RegistryUnavailable("%s: the redirect's Location is not a URL" % what, url=url,
                                          status=resp.status_code) from None
            if not follow:
                raise RegistryUnavailable("%s: refused a redirect to a %s:// URL" % (what, urlsplit(target).scheme),
                                          url=url, status=resp.status_code)
            current = target
        raise RegistryUnavailable("%s: more than %d redirects" % (what, _MAX_REDIRECTS), url=url)

    def close(self) -> None:
        """Close every connection (idempotent; never blocks)."""
        with self._lock:
            self._closed = True
            net, self._net = self._net, None
        if net is not None:
            net.close()
