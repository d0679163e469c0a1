"""The connections of one server: urllib3 pools, every socket of which ``close()`` can end at once.

:class:`PoolNet` is what the transports send with (the :class:`~mcpsync.transports.http.contract.HTTPNet`
protocol): one urllib3 pool manager per proxy a server's URLs resolve to (``PoolManager`` for direct connections,
``ProxyManager`` for ``http://`` and ``https://`` proxies, ``SOCKSProxyManager`` for ``socks4(a)://`` and
``socks5(h)://`` ones, from the ``socks`` extra), one TLS context, one redirect policy. Per call it:

* checks the request (:mod:`~mcpsync.transports.http.request_check`) before a byte is written;
* sends it with ``retries=False``: urllib3 never sends a request twice; a stale pooled connection is dropped by
  urllib3's own check before it is used, and once a byte is out a failure is the caller's error, never a resend
  (a ``tools/call`` runs once). An answer the server sends before it reads the whole body (``413``) is returned;
* streams the answer (``preload_content=False``; gzip and deflate decoded by urllib3) as a :class:`PoolResponse`;
* follows same-origin redirects itself (at most five, with the browsers' method rules), keeps the cookies a
  server sets (``http.cookiejar``, loaded only when one does).

Timeouts are socket timeouts: the connect timeout bounds the TCP connect and the TLS handshakes, the read timeout
each wait for bytes (:meth:`PoolResponse.set_read_timeout` re-arms it for a stream). No watchdog thread.

Ending calls from another thread: every socket a connection of this net creates is registered the moment it is
made and when its TCP connect starts (Python's ``socket.__new__`` and ``socket.connect`` audit events,
:func:`sys.addaudithook`, seen only by a thread inside one of this module's connections' ``connect()``), so
:meth:`PoolNet.abort` shuts down every socket still connecting, in a TLS handshake (direct, inside a ``CONNECT``
tunnel, inside an ``https://`` proxy's TLS), in a SOCKS negotiation, waiting for an answer or reading one: each
blocked thread wakes at once with an error. No private attribute of urllib3 or ``http.client`` is touched: the
connection classes are subclassed (``connect`` and ``request``), ``sock``, ``proxy``, ``is_verified`` and
``HTTPResponse.connection`` are public.

Why an audit hook: urllib3's ``connect()`` makes its socket and runs the TCP connect (and PySocks its SOCKS
negotiation) inside one call that hands the socket out only when it is connected (``sock`` is set afterwards);
no public urllib3 extension point sees that socket while it is connecting, and the ``socket_options`` it applies
first receive no socket. The hook holds no state: it is one function, added once per process when this module
is imported, that finds the connecting connection's net on the calling thread's own stack (the frame of
``_Tracker.connect``), so nothing is kept per thread or per process and a net that is gone leaves nothing behind.

Thread-safe: one net serves every thread of a transport; :meth:`abort`, :meth:`interrupt` and :meth:`close` may
be called from any thread and never block.
"""

from __future__ import annotations

import importlib.util
import io
import os
import re
import socket
import ssl
import sys
import threading
import weakref
from http.client import HTTPException, HTTPResponse
from typing import Any, Callable, Dict, List, Mapping, Optional, Set, Tuple
from urllib.parse import urljoin, urlsplit

import urllib3
from urllib3 import exceptions as u3
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from .contract import (
    ConnectFailed,
    ConnectionBroken,
    ConnectTimeout,
    ProxyRefused,
    ReadTimeout,
    Timeouts,
    TLSFailed,
    TooManyRedirects,
    redact_url,
    refuse_redirect,
)
from .request_check import check_headers, check_mapping, check_method, check_target, encode_target, request_target

__all__ = ["PoolNet", "PoolResponse"]


_REDIRECTS = (301, 302, 303, 307, 308)
_TLS_ERRORS = (u3.SSLError, ssl.SSLError)  # ssl.SSLError: also the certificate and EOF errors (its subclasses)
_MAX_REDIRECTS = 5
_MAX_ROUTES = 32

_NO_RETRIES = urllib3.Retry(total=False, redirect=False)  # immutable: never a second attempt, never a redirect


def _audit(event: str, args: Tuple[Any, ...]) -> None:
    """A socket made (``socket.__new__``: a TCP socket, or the ``SSLSocket`` a TLS handshake runs on, which takes
    over the descriptor of the socket it wraps) or connecting (``socket.connect``) in a thread inside one of this
    module's connections' ``connect()``: hand it to that connection's net.

    The hook keeps no state: it finds the connection on the calling thread's own stack, in the frame of
    :meth:`_Tracker.connect` (its ``self`` is the net's tracker, ``owned`` the connection's socket list). Any
    other socket of the process (a thread not inside such a ``connect()``) walks the stack once and is left alone.
    """
    if event != "socket.connect" and event != "socket.__new__":
        return
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code is _CONNECT_CODE:
            scope = frame.f_locals
            scope["self"].register(args[0], scope["owned"])
            return
        frame = frame.f_back  # type: ignore[assignment]


