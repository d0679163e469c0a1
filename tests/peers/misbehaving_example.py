"""The bundled example server's protocol logic with test-only misbehaviours (a hostile peer for the client's tests).

:class:`MisbehavingExampleServer` subclasses :class:`mcpsync.example_server.ExampleServer` and takes, on top of its
options, the misbehaviours the shipped server does not offer:

- ``cursor_loop``: every list page answers ``nextCursor: "loop"``;
- ``version``: ``initialize`` is answered with this protocol version whatever the client asked;
- ``discover``: ``server/discover`` is ``method-not-found``, ``error`` (-32603), ``garbage`` (a non-JSON line, then a
  result that is a string), ``never`` (no answer) or ``normal``;
- ``reject_version_once``: the first modern request is refused with -32022 (unsupported version);
- ``send_batch``: server-initiated messages go out as one JSON-RPC batch array (a ``roots/list`` request carries a
  log notification with it, so the batch has two members);
- ``out_of_order``: each response is delayed by a random 0-20 ms, so concurrent answers overtake each other;
- ``ignore_client_capabilities``: sampling, elicitation and roots requests are sent although the client did not
  declare them;
- ``ask_before_reading``: in the 2026-07-28 era, ``prompts/get`` and ``resources/read`` first answer
  ``input_required`` (an elicitation form asking for a ``name``, with a ``requestState``), and answer once the
  request comes back with the answer: the prompt gets a message, the resource a text content, naming it.

Used by ``tests/peers/misbehaving_server.py`` (stdio) and ``tests/httpserver.MCPTestServer`` (HTTP).
"""

from __future__ import annotations

import random
import threading
import time
from typing import Any, Dict, List, Optional

from mcpsync.example_server import Connection, ExampleServer, ServerSession
from mcpsync.example_server.protocol import (
    INTERNAL_ERROR,
    META_CAPS,
    META_VERSION,
    METHOD_NOT_FOUND,
    UNSUPPORTED_PROTOCOL_VERSION,
    RpcError,
    notification,
)
from mcpsync.example_server.session import DEFER

__all__ = ["DISCOVER_MODES", "MISBEHAVIOURS", "MisbehavingExampleServer"]

DISCOVER_MODES = ("normal", "method-not-found", "never", "garbage", "error")
MISBEHAVIOURS = (
    "cursor_loop",
    "version",
    "discover",
    "reject_version_once",
    "send_batch",
    "out_of_order",
    "ignore_client_capabilities",
    "ask_before_reading",
)
#: The form ``ask_before_reading`` sends.
_WHO_SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
#: What a client that declared everything would have declared (``ignore_client_capabilities``).
_ALL_INPUT_CAPS: Dict[str, Dict[str, Any]] = {"sampling": {}, "elicitation": {"form": {}, "url": {}}, "roots": {}}


class _MisbehavingSession(ServerSession):
    """A session that batches what it sends and delays its responses, as its server's misbehaviours ask."""

    server: "MisbehavingExampleServer"

    def send_out(self, messages: List[Dict[str, Any]], conn: Optional[Connection] = None) -> None:
        if not self.server.send_batch:
            super().send_out(messages, conn)
            return
        if len(messages) == 1 and messages[0].get("method") == "roots/list":
            log = {"level": "info", "logger": "mcpsync-example", "data": "asking the client for its roots"}
            messages = messages + [notification("notifications/message", log)]
        target = conn or self.default_conn
        if target is not None and messages:
            target.send(list(messages))

    def _start_request(self, msg: Dict[str, Any], conn: Connection, sink: Any) -> None:
        if not self.server.out_of_order:
            super()._start_request(msg, conn, sink)
            return

        def late(response: Any) -> None:
            if response is not None:
                time.sleep(random.uniform(0.0, 0.02))
            sink(response)

        super()._start_request(msg, conn, late)


