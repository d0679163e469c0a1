"""A real HTTP front for the example server: Streamable HTTP (both eras) and legacy HTTP+SSE, with misbehaviours.

``MCPTestServer`` runs a ``ThreadingHTTPServer`` on 127.0.0.1 (port 0) in a thread and
mounts :class:`mcpsync.example_server.ExampleServer` behind it:

* ``/mcp`` (``server.url``): Streamable HTTP. ``era="auto"`` serves a POST whose body
  carries ``_meta`` ``io.modelcontextprotocol/protocolVersion`` statelessly (2026-07-28,
  with header validation: ``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``,
  ``Mcp-Param-*`` -> 400 -32020; unknown version -> 400 -32022) and anything else as the
  handshake era (``Mcp-Session-Id`` sessions, optional GET stream, DELETE, resumable
  event streams with ids). ``era="legacy"`` / ``"modern"`` serve only that era.
* ``/sse`` and ``/prefix/sse`` (``server.sse_url(prefix)``): legacy HTTP+SSE with the
  message endpoint next to it (``messages?sid=...``); POSTs to an SSE path get 405.

Event streams use chunked transfer encoding. Answers are ``text/event-stream`` when
``response_mode="sse"`` (default) and ``application/json`` when ``"json"``.

Misbehaviours are the attributes of ``server.faults`` (see :class:`Faults`); tests set
them before the call they concern. Every request is recorded in ``server.log``.
"""

from __future__ import annotations

import base64
import json
import socket
import struct
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional, Set, Tuple
from urllib.parse import parse_qs, urlsplit

from mcpsync.example_server import ExampleServer
from mcpsync.example_server import tools as example_tools
from .peers.junk import junk_frames
from mcpsync.example_server.protocol import MODERN_VERSIONS

META_VERSION = "io.modelcontextprotocol/protocolVersion"


class Faults:
    """Misbehaviour switches. Counters are decremented as they fire."""

    def __init__(self) -> None:
        self.post_statuses: List[int] = []  # answer the next POSTs to /mcp with these statuses (500, 502, 404...)
        self.status_body: bytes = b"simulated failure"
        self.reset_posts = 0  # answer this many POSTs with a TCP reset (no HTTP answer at all)
        self.eof_before_response = 0  # end this many response streams cleanly before their response
        self.cut_streams = 0  # cut this many response streams abruptly after `cut_after` events
        self.cut_after = 1
        self.priming = False  # start every response stream with an id-only priming event
        self.retry_ms: Optional[int] = None  # `retry:` sent with the priming event
        self.get_status: Optional[int] = None  # answer GET on /mcp with this status (405, 404, 406...)
        self.delete_status: Optional[int] = None  # answer DELETE with this status
        self.drop_delete = False  # reset the connection on DELETE
        self.notification_reply = "202"  # 202 | 200-empty | 200-null | 204 | 200-text | 200-json-empty-object
        self.slow = 0.0  # seconds to wait before answering each POST
        self.require_token: Optional[str] = None  # bearer token required on /mcp and /sse (else 401)
        self.www_authenticate = (
            'Bearer realm="mcp", resource_metadata="http://127.0.0.1/.well-known/oauth-protected-resource"'
        )
        self.scopes: Dict[str, str] = {}  # tool name -> scope; calling it gives 403 insufficient_scope
        self.endpoint_style = "relative"  # legacy SSE endpoint: relative | absolute | full | cross-origin | raw
        self.endpoint_raw = ""  # the endpoint for style "raw" ({port}, {base}, {sid} are filled in)
        self.sse_drop_after: Optional[int] = None  # end legacy SSE GET streams after this many message events
        self.modern_400_body: Optional[bytes] = None  # answer modern POSTs with 400 and this body
        self.legacy_post_status: Optional[int] = None  # answer non-modern POSTs with this status (no session)
        self.always_404 = False  # every handshake-era POST but initialize gets 404 (a session that never sticks)
        self.junk_ids = False  # response streams: junk-id frames (example_server.junk) before every answer
        self.get_seen: Optional[threading.Event] = None  # set when a GET on /mcp arrives
        self.get_gate: Optional[threading.Event] = None  # a GET on /mcp waits for this (at most 10 s) before answering


