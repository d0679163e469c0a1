"""The per-call HTTP path of the remote transports: straight to the urllib3 pool the ``requests`` adapter holds.

``requests`` stays the owner of the connection configuration: the transport's ``requests.Session``
(built by :func:`mcpsync.transports.http.remote.build_session`) holds the adapters and their urllib3 pools,
the proxies and CA bundle resolved from the environment, ``verify``, ``cert``, the headers and the auth
hook. What ``Session.request`` redoes on every call (merging settings, scanning proxies, re-preparing
the URL, checking the CA bundle path on disk, building a ``Response`` with a cookie jar) is done here
once per session and URL, and re-done only when one of those settings changes.

Per call, :meth:`FastSender.send`:

* merges the session headers with the call's headers (a plain dict);
* applies the auth hook **per request**, on a real ``PreparedRequest`` (an OAuth or DPoP hook signs
  each request's method and URL, and may register response hooks);
* sends through the pool (``urlopen`` with the adapter's retries, no redirects, streamed body), mapping
  urllib3's exceptions to the ``requests`` exceptions ``Session.send`` would raise;
* returns a ``requests.Response`` (a light subclass: its cookie jar is made on first use);
* runs response hooks, stores cookies and follows redirects exactly as ``Session.send`` does, whenever
  there is something to do (a hook registered, a ``Set-Cookie`` header, a redirect status).

A session whose cookie jar is not empty is sent the whole ``requests`` way (its cookies must be sent
by requests' rules). ``requests`` and ``urllib3`` are imported when the first sender is built.
"""

from __future__ import annotations

import datetime
import threading
from typing import Any, Dict, Mapping, Optional, Tuple

__all__ = ["FastSender"]

_ZERO = datetime.timedelta(0)
_ONE_WRITE_MAX = 1 << 16  # a larger body goes out as urllib3 sends it (headers, then the body)
_mods: Dict[str, Any] = {}
_mods_lock = threading.Lock()


def _m() -> Dict[str, Any]:
    """requests / urllib3 names, imported (once) on first use."""
    if _mods:
        return _mods
    with _mods_lock:
        if _mods:
            return _mods
        import requests
        from requests import exceptions as rex
        from requests.auth import HTTPBasicAuth
        from requests.cookies import extract_cookies_to_jar
        from requests.hooks import dispatch_hook
        from requests.models import PreparedRequest
        from requests.structures import CaseInsensitiveDict
        from requests.utils import get_auth_from_url, get_encoding_from_headers, select_proxy
        from urllib3 import exceptions as u3
        from urllib3.connection import HTTPConnection, HTTPSConnection
        from urllib3.util import Timeout

        class FastResponse(requests.Response):
            """A ``requests.Response`` over a urllib3 response, without the per-response cookie jar cost."""

            def __init__(self, raw: Any, url: str, request: Any, connection: Any) -> None:  # noqa: D107
                self._content = False  # type: ignore[assignment]  # requests' own "not read yet" marker
                self._content_consumed = False
                self._next = None
                self.status_code = raw.status
                self.headers = raw.headers
                self.raw = raw
                self.url = url
                self.encoding = get_encoding_from_headers(raw.headers)
                self.history = []
                self.reason = raw.reason
                self.elapsed = _ZERO
                self.request = request
                self.connection = connection

            @property
            def cookies(self) -> Any:
                jar = self.__dict__.get("_fast_cookies")
                if jar is None:
                    jar = requests.cookies.cookiejar_from_dict({})  # type: ignore[no-untyped-call]
                    if self.request is not None:
                        extract_cookies_to_jar(jar, self.request, self.raw)  # type: ignore[no-untyped-call]
                    self.__dict__["_fast_cookies"] = jar
                return jar

            @cookies.setter
            def cookies(self, value: Any) -> None:
                self.__dict__["_fast_cookies"] = value

        conn_classes = {}
        for base in (HTTPConnection, HTTPSConnection):

            class OneWrite(base):  # type: ignore[valid-type,misc]
                """Sends a small request's headers and body in one write (one wake-up of the peer, not two)."""

                _mcpsync_body: Optional[bytes] = None
                _mcpsync_sent: Optional[bytes] = None

                def request(self, method: str, url: str, body: Any = None, headers: Any = None, **kw: Any) -> None:
                    if type(body) is bytes and len(body) <= _ONE_WRITE_MAX and not kw.get("chunked"):
                        self._mcpsync_body = body
                        try:
                            return super().request(method, url, body=body, headers=headers, **kw)  # type: ignore[no-any-return]
                        finally:
                            self._mcpsync_body = self._mcpsync_sent = None
                    return super().request(method, url, body=body, headers=headers, **kw)  # type: ignore[no-any-return]

                def _send_output(self, message_body: Any = None, encode_chunked: bool = False) -> None:
                    body = self._mcpsync_body
                    if body is None or message_body is not None or encode_chunked:
                        return super()._send_output(message_body, encode_chunked=encode_chunked)  # type: ignore[no-any-return]
                    self._buffer.extend((b"", b""))
                    head = b"\r\n".join(self._buffer)
                    del self._buffer[:]
                    self._mcpsync_body = None
                    self._mcpsync_sent = body
                    self.send(head + body)

                def send(self, data: Any) -> None:
                    if data is self._mcpsync_sent and data is not None:
                        self._mcpsync_sent = None  # already written with the headers
                        return
                    super().send(data)

            OneWrite.__name__ = OneWrite.__qualname__ = "OneWrite" + base.__name__
            conn_classes[base] = OneWrite

        _mods.update(
            conn_classes=conn_classes,
            requests=requests,
            rex=rex,
            u3=u3,
            Timeout=Timeout,
            PreparedRequest=PreparedRequest,
            CaseInsensitiveDict=CaseInsensitiveDict,
            HTTPBasicAuth=HTTPBasicAuth,
            extract_cookies_to_jar=extract_cookies_to_jar,
            dispatch_hook=dispatch_hook,
            get_auth_from_url=get_auth_from_url,
            select_proxy=select_proxy,
            FastResponse=FastResponse,
        )
        return _mods


