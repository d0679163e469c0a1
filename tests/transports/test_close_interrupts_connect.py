"""Issue 18, defect 3, every step on the way to a first request: ``close()`` ends a connect that stalls there.

A new connection passes through up to five blocking steps before its first request is written: the TCP connect
(to the server or to the proxy), the TLS handshake with an ``https://`` proxy, the ``CONNECT`` request and its
answer (or the SOCKS5 greeting and CONNECT, or the SOCKS4 request), and the TLS handshake with the server
(directly, inside a plain tunnel, or inside the proxy's TLS). For each one a real local server or proxy stalls on
purpose exactly there (:meth:`tests.peers.proxyserver.ProxyServer.arm`,
:class:`tests.peers.faultserver.StalledTLSServer`,
:class:`tests.peers.faultserver.FullBacklogServer`) with ``connect_timeout=120``; a thread is blocked in ``open()`` or
in a call (blocking and async) until the stalled peer has seen it there (an Event, never a sleep); then
``close()`` from another thread: it returns, the blocked call ends with ``ClientClosed`` / ``ConnectionClosed``
while the peer still holds the connection (long before the connect timeout), and no socket to the peer is left.
Both protocol eras, Streamable HTTP and legacy HTTP+SSE (the same engine). docs/internals/reliability.md names these
tests.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
from typing import Any, Callable, Dict, Iterator, List, Tuple

import pytest

import mcpsync

from tests.conftest import wait_for
from tests.peers.faultserver import FullBacklogServer, StalledTLSServer, _tcp_states
from tests.peers.httpserver import MCPTestServer
from tests.peers.proxyserver import ProxyServer, SocksServer
from tests.transports.test_http_tls import pki  # noqa: F401 - the throwaway CA fixture
from mcpsync.client import HTTPOptions

pytestmark = pytest.mark.timeout(180)

BOUND = 30.0  # how long a test waits for anything; the connect timeout below is far longer
CONNECT_TIMEOUT = 120.0
CLOSED = (mcpsync.ClientClosed, mcpsync.errors.ConnectionClosed)

#: Where the connection stalls: (proxy kind, step). "direct": no proxy.
PROXY_STEPS = [
    ("http", "tcp-connect"),  # the proxy's accept queue is full: the SYN is never answered
    ("https", "tls"),  # TLS to the proxy: the ClientHello is never answered
    ("http", "connect"),  # CONNECT never answered
    ("https", "connect"),  # CONNECT inside the proxy's TLS never answered
    ("http", "tunnel"),  # CONNECT answered 200, the server's TLS handshake inside the tunnel never answered
    ("https", "tunnel"),  # the same inside the proxy's TLS (TLS in TLS)
    ("socks5", "greeting"),
    ("socks5", "connect"),
    ("socks4", "connect"),
]
STEPS = [("direct", "tls")] + PROXY_STEPS
#: The steps a call's new connection is stalled at by an armed proxy (after open() went through it). The TCP
#: connect to a proxy is the TCP connect of any connection: open() covers it, and test_http_call_integrity.py
#: covers a call stuck in a TCP connect or a direct TLS handshake.
CALL_STEPS = [step for step in PROXY_STEPS if step[1] != "tcp-connect"]


def _ids(steps: List[Tuple[str, str]]) -> List[str]:
    return ["%s-%s" % step for step in steps]


@pytest.fixture(autouse=True)
def _no_stale_engine_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MCPSYNC_HTTP_ENGINE", raising=False)  # a leftover value would fail every open here


class _Stall:
    """A peer that stalls a client at one step: ``inside()`` waits until a client is held there,
    ``sockets()`` counts this process's client sockets to it (connecting or connected)."""

    def __init__(self, port: int, inside: Callable[[], bool], sockets: Any = None) -> None:
        self.port = port
        self.inside = inside
        self._sockets = sockets

    def sockets(self) -> int:
        if self._sockets is not None:
            return int(self._sockets())
        return _tcp_states(self.port, "01") + _tcp_states(self.port, "02")


def _server_context(pki: Dict[str, str]) -> ssl.SSLContext:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki["server.crt"], pki["server.key"])
    return context


def _proxy(kind: str, pki: Dict[str, str]) -> ProxyServer:
    if kind.startswith("socks"):
        return SocksServer()
    return ProxyServer(tls=_server_context(pki) if kind == "https" else None)


def _proxy_url(kind: str, proxy: ProxyServer) -> str:
    return "%s://127.0.0.1:%d" % (kind, proxy.port)


