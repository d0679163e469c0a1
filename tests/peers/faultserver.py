"""A fault-injection HTTP server: the example MCP server behind a real socket that misbehaves on request.

:class:`FaultServer` is :class:`tests.peers.httpserver.MCPTestServer` (stdlib ``http.server`` on
127.0.0.1, port 0, chunked event streams; Streamable HTTP in both eras at ``/mcp``, legacy
HTTP+SSE at ``/sse``) plus a per-request script. A test arms rules with :meth:`FaultServer.inject`;
each incoming request takes the first rule that matches it (HTTP verb, JSON-RPC method, path) and
has uses left, and that rule decides what the client gets instead of (or before) the normal answer.

Fault kinds (``kind=``):

``status``            answer ``status`` (404, 500, 502...) with ``body`` (a JSON-RPC 404 "Session not found"
                      body by default for 404) and ``headers`` (e.g. ``{"Retry-After": "3"}``).
``reset``             TCP reset, no HTTP answer at all.
``reset_headers``     half a status line and headers, then a TCP reset.
``close_before_body`` full ``application/json`` headers announcing a body, then close (FIN).
``close_during_body`` headers and half the body, then close (``stream=True``: half an SSE event).
``stall``             no answer until the test calls ``rule.release.set()`` (or the server stops);
                      then the connection is closed.
``stall_body``        ``application/json`` headers with a Content-Length, then stall (the body never comes).
``comments``          an event stream that never answers: ``progress`` progress notifications for the
                      request's token, then only ``: keepalive`` comments (plus, with ``noise=True``, priming
                      events and unrelated notifications) every ``interval`` seconds until released or the
                      client goes away (``rule.client_gone`` is then set).
``cut``               the normal answer stream, cut abruptly after ``after`` events.
``junk_events``       the normal answer stream, preceded by malformed events (:data:`JUNK_EVENTS`) and
                      ``comments`` keep-alive comments.
``junk_body``         ``200 application/json`` with the malformed body ``body``.
``crossed_answer``    the answer to this POST carries first a response to *another* request (``foreign_id``:
                      the id of a call held elsewhere), then this request's own answer (``text``): an event
                      stream of both, or a JSON batch of both with ``response_mode="json"``; on a legacy
                      HTTP+SSE ``/messages`` POST: the foreign response as the POST's body, the real answer
                      on the SSE stream.
``early_status``      matched by body size alone (``min_body`` bytes, 1 MiB by default): answers ``status``
                      (413) after reading at most 4 KiB of the body (enough to record the JSON-RPC method and
                      id), then closes the connection with the rest unread (the client sees a reset).
``hold``              wait at ``barrier`` (a ``threading.Barrier``) and/or until ``release`` is set, then
                      answer normally: a way to hold several requests at a racy point at once.

Every rule counts its hits and sets ``rule.entered`` when it fires; ``server.records()`` lists every
request (the ones a rule answered too).
"""

from __future__ import annotations

import json
import re
import socket
import threading
from typing import Any, Callable, Dict, List, Optional

from tests.peers.httpserver import MCPTestServer, _Handler

__all__ = [
    "JUNK_EVENTS",
    "FaultServer",
    "FullBacklogServer",
    "RecordingServer",
    "Rule",
    "StalledTLSServer",
    "TaskRouter",
]

#: Malformed events a server may send; each must be dropped without harming anything else.
JUNK_EVENTS: List[bytes] = [
    b"data: {not json\n\n",
    b"data: \xff\xfe\xfd invalid utf-8\n\n",
    b"data: 42\n\n",
    b"data: []\n\n",
    b"data: [1, 2, {}]\n\n",
    b'data: {"jsonrpc":"2.0","id":{"x":1},"result":{}}\n\n',
    b'data: {"jsonrpc":"2.0","id":987654,"result":{"stray":true}}\n\n',
    b'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":{"a":1},"progress":1}}\n\n',
    b'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":[1],"progress":1}}\n\n',
    b'data: {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{"a":[]}}}\n\n',
    b'data: {"jsonrpc":"2.0","method":"notifications/message","params":"not an object"}\n\n',
    b"event: unknown-kind\ndata: {}\n\n",
    b"id: junk-1\nretry: not-a-number\ndata:\n\n",
    b": a comment\n\n",
    b'data: {"jsonrpc":"2.0",\n\n',
]