class Record:
    """One HTTP request the server received."""

    def __init__(self, method: str, path: str, headers: Dict[str, str], body: Any, peer: Any = None) -> None:
        self.method = method
        self.path = path
        self.headers = headers  # lower-cased names
        self.body = body
        self.peer = peer  # the client's (host, port): one per connection

    def __repr__(self) -> str:
        what = self.body.get("method") if isinstance(self.body, dict) else None
        return "<%s %s %s>" % (self.method, self.path, what or "")


class _EventStream:
    """The messages of one response stream, kept so a client can resume it by event id."""

    def __init__(self, server: "MCPTestServer", answer_id: Any) -> None:
        self.sid = uuid.uuid4().hex[:12]
        self.answer_id = answer_id
        self.events: List[bytes] = []
        self.cond = threading.Condition()
        self.done = False  # the answer was added
        self.answer: Optional[bytes] = None
        self.server = server

    def send(self, message: Any) -> None:  # the example server's Connection protocol
        data = json.dumps(message, ensure_ascii=False).encode("utf-8")
        junk: List[bytes] = []
        if self.server.faults.junk_ids and isinstance(message, dict) and "method" not in message:
            junk = junk_frames(message.get("id"))
        with self.cond:
            self.events.extend(junk)
            self.events.append(data)
            for m in message if isinstance(message, list) else [message]:
                if isinstance(m, dict) and "method" not in m and m.get("id") == self.answer_id:
                    self.done = True
                    self.answer = data
            self.cond.notify_all()

    def wait(self, index: int, timeout: float = 0.5) -> None:
        with self.cond:
            if len(self.events) <= index and not self.done and not self.server.stopping:
                self.cond.wait(timeout)