@contextlib.contextmanager
def _stalled_peer(kind: str, step: str, pki: Dict[str, str]) -> Iterator[Tuple[_Stall, str, Dict[str, Any]]]:
    """A peer stalling every connection at ``step`` from the start: (the stall, the server URL, options)."""
    options: Dict[str, Any] = {"verify": pki["ca.crt"]}
    target = "https://127.0.0.1:9/mcp"  # never reached: every stall is before the proxy connects anywhere
    if kind == "direct":
        with StalledTLSServer() as tls:
            yield _Stall(tls.port, lambda: bool(tls.hello.wait(BOUND))), tls.url, options
        return
    if step == "tcp-connect":
        with FullBacklogServer() as backlog:
            options["proxies"] = {"all": "http://127.0.0.1:%d" % backlog.port}
            inside = lambda: wait_for(lambda: backlog.connecting() >= 1, BOUND)  # noqa: E731
            yield _Stall(backlog.port, inside, backlog.client_sockets), target, options
        return
    with _proxy(kind, pki) as proxy:
        proxy.arm(step)
        options["proxies"] = {"all": _proxy_url(kind, proxy)}
        yield _Stall(proxy.port, lambda: bool(proxy.stalled.wait(BOUND))), target, options


def _in_thread(fn: Callable[[], Any], name: str) -> Tuple[threading.Thread, List[BaseException]]:
    errors: List[BaseException] = []

    def run() -> None:
        try:
            fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            errors.append(exc)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    return thread, errors


def _close_and_check(client: mcpsync.Client, stuck: threading.Thread, stall: _Stall) -> None:
    """close() from another thread returns, the stuck thread ends at once, nothing stays connected."""
    done = threading.Event()
    _in_thread(lambda: (client.close(), done.set()), "test-closer")
    assert done.wait(BOUND), "close() blocked"
    stuck.join(BOUND)
    assert not stuck.is_alive(), "the blocked step outlived close() (it would have waited for connect_timeout)"
    assert wait_for(lambda: stall.sockets() == 0, BOUND), "a socket to the stalled peer is left"


@pytest.mark.parametrize("kind,step", STEPS, ids=_ids(STEPS))
def test_close_ends_an_open_stalled_on_the_way_to_its_first_request(
    pki: Dict[str, str], era: str, kind: str, step: str
) -> None:
    """open() is held at one step of its first connection; close() ends it with ClientClosed / ConnectionClosed."""
    with _stalled_peer(kind, step, pki) as (stall, url, options):
        client = mcpsync.Client(
            url,
            http=HTTPOptions(transport="http", **options),
            protocol=era,
            timeout=CONNECT_TIMEOUT,
            connect_timeout=CONNECT_TIMEOUT,
        )
        stuck, errors = _in_thread(client.open, "test-stuck-open")
        assert stall.inside()
        assert stuck.is_alive()  # held there until the close below
        _close_and_check(client, stuck, stall)
        assert len(errors) == 1 and isinstance(errors[0], CLOSED), errors


@pytest.mark.parametrize("kind,step", STEPS, ids=_ids(STEPS))
def test_close_ends_a_legacy_sse_open_stalled_on_the_way_to_its_event_stream(
    pki: Dict[str, str], kind: str, step: str
) -> None:
    """Legacy HTTP+SSE (the same engine): open() held at one step of the connection for its event stream;
    close() ends it with ClientClosed / ConnectionClosed."""
    with _stalled_peer(kind, step, pki) as (stall, url, options):
        client = mcpsync.Client(
            url, http=HTTPOptions(transport="sse", **options), timeout=CONNECT_TIMEOUT, connect_timeout=CONNECT_TIMEOUT
        )
        stuck, errors = _in_thread(client.open, "test-stuck-open")
        assert stall.inside()
        assert stuck.is_alive()
        _close_and_check(client, stuck, stall)
        assert len(errors) == 1 and isinstance(errors[0], CLOSED), errors


def _tls_target(pki: Dict[str, str], era: str) -> MCPTestServer:
    srv = MCPTestServer(era=era)
    srv._httpd.socket = _server_context(pki).wrap_socket(srv._httpd.socket, server_side=True)
    return srv