def _shut(sock: Any) -> None:
    """Shut ``sock`` down both ways at its descriptor (threads blocked on it wake); never raises. A socket whose
    TCP connect has not started yet cannot be shut down: its timeout becomes a microsecond instead, so that
    connect, about to start, ends at once (closing it from here could hand its descriptor number to another
    file while the connecting thread still means to use it)."""
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except (OSError, TypeError, ValueError):
        try:
            socket.socket.settimeout(sock, 1e-6)
        except (OSError, TypeError, ValueError):
            pass


class _Tracker:
    """The sockets and connections of one net: every socket registered as it is made or starts its TCP connect,
    the connections in use (connecting, or between a request and the release of its answer)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.sockets: "weakref.WeakSet[socket.socket]" = weakref.WeakSet()
        # the connections in use, as each one's own weak reference (made once, in its __init__: adding and
        # discarding it per call makes no new weakref); a connection that is gone drops out by itself
        self.busy: "Set[weakref.ref[Any]]" = set()
        self.pools: "weakref.WeakSet[Any]" = weakref.WeakSet()
        self.aborted = False
        # verify=False was chosen (and logged once by make_net): urllib3's per-request InsecureRequestWarning,
        # which it raises for a connection whose is_verified is False, is not repeated on every call
        self.unverified_ok = False
        self.skip_hostname = False  # the user's SSLContext does not check host names: urllib3 must not either
        self.deadlines = False  # answers read through DeadlineReader while a call carries a deadline (PoolNet)
        self.deadline = threading.local()  # .value: the overall deadline of the call this thread is sending

    def register(self, sock: socket.socket, owned: List[Any]) -> None:
        """Called from the audit hook as ``sock`` is made or starts its TCP connect. After abort() it raises
        (the audit hook's way to stop the operation): no new socket, no new connect."""
        owned.append(sock)
        with self.lock:
            self.sockets.add(sock)
            if self.aborted:
                raise ConnectionBroken("the HTTP connections are closed")

    def connect(self, conn: Any, do_connect: Callable[[], None]) -> None:
        """Run ``do_connect`` (a connection's ``connect``) with its sockets registered as they are made."""
        if self.aborted:
            raise ConnectionBroken("the HTTP connections are closed")
        owned: List[Any] = []
        conn.mcpsync_sockets = owned
        self.busy.add(conn.mcpsync_ref)
        try:
            do_connect()  # the audit hook finds ``self`` and ``owned`` in this frame
        except (OSError, HTTPException) as exc:
            if self.aborted:
                raise ConnectionBroken("the HTTP connections are closed") from None
            refused = _tunnel_refusal(conn, exc)
            if refused is None:
                raise
            conn.close()
            raise refused from None
        if self.aborted:
            conn.close()
            raise ConnectionBroken("the HTTP connections are closed")
        if self.unverified_ok:
            conn.is_verified = True
            conn.proxy_is_verified = True

    def shut_all(self, abort: bool) -> None:
        """Shut down every socket (``abort``: and refuse new connections), or, without ``abort``, those of the
        connections in use (idle pooled ones stay usable)."""
        sockets: List[Any] = []
        with self.lock:
            if abort:
                self.aborted = True
                sockets.extend(self.sockets)
            else:
                for ref in list(self.busy):
                    conn = ref()
                    if conn is None:
                        continue
                    sockets.extend(getattr(conn, "mcpsync_sockets", ()))
                    sockets.append(getattr(conn, "sock", None))
        for sock in sockets:
            if sock is not None:
                _shut(_outer(sock))


#: The code of the frame the audit hook looks for (a code object: immutable).
_CONNECT_CODE = _Tracker.connect.__code__
sys.addaudithook(_audit)  # once, when this module is first imported (an HTTP transport is made)


def _outer(sock: Any) -> Any:
    """The socket under TLS inside TLS (urllib3's ``SSLTransport`` keeps it as ``socket``)."""
    while sock is not None and not isinstance(sock, socket.socket):
        sock = getattr(sock, "socket", None)
    return sock


def _tracked_init(self: Any, *args: Any, **kwargs: Any) -> None:
    super(type(self), self).__init__(*args, **kwargs)
    self.mcpsync_ref = weakref.ref(self, self.tracker.busy.discard)  # how it is marked in use (_Tracker.busy)


def _tracked_connect(self: Any) -> None:
    self.tracker.connect(self, super(type(self), self).connect)


_ONE_WRITE_MAX = 1 << 16  # a larger body is written after the head (no copy of a big body)


def _tracked_request(self: Any, method: str, url: str, body: Any = None, headers: Any = None, **kw: Any) -> None:
    """urllib3's ``request``, marking the connection in use, with a small ``bytes`` body written together with
    the head in one ``send`` (urllib3 and ``http.client`` write them in two: two system calls, and a head that may
    travel alone)."""
    self.tracker.busy.add(self.mcpsync_ref)
    self.mcpsync_body = body if type(body) is bytes and 0 < len(body) <= _ONE_WRITE_MAX else None
    self.mcpsync_sent = None
    try:
        super(type(self), self).request(method, url, body=body, headers=headers, **kw)
    finally:
        self.mcpsync_body = self.mcpsync_sent = None


def _send(self: Any, data: Any) -> None:
    body = getattr(self, "mcpsync_body", None)
    if body is not None:  # the first send of a request is its head: the body goes with it
        self.mcpsync_body = None
        super(type(self), self).send(data + body)
        self.mcpsync_sent = body
        return
    sent = getattr(self, "mcpsync_sent", None)
    if sent is not None:
        self.mcpsync_sent = None
        if data is sent:  # urllib3 writing the body: it went with the head
            return
    super(type(self), self).send(data)


def _answer_class(tracker: _Tracker) -> Any:
    """``http.client``'s answer class (what urllib3 parses the status line and headers with), reading through a
    :class:`~.deadline_reader.DeadlineReader` while the sending thread's call has an overall deadline."""

    class Answer(HTTPResponse):
        def __init__(self, sock: Any, *args: Any, **kwargs: Any) -> None:
            super().__init__(sock, *args, **kwargs)
            deadline = getattr(tracker.deadline, "value", None)
            if deadline is not None and isinstance(self.fp, io.BufferedReader):  # nothing was read yet
                from .deadline_reader import DeadlineReader

                raw = self.fp.detach()  # the makefile() reader lets go of its SocketIO without closing it
                self.fp = io.BufferedReader(DeadlineReader(raw, sock, deadline))

    return Answer


def _pool_classes(tracker: _Tracker, socks: bool) -> Dict[str, Any]:
    """The connection pool classes of one net: urllib3's, whose connections register their sockets with
    ``tracker`` (``connect``) and say when they are in use (``request``). Subclasses made per net: the connection
    classes are urllib3's public extension point, and a class attribute is how a connection finds its net."""
    if socks:
        from urllib3.contrib.socks import (
            SOCKSConnection,
            SOCKSHTTPConnectionPool,
            SOCKSHTTPSConnection,
            SOCKSHTTPSConnectionPool,
        )

        bases: List[Tuple[Any, Any]] = [(SOCKSHTTPConnectionPool, SOCKSConnection)]
        bases.append((SOCKSHTTPSConnectionPool, SOCKSHTTPSConnection))
    else:
        bases = [(HTTPConnectionPool, HTTPConnection), (HTTPSConnectionPool, HTTPSConnection)]
    out: Dict[str, Any] = {}
    answer = _answer_class(tracker) if tracker.deadlines else None
    for scheme, (pool_base, conn_base) in zip(("http", "https"), bases):
        members = {
            "tracker": tracker,
            "__init__": _tracked_init,
            "connect": _tracked_connect,
            "request": _tracked_request,
            "send": _send,
        }
        if answer is not None:  # only a net made with deadlines=True: the MCP path keeps http.client's class
            members["response_class"] = answer
        conn_cls = type("Tracked" + conn_base.__name__, (conn_base,), members)
        out[scheme] = type(pool_base.__name__, (pool_base,), {"ConnectionCls": conn_cls, "__init__": _tracked_pool})
    return out


def _tracked_pool(self: Any, *args: Any, **kwargs: Any) -> None:
    if self.scheme == "https" and self.ConnectionCls.tracker.skip_hostname:
        kwargs["assert_hostname"] = False  # never for a plain-HTTP pool: urllib3 < 2.7 passes it on and fails
    super(type(self), self).__init__(*args, **kwargs)
    self.ConnectionCls.tracker.pools.add(self)  # closed by PoolNet.close() (PoolManager.clear() only forgets them)


class PoolResponse:
    """An HTTP answer whose body is still to read (the surface the transports use).

    ``status_code``, ``reason``, ``headers`` (case-insensitive), ``url``; the body is read with ``read1(n)`` /
    ``read(n)``, decoded from gzip or deflate. :meth:`release_conn` hands the
    connection back to the pool once the body is read whole; :meth:`close` does the same, or closes the
    connection when the body was not read to its end. One thread reads a response; :meth:`shutdown` (any thread)
    wakes it.
    """

    __slots__ = ("status_code", "reason", "headers", "url", "_resp", "_done", "_tracker", "_conn")

    def __init__(self, resp: Any, url: str, tracker: _Tracker) -> None:
        self._resp = resp
        self._tracker = tracker
        self._conn = resp.connection  # in use until this answer is released (urllib3 may hand it back first)
        self.status_code: int = resp.status
        self.reason: str = resp.reason or ""
        self.headers = resp.headers
        self.url = url
        self._done = False

    @property
    def is_redirect(self) -> bool:
        return self.status_code in _REDIRECTS and "Location" in self.headers

    def read1(self, amt: int = -1, decode_content: bool = True) -> bytes:
        """Up to ``amt`` bytes of the body (``b""`` at its end, when the connection goes back to the pool).
        Blocks until some arrive or the read timeout expires (``ReadTimeout``)."""
        if self._done:
            return b""
        try:
            data: bytes = self._resp.read1(amt if amt >= 0 else None, decode_content=decode_content)
        except BaseException as exc:
            self._drop()
            raise _read_error(exc, self.url) from None
        if not data and amt != 0:
            self.release_conn()
        return data

    def read(self, amt: Optional[int] = None, decode_content: bool = True) -> bytes:
        """The rest of the body (or up to ``amt`` bytes of it); blocks until read."""
        if self._done:
            return b""
        try:
            data: bytes = self._resp.read(amt, decode_content=decode_content)
        except BaseException as exc:
            self._drop()
            raise _read_error(exc, self.url) from None
        if amt is None or not data:
            self.release_conn()
        return data

    def set_read_timeout(self, seconds: Optional[float], slack: float = 0.0) -> None:
        """Bound the next reads by ``seconds`` without a byte (None: unbounded): the socket's timeout.

        ``settimeout`` is a system call that releases the GIL (costly with many threads), so it is skipped when
        the socket already holds ``seconds``, or, with ``slack``, a value at most ``slack`` times ``seconds`` (at
        least 10 ms) above it: the bound then ends at most that much later."""
        sock = getattr(self._resp.connection, "sock", None)
        if sock is None:
            return
        try:
            current = sock.gettimeout()
            if current == seconds:
                return
            if (
                slack
                and current is not None
                and seconds is not None
                and seconds <= current <= seconds + max(0.01, slack * seconds)
            ):
                return
            sock.settimeout(seconds)
        except OSError:
            pass

    def shutdown(self) -> None:
        """Wake a thread blocked reading this answer (its socket is shut down); never raises, never blocks."""
        sock = _outer(getattr(self._resp.connection, "sock", None))
        if sock is not None:
            _shut(sock)

    def release_conn(self) -> None:
        """Hand the connection back to the pool if the body was read to its end, else close it."""
        if self._done:
            return
        self._done = True
        resp = self._resp
        self._idle()
        try:
            if not resp.isclosed():  # not read to its end: never reused
                resp.close()
            resp.release_conn()
        except Exception:  # noqa: BLE001 - handing back never matters
            pass

    close = release_conn

    def _idle(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            self._tracker.busy.discard(conn.mcpsync_ref)

    def _drop(self) -> None:
        if not self._done:
            self._done = True
            self._idle()
            try:
                self._resp.close()
                self._resp.release_conn()
            except Exception:  # noqa: BLE001
                pass

    def __enter__(self) -> "PoolResponse":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return "<PoolResponse [%d]>" % self.status_code


def _read_error(exc: BaseException, url: str) -> Exception:
    if isinstance(exc, (u3.ReadTimeoutError, socket.timeout)):
        return ReadTimeout("no data from %s within the read timeout" % redact_url(url))
    if isinstance(exc, (u3.HTTPError, OSError, HTTPException, ValueError, AttributeError)):
        return ConnectionBroken("connection to %s broken: %s" % (redact_url(url), _text(exc)))
    return exc if isinstance(exc, Exception) else ConnectionBroken("interrupted")


class _Route:
    """What one URL resolves to: its pool, the request target, the proxy (if any) and how it is reached."""

    __slots__ = ("url", "pool", "target", "proxy", "forward", "where")

    def __init__(self, url: str, pool: Any, target: str, proxy: Any, forward: bool, where: str) -> None:
        self.url = url
        self.pool = pool
        self.target = target
        self.proxy = proxy
        self.forward = forward  # an http URL through an http(s) proxy: the absolute URL is the target
        self.where = where


class PoolNet:
    """The urllib3 connections of one transport (thread-safe; see the module docstring).

    Args:
        url: the server's endpoint.
        headers: sent on every request (``User-Agent``, ``Accept-Encoding``, the user's headers and a static
            ``Authorization``); a request's own headers win, compared case-insensitively.
        ssl_context: the TLS settings for ``https`` (built by the caller from ``verify`` and ``cert``); also for
            an ``https://`` proxy.
        pool_maxsize: idle connections kept per origin.
        proxies: the proxies to use (:class:`~mcpsync.transports.http.proxy.ProxyTable`), or None.
        deadlines: honour :meth:`send`'s ``deadline`` (the registry's connections); off for MCP calls, whose
            answers keep ``http.client``'s own reader.
    """

    kind = "urllib3"

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str],
        ssl_context: Any = None,
        pool_maxsize: int = 128,
        name: str = "server",
        proxies: Any = None,
        deadlines: bool = False,
    ) -> None:
        check_mapping(headers)  # the headers of every request: checked once
        self._headers = dict(headers)
        self._header_names = {k.lower() for k in headers}
        self._ssl_context = ssl_context
        self._maxsize = max(1, pool_maxsize)
        self._proxies = proxies
        self._tracker = _Tracker()
        self._tracker.deadlines = deadlines
        self._lock = threading.Lock()
        self._managers: Dict[Optional[str], Any] = {}
        self._routes: Dict[str, _Route] = {}
        self._timeouts: Dict[Timeouts, Any] = {}  # (connect, read) -> urllib3.Timeout, made once per pair
        self._closed = False
        self._cookies: Any = None
        self._route(url)

    # ------------------------------------------------------------------ routes and managers

    def _manager(self, proxy_url: Optional[str], proxy: Any) -> Any:
        manager = self._managers.get(proxy_url)
        if manager is not None:
            return manager
        kw: Dict[str, Any] = {"maxsize": self._maxsize, "block": False, "retries": False}
        context = self._ssl_context
        if context is not None:
            kw["ssl_context"] = context
            kw["cert_reqs"] = "CERT_NONE" if context.verify_mode == ssl.CERT_NONE else "CERT_REQUIRED"
            self._tracker.unverified_ok = context.verify_mode == ssl.CERT_NONE
            self._tracker.skip_hostname = not context.check_hostname  # TLS pools only (_tracked_pool)
        socks = proxy is not None and proxy.kind.startswith("socks")
        if proxy is None:
            manager = urllib3.PoolManager(num_pools=_MAX_ROUTES, **kw)
        elif socks:
            try:
                # without PySocks, urllib3.contrib.socks warns at import and then fails: ask first, and say
                # what to install instead of passing urllib3's DependencyWarning on to the application
                if importlib.util.find_spec("socks") is None:
                    raise ImportError("PySocks")
                from urllib3.contrib.socks import SOCKSProxyManager
            except ImportError:
                from ...errors import ConfigError

                raise ConfigError(
                    "the proxy %s is a SOCKS proxy: install PySocks (pip install 'mcpsync[socks]')" % proxy.shown
                ) from None
            bare = "%s://%s" % (proxy.kind, proxy.shown.split("://", 1)[1])  # credentials passed decoded, below
            manager = SOCKSProxyManager(
                bare, username=proxy.user or None, password=proxy.password or None, num_pools=_MAX_ROUTES, **kw
            )
        else:
            proxy_kw: Dict[str, Any] = {}
            if proxy.kind == "https":
                proxy_context = proxy.tls if proxy.tls is not None else context
                proxy_kw["proxy_ssl_context"] = proxy_context
                if context is None and proxy_context is not None:  # an http server through it: urllib3 < 2.8
                    kw["ssl_context"] = proxy_context  # wraps the proxy's TLS with the pool's context
                if proxy_context is not None and not proxy_context.check_hostname:
                    proxy_kw["proxy_assert_hostname"] = False
            proxy_headers = {"Proxy-Authorization": proxy.authorization} if proxy.authorization else None
            bare = "%s://%s" % (proxy.kind, proxy.shown.split("://", 1)[1])  # no userinfo in the manager
            manager = urllib3.ProxyManager(bare, num_pools=_MAX_ROUTES, proxy_headers=proxy_headers, **proxy_kw, **kw)
        manager.pool_classes_by_scheme = _pool_classes(self._tracker, socks)
        self._managers[proxy_url] = manager
        return manager

    def _route(self, url: str) -> _Route:
        route = self._routes.get(url)
        if route is not None:
            return route
        check_target(url, redact_url(url))  # before urlsplit, which drops tabs and line breaks silently
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https") or not parts.hostname:
            raise ConnectFailed("not an http(s) URL: %s" % redact_url(url))
        if scheme == "https" and self._ssl_context is None:
            raise ConnectFailed("no TLS settings for %s" % redact_url(url))
        try:
            _ = parts.port
        except ValueError:
            raise ConnectFailed("bad port in %s" % redact_url(url)) from None
        proxy = None
        proxy_url = None
        if self._proxies:
            try:
                proxy = self._proxies.for_url(url)
            except ValueError as exc:  # its text names the scheme, never the proxy's credentials
                raise ConnectFailed("the proxy for %s: %s" % (redact_url(url), exc)) from None
            proxy_url = self._proxies.url_for(url) if proxy is not None else None
        target = encode_target(request_target(url, parts.netloc))
        forward = proxy is not None and proxy.forwards(scheme)
        where = "%s://%s" % (scheme, parts.netloc.rpartition("@")[2])
        if proxy is not None:
            where += " through the proxy " + proxy.shown
        with self._lock:
            if self._closed:
                raise ConnectionBroken("the HTTP connections are closed")
            manager = self._manager(proxy_url, proxy)
            try:
                pool = manager.connection_from_url(url)
            except (u3.HTTPError, ValueError) as exc:
                raise ConnectFailed("cannot connect to %s: %s" % (where, _text(exc))) from None
            if forward:  # the proxy wants the absolute URL
                target = "%s://%s%s" % (scheme, parts.netloc.rpartition("@")[2], target)
            route = _Route(url, pool, target, proxy, forward, where)
            if len(self._routes) >= _MAX_ROUTES:  # endpoints change on reconnects: keep the map small
                self._routes.clear()
            self._routes[url] = route
        return route

    # ------------------------------------------------------------------ sending

    def send(
        self,
        method: str,
        url: str,
        body: Optional[bytes],
        headers: Mapping[str, str],
        timeout: Timeouts,
        follow: bool = True,
        deadline: Any = None,
    ) -> PoolResponse:
        """Send one request and return its answer with the body still to read (``follow=False``: a redirect is
        returned, not followed).

        Blocks until the status line and headers arrive (bounded by the connect timeout, then the read
        timeout). Raises :class:`~mcpsync.errors.MalformedHTTPRequest` before sending anything for a request that
        cannot be written, else the errors of :mod:`mcpsync.transports.http.contract`, never another kind.

        ``deadline`` (an object with ``remaining()`` seconds, e.g. the registry's ``Deadline``): every read of
        the answer, its status line and headers included, waits at most what is left of it, however slowly a
        peer trickles its bytes (:class:`~.deadline_reader.DeadlineReader`; no thread). Only on a net made with
        ``deadlines=True``; elsewhere it is ignored.
        """
        check_method(method)
        check_mapping(headers)
        route = self._route(url)
        redirects = 0
        while True:
            if deadline is None or not self._tracker.deadlines:
                resp = self._exchange(route, method, body, headers, timeout)
            else:
                self._tracker.deadline.value = deadline
                try:
                    resp = self._exchange(route, method, body, headers, timeout)
                finally:
                    self._tracker.deadline.value = None
            proxy = route.proxy
            if resp.status_code == 407 and route.forward:
                resp.close()
                raise ProxyRefused(_refusal(proxy, 407, resp.reason, route.where), 407)
            if self._cookies is not None or "Set-Cookie" in resp.headers:
                self._keep_cookies(route.url, resp)
            if not resp.is_redirect or not follow:
                return resp
            target = urljoin(route.url, resp.headers["Location"])
            if refuse_redirect(route.url, target):
                return resp
            redirects += 1
            if redirects > _MAX_REDIRECTS:
                resp.close()
                raise TooManyRedirects("more than %d redirects from %s" % (_MAX_REDIRECTS, redact_url(url)))
            _drain(resp)
            status = resp.status_code
            if (status in (302, 303) and method != "HEAD") or (status == 301 and method == "POST"):
                method, body = "GET", None  # as browsers do
                headers = {k: v for k, v in headers.items() if k.lower() not in ("content-type", "content-length")}
            route = self._route(target)

    def get(self, url: str, headers: Mapping[str, str], timeout: Timeouts) -> PoolResponse:
        """``send("GET", ...)``: the answer's body is streamed."""
        return self.send("GET", url, None, headers, timeout)

    def delete(self, url: str, headers: Mapping[str, str], timeout: Timeouts) -> PoolResponse:
        """``send("DELETE", ...)``."""
        return self.send("DELETE", url, None, headers, timeout)

    def _exchange(
        self, route: _Route, method: str, body: Optional[bytes], headers: Mapping[str, str], timeout: Timeouts
    ) -> PoolResponse:
        merged = self._merge(headers)
        if self._cookies is not None:
            cookie = self._cookie_header(route.url)
            if cookie and "cookie" not in {k.lower() for k in headers}:
                check_headers((("Cookie", cookie),))
                merged["Cookie"] = cookie
        u3_timeout = self._timeouts.get(timeout)
        if u3_timeout is None:
            u3_timeout = urllib3.Timeout(connect=timeout[0], read=timeout[1])  # urllib3 copies it before use
            if len(self._timeouts) >= _MAX_ROUTES:
                self._timeouts.clear()
            self._timeouts[timeout] = u3_timeout
        for attempt in range(2):
            if self._closed or self._tracker.aborted:
                raise ConnectionBroken("the HTTP connections are closed")
            try:
                # no retry and no redirect inside urllib3 (the no-resend rule; PoolNet.send follows redirects), any
                # host on the pool (a proxy's), the body streamed and decoded, the connection held until the answer
                # is released. Spelled out: a ``**`` of a MappingProxyType costs a generic mapping walk per call.
                resp = route.pool.urlopen(
                    method,
                    route.target,
                    body=body,
                    headers=merged,
                    timeout=u3_timeout,
                    retries=_NO_RETRIES,
                    redirect=False,
                    assert_same_host=False,
                    preload_content=False,
                    decode_content=True,
                    release_conn=False,
                )
            except u3.ClosedPoolError:
                # the pool was closed before a connection was taken (evicted): nothing was sent
                if attempt:
                    raise ConnectionBroken("the HTTP connections are closed") from None
                with self._lock:
                    self._routes.pop(route.url, None)
                route = self._route(route.url)
                continue
            except (ConnectionBroken, ProxyRefused):
                raise
            except BaseException as exc:
                if not isinstance(exc, Exception):
                    raise
                raise self._send_error(exc, route) from None
            return PoolResponse(resp, route.url, self._tracker)
        raise ConnectionBroken("the HTTP connections are closed")  # pragma: no cover - the loop returns

    def _merge(self, headers: Mapping[str, str]) -> Dict[str, str]:
        if not headers:
            return dict(self._headers)
        if not self._header_names.isdisjoint(map(str.lower, headers)):  # a request's own header wins
            own = {k.lower() for k in headers}
            merged = {k: v for k, v in self._headers.items() if k.lower() not in own}
        else:
            merged = dict(self._headers)
        merged.update(headers)
        return merged

    def _send_error(self, exc: BaseException, route: _Route) -> Exception:
        url = redact_url(route.url)
        if self._tracker.aborted or self._closed:
            return ConnectionBroken("the HTTP connections are closed")
        proxy = route.proxy
        if isinstance(exc, u3.ProxyError):
            inner = exc.original_error if isinstance(exc.original_error, BaseException) else exc
            status = _tunnel_status(inner) or _tunnel_status(exc)
            if status:
                return ProxyRefused(_refusal(proxy, status, "", route.where), status)
            if isinstance(inner, u3.ProxyError):
                inner = inner.original_error if isinstance(inner.original_error, BaseException) else inner
            if isinstance(inner, (u3.ConnectTimeoutError, socket.timeout)) and not isinstance(
                inner, u3.NewConnectionError
            ):
                return ConnectTimeout("timed out connecting to %s" % route.where)
            if isinstance(inner, u3.NewConnectionError):
                return ConnectFailed("cannot connect to %s: %s" % (route.where, _text(inner)))
            if isinstance(inner, _TLS_ERRORS):
                return TLSFailed("TLS error talking to %s: %s" % (route.where, _text(inner)))
            if route.forward:  # urllib3 calls any failure on a forward proxy's connection a proxy error
                if isinstance(inner, socket.timeout):
                    return ReadTimeout("no answer from %s within the read timeout" % url)
                return ConnectionBroken("connection to %s broken: %s" % (route.where, _text(inner)))
            return ProxyRefused("the proxy %s broke off: %s" % (proxy.shown if proxy else "?", _text(inner)), 0)
        if isinstance(exc, u3.NewConnectionError):
            text = _text(exc)
            if proxy is not None and proxy.kind.startswith("socks"):
                return _socks_error(exc, proxy, route)
            return ConnectFailed("cannot connect to %s: %s" % (route.where, text))
        if isinstance(exc, u3.ConnectTimeoutError):
            return ConnectTimeout("timed out connecting to %s" % route.where)
        if isinstance(exc, u3.SSLError):
            return TLSFailed("TLS error talking to %s: %s" % (url, _text(exc)))
        if isinstance(exc, (u3.ReadTimeoutError, socket.timeout)):
            return ReadTimeout("no answer from %s within the read timeout" % url)
        if isinstance(exc, (u3.LocationValueError, u3.LocationParseError)):
            return ConnectFailed("cannot connect to %s: %s" % (route.where, _text(exc)))
        if isinstance(exc, u3.ProtocolError):
            tail = exc.args[1] if len(exc.args) > 1 and isinstance(exc.args[1], BaseException) else None
            if tail is not None and isinstance(tail, socket.timeout):
                return ReadTimeout("no answer from %s within the read timeout" % url)
            if isinstance(tail, _TLS_ERRORS):
                return TLSFailed("TLS error talking to %s: %s" % (url, _text(tail)))
        return ConnectionBroken("connection to %s broken: %s" % (url, _text(exc)))

    # ------------------------------------------------------------------ cookies (only once a server sets one)

    def _keep_cookies(self, url: str, resp: PoolResponse) -> None:
        import http.cookiejar
        import urllib.request

        with self._lock:
            if self._cookies is None:
                self._cookies = http.cookiejar.CookieJar()
        if "Set-Cookie" in resp.headers:
            self._cookies.extract_cookies(_CookieAnswer(resp.headers), urllib.request.Request(url))

    def _cookie_header(self, url: str) -> Optional[str]:
        import urllib.request

        if not len(self._cookies):
            return None
        req = urllib.request.Request(url)
        self._cookies.add_cookie_header(req)
        return req.get_header("Cookie")

    # ------------------------------------------------------------------ shutdown

    def abort(self) -> None:
        """Shut down every socket, in use, idle or still connecting (TCP connect, TLS handshake, SOCKS or
        ``CONNECT`` negotiation): threads blocked on one wake up with an error at once. Later connects are
        refused (abort is the first step of closing). Never raises, never blocks."""
        self._tracker.shut_all(abort=True)

    def interrupt(self) -> None:
        """Shut down every socket in use or still connecting, like :meth:`abort`, but keep the idle pooled ones
        (no thread waits on those) and leave the net usable: how ``close()`` wakes its callers and then still
        sends the session's ``DELETE`` on a kept-alive connection. Never raises, never blocks."""
        self._tracker.shut_all(abort=False)

    def close(self) -> None:
        """Shut every socket down and close the pools; later requests raise ``ConnectionBroken``. Idempotent."""
        with self._lock:
            self._closed = True
            managers = list(self._managers.values())
            self._routes.clear()
        self.abort()
        for manager in managers:
            manager.clear()
        for pool in list(self._tracker.pools):
            try:
                pool.close()  # every idle connection closed; one in use is closed when its answer is released
            except Exception:  # noqa: BLE001 - closing never matters
                pass

    def after_fork_in_child(self) -> None:
        """In a forked child: close this process's copies of every socket without shutting any down (a
        shutdown would end the parent's connection too). Takes no lock a parent thread may have held."""
        self._lock = threading.Lock()
        self._closed = True
        tracker = self._tracker
        tracker.lock = threading.Lock()
        tracker.aborted = True
        sockets = list(tracker.sockets)
        tracker.sockets = weakref.WeakSet()
        self._managers = {}
        self._routes = {}
        for sock in sockets:
            close_fd(sock)


