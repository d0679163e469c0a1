"""The standard-library HTTP engine: keep-alive sockets this module pools, answers read by ``http_wire``.

Every MCP request goes through this engine, whatever its auth (run around it by
:mod:`mcpsync.transports.http.auth`), proxy (:mod:`mcpsync.transports.http.proxy`: absolute-form requests,
``CONNECT`` and SOCKS tunnels, TLS inside TLS through an ``https://`` proxy) or netrc; there is no other engine
(:func:`mcpsync.transports.http.net.make_net` builds this one for every server).
Per call it:

* takes an idle connection of the origin from a LIFO pool (as many as the calls in flight, kept up to
  ``pool_maxsize``), checking a pooled one with a zero-timeout ``select`` first (a server may close an idle
  connection at any moment without saying so; readable means closed, or junk);
* writes the request line, the headers and a small body in **one** write; a request is sent again (on
  another connection) only when provably none of it was written: the first ``send`` on a reused connection
  failed (the server had closed it). Once a byte is out, a failure is the caller's error, never a resend (a
  ``tools/call`` runs once); an answer the server sent before reading the whole body (``413``...) is read and
  returned, as ``requests`` does;
* reads the answer's head and body framing with :mod:`~mcpsync.transports.http.wire` (status, headers,
  ``Content-Length``, chunked and close-delimited bodies), and hands back a :class:`DirectResponse` with the
  small surface the transports use (``status_code``, ``headers``, ``raw.read1``, ``release_conn``, ``close``),
  gzip and deflate bodies decoded;
* follows same-origin redirects (at most five, with ``requests``' method rules), keeps the cookies a server
  sets (``http.cookiejar``, loaded only when a server sets one) and sends them back.

Timeouts: the connect timeout bounds the TCP connect and the TLS handshake; the read timeout bounds each wait
for bytes, sending included, as a socket timeout would, but kept by a watchdog thread that shuts the socket
down (see :class:`~mcpsync.transports.http.deadlines.Deadlines`: a socket with a timeout costs an extra
GIL-releasing ``poll`` per ``send`` and ``recv``). Errors are the engine-neutral ones of
:mod:`mcpsync.transports.http.netbase`. Thread-safe: one engine serves every thread of a transport;
:meth:`DirectNet.abort` (from any thread) wakes every thread blocked on one of its sockets,
:meth:`DirectNet.close` closes them all.
"""

from __future__ import annotations

import logging
import os
import select
import socket
import ssl
import threading
import time
import zlib
from typing import Any, Dict, List, Mapping, Optional, Set, Tuple, Union
from urllib.parse import urljoin, urlsplit

from .deadlines import Deadlines
from .proxy import Proxy, ProxyTable, refusal
from .wire import BadAnswer, Body, Headers, read_head
from .netbase import (
    ConnectFailed,
    ConnectionBroken,
    ConnectTimeout,
    ProxyRefused,
    ReadTimeout,
    TLSFailed,
    TooManyRedirects,
    redact_url,
    refuse_redirect,
)
from .request_check import check_headers, check_mapping, check_method, check_target, encode_target, request_target
from .tls_in_tls import wrap_tls

__all__ = ["DirectNet", "DirectResponse"]

logger = logging.getLogger("mcpsync.transports.http.transport")

_ONE_WRITE_MAX = 1 << 16  # a larger body is written after the head (no copy of a big body)
_REDIRECTS = (301, 302, 303, 307, 308)
_MAX_REDIRECTS = 5
_DEFAULT_PORTS = {"http": 80, "https": 443}
Timeouts = Tuple[Optional[float], Optional[float]]


class _Conn:
    """One socket to one origin, when it was last handed back to the pool, and its read deadline."""

    __slots__ = ("sock", "idle_since", "reused", "limit", "deadline", "expired", "__weakref__")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.idle_since = 0.0
        self.reused = False
        self.limit: Optional[float] = None  # the read timeout in force (seconds without a byte)
        self.deadline: Optional[float] = None  # monotonic time the current wait must end by
        self.expired = False  # the watchdog shut the socket down: the wait timed out

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:  # pragma: no cover - closing never matters
            pass