class MisbehavingExampleServer(ExampleServer):
    """:class:`ExampleServer` plus the misbehaviours of this module's docstring (all off by default)."""

    def __init__(
        self,
        era: str = "auto",
        *,
        cursor_loop: bool = False,
        version: Optional[str] = None,
        discover: Optional[str] = None,
        reject_version_once: bool = False,
        send_batch: bool = False,
        out_of_order: bool = False,
        ignore_client_capabilities: bool = False,
        ask_before_reading: bool = False,
        **options: Any,
    ) -> None:
        if discover not in (None,) + DISCOVER_MODES:
            raise ValueError("bad discover mode %r" % discover)
        super().__init__(era=era, **options)
        self.cursor_loop = cursor_loop
        self.version = version
        self.discover = discover
        self.reject_version_once = reject_version_once
        self.send_batch = send_batch
        self.out_of_order = out_of_order
        self.ignore_client_capabilities = ignore_client_capabilities
        self.ask_before_reading = ask_before_reading
        self._version_rejected = threading.Event()

    def new_session(self, conn: Optional[Connection] = None) -> ServerSession:
        session = _MisbehavingSession(self, conn)
        with self.lock:
            self.sessions.append(session)
        return session

    def _dispatch(self, session: ServerSession, msg: Dict[str, Any], conn: Connection, ev: threading.Event) -> Any:
        if msg["method"] == "server/discover" and self.discover not in (None, "normal"):
            return self._discover_misbehaviour(msg, conn)
        return super()._dispatch(session, msg, conn, ev)

    def _discover_misbehaviour(self, msg: Dict[str, Any], conn: Connection) -> Any:
        if self.discover == "method-not-found":
            raise RpcError(METHOD_NOT_FOUND, "Method not found: server/discover")
        if self.discover == "error":
            raise RpcError(INTERNAL_ERROR, "Internal error")
        if self.discover == "garbage":
            send_raw = getattr(conn, "send_raw", None)
            if callable(send_raw):
                send_raw(b"this is not JSON {{{\n")
            conn.send({"jsonrpc": "2.0", "id": msg["id"], "result": "garbage"})
        return DEFER  # "never" (and "garbage", already answered)

    def _dispatch_modern(
        self,
        session: ServerSession,
        msg: Dict[str, Any],
        params: Dict[str, Any],
        meta: Dict[str, Any],
        conn: Connection,
        ev: threading.Event,
    ) -> Any:
        version = meta.get(META_VERSION)
        if isinstance(version, str) and self.reject_version_once:
            with self.lock:
                reject = not self._version_rejected.is_set()
                self._version_rejected.set()
            if reject:
                raise RpcError(
                    UNSUPPORTED_PROTOCOL_VERSION,
                    "Unsupported protocol version: %s" % version,
                    {"supported": self.supported_versions(), "requested": version},
                )
        if self.ignore_client_capabilities and isinstance(meta.get(META_CAPS), dict):
            meta = dict(meta, **{META_CAPS: _with_all_input_caps(meta[META_CAPS])})
        if self.ask_before_reading and msg.get("method") in ("prompts/get", "resources/read"):
            return self._read_after_asking(
                lambda: super(MisbehavingExampleServer, self)._dispatch_modern(session, msg, params, meta, conn, ev),
                msg["method"],
                params,
            )
        return super()._dispatch_modern(session, msg, params, meta, conn, ev)

    def _initialize(self, session: ServerSession, params: Dict[str, Any]) -> Dict[str, Any]:
        result = super()._initialize(session, params)
        if self.version is not None:
            with session.lock:
                session.protocol_version = self.version
            result["protocolVersion"] = self.version
            result["capabilities"] = self.capabilities("legacy", self.version)
        if self.ignore_client_capabilities:
            with session.lock:
                session.client_capabilities = _with_all_input_caps(session.client_capabilities)
        return result

    def _asked(self, params: Dict[str, Any], what: str) -> Any:
        """``ask_before_reading``: the ``input_required`` answer for ``what``, or the name the user gave."""
        responses = params.get("inputResponses")
        answer = responses.get("who") if isinstance(responses, dict) else None
        if params.get("requestState") == "asked:" + what and isinstance(answer, dict):
            content = answer.get("content")
            if answer.get("action") == "accept" and isinstance(content, dict):
                return str(content.get("name"))
            return "nobody"
        ask = {"message": "Who is reading %s?" % what, "requestedSchema": _WHO_SCHEMA}
        return {
            "resultType": "input_required",
            "inputRequests": {"who": {"method": "elicitation/create", "params": ask}},
            "requestState": "asked:" + what,
        }

    def _read_after_asking(self, call: Any, method: str, params: Dict[str, Any]) -> Any:
        """``ask_before_reading``: ask first, then answer with a note naming who reads."""
        if method == "prompts/get":
            who = self._asked(params, "prompt:%s" % params.get("name"))
            if isinstance(who, dict):
                return who
            result = call()
            note = {"role": "user", "content": {"type": "text", "text": "read by %s" % who}}
            return dict(result, messages=list(result.get("messages") or []) + [note])
        who = self._asked(params, "resource:%s" % params.get("uri"))
        if isinstance(who, dict):
            return who
        result = call()
        note = {"uri": params.get("uri"), "mimeType": "text/plain", "text": "read by %s" % who}
        return dict(result, contents=list(result.get("contents") or []) + [note])

    def _paginate(self, items: List[Dict[str, Any]], params: Dict[str, Any], key: str) -> Dict[str, Any]:
        if not self.cursor_loop:
            return super()._paginate(items, params, key)
        size = max(0, int(self.options.page_size or 0))
        return {key: items[:size] if size else list(items), "nextCursor": "loop"}


def _with_all_input_caps(caps: Dict[str, Any]) -> Dict[str, Any]:
    merged = dict(caps)
    for name, declared in _ALL_INPUT_CAPS.items():
        mine = merged.get(name)
        merged[name] = dict(declared, **mine) if isinstance(mine, dict) else dict(declared)
    return merged