class _Outbox:
    """A queue-backed Connection for long-lived streams (legacy GET stream, legacy SSE)."""

    def __init__(self, faults: Optional["Faults"] = None) -> None:
        self.items: List[bytes] = []
        self.cond = threading.Condition()
        self.closed = False
        self.faults = faults

    def send(self, message: Any) -> None:
        data = json.dumps(message, ensure_ascii=False).encode("utf-8")
        junk: List[bytes] = []
        if self.faults is not None and self.faults.junk_ids and isinstance(message, dict) and "method" not in message:
            junk = junk_frames(message.get("id"))
        with self.cond:
            self.items.extend(junk)
            self.items.append(data)
            self.cond.notify_all()

    def take(self, timeout: float = 0.5) -> Optional[bytes]:
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


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: "_HTTPServer"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - silence the default stderr log
        pass

    def setup(self) -> None:
        super().setup()
        self.server.owner._track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        self.server.owner._track(self.connection, False)

    @property
    def owner(self) -> "MCPTestServer":
        return self.server.owner

    # ------------------------------------------------------------------ helpers

    def _record(self, body: Any) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        with self.owner.lock:
            self.owner.log.append(Record(self.command, self.path, headers, body, self.client_address))

    def _read_body(self) -> bytes:
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _reply(
        self,
        status: int,
        body: bytes = b"",
        ctype: Optional[str] = "application/json",
        headers: Optional[Dict[str, str]] = None,
    ) -> None:
        self.send_response(status)
        if body and ctype:
            self.send_header("Content-Type", ctype)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body:
            self.wfile.write(body)

    def _rpc_error(self, status: int, rid: Any, code: int, message: str, data: Any = None) -> None:
        err: Dict[str, Any] = {"code": code, "message": message}
        if data is not None:
            err["data"] = data
        self._reply(status, json.dumps({"jsonrpc": "2.0", "id": rid, "error": err}).encode())

    def _reset(self) -> None:
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.connection.close()
        self.close_connection = True

    def _cut(self) -> None:
        """End the connection mid-body (FIN without the final chunk): the client sees a broken stream."""
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        self.close_connection = True

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _start_stream(self, headers: Optional[Dict[str, str]] = None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.flush()

    def _end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _auth_ok(self, msg: Any) -> bool:
        f = self.owner.faults
        if f.require_token is not None and self.headers.get("Authorization") != "Bearer " + f.require_token:
            self._reply(401, b'{"error":"unauthorized"}', headers={"WWW-Authenticate": f.www_authenticate})
            return False
        if isinstance(msg, dict) and msg.get("method") == "tools/call":
            name = (msg.get("params") or {}).get("name")
            scope = f.scopes.get(name)
            if scope:
                self._reply(
                    403,
                    b'{"error":"insufficient_scope"}',
                    headers={"WWW-Authenticate": 'Bearer error="insufficient_scope", scope="%s"' % scope},
                )
                return False
        return True

    # ------------------------------------------------------------------ verbs

    def do_POST(self) -> None:  # noqa: N802
        path = urlsplit(self.path).path
        raw = self._read_body()
        try:
            msg = json.loads(raw) if raw else None
        except ValueError:
            msg = None
        self._record(msg)
        owner = self.owner
        if path in owner.sse_paths:
            self._reply(405, b"Method Not Allowed", "text/plain", {"Allow": "GET"})
            return
        if path.endswith("/messages"):
            self._legacy_sse_post(msg)
            return
        if path == "/moved":
            self._reply(307, b"", None, {"Location": owner.mcp_path})
            return
        if path == "/away":
            self._reply(307, b"", None, {"Location": "http://localhost:%d%s" % (owner.port, owner.mcp_path)})
            return
        if path != owner.mcp_path:
            self._reply(404, b"not found", "text/plain")
            return
        f = owner.faults
        if f.slow:
            time.sleep(f.slow)
        if f.reset_posts > 0:
            f.reset_posts -= 1
            self._reset()
            return
        if f.post_statuses:
            status = f.post_statuses.pop(0)
            self._reply(status, f.status_body, "text/plain")
            return
        if not self._auth_ok(msg):
            return
        if msg is None:
            self._rpc_error(400, None, -32700, "Parse error")
            return
        modern = (
            isinstance(msg, dict)
            and isinstance(msg.get("params"), dict)
            and isinstance(msg["params"].get("_meta"), dict)
            and META_VERSION in msg["params"]["_meta"]
        )
        era = owner.core.era
        if era == "modern" or (era == "auto" and modern):
            self._modern_post(msg)
        else:
            self._legacy_post(msg)

    def _is_request(self, msg: Any) -> bool:
        return isinstance(msg, dict) and "method" in msg and "id" in msg

    def _accept_oneway(self) -> None:
        mode = self.owner.faults.notification_reply
        if mode == "202":
            self._reply(202)
        elif mode == "200-empty":
            self._reply(200)
        elif mode == "200-null":
            self._reply(200, b"null")
        elif mode == "204":
            self.send_response(204)
            self.end_headers()
        elif mode == "200-text":
            self._reply(200, b"ok", "text/plain")
        elif mode == "200-json-empty-object":
            self._reply(200, b"{}")
        else:
            raise AssertionError(mode)

    def _modern_post(self, msg: Any) -> None:
        f = self.owner.faults
        if f.modern_400_body is not None:
            self._reply(400, f.modern_400_body)
            return
        if not self._is_request(msg):
            self._reply(202)
            return
        params = msg.get("params") if isinstance(msg.get("params"), dict) else {}
        meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
        version = meta.get(META_VERSION)
        rid = msg["id"]
        if isinstance(version, str) and version not in MODERN_VERSIONS:
            self._rpc_error(
                400,
                rid,
                -32022,
                "Unsupported protocol version: %s" % version,
                {"supported": list(MODERN_VERSIONS), "requested": version},
            )
            return
        problem = self._header_problem(msg, params, version)
        if problem:
            self._rpc_error(400, rid, -32020, "Header mismatch: %s" % problem)
            return
        session = self.owner.core.new_session(None)
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
        key = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}.get(method)
        if key is not None and _decode_header(h.get("Mcp-Name")) != params.get(key):
            return "Mcp-Name %r does not match %r" % (h.get("Mcp-Name"), params.get(key))
        if method == "tools/call":
            core = self.owner.core
            name = params.get("name")
            definition = next((t for t in example_tools.TOOL_DEFS if t["name"] == name), None) or core.extra_tools.get(
                name
            )
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

    def _legacy_post(self, msg: Any) -> None:
        owner = self.owner
        f = owner.faults
        if f.legacy_post_status is not None:
            self._reply(f.legacy_post_status, b"", None)
            return
        if isinstance(msg, dict) and msg.get("method") == "initialize":
            sid = uuid.uuid4().hex
            session = owner.core.new_session(None)
            with owner.lock:
                owner.sessions[sid] = session
            self._answer(msg, session, {"Mcp-Session-Id": sid})
            return
        sid = self.headers.get("Mcp-Session-Id")
        if not sid:
            self._rpc_error(400, None, -32000, "Bad Request: No valid session ID provided")
            return
        with owner.lock:
            session = None if f.always_404 else owner.sessions.get(sid)
        if session is None:
            self._rpc_error(404, None, -32001, "Session not found")
            return
        if self._is_request(msg):
            self._answer(msg, session)
        else:
            session.handle(msg, _Null())
            self._accept_oneway()

    def _answer(self, msg: Dict[str, Any], session: Any, headers: Optional[Dict[str, str]] = None) -> None:
        owner = self.owner
        stream = _EventStream(owner, msg["id"])
        with owner.lock:
            owner.streams[stream.sid] = stream
        session.handle(msg, stream)
        if owner.response_mode == "json":
            while not stream.done and not owner.stopping:
                stream.wait(len(stream.events))
            self._reply(200, stream.answer or b"", headers=headers)
            return
        self._start_stream(headers)
        self._pump(stream, 0, session)

    def _pump(self, stream: _EventStream, index: int, session: Any, resumed: bool = False) -> None:
        """Write ``stream`` from event ``index`` on; close at its answer. Misbehaviours apply here."""
        owner = self.owner
        f = owner.faults
        try:
            if not resumed and f.priming:
                prime = b"id: %s-0\n" % stream.sid.encode()
                if f.retry_ms is not None:
                    prime += b"retry: %d\n" % f.retry_ms
                self._chunk(prime + b"data: \n\n")
                if f.cut_streams > 0 and f.cut_after == 0:
                    f.cut_streams -= 1
                    self._cut()
                    return
            if resumed and f.cut_streams > 0 and f.cut_after == 0:
                f.cut_streams -= 1  # cut again before any new event: the client must reuse its last id
                self._cut()
                return
            if not resumed and f.eof_before_response > 0:
                f.eof_before_response -= 1
                self._end_stream()
                return
            written = 0
            while not owner.stopping:
                with stream.cond:
                    events = stream.events[index:]
                    done = stream.done
                for data in events:
                    index += 1
                    self._chunk(b"id: %s-%d\nevent: message\ndata: %s\n\n" % (stream.sid.encode(), index, data))
                    written += 1
                    if f.cut_streams > 0 and written >= f.cut_after and not (done and index == len(stream.events)):
                        f.cut_streams -= 1
                        self._cut()
                        return
                if done and index >= len(stream.events):
                    self._end_stream()
                    return
                stream.wait(index)
        except OSError:
            # The client went away: in the 2026-07-28 era that is the cancellation.
            if session is not None and owner.core.era != "legacy":
                session.close()
            self.close_connection = True

    def do_GET(self) -> None:  # noqa: N802
        self._record(None)
        owner = self.owner
        path = urlsplit(self.path).path
        if path in owner.sse_paths:
            self._legacy_sse_get(path)
            return
        if path != owner.mcp_path:
            self._reply(404, b"not found", "text/plain")
            return
        f = owner.faults
        if f.get_seen is not None:
            f.get_seen.set()
        if f.get_gate is not None:
            f.get_gate.wait(10)
        if not self._auth_ok(None):
            return
        if f.get_status is not None:
            self._reply(f.get_status, b"", None)
            return
        if owner.core.era == "modern":
            self._reply(405, b"", None, {"Allow": "POST"})
            return
        if "text/event-stream" not in (self.headers.get("Accept") or ""):
            self._reply(406, b"", None)
            return
        sid = self.headers.get("Mcp-Session-Id")
        with owner.lock:
            session = owner.sessions.get(sid) if sid else None
        if sid and session is None:
            self._rpc_error(404, None, -32001, "Session not found")
            return
        last = self.headers.get("Last-Event-ID")
        if last:
            stream_id, _, n = last.rpartition("-")
            with owner.lock:
                stream = owner.streams.get(stream_id)
            if stream is None or not n.isdigit():
                self._reply(404, b"", None)
                return
            self._start_stream()
            self._pump(stream, int(n), None, resumed=True)
            return
        if session is None:
            self._rpc_error(400, None, -32000, "Bad Request: No valid session ID provided")
            return
        outbox = _Outbox()
        session.attach(outbox)
        with owner.lock:
            owner.get_streams.append(outbox)
        self._start_stream()
        try:
            self._write_outbox(outbox, None)
        finally:
            session.attach(None)
            with owner.lock:
                if outbox in owner.get_streams:
                    owner.get_streams.remove(outbox)

    def _write_outbox(self, outbox: _Outbox, drop_after: Optional[int]) -> None:
        owner = self.owner
        n = 0
        try:
            while not owner.stopping and not outbox.closed:
                data = outbox.take()
                if data is None:
                    continue
                n += 1
                self._chunk(b"event: message\ndata: %s\n\n" % data)
                if drop_after is not None and n >= drop_after:
                    break
            self._end_stream()
        except OSError:
            self.close_connection = True

    def do_DELETE(self) -> None:  # noqa: N802
        self._record(None)
        owner = self.owner
        f = owner.faults
        if f.drop_delete:
            self._reset()
            return
        if f.delete_status is not None:
            self._reply(f.delete_status, b"", None)
            return
        if owner.core.era == "modern":
            self._reply(405, b"", None, {"Allow": "POST"})
            return
        sid = self.headers.get("Mcp-Session-Id")
        with owner.lock:
            session = owner.sessions.pop(sid, None) if sid else None
        if session is None:
            self._reply(404, b"", None)
            return
        session.close()
        self._reply(200)

    # ------------------------------------------------------------------ legacy HTTP+SSE (2024-11-05)

    def _legacy_sse_get(self, path: str) -> None:
        owner = self.owner
        if not self._auth_ok(None):
            return
        sid = uuid.uuid4().hex
        outbox = _Outbox(owner.faults)
        session = owner.core.new_session(outbox)
        with owner.lock:
            owner.sse_sessions[sid] = (session, outbox)
        base = path.rsplit("/", 1)[0]
        style = owner.faults.endpoint_style
        if style == "relative":
            endpoint = "messages?sid=%s" % sid
        elif style == "absolute":
            endpoint = "%s/messages?sid=%s" % (base, sid)
        elif style == "full":
            endpoint = "http://127.0.0.1:%d%s/messages?sid=%s" % (owner.port, base, sid)
        elif style == "raw":  # faults.endpoint_raw with {port}, {base} and {sid} filled in
            endpoint = owner.faults.endpoint_raw.format(port=owner.port, base=base, sid=sid)
        else:
            endpoint = "http://evil.invalid:%d%s/messages?sid=%s" % (owner.port, base, sid)
        self._start_stream()
        try:
            self._chunk(b"event: endpoint\ndata: %s\n\n" % endpoint.encode())
            self._write_outbox(outbox, owner.faults.sse_drop_after)
        except OSError:
            self.close_connection = True
        finally:
            with owner.lock:
                owner.sse_sessions.pop(sid, None)
            session.close()
            self.close_connection = True

    def _legacy_sse_post(self, msg: Any) -> None:
        owner = self.owner
        sid = (parse_qs(urlsplit(self.path).query).get("sid") or [""])[0]
        with owner.lock:
            entry = owner.sse_sessions.get(sid)
        if entry is None:
            self._reply(404, b"Could not find session", "text/plain")
            return
        if msg is None:
            self._reply(400, b"Invalid message", "text/plain")
            return
        session, outbox = entry
        session.handle(msg, outbox)
        self._reply(202, b"Accepted", "text/plain")


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # many clients connect at once in the concurrency tests (default: 5)
    owner: "MCPTestServer"

    def handle_error(self, request: Any, client_address: Any) -> None:
        import sys

        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, OSError)):
            return  # clients dropping connections is part of the tests
        super().handle_error(request, client_address)