class Rule:
    """One scripted fault. ``times`` uses (None: every matching request)."""

    def __init__(
        self,
        kind: str,
        verb: str,
        rpc: Optional[str],
        path: Optional[str],
        times: Optional[int],
        params: Dict[str, Any],
    ) -> None:
        self.kind = kind
        self.verb = verb
        self.rpc = rpc
        self.path = path
        self.times = times
        self.params = params
        self.hits = 0
        self.entered = threading.Event()  # set when the rule fires
        self.release = threading.Event()  # set by the test (or the server's stop) to end a stall/hold
        self.client_gone = threading.Event()  # the client closed a stream this rule was writing
        self.messages: List[Any] = []  # the JSON-RPC bodies it matched

    def matches(self, verb: str, msg: Any, path: str) -> bool:
        if self.times is not None and self.hits >= self.times:
            return False
        if verb != self.verb:
            return False
        if self.path is not None and not path.startswith(self.path):
            return False
        if self.rpc is not None:
            return isinstance(msg, dict) and msg.get("method") == self.rpc
        return True

    def __repr__(self) -> str:
        return "Rule(%s %s %s, hits=%d)" % (self.kind, self.verb, self.rpc or self.path or "*", self.hits)


class _FaultHandler(_Handler):
    _body: Optional[bytes] = None
    _prefix: Optional[List[bytes]] = None

    def read_body(self) -> bytes:
        body, self._body = self._body, None
        return body if body is not None else super().read_body()

    def start_stream(self, headers: Optional[Dict[str, str]] = None) -> None:
        super().start_stream(headers)
        prefix, self._prefix = self._prefix, None
        for data in prefix or ():
            self.chunk(data)

    def do_POST(self) -> None:  # noqa: N802
        if early_fault(self):  # a fault that answers before the body is read (its own block below)
            return
        raw = super().read_body()
        try:
            msg = json.loads(raw) if raw else None
        except ValueError:
            msg = None
        rule = self.owner.take_rule("POST", msg, self.path)  # type: ignore[attr-defined]
        self._body = raw
        if rule is None:
            super().do_POST()
            return
        self._fault(rule, msg)

    def do_GET(self) -> None:  # noqa: N802
        rule = self.owner.take_rule("GET", None, self.path)  # type: ignore[attr-defined]
        if rule is None:
            super().do_GET()
            return
        self._fault(rule, None)

    # ------------------------------------------------------------------ faults

    def _fault(self, rule: Rule, msg: Any) -> None:
        p = rule.params
        kind = rule.kind
        rule.entered.set()
        extra = EXTRA_FAULTS.get(kind)
        if extra is not None:  # a fault defined in its own block below (it records its request itself)
            self._body = None
            extra(self, rule, msg)
            return
        passthrough = kind in ("cut", "junk_events", "hold")
        if not passthrough:
            self._body = None
            self._record(msg)
        if kind == "status":
            status = int(p.get("status", 500))
            body = p.get("body")
            if body is None:
                body = (
                    b'{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}'
                    if status == 404
                    else b"simulated failure"
                )
            ctype = p.get("ctype", "application/json" if body[:1] == b"{" else "text/plain")
            self.reply(status, body, ctype, p.get("headers"))  # headers=: e.g. {"Retry-After": "3"}
        elif kind == "reset":
            self._reset()
        elif kind == "reset_headers":
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-")
            self.wfile.flush()
            self._reset()
        elif kind == "close_before_body":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "200")
            self.end_headers()
            self._cut()
        elif kind == "close_during_body":
            if p.get("stream"):
                self.start_stream()
                self.wfile.write(b'40\r\nid: 1\nevent: message\ndata: {"jsonrpc":"2.0",')
                self.wfile.flush()
            else:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "200")
                self.end_headers()
                self.wfile.write(b'{"jsonrpc":"2.0","id":')
            self._cut()
        elif kind in ("stall", "stall_body"):
            if kind == "stall_body":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "100")
                self.end_headers()
                self.wfile.flush()
            self._wait_release(rule)
            self._cut()
        elif kind == "comments":
            self._comments(rule, msg)
        elif kind == "junk_body":
            self.reply(200, p.get("body", b"{not json"), "application/json")
        elif kind == "cut":
            f = self.owner.faults
            f.cut_streams += 1
            f.cut_after = int(p.get("after", 1))
            self._dispatch_normally()
        elif kind == "junk_events":
            self._prefix = [b": keepalive\n\n"] * int(p.get("comments", 2)) + list(p.get("events", JUNK_EVENTS))
            self._dispatch_normally()
        elif kind == "hold":
            barrier = p.get("barrier")
            if barrier is not None:
                try:
                    barrier.wait(p.get("barrier_timeout", 30))
                except threading.BrokenBarrierError:
                    pass
            if p.get("until_released"):
                self._wait_release(rule)
            self._dispatch_normally()
        else:
            raise AssertionError("unknown fault kind %r" % kind)

    def _dispatch_normally(self) -> None:
        if self.command == "POST":
            super().do_POST()
        else:
            super().do_GET()

    def _wait_release(self, rule: Rule) -> None:
        owner = self.owner
        while not owner.stopping and not rule.release.wait(0.05):
            pass

    def _comments(self, rule: Rule, msg: Any) -> None:
        p = rule.params
        interval = float(p.get("interval", 0.02))
        token = None
        if isinstance(msg, dict) and isinstance(msg.get("params"), dict):
            meta = msg["params"].get("_meta")
            if isinstance(meta, dict):
                token = meta.get("progressToken")
        self.start_stream()
        n = 0
        try:
            if token is not None:
                for i in range(int(p.get("progress", 0))):
                    note = {
                        "jsonrpc": "2.0",
                        "method": "notifications/progress",
                        "params": {"progressToken": token, "progress": i + 1, "total": 100},
                    }
                    self.chunk(b"event: message\ndata: %s\n\n" % json.dumps(note).encode())
            while not self.owner.stopping and not rule.release.is_set():
                n += 1
                self.chunk(b": keepalive\n\n")
                if p.get("noise"):
                    self.chunk(b"id: prime-%d\ndata:\n\n" % n)
                    other = {
                        "jsonrpc": "2.0",
                        "method": "notifications/progress",
                        "params": {"progressToken": "someone-else", "progress": n},
                    }
                    self.chunk(b"event: message\ndata: %s\n\n" % json.dumps(other).encode())
                    log = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": n}}
                    self.chunk(b"event: message\ndata: %s\n\n" % json.dumps(log).encode())
                rule.release.wait(interval)
            self._cut()
        except OSError:
            rule.client_gone.set()
            self.close_connection = True


