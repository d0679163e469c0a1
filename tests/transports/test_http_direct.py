"""The urllib3 pools of a server (transports/http/pool.py), which carry every MCP request.

Against real local servers: a raw socket server that answers whatever bytes a test scripts (junk
included), and the example MCP server over HTTP. The behaviour seen through a transport (timeouts, faults,
resumption) is covered by the transport suites; tests/transports/test_one_engine.py proves every configuration runs
here.
"""

from __future__ import annotations

import gzip
import os
import select
import socket
import subprocess
import sys
import threading
import zlib
from typing import Any, Iterator, List, Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mcpsync
from mcpsync.errors import ConfigError, ConnectError
from mcpsync.transports.http.net import make_net
from mcpsync.transports.http.pool import PoolNet
from mcpsync.transports.http.contract import ConnectFailed, ConnectionBroken, NetError, ReadTimeout
from mcpsync.transports.http.options import HTTPOptions

from tests.conftest import wait_for
from tests.peers.httpserver import MCPTestServer

OK = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"


class RawServer:
    """A socket server answering each request with the next scripted reply (bytes, or a callable)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self.url = "http://127.0.0.1:%d/mcp" % self.port
        self.replies: List[Any] = []
        self.default: Any = OK
        self.requests: List[bytes] = []
        self.connections = 0
        self.lock = threading.Lock()
        self.conns: List[socket.socket] = []
        self.stopping = False
        self.thread = threading.Thread(target=self._accept, name="test-raw-server", daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while not self.stopping:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.connections += 1
                self.conns.append(conn)
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _read_request(self, conn: socket.socket, buf: bytearray) -> Optional[bytes]:
        while b"\r\n\r\n" not in buf:
            data = conn.recv(65536)
            if not data:
                return None
            buf += data
        head, _, rest = bytes(buf).partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(rest) < length:
            data = conn.recv(65536)
            if not data:
                return None
            rest += data
        del buf[:]
        buf += rest[length:]
        return head + b"\r\n\r\n" + rest[:length]

    def _serve(self, conn: socket.socket) -> None:
        buf = bytearray()
        try:
            while True:
                req = self._read_request(conn, buf)
                if req is None:
                    return
                with self.lock:
                    self.requests.append(req)
                    reply = self.replies.pop(0) if self.replies else self.default
                if callable(reply):
                    if reply(conn, req) is False:
                        return
                    continue
                conn.sendall(reply)
                if b"Connection: close" in reply.split(b"\r\n\r\n", 1)[0]:
                    return
        except OSError:
            return
        finally:
            conn.close()

    def close_all(self) -> None:
        with self.lock:
            conns, self.conns = self.conns, []
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def stop(self) -> None:
        self.stopping = True
        self.sock.close()
        self.close_all()


@pytest.fixture
def raw() -> Iterator[RawServer]:
    server = RawServer()
    try:
        yield server
    finally:
        server.stop()


def _net(url: str, **options: Any) -> PoolNet:
    net = make_net(url, HTTPOptions(trust_env=False, **options))
    assert isinstance(net, PoolNet)
    return net


def _post(net: PoolNet, url: str, body: bytes = b'{"a":1}', **headers: str) -> Any:
    return net.send("POST", url, body, dict({"Content-Type": "application/json"}, **headers), (5.0, 5.0))


def _status(net: PoolNet, url: str) -> int:
    r = _post(net, url)
    r.read()
    r.close()
    return int(r.status_code)


def _client_saw_every_close(net: PoolNet) -> bool:
    """Wait until every idle pooled connection of ``net`` is readable: the server's FIN (or junk) reached the
    client's socket. A server's ``shutdown()`` returning does not mean that: on a loaded machine the kernel may
    deliver the loopback FIN a moment later, and a request written before it arrives is on a connection the
    server has closed (the race of RFC 9112 section 9.3.1 no client wins; the engine never re-sends such a
    request, see test_a_reused_connection_the_server_closes_on_the_request_is_not_resent)."""
    idle = _sockets(net)
    return wait_for(lambda: all(select.select([sock], [], [], 0)[0] for sock in idle), 10)


def _sockets(net: PoolNet) -> List[socket.socket]:
    """The open sockets of ``net``'s connections (the tracker every connection registers its sockets with)."""
    return [sock for sock in list(net._tracker.sockets) if sock.fileno() >= 0]


