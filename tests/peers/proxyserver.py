"""A real local HTTP proxy for the tests (standard library only): forward proxying of absolute-form requests
(keep-alive on both sides, answers relayed as they arrive: JSON, chunked event streams, close-delimited
bodies) and CONNECT tunnels. It counts what it carries, can demand ``Proxy-Authorization``, and can
misbehave on purpose (``connect_answer``: what to answer a CONNECT with instead of a tunnel; :meth:`arm`: stall
every new connection at one step, for ever, setting ``stalled`` once a client is inside that step).

    with ProxyServer(credentials=("user", "p@ss")) as proxy:
        proxy.url_with_credentials   # http://user:p%40ss@127.0.0.1:PORT
        proxy.forwarded              # [(method, absolute target, Proxy-Authorization or None)]
        proxy.tunnels                # [(host:port, Proxy-Authorization or None)]
"""

from __future__ import annotations

import base64
import socket
import threading
from typing import Any, Dict, List, Optional, Set, Tuple
from urllib.parse import quote, urlsplit


class ProxyServer:
    def __init__(
        self, credentials: Optional[Tuple[str, str]] = None, tls: Any = None, hosts: Optional[Dict[str, str]] = None
    ) -> None:
        self.credentials = credentials
        #: names only this proxy resolves (name -> IP address), as a corporate proxy resolves internal hosts:
        #: a client that bypasses the proxy cannot reach them
        self.hosts: Dict[str, str] = {k.lower(): v for k, v in (hosts or {}).items()}
        self.forward_answer: Optional[bytes] = None  # e.g. b"HTTP/1.1 502 Bad Gateway\r\n...": forwards nothing
        self.tls = tls  # an ssl.SSLContext (server side): an https:// proxy (TLS between client and proxy)
        self.expected = (
            "Basic " + base64.b64encode(("%s:%s" % credentials).encode()).decode() if credentials is not None else None
        )
        self.forwarded: List[Tuple[str, str, Optional[str]]] = []
        self.tunnels: List[Tuple[str, Optional[str]]] = []
        self.refused = 0
        self.connections = 0
        self.connect_answer: Optional[bytes] = None  # e.g. b"HTTP/1.1 502 Bad Gateway\r\n\r\n", or b"" (hang up)
        self.stall_at: Optional[str] = None  # see arm()
        self.stalled = threading.Event()  # a client reached the stall_at step (and is held there)
        self.lock = threading.Lock()
        self._socks: Set[socket.socket] = set()
        self._threads: List[threading.Thread] = []
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.port = self._listener.getsockname()[1]
        self._stopped = False

    # ------------------------------------------------------------------ life cycle

    @property
    def url(self) -> str:
        return "%s://127.0.0.1:%d" % ("https" if self.tls is not None else "http", self.port)

    @property
    def url_with_credentials(self) -> str:
        assert self.credentials is not None
        user, password = self.credentials
        return self.url.replace("://", "://%s:%s@" % (quote(user, safe=""), quote(password, safe="")))

    def start(self) -> "ProxyServer":
        self._spawn(self._accept_loop)
        return self

    def stop(self) -> None:
        self._stopped = True
        try:
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in accept()
        except OSError:
            pass
        try:
            self._listener.close()
        except OSError:
            pass
        self._shut_all(close=True)
        for thread in list(self._threads):
            thread.join(10)

    def __enter__(self) -> "ProxyServer":
        return self.start()

    def arm(self, step: str) -> None:
        """From now on hold every new connection at ``step``, never answering, until the client goes away:
        ``"tls"`` (an https:// proxy: the ClientHello arrived), ``"connect"`` (the CONNECT head, or the SOCKS
        CONNECT request, was read), ``"tunnel"`` (CONNECT answered 200, the first bytes of the TLS handshake
        inside the tunnel arrived), ``"greeting"`` (SOCKS5: the method greeting was read). ``stalled`` is set
        once a client is held there. The connections open now are shut down (pooled ones become stale)."""
        self.stalled.clear()
        self.stall_at = step
        self._shut_all(close=False)

    def _shut_all(self, close: bool) -> None:
        """Shut down every connection this proxy holds (its threads wake up); ``close``: close them too."""
        with self.lock:
            socks = list(self._socks)
        for sock in socks:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            if close:
                sock.close()

    def _hold(self, read: Any, first: bool) -> None:
        """The stall: (after the client's first byte when ``first``) set ``stalled``, then read and drop
        what the client sends until it closes or shuts the connection down."""
        try:
            if first and not read(1):
                return
            self.stalled.set()
            while read(65536):
                pass
        except (OSError, ValueError):
            pass

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def _spawn(self, target: Any, *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, name="test-proxy", daemon=True)
        self._threads.append(thread)
        thread.start()

    def resolve(self, host: str, port: int) -> Tuple[str, int]:
        """Where a request for ``host:port`` goes: ``hosts`` first (the proxy's own names), else ``host``."""
        return self.hosts.get(host.lower(), host), port

    def _track(self, sock: socket.socket) -> None:
        with self.lock:
            self._socks.add(sock)

    def _accept_loop(self) -> None:
        while not self._stopped:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # relay small writes at once
            self._track(client)
            with self.lock:
                self.connections += 1
            self._spawn(self._serve, client)

    # ------------------------------------------------------------------ one client connection

    def _serve(self, client: socket.socket) -> None:
        if self.tls is not None:
            if self.stall_at == "tls":  # the ClientHello is never answered
                self._hold(client.recv, True)
                client.close()
                return
            try:
                client = self.tls.wrap_socket(client, server_side=True)
            except (OSError, ValueError):
                client.close()
                return
            self._track(client)
        rfile = client.makefile("rb")
        upstream: Optional[socket.socket] = None
        ufile: Any = None
        upstream_key: Optional[Tuple[str, int]] = None
        try:
            while True:
                line = rfile.readline(65537)
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    continue
                method, target, _version = line.decode("latin-1").split(" ", 2)
                headers = _read_headers(rfile)
                auth = _get(headers, "proxy-authorization")
                length = int(_get(headers, "content-length") or 0)
                body = rfile.read(length) if length else b""
                if self.expected is not None and auth != self.expected:
                    with self.lock:
                        self.refused += 1
                    client.sendall(
                        b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"test\"\r\n"
                        b"Content-Length: 0\r\nConnection: close\r\n\r\n"
                    )
                    return
                if method == "CONNECT":
                    with self.lock:
                        self.tunnels.append((target, auth))
                    if self.stall_at == "connect":  # the CONNECT is never answered
                        self._hold(rfile.read1, False)
                        return
                    self._tunnel(client, rfile, target)
                    return
                parts = urlsplit(target)
                with self.lock:
                    self.forwarded.append((method, target, auth))
                if self.forward_answer is not None:
                    client.sendall(self.forward_answer)
                    return
                key = (parts.hostname or "", parts.port or 80)
                if upstream is None or key != upstream_key:
                    if upstream is not None:
                        upstream.close()
                    upstream = socket.create_connection(self.resolve(*key), 30)
                    upstream.settimeout(None)
                    upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    self._track(upstream)
                    ufile = upstream.makefile("rb")
                    upstream_key = key
                path = parts.path or "/"
                if parts.query:
                    path += "?" + parts.query
                out = ["%s %s HTTP/1.1" % (method, path)]
                hop = ("proxy-authorization", "proxy-connection")
                out += ["%s: %s" % (k, v) for k, v in headers if k.lower() not in hop]
                upstream.sendall(("\r\n".join(out) + "\r\n\r\n").encode("latin-1") + body)
                if not self._relay_answer(method, ufile, client):
                    return  # a close-delimited answer: the connection ends with it
        except (OSError, ValueError):
            return
        finally:
            for fp in (rfile, ufile):
                if fp is not None:
                    try:
                        fp.close()
                    except OSError:
                        pass
            for sock in (client, upstream):
                if sock is not None:
                    try:
                        sock.close()
                    except OSError:
                        pass

    def _relay_answer(self, method: str, ufile: Any, client: socket.socket) -> bool:
        """Relay one answer; True when both connections may carry another request."""
        while True:
            status_line = ufile.readline(65537)
            if not status_line:
                raise ValueError("upstream closed")
            headers = _read_headers(ufile)
            head = status_line + b"".join(b"%s: %s\r\n" % (k.encode(), v.encode()) for k, v in headers) + b"\r\n"
            status = int(status_line.split()[1])
            length = _get(headers, "content-length")
            if length is not None and int(length) <= 65536 and status >= 200 and method != "HEAD":
                body = ufile.read(int(length))  # head and a small body in one write, as a real proxy's buffer does
                if len(body) != int(length):
                    raise ValueError("upstream closed mid-body")
                client.sendall(head + body)
                return (_get(headers, "connection") or "").lower() != "close"
            client.sendall(head)
            if 100 <= status < 200:
                continue
            break
        close = (_get(headers, "connection") or "").lower() == "close"
        if method == "HEAD" or status in (204, 304):
            return not close
        if "chunked" in (_get(headers, "transfer-encoding") or "").lower():
            while True:
                size_line = ufile.readline(65537)
                client.sendall(size_line)
                size = int(size_line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while True:  # trailers, then the blank line
                        trailer = ufile.readline(65537)
                        client.sendall(trailer)
                        if trailer in (b"\r\n", b"\n", b""):
                            return not close
                data = ufile.read(size + 2)
                client.sendall(data)
        length = _get(headers, "content-length")
        if length is not None:
            left = int(length)
            while left:
                chunk = ufile.read1(min(left, 65536))
                if not chunk:
                    raise ValueError("upstream closed mid-body")
                client.sendall(chunk)
                left -= len(chunk)
            return not close
        while True:  # close-delimited
            chunk = ufile.read1(65536)
            if not chunk:
                return False
            client.sendall(chunk)

    def _tunnel(self, client: socket.socket, rfile: Any, target: str) -> None:
        if self.connect_answer is not None:
            if self.connect_answer:
                client.sendall(self.connect_answer)
            return
        if self.stall_at == "tunnel":  # a tunnel to nowhere: the TLS handshake inside it is never answered
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            self._hold(rfile.read1, True)
            return
        host, _, port = target.rpartition(":")
        upstream = socket.create_connection(self.resolve(host.strip("[]"), int(port)), 30)
        upstream.settimeout(None)
        upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._track(upstream)
        client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        self._pump_both(client, rfile, upstream)

    def _pump_both(self, client: socket.socket, rfile: Any, upstream: socket.socket) -> None:
        """Relay both ways until either side closes (``rfile`` reads the client, buffered bytes included)."""

        def pump(src: Any, dst: socket.socket) -> None:
            try:
                while True:
                    data = src.read1(65536) if hasattr(src, "read1") else src.recv(65536)
                    if not data:
                        break
                    dst.sendall(data)
            except (OSError, ValueError):
                pass
            try:
                dst.shutdown(socket.SHUT_WR)
            except OSError:
                pass

        back = threading.Thread(target=pump, args=(upstream, client), name="test-proxy-tunnel", daemon=True)
        self._threads.append(back)
        back.start()
        pump(rfile, upstream)
        back.join(30)
        upstream.close()


def _read_headers(fp: Any) -> List[Tuple[str, str]]:
    headers = []
    while True:
        line = fp.readline(65537)
        if line in (b"\r\n", b"\n", b""):
            return headers
        name, _, value = line.decode("latin-1").partition(":")
        headers.append((name.strip(), value.strip()))


def _get(headers: List[Tuple[str, str]], name: str) -> Optional[str]:
    for key, value in headers:
        if key.lower() == name:
            return value
    return None


class SocksServer(ProxyServer):
    """A SOCKS5 proxy (RFC 1928 CONNECT, RFC 1929 username/password when ``credentials`` are set).
    ``tunnels`` records ``(host:port as asked, address type)``; address type 3 means the client sent a name.

    To misbehave: ``greeting_answer`` is sent instead of the SOCKS5 method selection (and then the connection is
    closed), ``auth_answer`` instead of the answer to the username/password (``credentials`` set), and
    ``connect_answer`` instead of the answer to a SOCKS5 or SOCKS4 CONNECT (b"": hang up)."""

    greeting_answer: Optional[bytes] = None
    auth_answer: Optional[bytes] = None

    @property
    def url(self) -> str:
        return "socks5h://127.0.0.1:%d" % self.port

    def _serve(self, client: socket.socket) -> None:
        rfile = client.makefile("rb")
        try:
            head = rfile.read(2)
            if head[:1] == b"\x04":
                self._socks4(client, rfile)
                return
            methods = rfile.read(head[1]) if len(head) == 2 else b""
            if head[:1] != b"\x05":
                return
            if self.stall_at == "greeting":  # the method greeting is never answered
                self._hold(rfile.read1, False)
                return
            if self.greeting_answer is not None:
                client.sendall(self.greeting_answer)
                return
            if self.credentials is not None:
                if 2 not in methods:
                    client.sendall(b"\x05\xff")
                    return
                client.sendall(b"\x05\x02")
                _, ulen = rfile.read(2)
                user = rfile.read(ulen).decode()
                password = rfile.read(rfile.read(1)[0]).decode()
                if self.auth_answer is not None:
                    client.sendall(self.auth_answer)
                    return
                if (user, password) != self.credentials:
                    with self.lock:
                        self.refused += 1
                    client.sendall(b"\x01\x01")
                    return
                client.sendall(b"\x01\x00")
            else:
                client.sendall(b"\x05\x00")
            _ver, _cmd, _rsv, kind = rfile.read(4)
            if kind == 1:
                host = socket.inet_ntop(socket.AF_INET, rfile.read(4))
            elif kind == 4:
                host = socket.inet_ntop(socket.AF_INET6, rfile.read(16))
            else:
                host = rfile.read(rfile.read(1)[0]).decode("idna")
            port = int.from_bytes(rfile.read(2), "big")
            with self.lock:
                self.tunnels.append(("%s:%d" % (host, port), str(kind)))
            if self.stall_at == "connect":  # the CONNECT request is never answered
                self._hold(rfile.read1, False)
                return
            if self.connect_answer is not None:
                if self.connect_answer:
                    client.sendall(self.connect_answer)
                return
            try:
                upstream = socket.create_connection(self.resolve(host, port), 30)
            except OSError:
                client.sendall(b"\x05\x05\x00\x01" + bytes(6))  # connection refused
                return
            upstream.settimeout(None)
            self._track(upstream)
            client.sendall(b"\x05\x00\x00\x01" + bytes(6))
            self._pump_both(client, rfile, upstream)
        except (OSError, ValueError, IndexError):
            return
        finally:
            rfile.close()
            client.close()

    def _socks4(self, client: socket.socket, rfile: Any) -> None:
        port = int.from_bytes(rfile.read(2), "big")
        ip = rfile.read(4)

        def until_nul() -> bytes:
            out = b""
            while True:
                byte = rfile.read(1)
                if byte in (b"", b"\x00"):
                    return out
                out += byte

        user = until_nul().decode()
        host = until_nul().decode("idna") if ip[:3] == b"\x00\x00\x00" and ip[3] else socket.inet_ntoa(ip)
        with self.lock:
            self.tunnels.append(("%s:%d" % (host, port), "4a" if ip[:3] == b"\x00\x00\x00" else "4"))
        if self.stall_at == "connect":  # the SOCKS4 request is never answered
            self._hold(rfile.read1, False)
            return
        if self.connect_answer is not None:
            if self.connect_answer:
                client.sendall(self.connect_answer)
            return
        if self.credentials is not None and user != self.credentials[0]:
            with self.lock:
                self.refused += 1
            client.sendall(b"\x00\x5b" + bytes(6))
            return
        try:
            upstream = socket.create_connection(self.resolve(host, port), 30)
        except OSError:
            client.sendall(b"\x00\x5b" + bytes(6))
            return
        upstream.settimeout(None)
        self._track(upstream)
        client.sendall(b"\x00\x5a" + bytes(6))
        self._pump_both(client, rfile, upstream)