class FaultServer(MCPTestServer):
    """:class:`MCPTestServer` with scripted per-request faults (see the module docstring)."""

    def __init__(self, era: str = "auto", response_mode: str = "sse", **example_options: Any) -> None:
        super().__init__(era=era, response_mode=response_mode, **example_options)
        self._httpd.RequestHandlerClass = _FaultHandler
        self.rules: List[Rule] = []
        self._rules_lock = threading.Lock()

    def inject(
        self,
        kind: str,
        *,
        verb: str = "POST",
        rpc: Optional[str] = None,
        path: Optional[str] = None,
        times: Optional[int] = 1,
        **params: Any,
    ) -> Rule:
        """Arm a fault for the next ``times`` matching requests; returns the rule (its events and hits)."""
        rule = Rule(kind, verb, rpc, path, times, params)
        with self._rules_lock:
            self.rules.append(rule)
        return rule

    def take_rule(self, verb: str, msg: Any, path: str) -> Optional[Rule]:
        with self._rules_lock:
            for rule in self.rules:
                if rule.matches(verb, msg, path):
                    rule.hits += 1
                    rule.messages.append(msg)
                    return rule
        return None

    def clear(self) -> None:
        """Disarm (and release) every rule."""
        with self._rules_lock:
            rules, self.rules = self.rules, []
        for r in rules:
            r.release.set()

    def stop(self) -> None:
        self.clear()
        super().stop()

    def expire(self) -> None:
        """Forget every handshake-era session (later requests with its id get 404)."""
        self.expire_sessions()

    def cancellations(self) -> List[Any]:
        """The ``requestId`` of every ``notifications/cancelled`` the server received."""
        out = []
        for r in self.records("POST", "notifications/cancelled"):
            params = r.body.get("params") if isinstance(r.body, dict) else None
            if isinstance(params, dict):
                out.append(params.get("requestId"))
        return out