def _open_sockets() -> int:
    n = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink("/proc/self/fd/" + fd).startswith("socket:"):
                n += 1
        except OSError:
            pass
    return n


# ---------------------------------------------------------------------------------------------- the rule


def test_every_configuration_gets_the_urllib3_pools(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpsync.httpauth import BearerAuth
    from mcpsync.transports.http.auth import AuthNet, RequestsHookNet

    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NETRC"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", "/nonexistent-home")
    monkeypatch.delenv("MCPSYNC_HTTP_ENGINE", raising=False)
    url = "https://mcp.example.com/mcp"
    configurations: List[Any] = [
        {},
        {"bearer_token": "t", "headers": {"X-Key": "k"}},
        {"auth": lambda r: r},  # a requests auth runs around it
        {"auth": BearerAuth("t")},  # an mcpsync.Auth flow too
        {"proxies": {"https": "http://proxy:3128"}},
        {"proxies": {"https": "https://proxy:3129"}},
        {"proxies": {"https": "socks5h://proxy:1080"}},
        {"proxies": {"https": "socks4a://proxy:1080"}},
    ]
    for options in configurations:
        net = make_net(url, HTTPOptions(**options))
        try:
            assert net.kind == "urllib3"
            inner = net.inner if isinstance(net, (AuthNet, RequestsHookNet)) else net  # type: ignore[attr-defined]
            assert isinstance(inner, PoolNet), options
        finally:
            net.close()
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy:3128")
    monkeypatch.setenv("NETRC", "/some/netrc")
    net = make_net(url, HTTPOptions())
    assert isinstance(net, PoolNet)
    net.close()


def test_a_proxy_of_an_unknown_scheme_is_a_config_error_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ConfigError, match="ftp:// proxy") as info:
        make_net("http://h/mcp", HTTPOptions(proxies={"http": "ftp://user:secret@proxy:21"}))
    assert "secret" not in str(info.value) and "socks5h://" in str(info.value)  # what it does speak
    monkeypatch.setenv("HTTPS_PROXY", "gopher://proxy:70")
    with pytest.raises(ConfigError, match="gopher:// proxy"):
        mcpsync.connect("https://mcp.example.com/mcp", http=HTTPOptions(transport="http"), timeout=5)
    make_net("http://mcp.example.com/mcp", HTTPOptions()).close()  # that proxy is for https only
    make_net("https://mcp.example.com/mcp", HTTPOptions(trust_env=False)).close()
    monkeypatch.setenv("NO_PROXY", ".example.com")
    make_net("https://mcp.example.com/mcp", HTTPOptions()).close()


def test_the_removed_engine_option_is_a_clear_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCPSYNC_HTTP_ENGINE", raising=False)
    for engine in ("requests", "stdlib", "auto", "curl"):
        with pytest.raises(ConfigError, match="engine option is gone.*drop the engine argument"):
            HTTPOptions(engine=engine)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="engine option is gone"):
        mcpsync.connect("http://127.0.0.1:9/mcp", http=HTTPOptions(transport="http"), engine="requests", timeout=5)  # type: ignore[arg-type]
    monkeypatch.setenv("MCPSYNC_HTTP_ENGINE", "requests")  # a leftover from 0.1.0
    with pytest.raises(ConfigError, match="MCPSYNC_HTTP_ENGINE=requests.*unset the variable"):
        HTTPOptions()
    with pytest.raises(ConfigError, match="MCPSYNC_HTTP_ENGINE=requests"):
        mcpsync.connect("http://127.0.0.1:9/mcp", http=HTTPOptions(transport="http"), timeout=5)
    for harmless in ("stdlib", "auto", ""):
        monkeypatch.setenv("MCPSYNC_HTTP_ENGINE", harmless)
        assert HTTPOptions().transport is None  # no error
    monkeypatch.setenv("MCPSYNC_HTTP_ENGINE", "curl")
    with pytest.raises(ConfigError, match="MCPSYNC_HTTP_ENGINE"):
        HTTPOptions()


def test_headers_and_a_large_body_arrive_whole_on_one_reused_connection(raw: RawServer) -> None:
    net = _net(raw.url, headers={"X-Api-Key": "k1"})
    big = b'{"x": "' + b"y" * 300_000 + b'"}'
    try:
        for body in (b'{"n": 0}', big, b'{"n": 2}'):
            r = _post(net, raw.url, body, **{"Mcp-Method": "tools/call"})
            assert r.status_code == 200 and r.read() == b"{}"
            r.close()
        assert raw.connections == 1
        assert [req.split(b"\r\n\r\n", 1)[1] for req in raw.requests] == [b'{"n": 0}', big, b'{"n": 2}']
        head = raw.requests[0].split(b"\r\n\r\n")[0]
        assert b"X-Api-Key: k1" in head and b"Mcp-Method: tools/call" in head and b"Content-Length: 8" in head
        assert b"User-Agent: mcpsync/" in head
    finally:
        net.close()