class _Origin:
    """The pool of one ``(scheme, host, port)``: idle connections (LIFO) and how to make a new one."""

    __slots__ = ("scheme", "host", "port", "host_header", "idle", "proxy")

    def __init__(self, scheme: str, host: str, port: int) -> None:
        self.proxy: Optional[Proxy] = None  # absolute-form targets (an http proxy, http) or a tunnel per connection
        self.scheme = scheme
        self.host = host
        self.port = port
        shown = "[%s]" % host if ":" in host else host
        self.host_header = shown if port == _DEFAULT_PORTS.get(scheme) else "%s:%d" % (shown, port)
        self.idle: List[_Conn] = []


class _Route:
    """What one URL resolves to: its origin's pool and the request target (path and query)."""

    __slots__ = ("url", "origin", "target")

    def __init__(self, url: str, origin: _Origin, target: str) -> None:
        self.url = url
        self.origin = origin
        self.target = target


class DirectResponse:
    """An HTTP answer read straight from its socket (the surface of a streamed ``requests.Response``).

    ``status_code``, ``reason``, ``headers`` (case-insensitive ``get``), ``url``; the body is read with
    ``raw.read1(n)`` / ``raw.read(n)`` (``raw`` is the response itself), decoded from gzip or deflate.
    :meth:`release_conn` hands the connection back to the pool once the body is read whole;
    :meth:`close` does the same, or closes the connection when the body was not read to its end.
    One thread reads a response; :meth:`DirectNet.abort` may shut its socket down from another.
    """

    __slots__ = (
        "status_code",
        "reason",
        "headers",
        "url",
        "_net",
        "_route",
        "_conn",
        "_fp",
        "_body",
        "_decoder",
        "_done",
    )

    def __init__(
        self,
        net: "DirectNet",
        route: _Route,
        conn: _Conn,
        fp: Any,
        status: int,
        reason: str,
        headers: Headers,
        body: Body,
    ) -> None:
        self.status_code = status
        self.reason = reason
        self.headers = headers
        self.url = route.url
        self._net = net
        self._route = route
        self._conn: Optional[_Conn] = conn
        self._fp = fp
        self._body = body
        self._decoder: Any = None
        self._done = False
        encoding = headers.get("Content-Encoding")
        if encoding:
            encoding = encoding.strip().lower()
            if encoding in ("gzip", "x-gzip"):
                self._decoder = zlib.decompressobj(16 + zlib.MAX_WBITS)
            elif encoding == "deflate":
                self._decoder = _Deflate()
        if body.complete:  # no body at all (204, HEAD...): the connection can go back now
            self.release_conn()

    # the attribute names the transports' helpers look for (``response.raw``, ``raw._connection.sock``)
    @property
    def raw(self) -> "DirectResponse":
        return self

    @property
    def _connection(self) -> Optional[_Conn]:
        return self._conn

    @property
    def is_redirect(self) -> bool:
        return self.status_code in _REDIRECTS and "Location" in self.headers

    def read1(self, amt: int = -1, decode_content: bool = True) -> bytes:
        """Up to ``amt`` bytes of the body with at most one read of the socket that yields data
        (``b""`` at its end). Blocks until some arrive or the read timeout expires (``ReadTimeout``)."""
        while True:
            data = self._read(amt) if not self._done else b""
            try:
                if not data:
                    tail = self._decoder.flush() if self._decoder is not None and decode_content else b""
                    self._decoder = None
                    if amt != 0:
                        self.release_conn()  # the body is read to its end: the connection goes back at once
                    return tail
                if self._decoder is None or not decode_content:
                    return data
                out = self._decoder.decompress(data)
            except zlib.error as exc:
                self._drop()
                raise ConnectionBroken("undecodable body from %s: %s" % (redact_url(self.url), exc)) from None
            if out:
                return out  # type: ignore[no-any-return]

    def read(self, amt: Optional[int] = None, decode_content: bool = True) -> bytes:
        """The rest of the body (or up to ``amt`` bytes of it); blocks until read."""
        if amt is None:
            parts: List[bytes] = []
            while True:
                chunk = self.read1(1 << 20, decode_content)
                if not chunk:
                    return b"".join(parts)
                parts.append(chunk)
        out = bytearray()
        while len(out) < amt:
            chunk = self.read1(amt - len(out), decode_content)
            if not chunk:
                break
            out += chunk
        return bytes(out)

    def _read(self, amt: int) -> bytes:
        conn = self._conn
        if conn is not None:
            self._net._deadlines.renew(conn)
        try:
            data = self._body.read1(amt)
        except socket.timeout:
            self._drop()
            raise ReadTimeout("no data from %s within the read timeout" % redact_url(self.url)) from None
        except (OSError, BadAnswer, ValueError) as exc:
            # ValueError: a read after close() or abort() (the file object is gone)
            self._drop()
            if conn is not None and conn.expired:
                raise ReadTimeout("no data from %s within the read timeout" % redact_url(self.url)) from None
            raise ConnectionBroken("connection to %s broken: %s" % (redact_url(self.url), _text(exc))) from None
        if not data and amt and conn is not None and conn.expired:  # the watchdog's shutdown reads as an end
            self._drop()
            raise ReadTimeout("no data from %s within the read timeout" % redact_url(self.url))
        return data

    def set_read_timeout(self, seconds: Optional[float]) -> None:
        """Bound the next reads by ``seconds`` without a byte (None: unbounded); no system call."""
        conn = self._conn
        if conn is not None:
            self._net._deadlines.arm(conn, seconds)

    def release_conn(self) -> None:
        """Hand the connection back to the pool if the body was read to its end, else close it."""
        if self._done:
            return
        self._done = True
        conn, self._conn = self._conn, None
        if conn is None:
            return
        body = self._body
        _close_quietly(self._fp)
        if body.complete and body.reusable:
            self._net._checkin(self._route.origin, conn)
        else:
            self._net._discard(conn)

    close = release_conn

    def _drop(self) -> None:
        if not self._done:
            self._done = True
            conn, self._conn = self._conn, None
            _close_quietly(self._fp)
            if conn is not None:
                self._net._discard(conn)

    def __del__(self) -> None:  # a response dropped unread: its socket is closed, never pooled or leaked
        try:
            if not self._done:
                self._drop()
        except Exception:  # noqa: BLE001 - never raise from a finalizer
            pass

    def __enter__(self) -> "DirectResponse":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return "<DirectResponse [%d]>" % self.status_code


