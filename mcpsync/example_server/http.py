"""HTTP front of the example server (standard library only): Streamable HTTP in both eras, and legacy HTTP+SSE.

``python -m mcpsync.example_server --http PORT`` runs :func:`run`. :class:`HTTPFront` runs a
``ThreadingHTTPServer`` (one thread per connection) and mounts an
:class:`~mcpsync.example_server.core.ExampleServer` behind it:

* ``/mcp`` (:attr:`HTTPFront.url`): Streamable HTTP. With ``era="auto"`` a POST whose body carries
  ``_meta`` ``io.modelcontextprotocol/protocolVersion`` is served statelessly (2026-07-28, with header
  validation: ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*`` -> 400 -32020; an
  unknown version -> 400 -32022), anything else in the handshake era (``Mcp-Session-Id`` sessions, the
  optional GET stream, DELETE, event ids a client can resume from with ``Last-Event-ID``). ``era="legacy"``
  or ``"modern"`` serve only that era.
* ``/sse`` and ``/prefix/sse``: legacy HTTP+SSE (2024-11-05), the message endpoint next to it
  (``messages?sid=...``); a POST to an SSE path gets 405.

Event streams use chunked transfer encoding. Answers are ``text/event-stream`` when
``response_mode="sse"`` (the default) and ``application/json`` when ``"json"``.

Building on it: the test suite's fault-injecting server subclasses :class:`HTTPFront` and
:class:`Handler` and overrides the documented hooks (:meth:`Handler.intercept`,
:meth:`Handler.modern_post`, :meth:`Handler.legacy_post`, :meth:`Handler.legacy_session`,
:meth:`Handler.accept_notification`, :meth:`Handler.stream_opened`, :meth:`Handler.event_written`,
:meth:`Handler.sse_endpoint`, :meth:`Handler.sse_drop_after`, :meth:`HTTPFront.extra_frames`).
"""

from __future__ import annotations

import base64
import json
import logging
import signal
import socket
import sys
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional, Set, Tuple, Type
from urllib.parse import parse_qs, urlsplit

from . import tools as example_tools
from .core import ExampleServer
from .protocol import META_VERSION, MODERN_VERSIONS
from .session import ServerSession

__all__ = ["EventStream", "HTTPFront", "Handler", "Outbox", "run"]

logger = logging.getLogger("mcpsync.example_server")


class EventStream:
    """The messages of one response stream, kept so that a client can resume it by event id. Thread-safe."""

    def __init__(self, front: "HTTPFront", answer_id: Any) -> None:
        self.sid = uuid.uuid4().hex[:12]
        self.answer_id = answer_id
        self.events: List[bytes] = []
        self.cond = threading.Condition()
        self.done = False  # the answer was added
        self.answer: Optional[bytes] = None
        self.front = front

    def send(self, message: Any) -> None:
        """The example server's ``Connection.send``: append ``message`` (after the front's extra frames)."""
        data = json.dumps(message, ensure_ascii=False).encode("utf-8")
        extra = self.front.extra_frames(message)
        with self.cond:
            self.events.extend(extra)
            self.events.append(data)
            for m in message if isinstance(message, list) else [message]:
                if isinstance(m, dict) and "method" not in m and m.get("id") == self.answer_id:
                    self.done = True
                    self.answer = data
            self.cond.notify_all()

    def wait(self, index: int, timeout: float = 0.5) -> None:
        """Block up to ``timeout`` seconds until there is an event at ``index``, the answer, or the front stops."""
        with self.cond:
            if len(self.events) <= index and not self.done and not self.front.stopping:
                self.cond.wait(timeout)


class Outbox:
    """A connection for long-lived streams (the legacy GET stream, legacy HTTP+SSE). Thread-safe, unbounded.

    ``front``: when given, its :meth:`HTTPFront.extra_frames` are queued before each message.
    """

    def __init__(self, front: Optional["HTTPFront"] = None) -> None:
        self.items: List[bytes] = []
        self.cond = threading.Condition()
        self.closed = False
        self.front = front

    def send(self, message: Any) -> None:
        data = json.dumps(message, ensure_ascii=False).encode("utf-8")
        extra = self.front.extra_frames(message) if self.front is not None else []
        with self.cond:
            self.items.extend(extra)
            self.items.append(data)
            self.cond.notify_all()

    def take(self, timeout: float = 0.5) -> Optional[bytes]:
        """The next queued frame, or None after ``timeout`` seconds (or once closed and empty)."""
        with self.cond:
            if not self.items and not self.closed:
                self.cond.wait(timeout)
            return self.items.pop(0) if self.items else None

    def close(self) -> None:
        with self.cond:
            self.closed = True
            self.cond.notify_all()