def test_a_requests_auth_runs_for_every_request_with_its_method_and_url(raw: RawServer) -> None:
    counter = iter(range(100))

    def auth(r: Any) -> Any:
        r.headers["Authorization"] = "Proof %d %s %s" % (next(counter), r.method, r.url)
        return r

    net = make_net(raw.url, HTTPOptions(trust_env=False, auth=auth))
    try:
        for path in ("/mcp", "/other"):
            r = net.send("POST", raw.url.replace("/mcp", path), b"{}", {"Content-Type": "application/json"}, (5, 5))
            r.read()
            r.close()
    finally:
        net.close()
    assert b"Authorization: Proof 0 POST %s\r\n" % raw.url.encode() in raw.requests[0]
    assert b"Authorization: Proof 1 POST %s\r\n" % raw.url.replace("/mcp", "/other").encode() in raw.requests[1]


def test_a_plain_connection_never_imports_requests() -> None:
    with MCPTestServer(era="modern", response_mode="json") as srv:
        code = (
            "import sys, mcpsync\n"
            "with mcpsync.connect(%r, timeout=20) as c:\n"
            "    assert c.call_tool('echo', {'message': 'x'}).text == 'x'\n"
            "bad = [m for m in ('requests', 'jsonschema', 'filelock') if m in sys.modules]\n"
            "assert not bad, bad\n" % srv.url
        )
        env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=60)
        assert out.returncode == 0, out.stderr.decode()


# ---------------------------------------------------------------------------------------------- the engine


def test_sequential_calls_reuse_one_connection_and_close_leaves_no_socket() -> None:
    before = _open_sockets()
    with MCPTestServer(era="legacy", response_mode="json") as srv:
        with mcpsync.connect(srv.url, http=HTTPOptions(transport="http", get_stream=False), timeout=20) as c:
            for i in range(20):
                assert c.call_tool("echo", {"message": str(i)}).text == str(i)
    assert _open_sockets() <= before


def test_keep_alive_pooling_one_connection_for_sequential_requests(raw: RawServer) -> None:
    net = _net(raw.url)
    try:
        for _ in range(10):
            r = _post(net, raw.url)
            assert r.status_code == 200 and r.read() == b"{}"
            r.close()
        assert raw.connections == 1
    finally:
        net.close()


def test_the_pool_keeps_at_most_pool_maxsize_idle_connections(raw: RawServer) -> None:
    hold = threading.Event()
    arrived = threading.Barrier(5)

    def slow(conn: socket.socket, req: bytes) -> None:
        arrived.wait(10)
        hold.wait(10)
        conn.sendall(OK)

    raw.replies = [slow] * 4
    net = _net(raw.url, pool_maxsize=2)
    results: List[int] = []

    def one() -> None:
        r = _post(net, raw.url)
        results.append(len(r.read()))
        r.close()

    threads = [threading.Thread(target=one) for _ in range(4)]
    for t in threads:
        t.start()
    arrived.wait(10)  # four requests in flight on four connections
    hold.set()
    for t in threads:
        t.join(10)
    assert results == [2, 2, 2, 2] and raw.connections == 4
    assert len(_sockets(net)) == 2  # two kept, two closed as they came back
    net.close()
    assert not _sockets(net)


def test_an_idle_connection_the_server_closed_is_replaced(raw: RawServer) -> None:
    net = _net(raw.url)
    try:
        assert _status(net, raw.url) == 200  # the body read: the connection goes back to the pool
        assert len(_sockets(net)) == 1
        raw.close_all()  # an idle timeout on the server side, without "Connection: close"
        assert _client_saw_every_close(net)  # held there: the close reached the pooled socket
        r = _post(net, raw.url)
        assert r.read() == b"{}"
        assert raw.connections == 2
        assert len(raw.requests) == 2  # nothing of the second request was written to the closed connection
    finally:
        net.close()