class _Deflate:
    """``Content-Encoding: deflate``: zlib-wrapped as the RFC says, raw deflate as some servers send."""

    def __init__(self) -> None:
        self._obj: Any = None
        self._head = b""

    def decompress(self, data: bytes) -> bytes:
        if self._obj is None:
            self._head += data
            if len(self._head) < 2:
                return b""
            data, self._head = self._head, b""
            zlib_wrapped = (data[0] & 0x0F) == 8 and (data[0] * 256 + data[1]) % 31 == 0
            self._obj = zlib.decompressobj(zlib.MAX_WBITS if zlib_wrapped else -zlib.MAX_WBITS)
        return self._obj.decompress(data)  # type: ignore[no-any-return]

    def flush(self) -> bytes:
        return self._obj.flush() if self._obj is not None else b""


class DirectNet:
    """The standard-library engine of one transport (thread-safe; see the module docstring).

    Args:
        url: the server's endpoint (its origin is the first pool; other same-process URLs get theirs).
        headers: sent on every request (``User-Agent``, ``Accept-Encoding``, the user's headers and a
            static ``Authorization``); a request's own headers win, compared case-insensitively.
        ssl_context: the TLS settings for ``https`` (built by the caller from ``verify`` and ``cert``).
        pool_maxsize: idle connections kept per origin.
        name: the server's name (in the name of the read-timeout watchdog thread).
        proxies: the proxies to use (:class:`~mcpsync.transports.http.proxy.ProxyTable`), or None.
    """

    kind = "stdlib"

    def __init__(
        self,
        url: str,
        headers: Mapping[str, str],
        ssl_context: Any = None,
        pool_maxsize: int = 128,
        name: str = "server",
        proxies: Optional[ProxyTable] = None,
    ) -> None:
        self._proxies = proxies
        check_mapping(headers)  # the headers of every request: checked once
        self._deadlines = Deadlines(name)
        self._headers = dict(headers)
        self._ssl_context = ssl_context
        self._maxsize = max(1, pool_maxsize)
        self._origins: Dict[Tuple[str, str, int], _Origin] = {}
        self._routes: Dict[str, _Route] = {}
        self._live: Set[_Conn] = set()
        self._lock = threading.Lock()
        self._closed = False
        self._aborted = False  # abort() was called: the transport is closing, no new connection is made
        self._cookies: Any = None  # an http.cookiejar.CookieJar once a server sets a cookie
        self._route(url)

    # ------------------------------------------------------------------ routes and pools

    def _route(self, url: str) -> _Route:
        route = self._routes.get(url)
        if route is not None:
            return route
        check_target(url, redact_url(url))  # before urlsplit, which drops tabs and line breaks silently
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in _DEFAULT_PORTS or not parts.hostname:
            raise ConnectFailed("not an http(s) URL: %s" % redact_url(url))
        if scheme == "https" and self._ssl_context is None:
            raise ConnectFailed("no TLS settings for %s" % redact_url(url))
        try:
            port = parts.port or _DEFAULT_PORTS[scheme]
        except ValueError:
            raise ConnectFailed("bad port in %s" % redact_url(url)) from None
        key = (scheme, parts.hostname.lower(), port)
        with self._lock:
            origin = self._origins.get(key)
            if origin is None:
                origin = self._origins[key] = _Origin(*key)
                origin.proxy = self._proxy_for(url)
            target = encode_target(request_target(url, parts.netloc))
            if origin.proxy is not None and origin.proxy.forwards(scheme):  # absolute form, as a forward proxy wants
                target = "http://%s%s" % (origin.host_header, target)
            route = _Route(url, origin, target)
            if len(self._routes) > 32:  # endpoints change on reconnects: keep the map small
                self._routes.clear()
            self._routes[url] = route
        return route

    def _checkout(self, origin: _Origin, connect_timeout: Optional[float]) -> _Conn:
        idle = origin.idle
        while True:
            with self._lock:
                if self._closed:
                    raise ConnectionBroken("the HTTP connections are closed")
                if not idle:
                    break
                conn = idle.pop()
            if not _dropped(conn.sock):  # outside the lock: a system call
                conn.reused = True
                return conn
            self._discard(conn)
        return self._connect(origin, connect_timeout)

    def _connect(self, origin: _Origin, timeout: Optional[float]) -> _Conn:
        """A new connection to ``origin``: TCP connect, then the TLS handshake for https.

        The socket is made here and registered (in ``_live``) *before* the connect starts, and every step on
        the way to a first request runs on ``conn.sock``, the object :meth:`abort` and :meth:`close` shut down
        from any thread: the TCP connect (to the server or the proxy), the TLS handshake with an ``https://``
        proxy and with the server (each wrapped without a handshake, which then runs on the registered
        socket), the ``CONNECT`` request and its answer, the SOCKS negotiation, and TLS inside the proxy's TLS
        (its records go through the proxy's registered socket). So a step that stalls ends at once
        (``ConnectionBroken``), never after the connect timeout. ``timeout`` bounds the connect to each
        address, then each later step. (Name resolution, ``getaddrinfo``, cannot be interrupted.)"""
        where = "%s://%s" % (origin.scheme, origin.host_header)
        if origin.proxy is not None:
            where += " through the proxy " + origin.proxy.shown
        try:
            host, port = origin.proxy.address if origin.proxy is not None else (origin.host, origin.port)
            infos = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise ConnectFailed("cannot connect to %s: %s" % (where, _text(exc))) from None
        conn: Optional[_Conn] = None
        failure: Optional[BaseException] = None
        for family, socktype, proto, _, address in infos:
            attempt = self._register(socket.socket(family, socktype, proto))
            try:
                attempt.sock.settimeout(timeout)
                attempt.sock.connect(address)
            except socket.timeout:
                self._discard(attempt)
                self._refuse_if_closed()
                raise ConnectTimeout("timed out connecting to %s" % where) from None
            except OSError as exc:
                self._discard(attempt)
                self._refuse_if_closed()
                failure = exc
                continue
            conn = attempt
            break
        if conn is None:
            raise ConnectFailed("cannot connect to %s: %s" % (where, _text(failure or OSError("no address"))))
        sock = conn.sock
        proxy = origin.proxy
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            if proxy is not None:
                if proxy.kind == "https":  # TLS to the proxy, its handshake on the registered socket
                    sock = self._handshake(conn, proxy.secure(sock))
                if not proxy.forwards(origin.scheme):
                    proxy.tunnel(sock, origin.host, origin.port)  # on conn.sock: abort() wakes it; closes it on failure
            if origin.scheme == "https":
                if isinstance(sock, ssl.SSLSocket):
                    # through an https:// proxy: TLS inside the proxy's TLS, whose handshake reads and writes
                    # conn.sock (the proxy's registered SSLSocket): abort() wakes it as any other wait
                    conn.sock = wrap_tls(self._ssl_context, sock, origin.host)
                else:
                    tls = self._ssl_context.wrap_socket(
                        sock, server_hostname=origin.host, do_handshake_on_connect=False
                    )
                    self._handshake(conn, tls)  # as conn.sock: abort() reaches the handshake
            conn.sock.settimeout(None)  # blocking from now on: read timeouts are the watchdog's (see _Deadlines)
        except socket.timeout:
            self._discard(conn)
            self._refuse_if_closed()
            raise ConnectTimeout("timed out in the TLS handshake with %s" % where) from None
        except OSError as exc:  # ssl.SSLError and ssl.CertificateError are OSErrors / ValueErrors
            self._discard(conn)
            self._refuse_if_closed()
            kind = TLSFailed if origin.scheme == "https" else ConnectFailed
            raise kind("TLS error talking to %s: %s" % (where, _text(exc))) from None
        except ValueError as exc:  # pragma: no cover - ssl.CertificateError on old Pythons
            self._discard(conn)
            self._refuse_if_closed()
            raise TLSFailed("TLS error talking to %s: %s" % (where, _text(exc))) from None
        except (ConnectionBroken, ConnectTimeout, ProxyRefused):  # the tunnel's errors (it closed the socket)
            self._discard(conn)
            self._refuse_if_closed()  # abort() broke the tunnel off: the engine is closing, not the proxy refusing
            raise
        try:
            self._refuse_if_closed()
        except ConnectionBroken:
            self._discard(conn)
            raise
        return conn

    def _handshake(self, conn: _Conn, tls: ssl.SSLSocket) -> ssl.SSLSocket:
        """Run the TLS handshake of ``tls`` (wrapped without one, over ``conn.sock``'s descriptor) as
        ``conn.sock``, so :meth:`abort` shuts it down from any thread; blocks within the socket's timeout."""
        conn.sock = tls  # the same descriptor, still registered in _live
        self._refuse_if_closed()  # an abort() that read conn.sock before the line above is seen here
        tls.do_handshake()
        return tls

    def _register(self, sock: socket.socket) -> _Conn:
        """Track a new socket in ``_live`` (so abort() and close() reach it), unless the engine is closed."""
        conn = _Conn(sock)
        with self._lock:
            if not self._closed and not self._aborted:
                self._live.add(conn)
                return conn
        conn.close()
        raise ConnectionBroken("the HTTP connections are closed")

    def _refuse_if_closed(self) -> None:
        if self._closed or self._aborted:
            raise ConnectionBroken("the HTTP connections are closed")

    def _checkin(self, origin: _Origin, conn: _Conn) -> None:
        self._deadlines.clear(conn)
        conn.idle_since = time.monotonic()
        with self._lock:
            if not self._closed and len(origin.idle) < self._maxsize:
                origin.idle.append(conn)
                return
            self._live.discard(conn)
        conn.close()

    def _discard(self, conn: _Conn) -> None:
        self._deadlines.clear(conn)
        with self._lock:
            self._live.discard(conn)
        conn.close()

    # ------------------------------------------------------------------ sending

    def send(
        self,
        method: str,
        url: str,
        body: Optional[bytes],
        headers: Mapping[str, str],
        timeout: Timeouts,
        stream: bool = True,
    ) -> DirectResponse:
        """Send one request and return its answer with the body still to read.

        Blocks until the status line and headers arrive (bounded by the connect timeout, then the read
        timeout). Raises the errors of :mod:`mcpsync.transports.http.netbase`, never another kind.
        """
        route = self._route(url)
        redirects = 0
        while True:
            resp = self._exchange(route, method, body, headers, timeout)
            proxy = route.origin.proxy
            if resp.status_code == 407 and proxy is not None and proxy.forwards(route.origin.scheme):
                resp.close()
                raise ProxyRefused(refusal(proxy, 407, resp.reason, route.origin.host_header), 407)
            if self._cookies is not None or "Set-Cookie" in resp.headers:
                self._keep_cookies(route.url, resp)
            if not resp.is_redirect:
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
                method, body = "GET", None  # as requests (and browsers) do
                headers = {k: v for k, v in headers.items() if k.lower() not in ("content-type", "content-length")}
            route = self._route(target)

    def get(self, url: str, headers: Mapping[str, str], timeout: Timeouts) -> DirectResponse:
        """``send("GET", ...)``: the answer's body is streamed."""
        return self.send("GET", url, None, headers, timeout)

    def delete(self, url: str, headers: Mapping[str, str], timeout: Timeouts) -> DirectResponse:
        """``send("DELETE", ...)``."""
        return self.send("DELETE", url, None, headers, timeout)

    def _head(self, method: str, route: _Route, body: Optional[bytes], headers: Mapping[str, str]) -> bytes:
        check_method(method)
        check_headers(headers.items())  # the engine's own headers were checked once, when it was made
        own = {k.lower() for k in headers}
        lines = ["%s %s HTTP/1.1" % (method, route.target), "Host: " + route.origin.host_header]
        proxy = route.origin.proxy
        if proxy is not None and proxy.authorization and proxy.forwards(route.origin.scheme):
            lines.append("Proxy-Authorization: " + proxy.authorization)
        lines.extend("%s: %s" % kv for kv in self._headers.items() if kv[0].lower() not in own)
        lines.extend("%s: %s" % kv for kv in headers.items())
        if body is not None and "content-length" not in own:
            lines.append("Content-Length: %d" % len(body))
        if self._cookies is not None and "cookie" not in own:
            cookie = self._cookie_header(route.url)
            if cookie:
                check_headers((("Cookie", cookie),))
                lines.append("Cookie: " + cookie)
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def _exchange(
        self, route: _Route, method: str, body: Optional[bytes], headers: Mapping[str, str], timeout: Timeouts
    ) -> DirectResponse:
        head = self._head(method, route, body, headers)
        connect_timeout, read_timeout = timeout
        first = head if body is None else head + body if len(body) <= _ONE_WRITE_MAX else head
        rest = body if body is not None and len(body) > _ONE_WRITE_MAX else None
        while True:
            conn = self._checkout(route.origin, connect_timeout)
            sock = conn.sock
            self._deadlines.arm(conn, read_timeout)  # bounds the send and the wait for the status line
            try:
                # one send() first: when it raises, not one byte of this request was taken (the kernel, or
                # SSL_write, reports an error only when it accepted nothing), so a reused connection the server
                # had closed may be replaced by another; once a byte is out, the request is never sent again
                sent = sock.send(first)
            except socket.timeout:
                self._discard(conn)
                raise ReadTimeout("could not send to %s within the read timeout" % redact_url(route.url)) from None
            except OSError as exc:
                self._discard(conn)
                if conn.expired:
                    raise ReadTimeout("could not send to %s within the read timeout" % redact_url(route.url)) from None
                if isinstance(exc, ssl.SSLError):
                    raise TLSFailed("TLS error talking to %s: %s" % (redact_url(route.url), _text(exc))) from None
                if conn.reused:  # a stale pooled connection, found before the first byte: nothing was sent
                    continue
                raise ConnectionBroken("connection to %s broken: %s" % (redact_url(route.url), _text(exc))) from None
            try:
                if sent < len(first):
                    sock.sendall(memoryview(first)[sent:])
                if rest is not None:
                    sock.sendall(rest)
            except socket.timeout:
                self._discard(conn)
                raise ReadTimeout("could not send to %s within the read timeout" % redact_url(route.url)) from None
            except OSError as exc:
                # part of the request reached the server: it is never sent again. A server may answer before it
                # reads the whole body (413, 401...) and close: that answer is read and returned, as sent.
                if not conn.expired and not isinstance(exc, ssl.SSLError):
                    early = self._read_answer(route, conn, method, reusable=False)
                    if isinstance(early, DirectResponse):
                        return early
                self._discard(conn)
                if conn.expired:
                    raise ReadTimeout("could not send to %s within the read timeout" % redact_url(route.url)) from None
                if isinstance(exc, ssl.SSLError):
                    raise TLSFailed("TLS error talking to %s: %s" % (redact_url(route.url), _text(exc))) from None
                raise ConnectionBroken(
                    "connection to %s broken while sending (not resent): %s" % (redact_url(route.url), _text(exc))
                ) from None
            answer = self._read_answer(route, conn, method)
            if isinstance(answer, DirectResponse):
                return answer
            raise answer

    def _read_answer(
        self, route: _Route, conn: _Conn, method: str, reusable: bool = True
    ) -> Union[DirectResponse, Exception]:
        """The answer's head on ``conn`` as a response, or the error to raise (the connection then discarded).

        ``reusable=False``: the request was not sent whole, so the connection is closed after this answer."""
        fp = conn.sock.makefile("rb")
        try:
            status, reason, got_headers, got_body = read_head(fp, method)
        except socket.timeout:
            _close_quietly(fp)
            self._discard(conn)
            return ReadTimeout("no answer from %s within the read timeout" % redact_url(route.url))
        except (OSError, BadAnswer, ValueError, UnicodeDecodeError) as exc:
            _close_quietly(fp)
            self._discard(conn)
            if conn.expired:
                return ReadTimeout("no answer from %s within the read timeout" % redact_url(route.url))
            if isinstance(exc, ssl.SSLError):  # TLS 1.3: a refused client certificate shows on the first read
                return TLSFailed("TLS error talking to %s: %s" % (redact_url(route.url), _text(exc)))
            return ConnectionBroken(
                "connection to %s broken: %s" % (redact_url(route.url), _text(exc) or type(exc).__name__)
            )
        if not reusable:
            got_body.reusable = False
        return DirectResponse(self, route, conn, fp, status, reason, got_headers, got_body)

    def _proxy_for(self, url: str) -> Optional[Proxy]:
        if not self._proxies:
            return None
        try:
            return self._proxies.for_url(url)
        except ValueError as exc:  # its text names the scheme, never the proxy's credentials
            raise ConnectFailed("the proxy for %s: %s" % (redact_url(url), exc)) from None

    # ------------------------------------------------------------------ cookies (only once a server sets one)

    def _keep_cookies(self, url: str, resp: DirectResponse) -> None:
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
        """Shut down every socket, in use, idle or still connecting (TCP connect, TLS handshake): threads
        blocked on one wake up with an error at once. Later connects are refused (abort is the first step of
        closing). Never raises, never blocks."""
        with self._lock:
            self._aborted = True
        self._shut_live(keep_idle=False)

    def interrupt(self) -> None:
        """Shut down every socket in use or still connecting, like :meth:`abort`, but keep the idle pooled ones
        (no thread waits on those) and leave the engine usable: how ``close()`` wakes its callers and then still
        sends the session's ``DELETE`` on a kept-alive connection. Never raises, never blocks."""
        self._shut_live(keep_idle=True)

    def _shut_live(self, keep_idle: bool) -> None:
        with self._lock:
            conns = set(self._live)
            if keep_idle:
                for origin in self._origins.values():
                    conns.difference_update(origin.idle)
        for conn in conns:
            _shut(conn.sock)

    def close(self) -> None:
        """Close every idle connection now and shut down the ones in use (each is closed when its response
        is closed or dropped); later requests raise ``ConnectionBroken``. Idempotent, never blocks."""
        with self._lock:
            self._closed = True
            idle = [c for origin in self._origins.values() for c in origin.idle]
            for origin in self._origins.values():
                origin.idle.clear()
            for conn in idle:
                self._live.discard(conn)
        for conn in idle:
            conn.close()
        self.abort()
        self._deadlines.stop()

    def after_fork_in_child(self) -> None:
        """In a forked child: close this process's copies of every socket without shutting any down (a
        shutdown would end the parent's connection too). Takes no lock a parent thread may have held."""
        self._lock = threading.Lock()
        self._closed = True
        self._deadlines.after_fork_in_child()
        conns = list(self._live)
        self._live = set()
        for origin in self._origins.values():
            origin.idle = []
        for conn in conns:
            close_fd(conn.sock)