class _Null:
    def send(self, message: Any) -> None:
        pass


def _decode_header(value: Optional[str]) -> Optional[str]:
    if value is not None and value.startswith("=?base64?") and value.endswith("?="):
        return base64.b64decode(value[9:-2]).decode("utf-8")
    return value


def _is_modern(msg: Any) -> bool:
    return (
        isinstance(msg, dict)
        and isinstance(msg.get("params"), dict)
        and isinstance(msg["params"].get("_meta"), dict)
        and META_VERSION in msg["params"]["_meta"]
    )


class Handler(BaseHTTPRequestHandler):
    """One HTTP connection of an :class:`HTTPFront` (runs on that connection's thread)."""

    protocol_version = "HTTP/1.1"
    server: "_Server"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the default logs every request to stderr
        logger.debug("%s " + format, self.address_string(), *args)

    def setup(self) -> None:
        super().setup()
        self.front.track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        self.front.track(self.connection, False)

    @property
    def front(self) -> "HTTPFront":
        return self.server.front

    # ------------------------------------------------------------------ hooks (override in a subclass)

    def intercept(self, path: str, msg: Any) -> bool:
        """Called first for every request (``msg``: the decoded POST body, else None). True: already answered."""
        return False

    def accept_notification(self) -> None:
        """Answer a POST that carried a notification or a response (202 Accepted)."""
        self.reply(202)

    def legacy_session(self, sid: str) -> Optional[ServerSession]:
        """The handshake-era session of a POST's ``Mcp-Session-Id`` (None: 404)."""
        with self.front.lock:
            return self.front.sessions.get(sid)

    def stream_opened(self, stream: EventStream, resumed: bool) -> bool:
        """Called when a response stream starts (``resumed``: by ``Last-Event-ID``). True: stop writing it."""
        return False

    def event_written(self, written: int, final: bool) -> bool:
        """Called after each event written to a response stream (``final``: it was the last). True: stop."""
        return False

    def sse_endpoint(self, base: str, sid: str) -> str:
        """The ``endpoint`` event of a legacy HTTP+SSE stream."""
        return "messages?sid=%s" % sid

    def sse_drop_after(self) -> Optional[int]:
        """End a legacy HTTP+SSE stream after this many message events (None: never)."""
        return None

    # ------------------------------------------------------------------ helpers

    def read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def reply(
        self,
        status: int,
        body: bytes = b"",
        ctype: Optional[str] = "application/json",
        headers: Optional[Dict[str, str]] = None,
    ) -> None:
        """Send a complete response with a ``Content-Length``."""
        self.send_response(status)
        if body and ctype:
            self.send_header("Content-Type", ctype)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)

    def rpc_error(self, status: int, rid: Any, code: int, message: str, data: Any = None) -> None:
        err: Dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            err["data"] = data
        self.reply(status, json.dumps({"jsonrpc": "2.0", "id": rid, "error": err}).encode())

    def chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def start_stream(self, headers: Optional[Dict[str, str]] = None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.flush()

    def end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    # ------------------------------------------------------------------ verbs

    def do_POST(self) -> None:  # noqa: N802
        path = urlsplit(self.path).path
        raw = self.read_body()
        try:
            msg = json.loads(raw) if raw else None
        except ValueError:
            msg = None
        if self.intercept(path, msg):
            return
        front = self.front
        if path in front.sse_paths:
            self.reply(405, b"Method Not Allowed", "text/plain", {"Allow": "GET"})
            return
        if path.endswith("/messages"):
            self._legacy_sse_post(msg)
            return
        if path != front.mcp_path:
            self.reply(404, b"not found", "text/plain")
            return
        if msg is None:
            self.rpc_error(400, None, -32700, "Parse error")
            return
        era = front.core.era
        if era == "modern" or (era == "auto" and _is_modern(msg)):
            self.modern_post(msg)
        else:
            self.legacy_post(msg)

    def _is_request(self, msg: Any) -> bool:
        return isinstance(msg, dict) and "method" in msg and "id" in msg

    def modern_post(self, msg: Any) -> None:
        """A POST of the 2026-07-28 era: one request, answered on its own stream by a session of its own."""
        if not self._is_request(msg):
            self.reply(202)
            return
        raw_params = msg.get("params")
        params: Dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
        raw_meta = params.get("_meta")
        meta: Dict[str, Any] = raw_meta if isinstance(raw_meta, dict) else {}
        version = meta.get(META_VERSION)
        rid = msg["id"]
        if isinstance(version, str) and version not in MODERN_VERSIONS:
            self.rpc_error(
                400,
                rid,
                -32022,
                "Unsupported protocol version: %s" % version,
                {"supported": list(MODERN_VERSIONS), "requested": version},
            )
            return
        problem = self._header_problem(msg, params, version)
        if problem:
            self.rpc_error(400, rid, -32020, "Header mismatch: %s" % problem)
            return
        session = self.front.core.new_session(None)
        try:
            self._answer(msg, session)
        finally:
            session.close()

    def _header_problem(self, msg: Dict[str, Any], params: Dict[str, Any], version: Any) -> Optional[str]:
        h = self.headers
        if version is not None and h.get("MCP-Protocol-Version") != version:
            return "MCP-Protocol-Version %r does not match the body (%r)" % (h.get("MCP-Protocol-Version"), version)
        method = msg.get("method")
        if h.get("Mcp-Method") != method:
            return "Mcp-Method %r does not match %r" % (h.get("Mcp-Method"), method)
        key = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}.get(str(method))
        if key is not None and _decode_header(h.get("Mcp-Name")) != params.get(key):
            return "Mcp-Name %r does not match %r" % (h.get("Mcp-Name"), params.get(key))
        if method == "tools/call":
            core = self.front.core
            name = params.get("name")
            definition = next((t for t in example_tools.TOOL_DEFS if t["name"] == name), None)
            if definition is None and isinstance(name, str):
                definition = core.extra_tools.get(name)
            props = ((definition or {}).get("inputSchema") or {}).get("properties") or {}
            args = params.get("arguments") or {}
            for prop, schema in props.items():
                header = schema.get("x-mcp-header") if isinstance(schema, dict) else None
                if not header:
                    continue
                value = args.get(prop)
                got = _decode_header(h.get("Mcp-Param-" + header))
                if value is None:
                    if got is not None:
                        return "unexpected Mcp-Param-%s" % header
                    continue
                want = ("true" if value else "false") if isinstance(value, bool) else str(value)
                if got != want:
                    return "Mcp-Param-%s %r does not match %r" % (header, got, want)
        return None

    def legacy_post(self, msg: Any) -> None:
        """A POST of the handshake era: ``initialize`` opens a session; later POSTs carry its ``Mcp-Session-Id``."""
        front = self.front
        if isinstance(msg, dict) and msg.get("method") == "initialize":
            new_sid = uuid.uuid4().hex
            session = front.core.new_session(None)
            with front.lock:
                front.sessions[new_sid] = session
            self._answer(msg, session, {"Mcp-Session-Id": new_sid})
            return
        sid = self.headers.get("Mcp-Session-Id")
        if not sid:
            self.rpc_error(400, None, -32000, "Bad Request: No valid session ID provided")
            return
        found = self.legacy_session(sid)
        if found is None:
            self.rpc_error(404, None, -32001, "Session not found")
            return
        if self._is_request(msg):
            self._answer(msg, found)
        else:
            found.handle(msg, _Null())
            self.accept_notification()

    def _answer(self, msg: Dict[str, Any], session: ServerSession, headers: Optional[Dict[str, str]] = None) -> None:
        front = self.front
        stream = EventStream(front, msg["id"])
        with front.lock:
            front.streams[stream.sid] = stream
        session.handle(msg, stream)
        if front.response_mode == "json":
            while not stream.done and not front.stopping:
                stream.wait(len(stream.events))
            self.reply(200, stream.answer or b"", headers=headers)
            return
        self.start_stream(headers)
        self._pump(stream, 0, session)

    def _pump(self, stream: EventStream, index: int, session: Optional[ServerSession], resumed: bool = False) -> None:
        """Write ``stream`` from event ``index`` on; end it after its answer."""
        front = self.front
        try:
            if self.stream_opened(stream, resumed):
                return
            written = 0
            while not front.stopping:
                with stream.cond:
                    events = stream.events[index:]
                    done = stream.done
                for data in events:
                    index += 1
                    self.chunk(b"id: %s-%d\nevent: message\ndata: %s\n\n" % (stream.sid.encode(), index, data))
                    written += 1
                    if self.event_written(written, done and index == len(stream.events)):
                        return
                if done and index >= len(stream.events):
                    self.end_stream()
                    return
                stream.wait(index)
        except OSError:
            # The client went away: in the 2026-07-28 era that is the cancellation.
            if session is not None and front.core.era != "legacy":
                session.close()
            self.close_connection = True

    def do_GET(self) -> None:  # noqa: N802
        front = self.front
        path = urlsplit(self.path).path
        if self.intercept(path, None):
            return
        if path in front.sse_paths:
            self._legacy_sse_get(path)
            return
        if path != front.mcp_path:
            self.reply(404, b"not found", "text/plain")
            return
        if front.core.era == "modern":
            self.reply(405, b"", None, {"Allow": "POST"})
            return
        if "text/event-stream" not in (self.headers.get("Accept") or ""):
            self.reply(406, b"", None)
            return
        sid = self.headers.get("Mcp-Session-Id")
        with front.lock:
            session = front.sessions.get(sid) if sid else None
        if sid and session is None:
            self.rpc_error(404, None, -32001, "Session not found")
            return
        last = self.headers.get("Last-Event-ID")
        if last:
            stream_id, _, n = last.rpartition("-")
            with front.lock:
                stream = front.streams.get(stream_id)
            if stream is None or not n.isdigit():
                self.reply(404, b"", None)
                return
            self.start_stream()
            self._pump(stream, int(n), None, resumed=True)
            return
        if session is None:
            self.rpc_error(400, None, -32000, "Bad Request: No valid session ID provided")
            return
        outbox = Outbox()
        session.attach(outbox)
        with front.lock:
            front.get_streams.append(outbox)
        self.start_stream()
        try:
            self._write_outbox(outbox, None)
        finally:
            session.attach(None)
            with front.lock:
                if outbox in front.get_streams:
                    front.get_streams.remove(outbox)

    def _write_outbox(self, outbox: Outbox, drop_after: Optional[int]) -> None:
        front = self.front
        n = 0
        try:
            while not front.stopping and not outbox.closed:
                data = outbox.take()
                if data is None:
                    continue
                n += 1
                self.chunk(b"event: message\ndata: %s\n\n" % data)
                if drop_after is not None and n >= drop_after:
                    break
            self.end_stream()
        except OSError:
            self.close_connection = True

    def do_DELETE(self) -> None:  # noqa: N802
        front = self.front
        if self.intercept(urlsplit(self.path).path, None):
            return
        if front.core.era == "modern":
            self.reply(405, b"", None, {"Allow": "POST"})
            return
        sid = self.headers.get("Mcp-Session-Id")
        with front.lock:
            session = front.sessions.pop(sid, None) if sid else None
        if session is None:
            self.reply(404, b"", None)
            return
        session.close()
        self.reply(200)

    # ------------------------------------------------------------------ legacy HTTP+SSE (2024-11-05)

    def _legacy_sse_get(self, path: str) -> None:
        front = self.front
        sid = uuid.uuid4().hex
        outbox = Outbox(front)
        session = front.core.new_session(outbox)
        with front.lock:
            front.sse_sessions[sid] = (session, outbox)
        endpoint = self.sse_endpoint(path.rsplit("/", 1)[0], sid)
        self.start_stream()
        try:
            self.chunk(b"event: endpoint\ndata: %s\n\n" % endpoint.encode())
            self._write_outbox(outbox, self.sse_drop_after())
        except OSError:
            self.close_connection = True
        finally:
            with front.lock:
                front.sse_sessions.pop(sid, None)
            session.close()
            self.close_connection = True

    def _legacy_sse_post(self, msg: Any) -> None:
        front = self.front
        sid = (parse_qs(urlsplit(self.path).query).get("sid") or [""])[0]
        with front.lock:
            entry = front.sse_sessions.get(sid)
        if entry is None:
            self.reply(404, b"Could not find session", "text/plain")
            return
        if msg is None:
            self.reply(400, b"Invalid message", "text/plain")
            return
        session, outbox = entry
        session.handle(msg, outbox)
        self.reply(202, b"Accepted", "text/plain")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # many clients may connect at once (the default backlog is 5)

    def __init__(self, address: Tuple[str, int], handler: Any, front: "HTTPFront") -> None:
        self.front = front
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        """Serve the connection on a named daemon thread of its own (not joined: :meth:`HTTPFront.stop` closes it)."""
        threading.Thread(
            target=self.process_request_thread,
            args=(request, client_address),
            name="example-http-conn",
            daemon=True,
        ).start()

    def handle_error(self, request: Any, client_address: Any) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, OSError):
            return  # a client dropping its connection is not the server's error
        super().handle_error(request, client_address)