def test_a_reused_connection_the_server_closes_on_the_request_is_not_resent(raw: RawServer) -> None:
    """The race no client wins, held: a pooled connection passes the readability check, and the server closes it
    when the request arrives (an idle timeout firing just then). The request reached the server, so it is never
    sent again (a tools/call runs once): the call fails with ConnectionBroken, the next one works."""
    got = threading.Event()

    def close_on_arrival(conn: socket.socket, req: bytes) -> bool:
        got.set()
        return False  # closed without an answer

    raw.replies = [OK, close_on_arrival]
    net = _net(raw.url)
    try:
        assert _status(net, raw.url) == 200  # the body read: the connection goes back to the pool
        with pytest.raises(ConnectionBroken):
            _post(net, raw.url)
        assert got.is_set() and len(raw.requests) == 2 and raw.connections == 1  # once, on the reused one
        r = _post(net, raw.url)
        assert r.read() == b"{}"
        r.close()
        assert len(raw.requests) == 3 and raw.connections == 2
    finally:
        net.close()
    assert not _sockets(net)


def test_connection_close_and_close_delimited_bodies_are_not_reused(raw: RawServer) -> None:
    def close_delimited(conn: socket.socket, req: bytes) -> bool:
        conn.sendall(b"HTTP/1.0 200 OK\r\n\r\n{}")
        return False  # the end of the body is the end of the connection

    raw.replies = [b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}", close_delimited]
    net = _net(raw.url)
    try:
        for _ in range(3):
            r = _post(net, raw.url)
            assert r.read() == b"{}"
            r.close()
        assert raw.connections == 3
        assert len(_sockets(net)) == 1  # the last one, kept alive
    finally:
        net.close()
    assert not _sockets(net)


def test_chunked_gzip_and_deflate_bodies_are_decoded(raw: RawServer) -> None:
    body = b'{"text": "%s"}' % (b"x" * 5000)
    gz = gzip.compress(body)
    chunked = b"".join(b"%x\r\n%s\r\n" % (len(gz[i : i + 700]), gz[i : i + 700]) for i in range(0, len(gz), 700))
    raw.replies = [
        b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked + b"0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\nContent-Length: %d\r\n\r\n" % len(zlib.compress(body))
        + zlib.compress(body),
    ]
    raw_deflate = zlib.compressobj(wbits=-15)
    data = raw_deflate.compress(body) + raw_deflate.flush()
    raw.replies.append(b"HTTP/1.1 200 OK\r\nContent-Encoding: deflate\r\nContent-Length: %d\r\n\r\n" % len(data) + data)
    net = _net(raw.url)
    try:
        for _ in range(3):
            r = _post(net, raw.url)
            assert r.read() == body
            r.close()
        assert raw.connections == 1  # every body read to its end: the connection went back each time
    finally:
        net.close()


def test_cookies_a_server_sets_are_sent_back(raw: RawServer) -> None:
    raw.replies = [b"HTTP/1.1 200 OK\r\nSet-Cookie: AWSALB=sticky-1; Path=/\r\nContent-Length: 2\r\n\r\n{}"]
    net = _net(raw.url)
    try:
        _post(net, raw.url).close()
        _post(net, raw.url).close()
        assert b"Cookie: AWSALB=sticky-1" not in raw.requests[0]
        assert b"Cookie: AWSALB=sticky-1" in raw.requests[1]
    finally:
        net.close()


def test_same_origin_redirects_follow_requests_method_rules(raw: RawServer) -> None:
    raw.replies = [
        b"HTTP/1.1 307 Temporary Redirect\r\nLocation: /other\r\nContent-Length: 0\r\n\r\n",
        OK,
        b"HTTP/1.1 303 See Other\r\nLocation: /seen\r\nContent-Length: 0\r\n\r\n",
        OK,
        b"HTTP/1.1 307 Temporary Redirect\r\nLocation: http://elsewhere.invalid/x\r\nContent-Length: 0\r\n\r\n",
    ]
    net = _net(raw.url)
    try:
        assert _status(net, raw.url) == 200
        assert raw.requests[1].startswith(b"POST /other ") and raw.requests[1].endswith(b'{"a":1}')
        assert _status(net, raw.url) == 200
        assert raw.requests[3].startswith(b"GET /seen ") and b"Content-Length" not in raw.requests[3]
        assert _status(net, raw.url) == 307  # another origin: not followed, handed back
        assert len(raw.requests) == 5
    finally:
        net.close()