@pytest.mark.parametrize("how", ["blocking", "async"])
@pytest.mark.parametrize("kind,step", CALL_STEPS, ids=_ids(CALL_STEPS))
def test_close_ends_a_call_stalled_on_a_new_connection(
    pki: Dict[str, str], era: str, kind: str, step: str, how: str
) -> None:
    """An open client (through the proxy, to an https server) whose pooled connection went stale makes a new
    one for a call, and that connection stalls at one step: close() ends the call (blocking, or the async
    handle) with ClientClosed / ConnectionClosed."""
    with contextlib.ExitStack() as stack:
        target = stack.enter_context(_tls_target(pki, era))
        proxy = stack.enter_context(_proxy(kind, pki))
        proxy_url = _proxy_url(kind, proxy)
        stall = _Stall(proxy.port, lambda: bool(proxy.stalled.wait(BOUND)))
        client = mcpsync.Client(
            "https://127.0.0.1:%d/mcp" % target.port,
            http=HTTPOptions(transport="http", verify=pki["ca.crt"], proxies={"all": proxy_url}, get_stream=False),
            protocol=era,
            timeout=CONNECT_TIMEOUT,
            connect_timeout=CONNECT_TIMEOUT,
        )
        try:
            client.open()
            assert client.call_tool("echo", {"message": "warm"}).text == "warm"
            proxy.arm(step)  # the pooled connection is shut down by the proxy: the next call needs a new one
            assert wait_for(lambda: _tcp_states(proxy.port, "01") == 0, BOUND)  # the client saw the FIN
            if how == "blocking":
                stuck, errors = _in_thread(lambda: client.call_tool("echo", {"message": "stuck"}), "test-stuck-call")
            else:
                handle = client.call_tool_async("echo", {"message": "stuck"})
                stuck, errors = _in_thread(lambda: handle.result(BOUND * 2), "test-stuck-handle")
            assert stall.inside()
            assert stuck.is_alive()
            _close_and_check(client, stuck, stall)
            assert len(errors) == 1 and isinstance(errors[0], CLOSED), errors
        finally:
            client.close()


@pytest.mark.parametrize("window", ["tcp-connect", "tls-handshake"])
def test_an_abort_just_before_a_connect_or_handshake_starts_ends_it_as_a_closed_connection(
    monkeypatch: pytest.MonkeyPatch, window: str
) -> None:
    """The narrowest window, held by events: abort() runs after the connecting thread registered its socket (the
    audit hook saw it) and found the net open, before the TCP connect (to a full accept queue) or the TLS
    handshake (with a server that never answers) starts. That step then ends at once (a socket not yet
    connecting gets a microsecond timeout, a connected one is shut down) and the caller gets ConnectionBroken,
    long before the connect timeout; no socket is left."""
    from mcpsync.transports.http.contract import ConnectionBroken
    from mcpsync.transports.http.pool import PoolNet

    server = FullBacklogServer() if window == "tcp-connect" else StalledTLSServer()
    with server:
        net = PoolNet(server.url, {}, ssl_context=ssl.create_default_context(), name="stalled")
        in_window, go = threading.Event(), threading.Event()
        register = net._tracker.register
        seen: List[Any] = []
        hold_at = 2 if window == "tcp-connect" else 3  # 1: the TCP socket made, 2: its connect, 3: the SSLSocket

        def held_register(sock: Any, owned: List[Any]) -> None:
            register(sock, owned)
            seen.append(sock)
            if len(seen) == hold_at:
                in_window.set()
                assert go.wait(BOUND)

        monkeypatch.setattr(net._tracker, "register", held_register)
        stuck, errors = _in_thread(lambda: net.send("POST", server.url, b"{}", {}, (CONNECT_TIMEOUT, 5.0)), "test-w")
        try:
            assert in_window.wait(BOUND)
            net.abort()
        finally:
            go.set()
        stuck.join(BOUND)
        assert not stuck.is_alive()
        assert len(errors) == 1 and isinstance(errors[0], ConnectionBroken), errors
        net.close()
        assert all(sock.fileno() == -1 for sock in net._tracker.sockets)
        assert wait_for(lambda: server.client_sockets() == 0, BOUND)


class _SilentTLSServer:
    """Completes the TLS handshake, reads one request head, sets ``asked`` and never answers (until the
    client goes away)."""

    def __init__(self, context: ssl.SSLContext) -> None:
        self._context = context
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(8)
        self.port = self._listener.getsockname()[1]
        self.asked = threading.Event()
        self._conns: List[socket.socket] = []
        self._thread = threading.Thread(target=self._serve, name="test-silent-tls", daemon=True)

    def _serve(self) -> None:
        try:
            raw, _ = self._listener.accept()
        except OSError:
            return
        self._conns.append(raw)
        try:
            conn = self._context.wrap_socket(raw, server_side=True)
            self._conns.append(conn)
            head = b""
            while b"\r\n\r\n" not in head:
                data = conn.recv(65536)
                if not data:
                    return
                head += data
            self.asked.set()
            while conn.recv(65536):
                pass
        except (OSError, ValueError):
            pass

    def __enter__(self) -> "_SilentTLSServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        try:
            self._listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self._listener.close()
        for conn in self._conns:
            try:
                conn.close()
            except OSError:
                pass
        self._thread.join(BOUND)