class _CookieAnswer:
    """What ``http.cookiejar`` reads of an answer: its headers."""

    def __init__(self, headers: Any) -> None:
        self._headers = headers

    def info(self) -> Any:
        return self._headers


def _drain(resp: PoolResponse, limit: int = 1 << 16) -> None:
    """Read a small unwanted body (a redirect's) so its connection can be reused; close a large one."""
    try:
        left = limit
        while left > 0:
            chunk = resp.read1(left, decode_content=False)
            if not chunk:
                break
            left -= len(chunk)
    except Exception:  # noqa: BLE001 - the connection is closed below
        pass
    resp.close()


_TUNNEL_STATUS = re.compile(r"Tunnel connection failed: (\d{3})")


def _tunnel_status(exc: BaseException) -> int:
    """The status of a refused ``CONNECT`` (``http.client``'s message says it), or 0."""
    seen = 0
    cur: Optional[BaseException] = exc
    while cur is not None and seen < 6:
        found = _TUNNEL_STATUS.search(str(cur))
        if found:
            return int(found.group(1))
        cur = cur.__cause__ or cur.__context__
        seen += 1
    return 0


def _tunnel_refusal(conn: Any, exc: BaseException) -> Optional[ProxyRefused]:
    """The proxy's refusal of a ``CONNECT`` (``http.client`` says ``Tunnel connection failed: <status>``, or cannot
    read its answer: hung up, garbage), or None for a failure elsewhere (the TCP connect, a TLS handshake)."""
    proxy = getattr(conn, "proxy", None)
    if proxy is None or not getattr(conn, "proxy_is_tunneling", False):
        return None
    shown = "%s://%s:%s" % (proxy.scheme, proxy.host, proxy.port)
    status = _tunnel_status(exc)
    if status == 407:
        return ProxyRefused(
            "the proxy %s refused the tunnel with HTTP 407 (it wants credentials, or refused the ones in the proxy "
            "URL); put user:password in the proxy URL" % shown,
            407,
        )
    if status:
        return ProxyRefused("the proxy %s refused the tunnel: %s" % (shown, _text(exc)[:200]), status)
    if isinstance(exc, HTTPException):  # no answer (hung up) or one that is not HTTP
        return ProxyRefused("the proxy %s broke off the tunnel: %s" % (shown, _text(exc)[:200]), 0)
    return None