class _Server6(_Server):
    address_family = socket.AF_INET6


class HTTPFront:
    """An :class:`ExampleServer` behind a real HTTP server. Use as a context manager, or ``start()``/``stop()``.

    The socket is bound on construction (``port=0``: a free port, see :attr:`port`); :meth:`start` serves on a
    daemon thread named ``example-http``; every connection gets a daemon thread of its own. :meth:`stop`
    blocks until the server thread ends (at most about 5 s). Thread-safe.

    Args:
        core: the example server to mount.
        host: the address to listen on.
        port: the port (0: a free one).
        response_mode: "sse" (answers are event streams) or "json".
        handler: the request handler class (a :class:`Handler` subclass).
    """

    def __init__(
        self,
        core: ExampleServer,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        response_mode: str = "sse",
        handler: Type[Handler] = Handler,
    ) -> None:
        if response_mode not in ("sse", "json"):
            raise ValueError("response_mode must be sse or json")
        self.core = core
        self.host = host
        self.response_mode = response_mode
        self.mcp_path = "/mcp"
        self.sse_paths = ("/sse", "/prefix/sse")
        self.lock = threading.Lock()
        self.sessions: Dict[str, ServerSession] = {}
        self.streams: Dict[str, EventStream] = {}
        self.sse_sessions: Dict[str, Tuple[ServerSession, Outbox]] = {}
        self.get_streams: List[Outbox] = []
        self.stopping = False
        self._conns: Set[socket.socket] = set()
        server_class = _Server6 if ":" in host else _Server
        self._httpd = server_class((host, port), handler, self)
        self.port: int = self._httpd.server_address[1]
        self._thread: Optional[threading.Thread] = None

    @property
    def base(self) -> str:
        host = "[%s]" % self.host if ":" in self.host else self.host
        return "http://%s:%d" % (host, self.port)

    @property
    def url(self) -> str:
        """The Streamable HTTP endpoint."""
        return self.base + self.mcp_path

    def sse_url(self, prefix: str = "") -> str:
        """The legacy HTTP+SSE URL (``prefix="prefix/"`` for ``/prefix/sse``)."""
        return "%s/%ssse" % (self.base, prefix)

    def extra_frames(self, message: Any) -> List[bytes]:
        """Frames to stream before ``message`` (a hook for subclasses; none by default)."""
        return []

    def start(self) -> "HTTPFront":
        """Serve on a daemon thread; returns at once."""
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="example-http", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """End every stream, cancel the server's work, close every connection and the socket."""
        self.stopping = True
        for stream in list(self.streams.values()):
            with stream.cond:
                stream.cond.notify_all()
        for outbox in list(self.get_streams) + [o for _, o in self.sse_sessions.values()]:
            outbox.close()
        self.core.shutdown()
        if self._thread is not None:
            self._httpd.shutdown()
        self.drop_connections()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self) -> "HTTPFront":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def track(self, conn: socket.socket, add: bool) -> None:
        """Remember (``add``) or forget an open connection (called by :class:`Handler`)."""
        with self.lock:
            (self._conns.add if add else self._conns.discard)(conn)

    def drop_connections(self) -> None:
        """Shut down every open connection (clients' pooled keep-alive connections included)."""
        with self.lock:
            conns = list(self._conns)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def run(core: ExampleServer, host: str, port: int) -> int:
    """Serve ``core`` over HTTP until SIGTERM, SIGINT (Ctrl-C) or SIGBREAK. Blocks; returns the exit code (0).

    The URL is written to stderr as ``mcpsync-example: serving Streamable HTTP at URL`` (stdout stays empty).
    """
    front = HTTPFront(core, host, port)
    done = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        done.set()

    previous: Dict[int, Any] = {}
    for name in ("SIGTERM", "SIGINT", "SIGBREAK"):
        signum = getattr(signal, name, None)
        if signum is not None:
            previous[signum] = signal.signal(signum, on_signal)
    front.start()
    sys.stderr.write("mcpsync-example: serving Streamable HTTP at %s (legacy SSE: %s)\n" % (front.url, front.sse_url()))
    sys.stderr.flush()
    try:
        while not done.wait(0.5):
            pass
    finally:
        front.stop()
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    logger.info("stopped")
    return 0