@pytest.mark.parametrize("wake", ["abort", "read-timeout"])
def test_a_call_waiting_for_its_answer_inside_tls_in_tls_wakes(pki: Dict[str, str], wake: str) -> None:
    """Through an https:// proxy to an https server (TLS inside the proxy's TLS), the server took the request and
    never answers: abort() (close) ends the wait with ConnectionBroken (it shuts the tunnel down at the proxy
    socket's descriptor), the read timeout (a socket timeout) with ReadTimeout; nothing is left connected."""
    from mcpsync.transports.http.pool import PoolNet
    from mcpsync.transports.http.contract import ConnectionBroken, ReadTimeout
    from mcpsync.transports.http.proxy import ProxyTable

    client_context = ssl.create_default_context(cafile=pki["ca.crt"])
    with ProxyServer(tls=_server_context(pki)) as proxy, _SilentTLSServer(_server_context(pki)) as server:
        proxies = ProxyTable({"all": _proxy_url("https", proxy)}, None)
        proxies.tls = client_context
        url = "https://127.0.0.1:%d/mcp" % server.port
        net = PoolNet(url, {}, ssl_context=client_context, name="tls-in-tls", proxies=proxies)
        read_timeout = 1.0 if wake == "read-timeout" else CONNECT_TIMEOUT
        stuck, errors = _in_thread(lambda: net.send("POST", url, b"{}", {}, (BOUND, read_timeout)), "test-in-tls")
        try:
            assert server.asked.wait(BOUND)  # the request went through both TLS layers; the answer never comes
            if wake == "abort":
                net.abort()
            stuck.join(BOUND)
            assert not stuck.is_alive()
            expected = ConnectionBroken if wake == "abort" else ReadTimeout
            assert len(errors) == 1 and isinstance(errors[0], expected), errors
        finally:
            net.close()
        assert all(sock.fileno() == -1 for sock in net._tracker.sockets)
        assert wait_for(lambda: _tcp_states(proxy.port, "01") == 0, BOUND)


def test_close_wakes_a_stalled_call_before_its_session_delete(pki: Dict[str, str]) -> None:
    """Handshake era: close() wakes a call stuck on a new connection before it sends the session's DELETE
    (which, through the same stalled proxy, may wait its whole 2 s): the engine's sockets are interrupted and
    the session settles its waiting calls first. The DELETE is held by an event: the stuck call must end while
    close() is still inside it."""
    with contextlib.ExitStack() as stack:
        target = stack.enter_context(_tls_target(pki, "legacy"))
        proxy = stack.enter_context(_proxy("http", pki))
        stall = _Stall(proxy.port, lambda: bool(proxy.stalled.wait(BOUND)))
        client = mcpsync.Client(
            "https://127.0.0.1:%d/mcp" % target.port,
            http=HTTPOptions(
                transport="http", verify=pki["ca.crt"], proxies={"all": _proxy_url("http", proxy)}, get_stream=False
            ),
            protocol="legacy",
            timeout=CONNECT_TIMEOUT,
            connect_timeout=CONNECT_TIMEOUT,
        )
        in_delete, release = threading.Event(), threading.Event()
        try:
            client.open()
            assert client.call_tool("echo", {"message": "warm"}).text == "warm"
            session = client.transport._session  # type: ignore[union-attr]
            real_delete = session.delete

            def held_delete(timeout: float) -> None:
                in_delete.set()
                assert release.wait(BOUND)
                real_delete(timeout)

            session.delete = held_delete
            proxy.arm("connect")  # CONNECT never answered for every new connection from here on
            assert wait_for(lambda: _tcp_states(proxy.port, "01") == 0, BOUND)
            stuck, errors = _in_thread(lambda: client.call_tool("echo", {"message": "stuck"}), "test-stuck-call")
            assert stall.inside() and stuck.is_alive()
            closer, _ = _in_thread(client.close, "test-closer")
            assert in_delete.wait(BOUND)
            stuck.join(BOUND)
            assert not stuck.is_alive(), "the stuck call waited for the session's DELETE"
            assert closer.is_alive()  # still held inside the DELETE
            assert len(errors) == 1 and isinstance(errors[0], CLOSED), errors
        finally:
            release.set()
            client.close()