def _socks_error(exc: BaseException, proxy: Any, route: _Route) -> Exception:
    """A SOCKS failure: refused credentials (a 407, as an http proxy would say), another refusal, or no proxy."""
    text = _text(exc).lower()
    if "auth" in text or "username" in text or "password" in text:
        return ProxyRefused(
            "the SOCKS proxy %s refused the credentials in the proxy URL (or wants some) for %s"
            % (proxy.shown, route.where),
            407,
        )
    if "connection refused" in text and "0x" not in text and "socks" not in text:
        return ConnectFailed("cannot connect to %s: %s" % (route.where, _text(exc)))
    return ProxyRefused("the SOCKS proxy %s refused or broke off: %s" % (proxy.shown, _text(exc)[:200]), 0)


def _refusal(proxy: Any, status: int, reason: str, target: str) -> str:
    shown = proxy.shown if proxy is not None else "?"
    if status == 407:
        what = "wants credentials"
        if getattr(proxy, "authorization", None):
            what = "refused the credentials in the proxy URL"
        return "the proxy %s %s (HTTP 407) for %s; put user:password in the proxy URL" % (shown, what, target)
    return "the proxy %s refused the connection to %s: HTTP %d %s" % (shown, target, status, reason[:100])


def _text(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    text = re.sub(r"<urllib3\.[^>]*>: ", "", text)
    return text[:300]


def close_fd(sock: Any) -> None:
    """Close a socket's descriptor now, even while a response's file object still refers to it
    (``socket.close()`` waits for those; in a forked child they belong to threads that do not exist)."""
    try:
        fd = sock.detach()
    except (OSError, AttributeError):
        return
    if fd >= 0:
        try:
            os.close(fd)
        except OSError:
            pass