class _Route:
    """What one URL resolves to under the session's settings, and the settings it was resolved under."""

    __slots__ = ("url", "pool", "target", "headers", "auth", "adapter", "proxies", "settings")

    def __init__(
        self,
        url: str,
        pool: Any,
        target: str,
        headers: Dict[str, str],
        auth: Any,
        adapter: Any,
        proxies: Dict[str, str],
        settings: Tuple[Any, ...],
    ) -> None:
        self.url = url
        self.pool = pool
        self.target = target
        self.headers = headers
        self.auth = auth
        self.adapter = adapter
        self.proxies = proxies
        self.settings = settings


def _settings(s: Any) -> Tuple[Any, ...]:
    """The session settings a route depends on (compared on every call: identity and small dict equality)."""
    return (s.verify, s.cert, s.auth, s.trust_env, dict(s.proxies), dict(s.headers._store), dict(s.adapters))


def _unchanged(s: Any, old: Tuple[Any, ...]) -> bool:
    return (
        s.verify is old[0]
        and s.cert is old[1]
        and s.auth is old[2]
        and s.trust_env is old[3]
        and s.proxies == old[4]
        and s.headers._store == old[5]
        and s.adapters == old[6]
    )


class FastSender:
    """Sends requests of one transport through its ``requests.Session``'s urllib3 pools (thread-safe)."""

    def __init__(self, session: Any) -> None:
        self.session = session
        self._routes: Dict[Tuple[str, str], _Route] = {}
        self._timeouts: Dict[Tuple[Optional[float], Optional[float]], Any] = {}
        _m()

    # ------------------------------------------------------------------ resolution (once per change)

    def _route(self, method: str, url: str) -> _Route:
        route = self._routes.get((method, url))
        if route is not None and route.pool.pool is not None and _unchanged(self.session, route.settings):
            return route
        m = _m()
        s = self.session
        settings = _settings(s)
        prep = m["PreparedRequest"]()
        prep.prepare_method(method)
        prep.prepare_url(url, None)
        prep.prepare_headers({})
        proxies = dict(s.proxies)
        adapter = s.get_adapter(prep.url)
        pool = adapter.get_connection_with_tls_context(prep, s.verify, proxies=proxies, cert=s.cert)
        adapter.cert_verify(pool, prep.url, s.verify, s.cert)
        one_write = m["conn_classes"].get(pool.ConnectionCls)
        if one_write is not None:  # the default urllib3 class (never a class someone chose): one write per request
            pool.ConnectionCls = one_write
        target = adapter.request_url(prep, proxies)
        headers = {str(k): str(v) for k, v in s.headers.items() if v is not None}
        auth = s.auth
        if auth is None:
            url_auth = m["get_auth_from_url"](prep.url)
            auth = url_auth if any(url_auth) else None
        if isinstance(auth, tuple) and len(auth) == 2:
            auth = m["HTTPBasicAuth"](*auth)
        route = _Route(prep.url, pool, target, headers, auth, adapter, proxies, settings)
        if len(self._routes) > 32:  # endpoints change on reconnects: keep the map small
            self._routes.clear()
        self._routes[(method, url)] = route
        return route

    def _timeout(self, timeout: Tuple[Optional[float], Optional[float]]) -> Any:
        t = self._timeouts.get(timeout)
        if t is None:
            t = self._timeouts[timeout] = _m()["Timeout"](connect=timeout[0], read=timeout[1])
        return t

    # ------------------------------------------------------------------ sending

    def send(
        self,
        method: str,
        url: str,
        body: Optional[bytes],
        headers: Mapping[str, str],
        timeout: Tuple[Optional[float], Optional[float]],
    ) -> Any:
        """Send one request; the response is streamed (``stream=True``). Raises ``requests`` exceptions."""
        s = self.session
        if len(s.cookies):
            # cookies are sent by requests' rules (domain, path, expiry): the whole requests way
            return s.request(method, url, data=body, headers=dict(headers), stream=True, timeout=timeout)
        m = _m()
        route = self._route(method, url)
        merged = dict(route.headers)
        merged.update(headers)
        prep = None
        hooks: Any = None
        if route.auth is not None:
            prep = m["PreparedRequest"]()
            prep.method = method
            prep.url = route.url
            prep.headers = m["CaseInsensitiveDict"](merged)
            prep._cookies = None
            prep.body = body
            prep.body_position = None
            prep.hooks = {"response": []}
            prepared = route.auth(prep)
            if prepared is not prep:
                prep.__dict__.update(prepared.__dict__)
            if body is not None:
                prep.prepare_content_length(prep.body)
            send_headers: Any = prep.headers
            hooks = prep.hooks
            body = prep.body
            method = prep.method or method
        else:
            if body is not None:
                merged["Content-Length"] = str(len(body))
            send_headers = merged
        raw = self._urlopen(route, method, body, send_headers, timeout, prep)
        resp = m["FastResponse"](raw, route.url, prep, route.adapter)
        session_hooks = s.hooks.get("response")
        if (hooks and hooks.get("response")) or session_hooks or "Set-Cookie" in raw.headers or resp.is_redirect:
            resp = self._finish(route, resp, prep, method, body, send_headers, hooks, timeout)
        return resp

    def _urlopen(
        self,
        route: _Route,
        method: str,
        body: Optional[bytes],
        headers: Any,
        timeout: Tuple[Optional[float], Optional[float]],
        prep: Any,
    ) -> Any:
        m = _m()
        u3 = m["u3"]
        rex = m["rex"]
        try:
            return route.pool.urlopen(
                method=method,
                url=route.target,
                body=body,
                headers=headers,
                redirect=False,
                assert_same_host=False,
                preload_content=False,
                decode_content=False,
                retries=route.adapter.max_retries,
                timeout=self._timeout(timeout),
                chunked=False,
            )
        except (u3.ProtocolError, OSError) as err:
            raise rex.ConnectionError(err, request=prep) from None
        except u3.MaxRetryError as err:
            reason = err.reason
            if isinstance(reason, u3.ConnectTimeoutError) and not isinstance(reason, u3.NewConnectionError):
                raise rex.ConnectTimeout(err, request=prep) from None
            if isinstance(reason, u3.ResponseError):
                raise rex.RetryError(err, request=prep) from None
            if isinstance(reason, u3.ProxyError):
                raise rex.ProxyError(err, request=prep) from None
            if isinstance(reason, u3.SSLError):
                raise rex.SSLError(err, request=prep) from None
            raise rex.ConnectionError(err, request=prep) from None
        except u3.ClosedPoolError as err:
            raise rex.ConnectionError(err, request=prep) from None
        except u3.ProxyError as err:
            raise rex.ProxyError(err) from None
        except u3.SSLError as err:
            raise rex.SSLError(err, request=prep) from None
        except u3.ReadTimeoutError as err:
            raise rex.ReadTimeout(err, request=prep) from None
        except u3.InvalidHeader as err:
            raise rex.InvalidHeader(err, request=prep) from None

    def _finish(
        self,
        route: _Route,
        resp: Any,
        prep: Any,
        method: str,
        body: Optional[bytes],
        headers: Any,
        hooks: Any,
        timeout: Tuple[Optional[float], Optional[float]],
    ) -> Any:
        """Response hooks, cookies and redirects, as ``Session.send`` handles them."""
        m = _m()
        s = self.session
        if prep is None:
            prep = m["PreparedRequest"]()
            prep.method = method
            prep.url = route.url
            prep.headers = m["CaseInsensitiveDict"](headers)
            prep._cookies = None
            prep.body = body
            prep.body_position = None
            prep.hooks = {"response": []}
            resp.request = prep
        all_hooks = {"response": list(s.hooks.get("response") or []) + list((hooks or {}).get("response") or [])}
        prep.hooks = all_hooks
        if prep._cookies is None:
            # as requests' own prepared requests: hooks that resend (digest, OAuth 401) copy this jar
            prep._cookies = s.cookies.copy()
        kwargs = {"stream": True, "timeout": timeout, "verify": s.verify, "cert": s.cert, "proxies": route.proxies}
        resp = m["dispatch_hook"]("response", all_hooks, resp, **kwargs)
        for old in resp.history:
            m["extract_cookies_to_jar"](s.cookies, old.request, old.raw)
        m["extract_cookies_to_jar"](s.cookies, prep, resp.raw)
        history = list(s.resolve_redirects(resp, prep, **kwargs))
        if history:
            history.insert(0, resp)
            resp = history.pop()
            resp.history = history
        return resp