def test_a_header_with_a_line_break_is_never_sent(raw: RawServer) -> None:
    net = _net(raw.url)
    try:
        with pytest.raises(mcpsync.errors.MalformedHTTPRequest, match="X-Evil"):
            _post(net, raw.url, **{"X-Evil": "a\r\nInjected: yes"})
        with pytest.raises(mcpsync.errors.MalformedHTTPRequest, match="X-Name"):
            _post(net, raw.url, **{"X-Name": "\u2603"})
        assert raw.requests == []
        assert _status(net, raw.url) == 200
    finally:
        net.close()


def test_request_headers_override_defaults_case_insensitively(raw: RawServer) -> None:
    net = _net(raw.url, headers={"X-Api-Key": "k1"})
    try:
        _post(net, raw.url, **{"user-agent": "mine", "x-api-key": "k2"}).close()
        head = raw.requests[0].split(b"\r\n\r\n")[0].lower()
        assert head.count(b"user-agent:") == 1 and b"user-agent: mine" in head
        assert head.count(b"x-api-key:") == 1 and b"x-api-key: k2" in head
        assert raw.requests[0].count(b"Host: 127.0.0.1:%d" % raw.port) == 1
    finally:
        net.close()


def test_a_net_registers_only_the_sockets_its_own_connections_make(raw: RawServer) -> None:
    """The audit hook that lets close() reach a connecting socket keeps no state: a socket is handed to the net
    whose connection's connect() is on the making thread's stack, and to no other net; a socket made outside
    any connect() (on the same thread, right after a request) is handed to none; an aborted net refuses a new
    connect at once, while another net on the same thread still connects."""
    first, second = _net(raw.url), _net(raw.url)
    try:
        assert _status(first, raw.url) == 200
        mine = _sockets(first)
        assert len(mine) == 1 and _sockets(second) == []
        outside = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            outside.connect(("127.0.0.1", raw.port))
            assert outside not in first._tracker.sockets and outside not in second._tracker.sockets
        finally:
            outside.close()
        first.close()
        with pytest.raises(ConnectionBroken):
            _post(first, raw.url)
        assert _status(second, raw.url) == 200
        assert len(_sockets(second)) == 1 and not set(_sockets(second)) & set(mine)
    finally:
        first.close()
        second.close()


def test_abort_wakes_a_thread_blocked_on_an_answer(raw: RawServer) -> None:
    arrived = threading.Event()
    release = threading.Event()

    def stall(conn: socket.socket, req: bytes) -> bool:
        arrived.set()
        release.wait(10)
        return False

    raw.replies = [stall]
    net = _net(raw.url)
    errors: List[BaseException] = []

    def call() -> None:
        try:
            net.send("POST", raw.url, b"{}", {}, (5.0, None))
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    t = threading.Thread(target=call)
    t.start()
    assert arrived.wait(10)
    net.abort()
    t.join(10)
    release.set()
    assert not t.is_alive()
    assert len(errors) == 1 and isinstance(errors[0], ConnectionBroken)
    net.close()


def test_read_timeout_and_connect_failure_are_engine_errors(raw: RawServer) -> None:
    release = threading.Event()
    raw.replies = [lambda conn, req: release.wait(10) and False]
    net = _net(raw.url)
    try:
        with pytest.raises(ReadTimeout):
            net.send("POST", raw.url, b"{}", {}, (5.0, 0.2))
    finally:
        release.set()
        net.close()
    with socket.socket() as s:  # bound, never listening: connections are refused and no one else gets the port
        s.bind(("127.0.0.1", 0))
        dead = "http://127.0.0.1:%d/mcp" % s.getsockname()[1]
        net = _net(dead)
        with pytest.raises(ConnectFailed):
            net.send("POST", dead, b"{}", {}, (5.0, 5.0))
        with pytest.raises(ConnectError, match="cannot connect"):
            mcpsync.connect(dead, http=HTTPOptions(transport="http"), timeout=5)


# ---------------------------------------------------------------------------------------------- hostile answers

