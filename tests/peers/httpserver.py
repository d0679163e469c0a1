"""The example server's HTTP front (:mod:`mcpsync.example_server.http`) with misbehaviours and a request log.

``MCPTestServer`` is :class:`mcpsync.example_server.http.HTTPFront` on 127.0.0.1 (port 0), served on a
thread: Streamable HTTP at ``/mcp`` (``server.url``, both eras), legacy HTTP+SSE at ``/sse`` and
``/prefix/sse`` (``server.sse_url(prefix)``); see that module for the protocol behaviour. This module adds
what only tests need, through the front's documented hooks:

* misbehaviours: the attributes of ``server.faults`` (see :class:`Faults`); tests set them before the call
  they concern;
* every request recorded in ``server.log`` (:meth:`MCPTestServer.records`);
* ``/moved`` and ``/away`` (307 redirects to ``/mcp``), :meth:`MCPTestServer.expire_sessions`,
  :meth:`MCPTestServer.drop_sse_streams`, :meth:`MCPTestServer.add_tool`.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from typing import Any, Dict, List, Optional


from mcpsync.example_server.http import EventStream, Handler, HTTPFront
from mcpsync.example_server.session import ServerSession

from tests.peers.junk import junk_frames
from tests.peers.misbehaving_example import MisbehavingExampleServer


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


class _Handler(Handler):
    """The front's handler with the :class:`Faults` applied and every request recorded."""

    @property
    def owner(self) -> "MCPTestServer":
        return self.server.front  # type: ignore[return-value]

    def _record(self, body: Any) -> None:
        headers = {k.lower(): v for k, v in self.headers.items()}
        with self.owner.lock:
            self.owner.log.append(Record(self.command, self.path, headers, body, self.client_address))

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

    def _auth_ok(self, msg: Any) -> bool:
        f = self.owner.faults
        if f.require_token is not None and self.headers.get("Authorization") != "Bearer " + f.require_token:
            self.reply(401, b'{"error":"unauthorized"}', headers={"WWW-Authenticate": f.www_authenticate})
            return False
        if isinstance(msg, dict) and msg.get("method") == "tools/call":
            name = (msg.get("params") or {}).get("name")
            scope = f.scopes.get(name)
            if scope:
                self.reply(
                    403,
                    b'{"error":"insufficient_scope"}',
                    headers={"WWW-Authenticate": 'Bearer error="insufficient_scope", scope="%s"' % scope},
                )
                return False
        return True

    # ------------------------------------------------------------------ the front's hooks

    def intercept(self, path: str, msg: Any) -> bool:
        self._record(msg)
        owner = self.owner
        f = owner.faults
        if self.command == "POST":
            if path == "/moved":
                self.reply(307, b"", None, {"Location": owner.mcp_path})
                return True
            if path == "/away":
                self.reply(307, b"", None, {"Location": "http://localhost:%d%s" % (owner.port, owner.mcp_path)})
                return True
            if path != owner.mcp_path:
                return False
            if f.slow:
                time.sleep(f.slow)
            if f.reset_posts > 0:
                f.reset_posts -= 1
                self._reset()
                return True
            if f.post_statuses:
                status = f.post_statuses.pop(0)
                self.reply(status, f.status_body, "text/plain")
                return True
            return not self._auth_ok(msg)
        if self.command == "GET":
            if path in owner.sse_paths:
                return not self._auth_ok(None)
            if path != owner.mcp_path:
                return False
            if f.get_seen is not None:
                f.get_seen.set()
            if f.get_gate is not None:
                f.get_gate.wait(10)
            if not self._auth_ok(None):
                return True
            if f.get_status is not None:
                self.reply(f.get_status, b"", None)
                return True
            return False
        if self.command == "DELETE":
            if f.drop_delete:
                self._reset()
                return True
            if f.delete_status is not None:
                self.reply(f.delete_status, b"", None)
                return True
        return False

    def accept_notification(self) -> None:
        mode = self.owner.faults.notification_reply
        if mode == "202":
            self.reply(202)
        elif mode == "200-empty":
            self.reply(200)
        elif mode == "200-null":
            self.reply(200, b"null")
        elif mode == "204":
            self.send_response(204)
            self.end_headers()
        elif mode == "200-text":
            self.reply(200, b"ok", "text/plain")
        elif mode == "200-json-empty-object":
            self.reply(200, b"{}")
        else:
            raise AssertionError(mode)

    def modern_post(self, msg: Any) -> None:
        f = self.owner.faults
        if f.modern_400_body is not None:
            self.reply(400, f.modern_400_body)
            return
        super().modern_post(msg)

    def legacy_post(self, msg: Any) -> None:
        f = self.owner.faults
        if f.legacy_post_status is not None:
            self.reply(f.legacy_post_status, b"", None)
            return
        super().legacy_post(msg)

    def legacy_session(self, sid: str) -> Optional[ServerSession]:
        return None if self.owner.faults.always_404 else super().legacy_session(sid)

    def stream_opened(self, stream: EventStream, resumed: bool) -> bool:
        f = self.owner.faults
        if not resumed and f.priming:
            prime = b"id: %s-0\n" % stream.sid.encode()
            if f.retry_ms is not None:
                prime += b"retry: %d\n" % f.retry_ms
            self.chunk(prime + b"data: \n\n")
            if f.cut_streams > 0 and f.cut_after == 0:
                f.cut_streams -= 1
                self._cut()
                return True
        if resumed and f.cut_streams > 0 and f.cut_after == 0:
            f.cut_streams -= 1  # cut again before any new event: the client must reuse its last id
            self._cut()
            return True
        if not resumed and f.eof_before_response > 0:
            f.eof_before_response -= 1
            self.end_stream()
            return True
        return False

    def event_written(self, written: int, final: bool) -> bool:
        f = self.owner.faults
        if f.cut_streams > 0 and written >= f.cut_after and not final:
            f.cut_streams -= 1
            self._cut()
            return True
        return False

    def sse_endpoint(self, base: str, sid: str) -> str:
        owner = self.owner
        style = owner.faults.endpoint_style
        if style == "relative":
            return "messages?sid=%s" % sid
        if style == "absolute":
            return "%s/messages?sid=%s" % (base, sid)
        if style == "full":
            return "http://127.0.0.1:%d%s/messages?sid=%s" % (owner.port, base, sid)
        if style == "raw":  # faults.endpoint_raw with {port}, {base} and {sid} filled in
            return owner.faults.endpoint_raw.format(port=owner.port, base=base, sid=sid)
        return "http://evil.invalid:%d%s/messages?sid=%s" % (owner.port, base, sid)

    def sse_drop_after(self) -> Optional[int]:
        return self.owner.faults.sse_drop_after


class MCPTestServer(HTTPFront):
    """The example server behind a real local HTTP server, with faults and a request log. Use as a context manager.

    Args:
        era: "auto" (both eras), "legacy" or "modern".
        response_mode: "sse" (answers are event streams) or "json".
        **example_options: options of :class:`mcpsync.example_server.ExampleServer`, and the misbehaviours of
            :class:`tests.peers.misbehaving_example.MisbehavingExampleServer`.
    """

    def __init__(self, era: str = "auto", response_mode: str = "sse", **example_options: Any) -> None:
        self.faults = Faults()
        self.log: List[Record] = []
        super().__init__(
            MisbehavingExampleServer(era=era, **example_options),
            "127.0.0.1",
            0,
            response_mode=response_mode,
            handler=_Handler,
        )

    def extra_frames(self, message: Any) -> List[bytes]:
        if self.faults.junk_ids and isinstance(message, dict) and "method" not in message:
            return junk_frames(message.get("id"))
        return []

    def start(self) -> "MCPTestServer":
        super().start()
        return self

    def __enter__(self) -> "MCPTestServer":
        return self.start()

    # ------------------------------------------------------------------ test controls

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