class RecordingServer:
    """A plain local HTTP server that answers 202 to everything and records what reached it."""

    def __init__(self) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        hits: List[str] = []
        self.hits = hits

        class H(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def _any(self) -> None:
                hits.append("%s %s" % (self.command, self.path))
                self.send_response(202)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = do_DELETE = _any  # noqa: N815

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def __enter__(self) -> "RecordingServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)


# ---------------------------------------------------------------------------- issue 18: routing on Mcp-Name


class TaskRouter:
    """A load balancer in front of two 2026-07-28 example servers, each with its own task store.

    ``tools/call`` goes to the backends in turn (so tasks live on both); ``tasks/get``, ``tasks/update`` and
    ``tasks/cancel`` are routed on the ``Mcp-Name`` header **alone** (the body is never looked at for routing),
    to the backend that created that task (learnt from the ``CreateTaskResult`` it relayed), as the tasks
    extension intends ("Streamable HTTP: Routing Headers"). A task request without a known ``Mcp-Name`` is
    refused with 400 and a JSON-RPC -32020 (header mismatch) error; ``routed`` lists ``(method, header,
    backend)`` for every task request. Everything else goes to backend 0. Use as a context manager.
    """

    TASK_METHODS = ("tasks/get", "tasks/update", "tasks/cancel")

    def __init__(self, **example_options: Any) -> None:
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        self.backends = [MCPTestServer(era="modern", response_mode="json", **example_options) for _ in range(2)]
        self.owner_of: Dict[str, int] = {}
        self.routed: List[Any] = []
        self.refused: List[Any] = []
        self._turn = 0
        self._lock = threading.Lock()
        router = self

        class H(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_POST(self) -> None:  # noqa: N802
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                try:
                    msg = json.loads(raw)
                except ValueError:
                    msg = None
                method = msg.get("method") if isinstance(msg, dict) else None
                header = self.headers.get("Mcp-Name")
                with router._lock:
                    if method in router.TASK_METHODS:
                        index = router.owner_of.get(header or "")
                        if index is None:
                            router.refused.append((method, header))
                        else:
                            router.routed.append((method, header, index))
                    elif method == "tools/call":
                        index = router._turn % 2
                        router._turn += 1
                    else:
                        index = 0
                if index is None:
                    rid = msg.get("id") if isinstance(msg, dict) else None
                    err = {"code": -32020, "message": "Header mismatch: Mcp-Name must name a known task"}
                    self._answer(400, "application/json", json.dumps({"jsonrpc": "2.0", "id": rid, "error": err}))
                    return
                status, ctype, body = router._forward(index, raw, self.headers)
                if method == "tools/call" and status == 200:
                    try:
                        result = json.loads(body).get("result") or {}
                    except (ValueError, AttributeError):
                        result = {}
                    if isinstance(result, dict) and result.get("resultType") == "task":
                        with router._lock:
                            router.owner_of[str(result.get("taskId"))] = index
                self._answer(status, ctype, body)

            def _answer(self, status: int, ctype: str, body: Any) -> None:
                data = body.encode() if isinstance(body, str) else body
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), H)
        self._httpd.daemon_threads = True
        self.port = self._httpd.server_address[1]
        self.url = "http://127.0.0.1:%d/mcp" % self.port
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def _forward(self, index: int, body: bytes, headers: Any) -> Any:
        import http.client

        conn = http.client.HTTPConnection("127.0.0.1", self.backends[index].port, timeout=30)
        try:
            skip = ("host", "content-length", "connection", "accept-encoding")
            conn.request("POST", "/mcp", body, {k: v for k, v in headers.items() if k.lower() not in skip})
            resp = conn.getresponse()
            return resp.status, resp.getheader("Content-Type") or "application/json", resp.read()
        finally:
            conn.close()

    def __enter__(self) -> "TaskRouter":
        for b in self.backends:
            b.start()
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)
        for b in self.backends:
            b.stop()