_junk = st.one_of(
    st.binary(max_size=300),
    st.builds(
        lambda status, headers, body: b"HTTP/1.1 %s\r\n%s\r\n%s" % (status, b"".join(headers), body),
        st.sampled_from([b"200 OK", b"204 No Content", b"999 X", b"abc", b"", b"200"]),
        st.lists(
            st.sampled_from(
                [
                    b"Content-Length: 5\r\n",
                    b"Content-Length: -1\r\n",
                    b"Content-Length: 99999\r\n",
                    b"Content-Length: x\r\n",
                    b"Transfer-Encoding: chunked\r\n",
                    b"Content-Encoding: gzip\r\n",
                    b"Content-Encoding: deflate\r\n",
                    b"Connection: close\r\n",
                    b"Set-Cookie: a=b; Path=/\r\n",
                    b"Set-Cookie: ;;;\r\n",
                    b"Location: /x\r\n",
                    b"X: \xff\xfe\r\n",
                    b"no colon here\r\n",
                ]
            ),
            max_size=5,
        ),
        st.binary(max_size=64),
    ),
)


@pytest.fixture(scope="module")
def junk_server() -> Iterator[RawServer]:
    server = RawServer()
    try:
        yield server
    finally:
        server.stop()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(reply=_junk)
def test_any_answer_bytes_raise_only_engine_errors_and_the_next_call_works(
    junk_server: RawServer, reply: bytes
) -> None:
    closed = threading.Event()

    def junk_then_close(conn: socket.socket, req: bytes) -> bool:
        try:
            conn.sendall(reply)
            conn.shutdown(socket.SHUT_RDWR)
        finally:
            closed.set()
        return False

    net = _net(junk_server.url)
    try:
        with junk_server.lock:
            junk_server.replies = [junk_then_close]
        try:
            r = net.send("POST", junk_server.url, b"{}", {}, (5.0, 2.0))
            r.read()
            r.close()
        except NetError:
            pass
        with junk_server.lock:
            junk_server.replies = []
        # held at the racy point: the server has closed the junk connection and the client's socket has seen
        # it before the next request (a server closing a connection at the very moment a request is sent on
        # it is a race no client wins: test_a_reused_connection_the_server_closes_on_the_request_is_not_resent)
        assert closed.wait(10)
        assert _client_saw_every_close(net)
        r = net.send("POST", junk_server.url, b"{}", {}, (5.0, 5.0))
        assert r.status_code == 200 and r.read() == b"{}"
        r.close()
    finally:
        net.close()
    assert not _sockets(net)


# ---------------------------------------------------------------------------------------------- read timeouts


def _stall_after(prefix: bytes, release: threading.Event) -> Any:
    def reply(conn: socket.socket, req: bytes) -> bool:
        conn.sendall(prefix)
        release.wait(10)
        return False

    return reply


@pytest.mark.parametrize(
    "prefix",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n",
        b"HTTP/1.0 200 OK\r\n\r\n{}",  # close-delimited: the watchdog's shutdown must not read as the end
    ],
    ids=["content-length", "chunked", "close-delimited"],
)
def test_a_body_that_stalls_is_a_read_timeout_never_a_short_body(raw: RawServer, prefix: bytes) -> None:
    release = threading.Event()
    raw.replies = [_stall_after(prefix, release)]
    net = _net(raw.url)
    try:
        r = net.send("POST", raw.url, b"{}", {}, (5.0, 0.3))
        assert r.read1(2) == b"{}"
        with pytest.raises(ReadTimeout):
            r.read()
    finally:
        release.set()
        net.close()
    assert not _sockets(net)


def test_a_send_the_server_never_reads_is_a_read_timeout(raw: RawServer) -> None:
    release = threading.Event()
    raw.replies = [lambda conn, req: release.wait(10) and False]
    raw_sock = socket.socket()
    raw_sock.bind(("127.0.0.1", 0))
    raw_sock.listen(1)  # accepts the connection in the kernel, never reads a byte
    url = "http://127.0.0.1:%d/mcp" % raw_sock.getsockname()[1]
    net = _net(url)
    try:
        with pytest.raises(ReadTimeout):
            net.send("POST", url, b"x" * (64 << 20), {}, (5.0, 0.3))
    finally:
        release.set()
        net.close()
        raw_sock.close()


def test_set_read_timeout_rebounds_the_next_reads_with_no_watchdog_thread(raw: RawServer) -> None:
    release = threading.Event()
    raw.replies = [_stall_after(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{}", release)]
    net = _net(raw.url)
    try:
        r = net.send("POST", raw.url, b"{}", {}, (5.0, None))  # no bound at all
        assert r.read1(2) == b"{}"
        r.set_read_timeout(0.2)
        with pytest.raises(ReadTimeout):
            r.read()
        assert not [t for t in threading.enumerate() if t.name.startswith("mcpsync-http")]  # a socket timeout
    finally:
        release.set()
        net.close()