class _CookieAnswer:
    """What ``http.cookiejar`` reads of an answer: its headers."""

    def __init__(self, headers: Any) -> None:
        self._headers = headers

    def info(self) -> Any:
        return self._headers


def _close_quietly(fp: Any) -> None:
    try:
        fp.close()
    except (OSError, ValueError):  # pragma: no cover - closing a file object over a socket
        pass


def _dropped(sock: socket.socket) -> bool:
    """True when an idle connection became readable: the server closed it (or sent junk): not reusable."""
    try:
        readable, _, _ = select.select([sock], [], [], 0)
    except (OSError, ValueError):
        return True
    return bool(readable)


def _shut(sock: Any) -> None:
    """Shut ``sock`` down both ways (threads blocked on it wake up); never raises. An ``SSLSocket`` is shut
    down at the descriptor: ``SSLSocket.shutdown`` also drops its SSL object, and a thread about to start the
    handshake on it would then fail with an ``AttributeError`` instead of the socket error it gets now."""
    try:
        if isinstance(sock, socket.socket):
            socket.socket.shutdown(sock, socket.SHUT_RDWR)
        else:
            sock.shutdown(socket.SHUT_RDWR)  # TLSInTLS: shuts its outer socket down
    except OSError:
        pass


def _drain(resp: DirectResponse, limit: int = 1 << 16) -> None:
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


def _text(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
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