# ---------------------------------------------------------------------------- issue 18: crossed answers, early answers


def _crossed_answer(handler: _FaultHandler, rule: Rule, msg: Any) -> None:
    """``crossed_answer``: another call's response, then this request's own, in this POST's answer."""
    handler._record(msg)
    p = rule.params
    rid = msg.get("id") if isinstance(msg, dict) else None
    text = str(p.get("text", "own answer"))
    foreign = {
        "jsonrpc": "2.0",
        "id": p["foreign_id"],
        "result": {"content": [{"type": "text", "text": "crossed: not yours"}], "isError": False},
    }
    own = {"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}], "isError": False}}
    if handler.path.split("?", 1)[0].endswith("/messages"):  # legacy HTTP+SSE: the real answer goes on the stream
        sid = handler.path.split("sid=", 1)[-1].split("&", 1)[0]
        with handler.owner.lock:
            entry = handler.owner.sse_sessions.get(sid)
        if entry is not None:
            entry[0].handle(msg, entry[1])
        handler.reply(200, json.dumps(foreign).encode(), "application/json")
        return
    if handler.owner.response_mode == "json":
        handler.reply(200, json.dumps([foreign, own]).encode(), "application/json")
        return
    handler.start_stream()
    for frame in (foreign, own):
        handler.chunk(b"event: message\ndata: %s\n\n" % json.dumps(frame).encode())
    handler.end_stream()


_METHOD = re.compile(rb'"method"\s*:\s*"([^"\\]{1,100})"')
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"[^"\\]{1,100}")')


def early_fault(handler: _FaultHandler) -> bool:
    """``early_status``: answer a large POST before reading its body, then close with the body unread."""
    if handler.command != "POST":
        return False
    try:
        length = int(handler.headers.get("Content-Length") or 0)
    except ValueError:
        return False
    owner = handler.owner
    with owner._rules_lock:  # type: ignore[attr-defined]
        rule = None
        for r in owner.rules:  # type: ignore[attr-defined]
            if r.kind == "early_status" and (r.times is None or r.hits < r.times):
                if length >= int(r.params.get("min_body", 1 << 20)):
                    rule = r
                    r.hits += 1
                    break
    if rule is None:
        return False
    head = handler.rfile.read(min(4096, length))
    method = _METHOD.search(head)
    rid = _ID.search(head)
    body: Dict[str, Any] = {"jsonrpc": "2.0", "partial": True}
    if method:
        body["method"] = method.group(1).decode("utf-8", "replace")
    if rid:
        body["id"] = json.loads(rid.group(1))
    rule.messages.append(body)
    handler._record(body)
    rule.entered.set()
    status = int(rule.params.get("status", 413))
    data = b'{"error":"request entity too large"}'
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.send_header("Connection", "close")
    handler.end_headers()
    handler.wfile.write(data)
    handler.wfile.flush()
    handler.close_connection = True
    try:
        handler.connection.shutdown(socket.SHUT_WR)  # the answer, then FIN; closing with the body unread resets
    except OSError:
        pass
    return True