class MCPTestServer:
    """The example server behind a real local HTTP server. Use as a context manager.

    Args:
        era: "auto" (both eras), "legacy" or "modern".
        response_mode: "sse" (answers are event streams) or "json".
        **example_options: options of :class:`mcpsync.example_server.ExampleServer`.
    """

    def __init__(self, era: str = "auto", response_mode: str = "sse", **example_options: Any) -> None:
        self.core = ExampleServer(era=era, **example_options)
        self.faults = Faults()
        self.response_mode = response_mode
        self.mcp_path = "/mcp"
        self.sse_paths = ("/sse", "/prefix/sse")
        self.log: List[Record] = []
        self.lock = threading.Lock()
        self.sessions: Dict[str, Any] = {}
        self.streams: Dict[str, _EventStream] = {}
        self.sse_sessions: Dict[str, Tuple[Any, _Outbox]] = {}
        self.get_streams: List[_Outbox] = []
        self.stopping = False
        self._conns: Set[socket.socket] = set()
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self.port = self._httpd.server_address[1]
        self._thread: Optional[threading.Thread] = None

    @property
    def url(self) -> str:
        """The Streamable HTTP endpoint."""
        return "http://127.0.0.1:%d/mcp" % self.port

    def sse_url(self, prefix: str = "") -> str:
        """The legacy SSE URL (``prefix="prefix/"`` for ``/prefix/sse``)."""
        return "http://127.0.0.1:%d/%ssse" % (self.port, prefix)

    def start(self) -> "MCPTestServer":
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="test-httpserver", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping = True
        for stream in list(self.streams.values()):
            with stream.cond:
                stream.cond.notify_all()
        for outbox in list(self.get_streams) + [o for _, o in self.sse_sessions.values()]:
            outbox.close()
        self.core.shutdown()
        self._httpd.shutdown()
        self.drop_connections()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(5)

    def __enter__(self) -> "MCPTestServer":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # ------------------------------------------------------------------ test controls

    def _track(self, conn: socket.socket, add: bool) -> None:
        with self.lock:
            (self._conns.add if add else self._conns.discard)(conn)

    def drop_connections(self) -> None:
        """Shut down every open connection (the client's pooled keep-alive connections included)."""
        with self.lock:
            conns = list(self._conns)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def expire_sessions(self) -> None:
        """Forget every handshake-era session, like a server restart (later requests get 404)."""
        with self.lock:
            sessions = list(self.sessions.values())
            self.sessions.clear()
        for s in sessions:
            s.close()

    def drop_sse_streams(self) -> None:
        """End every legacy HTTP+SSE stream (their server sessions are gone)."""
        with self.lock:
            entries = list(self.sse_sessions.values())
        for _, outbox in entries:
            outbox.close()

    def records(self, method: Optional[str] = None, rpc: Optional[str] = None) -> List[Record]:
        """Recorded requests, filtered by HTTP method and/or JSON-RPC method."""
        with self.lock:
            out = list(self.log)
        if method is not None:
            out = [r for r in out if r.method == method]
        if rpc is not None:
            out = [r for r in out if isinstance(r.body, dict) and r.body.get("method") == rpc]
        return out

    def add_tool(self, definition: Dict[str, Any]) -> None:
        """Add a tool definition (e.g. with ``x-mcp-header`` annotations); it echoes its arguments."""
        with self.core.lock:
            self.core.extra_tools[definition["name"]] = definition