EXTRA_FAULTS: Dict[str, Callable[[_FaultHandler, Rule, Any], None]] = {"crossed_answer": _crossed_answer}


# ---------------------------------------------------------------------------- issue 18: connects that never finish


class StalledTLSServer:
    """Accepts TCP connections on 127.0.0.1 and never answers the TLS ClientHello (``url`` is https).

    ``hello`` is set once a client's first TLS bytes arrived: that client is then inside its handshake.
    Connections are held until :meth:`stop` (a context manager stops it).
    """

    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self.port = self._sock.getsockname()[1]
        self.url = "https://127.0.0.1:%d/mcp" % self.port
        self.hello = threading.Event()
        self._held: List[socket.socket] = []
        self._stopping = False
        self._thread = threading.Thread(target=self._accept, name="test-stalled-tls", daemon=True)

    def _accept(self) -> None:
        while not self._stopping:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self._held.append(conn)
            threading.Thread(target=self._hold, args=(conn,), daemon=True).start()

    def _hold(self, conn: socket.socket) -> None:
        try:
            if conn.recv(1):
                self.hello.set()
            while conn.recv(65536):  # read and ignore until the client goes away
                pass
        except OSError:
            pass

    def client_sockets(self) -> int:
        """Client sockets of this process to this server (connecting or connected)."""
        return _tcp_states(self.port, "01") + _tcp_states(self.port, "02")

    def __enter__(self) -> "StalledTLSServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def stop(self) -> None:
        self._stopping = True
        try:
            self._sock.shutdown(socket.SHUT_RDWR)  # wakes the accept() (close() alone does not)
        except OSError:
            pass
        self._sock.close()
        for conn in self._held:
            try:
                conn.close()
            except OSError:
                pass
        self._thread.join(5)


class FullBacklogServer:
    """A listening socket whose accept queue is full and never drained: a TCP connect to it stalls (the
    kernel drops each SYN; the client stays in SYN_SENT and retransmits). Loopback only."""

    def __init__(self) -> None:
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(0)
        self.port = self._sock.getsockname()[1]
        self.url = "http://127.0.0.1:%d/mcp" % self.port
        self._fillers: List[socket.socket] = []
        for _ in range(64):  # backlog 0 holds one or two: fill until a connect no longer completes
            filler = socket.socket()
            filler.settimeout(1.0)
            try:
                filler.connect(("127.0.0.1", self.port))
            except OSError:
                filler.close()
                break
            self._fillers.append(filler)
        else:  # pragma: no cover - a kernel that accepts everything
            raise RuntimeError("could not fill the accept queue")

    def connecting(self) -> int:
        """Sockets of this process in SYN_SENT towards this server (a client stuck in its connect)."""
        return _tcp_states(self.port, "02")

    def client_sockets(self) -> int:
        """Client sockets of this process to this server, the queue's own fillers not counted."""
        return _tcp_states(self.port, "01") - len(self._fillers) + self.connecting()

    def __enter__(self) -> "FullBacklogServer":
        return self

    def __exit__(self, *exc: Any) -> None:
        for s in self._fillers:
            s.close()
        self._sock.close()


def _tcp_states(port: int, state: str) -> int:
    """TCP sockets of this process to 127.0.0.1:``port`` in ``state`` (hex, as /proc/net/tcp writes it)."""
    import os

    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink("/proc/self/fd/%s" % fd)
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    n = 0
    with open("/proc/net/tcp") as f:
        for line in f.readlines()[1:]:
            parts = line.split()
            if int(parts[2].rsplit(":", 1)[1], 16) == port and parts[3] == state and parts[9] in inodes:
                n += 1
    return n
