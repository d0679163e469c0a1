"""The host side of an MCP App's JSON-RPC channel (``io.modelcontextprotocol/ui``, spec 2026-01-26).

An :class:`AppBridge` stands between one View (the page of one tool, in a sandboxed frame) and the one server the
page came from. It is transport-agnostic: whatever carries the View's messages (``postMessage`` relayed over HTTP,
a webview's JS bridge) hands them to :meth:`AppBridge.handle` (answers on the calling thread) or
:meth:`AppBridge.receive` (answers on the bridge's own worker thread), and takes what goes to the View from
:meth:`AppBridge.next_outgoing`.

View -> Host, answered here:

- ``ui/initialize`` -> ``protocolVersion``, ``hostInfo``, ``hostCapabilities`` (derived from the callbacks given),
  ``hostContext``; then ``ui/notifications/initialized`` opens the channel to the View;
- ``tools/call`` -> the server. A tool the server listed is called only when its ``_meta.ui.visibility``
  includes ``"app"`` (a model-only tool is refused). A tool the server left out of ``tools/list`` (servers may
  hide app-only tools from the listing, and FastMCP serves backend tools under ``__<hash>_<name>`` addresses no
  listing shows) is passed to the server, which serves it to its App or answers its own error, unless
  ``allow_unlisted_tools=False``. A bridge only ever talks to its own server, so a cross-server call cannot
  happen; ``approve_tool_call`` may refuse any call;
- ``resources/read`` -> the server (``allow_resource`` may refuse a URI);
- ``ui/message``, ``ui/open-link`` (http/https only), ``ui/update-model-context`` (kept in :attr:`model_context`,
  last one wins), ``ui/request-display-mode``, ``ui/download-file``, ``ui/notifications/size-changed``,
  ``notifications/message`` (logs), ``ui/notifications/request-teardown``, ``ping``: through the host callbacks.

Anything else gets a JSON-RPC error (a request) or is ignored (a notification); malformed input gets an
``Invalid Request`` error; an exception in a callback becomes an ``Internal error`` answer and is logged. Nothing
the View sends raises in the host.

Host -> View: :meth:`send_tool_input`, :meth:`send_tool_input_partial`, :meth:`send_tool_result`,
:meth:`send_tool_cancelled`, :meth:`set_host_context` (sends the changed keys), :meth:`teardown` (a request: waits
for the View's answer). Nothing is delivered before the View's ``initialized`` notification: until then messages
wait in a buffer of ``max_pending`` (default 64); when it is full, a buffered ``tool-input-partial`` is dropped
first (only the newest partial input matters), else the oldest message, with a warning. Delivered messages wait in
the outbox (``max_outbox``, default 1024) until the transport takes them; a View that stops reading loses the
oldest, with a warning.

A new View can take over the channel (a page reload, a second tab, a desktop window that reloads): a second
``ui/initialize``, or :meth:`begin_view` called by the transport, drops what the old View had not been sent yet,
and once the new View has initialized it is replayed what a View needs: the tool input (the complete one, else the
newest partial) and the tool result (or the cancellation); its ``ui/initialize`` answer carries the current host
context. A transport whose connection to the View drops and comes back (an event stream that reconnects) takes
over the outbox with :meth:`claim_outgoing` and is handed again the messages a previous reader took after the last
one the View acknowledged (up to ``max_resend``, default 64), then reads with :meth:`take_outgoing`.

Threads: every method is thread-safe. Host callbacks run on the thread that called :meth:`handle`, or on the
bridge's worker thread (``mcpsync-apps-bridge:<tool>``, a daemon) for :meth:`receive`, never on a transport's
reader thread. The worker's inbox holds ``max_inbox`` messages (default 256); beyond that a request is answered
``-32000 host busy`` and a notification is dropped with a warning. :meth:`close` stops the worker (joined with a
timeout); after it returns no callback runs.
"""

from __future__ import annotations

import collections
import itertools
import logging
import queue
import threading
import time
from typing import Any, Callable, Deque, Dict, List, Optional, Tuple, Union
from urllib.parse import urlsplit

from .._threads import spawn
from ..errors import MCPError, RemoteError
from ..types import JSON, CallToolResult, Tool
from ..wire.jsonrpc import INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND

__all__ = ["APPS_PROTOCOL_VERSION", "AppBridge", "HostCallbacks"]

log = logging.getLogger("mcpsync.apps")
view_log = logging.getLogger("mcpsync.apps.view")

APPS_PROTOCOL_VERSION = "2026-01-26"
SUPPORTED_PROTOCOL_VERSIONS = (APPS_PROTOCOL_VERSION,)
DISPLAY_MODES = ("inline", "fullscreen", "pip")

#: the code of the answer to an App request refused because the bridge's inbox is full (a JSON-RPC server error)
HOST_BUSY = -32000
#: seconds between re-listings of the server's tools for a tools/call naming a tool not (yet) listed
RELIST_INTERVAL = 10.0


class _Refused(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class HostCallbacks:
    """The host's answers to a View, all optional (a missing one means "not supported": the capability is not
    advertised and the request is refused). Each runs on the thread described in the module docstring and may
    block (a dialog asking the user, for instance).

    Attributes:
        on_message: ``f(params) -> bool | dict | None`` for ``ui/message`` (``{role, content}``: add it to the
            conversation). False refuses (``isError``); a dict is the result.
        on_open_link: ``f(url) -> bool | None`` for ``ui/open-link`` (only http/https URLs reach it).
        on_update_model_context: ``f(params)`` after ``ui/update-model-context`` (also kept in ``model_context``).
        on_display_mode: ``f(mode) -> str | None``: the resulting display mode (None: the request is granted).
        on_download_file: ``f(contents) -> bool | None`` for ``ui/download-file`` (the host SHOULD confirm).
        on_size_change: ``f(width, height)`` (either may be None) for ``ui/notifications/size-changed``.
        on_log: ``f(params)`` for ``notifications/message`` (default: the ``mcpsync.apps.view`` logger).
        on_request_teardown: ``f()`` when the View asks to be closed.
        approve_tool_call: ``f(name, arguments) -> bool``: False refuses a proxied ``tools/call``.
        allow_resource: ``f(uri) -> bool``: False refuses a proxied ``resources/read``.
    """

    def __init__(
        self,
        *,
        on_message: Optional[Callable[[JSON], Any]] = None,
        on_open_link: Optional[Callable[[str], Any]] = None,
        on_update_model_context: Optional[Callable[[JSON], Any]] = None,
        on_display_mode: Optional[Callable[[str], Optional[str]]] = None,
        on_download_file: Optional[Callable[[List[Any]], Any]] = None,
        on_size_change: Optional[Callable[[Optional[float], Optional[float]], Any]] = None,
        on_log: Optional[Callable[[JSON], Any]] = None,
        on_request_teardown: Optional[Callable[[], Any]] = None,
        approve_tool_call: Optional[Callable[[str, JSON], bool]] = None,
        allow_resource: Optional[Callable[[str], bool]] = None,
    ) -> None:
        self.on_message = on_message
        self.on_open_link = on_open_link
        self.on_update_model_context = on_update_model_context
        self.on_display_mode = on_display_mode
        self.on_download_file = on_download_file
        self.on_size_change = on_size_change
        self.on_log = on_log
        self.on_request_teardown = on_request_teardown
        self.approve_tool_call = approve_tool_call
        self.allow_resource = allow_resource


def _error(msg_id: Any, code: int, message: str) -> JSON:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def _ok(msg_id: Any, result: Any) -> JSON:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def _valid_id(value: Any) -> bool:
    return (isinstance(value, (str, int)) and not isinstance(value, bool)) and (
        not isinstance(value, str) or len(value) <= 256
    )


def _number(value: Any) -> Optional[float]:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value < 1e7:
        return float(value)
    return None


class AppBridge:
    """The host end of one View's channel; see the module docstring.

    Args:
        client: the :class:`~mcpsync.Client` of the server the page came from (``tools/call`` and
            ``resources/read`` go to it, and only to it).
        tool: the tool whose page this is (its definition goes to ``hostContext.toolInfo``).
        tool_call_id: the JSON-RPC id of the ``tools/call`` that opened the View, when there is one.
        host_info: ``{"name", "version"}`` of the host (default: mcpsync's).
        host_context: the initial ``hostContext`` (theme, displayMode, containerDimensions, locale...);
            ``toolInfo`` and ``availableDisplayModes`` are filled in when absent.
        callbacks: the host's :class:`HostCallbacks`.
        display_modes: the display modes this host offers (default ``("inline",)``).
        max_pending, max_outbox, max_inbox: queue bounds (see the module docstring).
        max_resend: messages kept, once taken by a reader, to hand again to a reader that reconnects.
        allow_unlisted_tools: pass the View's call to a tool the server did not list (default True: the server
            decides); False refuses it like an unknown tool.
        timeout: seconds a proxied request may take (None: the client's default).
    """

    def __init__(
        self,
        client: Any,
        tool: Optional[Tool] = None,
        *,
        tool_call_id: Any = None,
        host_info: Optional[JSON] = None,
        host_context: Optional[JSON] = None,
        callbacks: Optional[HostCallbacks] = None,
        display_modes: Tuple[str, ...] = ("inline",),
        max_pending: int = 64,
        max_outbox: int = 1024,
        max_inbox: int = 256,
        max_resend: int = 64,
        allow_unlisted_tools: bool = True,
        timeout: Optional[float] = None,
    ) -> None:
        from ..__version__ import __version__

        self.client = client
        self.tool = tool
        self.callbacks = callbacks or HostCallbacks()
        self.host_info = dict(host_info or {"name": "mcpsync", "version": __version__})
        self.display_modes = tuple(m for m in display_modes if m in DISPLAY_MODES) or ("inline",)
        context = dict(host_context or {})
        context.setdefault("availableDisplayModes", list(self.display_modes))
        context.setdefault("displayMode", self.display_modes[0])
        if tool is not None and "toolInfo" not in context:
            info: JSON = {"tool": tool.to_dict()}
            if tool_call_id is not None:
                info["id"] = tool_call_id
            context["toolInfo"] = info
        self._context = context
        self.max_pending = max(1, max_pending)
        self.max_outbox = max(1, max_outbox)
        self.timeout = timeout
        self.allow_unlisted_tools = allow_unlisted_tools
        self._lock = threading.RLock()
        self._initialize_answered = False
        self._initialized = threading.Event()
        self._closed = False
        self._pending: Deque[JSON] = collections.deque()
        self._outbox: Deque[JSON] = collections.deque()
        self._out_ready = threading.Condition(self._lock)
        self._requests: Dict[int, Tuple[threading.Event, List[JSON]]] = {}
        self._ids = itertools.count(1)
        self._replay: Dict[str, JSON] = {}  # "input" / "result": what a new View is sent again
        self._views = 0  # how many times a new View took over the channel
        self._claim = 0  # the reader (claim_outgoing) that may take from the outbox; 0: none yet
        self._seq = 0  # sequence number of the last message taken from the outbox
        self._sent: Deque[Tuple[int, JSON]] = collections.deque(maxlen=max(1, max_resend))
        self._inbox: "queue.Queue[Optional[JSON]]" = queue.Queue(maxsize=max(1, max_inbox))
        self._worker: Optional[threading.Thread] = None
        self._dropped_warned = 0.0
        self._last_relist = -RELIST_INTERVAL
        self.app_info: JSON = {}
        self.app_capabilities: JSON = {}
        self.model_context: Optional[JSON] = None
        self.size: Tuple[Optional[float], Optional[float]] = (None, None)

    # ------------------------------------------------------------------ state

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._closed

    @property
    def initialized(self) -> bool:
        """Whether the View sent ``ui/notifications/initialized`` (Host -> View traffic flows from then on)."""
        return self._initialized.is_set()

    def wait_initialized(self, timeout: Optional[float] = None) -> bool:
        """Block until the View is initialized (or ``timeout`` seconds); returns whether it is."""
        return self._initialized.wait(timeout)

    @property
    def host_context(self) -> JSON:
        """A copy of the current ``hostContext``."""
        with self._lock:
            return dict(self._context)

    def host_capabilities(self) -> JSON:
        """The ``hostCapabilities`` sent in the ``ui/initialize`` answer (derived from the callbacks given)."""
        cb = self.callbacks
        caps: JSON = {"serverTools": {}, "serverResources": {}, "logging": {}}
        if cb.on_open_link is not None:
            caps["openLinks"] = {}
        if cb.on_download_file is not None:
            caps["downloadFile"] = {}
        blocks: JSON = {"text": {}, "image": {}, "audio": {}, "resource": {}, "resourceLink": {}}
        caps["updateModelContext"] = dict(blocks, structuredContent={})
        if cb.on_message is not None:
            caps["message"] = dict(blocks)
        return caps

    # ------------------------------------------------------------------ View -> Host

    def handle(self, message: Any) -> Optional[JSON]:
        """Answer one message from the View on the calling thread; returns the response to send back (None for
        a notification or a response to one of the host's requests). Blocks while a proxied request or a host
        callback runs. Never raises."""
        try:
            return self._handle(message)
        except Exception:  # noqa: BLE001 - nothing a View sends may break the host
            log.exception("MCP App bridge: unexpected failure handling a message")
            msg_id = message.get("id") if isinstance(message, dict) else None
            return _error(msg_id if _valid_id(msg_id) else None, INTERNAL_ERROR, "Internal error")

    def receive(self, message: Any) -> None:
        """Queue one message from the View and return at once (a transport's reader thread may call this); the
        worker thread answers it and the answer goes to the outbox. See the module docstring for the bound."""
        with self._lock:
            if self._closed:
                return
            if self._worker is None:
                name = self.tool.name if self.tool is not None else "page"
                self._worker = spawn("mcpsync-apps-bridge:%s" % name, self._work)
        try:
            self._inbox.put_nowait(message)
        except queue.Full:
            msg_id = message.get("id") if isinstance(message, dict) else None
            if isinstance(message, dict) and "method" in message and _valid_id(msg_id):
                self._deliver(_error(msg_id, HOST_BUSY, "host busy: too many messages in flight"))
            else:
                self._warn_drop("the bridge's inbox is full; a View notification was dropped")

    def _work(self) -> None:
        while True:
            message = self._inbox.get()
            if message is None or self._closed:
                return
            answer = self.handle(message)
            if answer is not None and not self._closed:
                self._deliver(answer)

    def _handle(self, message: Any) -> Optional[JSON]:
        if self._closed:
            if isinstance(message, dict) and _valid_id(message.get("id")) and "method" in message:
                return _error(message["id"], INVALID_REQUEST, "the App's host closed this channel")
            return None
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return _error(None, INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 object")
        method = message.get("method")
        msg_id = message.get("id")
        has_id = "id" in message
        if method is None:
            if has_id and ("result" in message or "error" in message):
                self._response(message)
                return None
            return _error(msg_id if _valid_id(msg_id) else None, INVALID_REQUEST, "Invalid Request")
        if not isinstance(method, str) or (has_id and not _valid_id(msg_id)):
            return _error(msg_id if _valid_id(msg_id) else None, INVALID_REQUEST, "Invalid Request")
        params = message.get("params", {})
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return _error(msg_id, INVALID_PARAMS, "params must be an object") if has_id else None
        if not has_id:
            self._notification(method, params)
            return None
        try:
            return _ok(msg_id, self._request(method, params))
        except _Refused as exc:
            return _error(msg_id, exc.code, exc.message)
        except RemoteError as exc:
            return _error(msg_id, exc.code, exc.message)
        except MCPError as exc:
            return _error(msg_id, INTERNAL_ERROR, str(exc))
        except Exception:  # noqa: BLE001 - a host callback failed: answer, log, carry on
            log.exception("MCP App bridge: the host's handler for %s failed", method)
            return _error(msg_id, INTERNAL_ERROR, "Internal error")

    def _request(self, method: str, params: JSON) -> Any:
        if method == "ping":
            return {}
        if method == "ui/initialize":
            return self._initialize(params)
        if not self._initialize_answered:
            raise _Refused(INVALID_REQUEST, "send ui/initialize first")
        if method == "tools/call":
            return self._call_tool(params)
        if method == "resources/read":
            return self._read_resource(params)
        cb = self.callbacks
        if method == "ui/open-link":
            url = params.get("url")
            if not isinstance(url, str) or urlsplit(url).scheme.lower() not in ("http", "https") or len(url) > 8192:
                raise _Refused(INVALID_PARAMS, "ui/open-link: url must be an http(s) URL")
            if cb.on_open_link is None:
                raise _Refused(METHOD_NOT_FOUND, "this host does not open links")
            return {} if cb.on_open_link(url) is not False else {"isError": True}
        if method == "ui/message":
            if cb.on_message is None:
                raise _Refused(METHOD_NOT_FOUND, "this host does not accept messages")
            if params.get("role") != "user" or not isinstance(params.get("content"), (list, dict)):
                raise _Refused(INVALID_PARAMS, "ui/message: role must be 'user' and content a list of blocks")
            answer = cb.on_message(params)
            if isinstance(answer, dict):
                return answer
            return {} if answer is not False else {"isError": True}
        if method == "ui/update-model-context":
            content, structured = params.get("content"), params.get("structuredContent")
            if (content is not None and not isinstance(content, list)) or (
                structured is not None and not isinstance(structured, dict)
            ):
                raise _Refused(INVALID_PARAMS, "ui/update-model-context: content is a list; structuredContent a dict")
            with self._lock:
                self.model_context = {k: v for k, v in params.items() if k in ("content", "structuredContent")}
            if cb.on_update_model_context is not None:
                cb.on_update_model_context(dict(self.model_context))
            return {}
        if method == "ui/request-display-mode":
            return self._display_mode(params)
        if method == "ui/download-file":
            contents = params.get("contents")
            if not isinstance(contents, list) or not all(isinstance(c, dict) for c in contents):
                raise _Refused(INVALID_PARAMS, "ui/download-file: contents must be a list of resources")
            if cb.on_download_file is None:
                raise _Refused(METHOD_NOT_FOUND, "this host does not download files")
            return {} if cb.on_download_file(contents) is not False else {"isError": True}
        raise _Refused(METHOD_NOT_FOUND, "Method not found: %s" % method[:100])

    def _initialize(self, params: JSON) -> JSON:
        info, caps = params.get("appInfo"), params.get("appCapabilities")
        version = params.get("protocolVersion")
        with self._lock:
            if self._initialize_answered:  # a second ui/initialize: another View (a reload) took over
                self.begin_view()
            self.app_info = dict(info) if isinstance(info, dict) else {}
            self.app_capabilities = dict(caps) if isinstance(caps, dict) else {}
            self._initialize_answered = True
            context = dict(self._context)
        agreed = version if version in SUPPORTED_PROTOCOL_VERSIONS else APPS_PROTOCOL_VERSION
        return {
            "protocolVersion": agreed,
            "hostInfo": dict(self.host_info),
            "hostCapabilities": self.host_capabilities(),
            "hostContext": context,
        }

    def _call_tool(self, params: JSON) -> JSON:
        name, arguments = params.get("name"), params.get("arguments", {})
        if not isinstance(name, str) or not name:
            raise _Refused(INVALID_PARAMS, "tools/call: name is required")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise _Refused(INVALID_PARAMS, "tools/call: arguments must be an object")
        tool = self.client.get_tool(name)
        relist = False
        if tool is None:
            with self._lock:  # one relist per interval, whichever thread asks: a View naming junk cannot flood it
                now = time.monotonic()
                if now - self._last_relist >= RELIST_INTERVAL:
                    self._last_relist, relist = now, True
        if relist:
            self.client.list_tools(timeout=self.timeout)
            tool = self.client.get_tool(name)
        if tool is None and not self.allow_unlisted_tools:
            raise _Refused(INVALID_PARAMS, "Unknown tool: %s" % name[:100])
        if tool is None:
            log.debug(
                "MCP App on %s calls %r, which the server does not list; the server decides", self.client.name, name
            )
        elif not tool.visible_to_app:
            log.warning("MCP App on %s tried to call model-only tool %r; refused", self.client.name, name)
            raise _Refused(INVALID_PARAMS, "tool %s is not visible to apps (MCP Apps visibility)" % name)
        approve = self.callbacks.approve_tool_call
        if approve is not None and not approve(name, dict(arguments)):
            raise _Refused(INVALID_PARAMS, "the host refused the call to %s" % name)
        kwargs: JSON = {} if self.timeout is None else {"timeout": self.timeout}
        result: CallToolResult = self.client.call_tool(name, arguments, **kwargs)
        return dict(result.raw)

    def _read_resource(self, params: JSON) -> JSON:
        uri = params.get("uri")
        if not isinstance(uri, str) or not uri:
            raise _Refused(INVALID_PARAMS, "resources/read: uri is required")
        allow = self.callbacks.allow_resource
        if allow is not None and not allow(uri):
            raise _Refused(INVALID_PARAMS, "the host refused to read %s" % uri[:200])
        kwargs: JSON = {} if self.timeout is None else {"timeout": self.timeout}
        return dict(self.client.read_resource(uri, **kwargs).raw)

    def _display_mode(self, params: JSON) -> JSON:
        mode = params.get("mode")
        with self._lock:
            current = str(self._context.get("displayMode", self.display_modes[0]))
            app_modes = self.app_capabilities.get("availableDisplayModes")
        if not isinstance(mode, str) or mode not in self.display_modes:
            return {"mode": current}
        if isinstance(app_modes, list) and mode not in app_modes:
            return {"mode": current}  # MUST NOT switch to a mode the View did not declare
        result = mode
        if self.callbacks.on_display_mode is not None:
            answer = self.callbacks.on_display_mode(mode)
            result = answer if isinstance(answer, str) and answer in self.display_modes else current
        if result != current:
            self.set_host_context(displayMode=result)
        return {"mode": result}

    def _notification(self, method: str, params: JSON) -> None:
        cb = self.callbacks
        if method == "ui/notifications/initialized":
            self._open()
        elif method == "ui/notifications/size-changed":
            width, height = _number(params.get("width")), _number(params.get("height"))
            with self._lock:
                self.size = (width, height)
            if cb.on_size_change is not None and (width is not None or height is not None):
                self._safely(cb.on_size_change, width, height)
        elif method == "notifications/message":
            if cb.on_log is not None:
                self._safely(cb.on_log, params)
            else:
                view_log.info("%s: %r", params.get("logger") or "view", params.get("data"))
        elif method == "ui/notifications/request-teardown":
            if cb.on_request_teardown is not None:
                self._safely(cb.on_request_teardown)
        else:
            log.debug("MCP App bridge: ignoring notification %s", method[:100])

    @staticmethod
    def _safely(fn: Callable[..., Any], *args: Any) -> None:
        try:
            fn(*args)
        except Exception:  # noqa: BLE001 - a host callback failed: log, carry on
            log.exception("MCP App bridge: a host callback failed")

    def _response(self, message: JSON) -> None:
        with self._lock:
            waiter = self._requests.get(message.get("id"))  # type: ignore[arg-type]
        if waiter is None:
            log.debug("MCP App bridge: a response to no request of ours (id %r)", message.get("id"))
            return
        waiter[1].append(message)
        waiter[0].set()

    # ------------------------------------------------------------------ Host -> View

    def _open(self) -> None:
        with self._lock:
            if self._initialized.is_set():
                return
            self._initialized.set()
            while self._pending:
                self._deliver(self._pending.popleft())

    def _send(self, method: str, params: JSON) -> None:
        message: JSON = {"jsonrpc": "2.0", "method": method, "params": params}
        with self._lock:
            if self._closed:
                return
            self._remember(message)
            if self._initialized.is_set():
                self._deliver(message)
                return
            if len(self._pending) >= self.max_pending:
                partial = "ui/notifications/tool-input-partial"
                victim = next((m for m in self._pending if m.get("method") == partial), None)
                if victim is not None:
                    self._pending.remove(victim)
                else:
                    self._pending.popleft()
                    self._warn_drop(
                        "more than %d messages before the View initialized; dropped the oldest" % self.max_pending
                    )
            self._pending.append(message)

    def _remember(self, message: JSON) -> None:
        """Keep what a View that takes over later must be sent again (called with the lock held)."""
        method = message["method"]
        if method == "ui/notifications/tool-input":
            self._replay = {"input": message}  # a new call: its result is not the old one
        elif method == "ui/notifications/tool-input-partial":
            previous = self._replay.get("input")
            if "result" in self._replay or (previous is not None and previous["method"] != method):
                self._replay = {}  # a partial after a complete input or a result: a new call has begun
            self._replay["input"] = message  # only the newest partial matters
        elif method in ("ui/notifications/tool-result", "ui/notifications/tool-cancelled"):
            self._replay["result"] = message

    def begin_view(self) -> int:
        """A new View takes over this channel (a reload, a second tab): what the old View was not sent yet is
        dropped, a request it had not answered (``teardown``) gives up, the current reader's claim ends (see
        :meth:`claim_outgoing`), and the new View, once initialized, is sent the tool input and result again.
        Called by the bridge itself on a second ``ui/initialize``; a transport that can tell Views apart calls it
        as soon as it sees a new one. Returns how many Views took over so far. Thread-safe; never blocks."""
        with self._lock:
            if self._closed:
                return self._views
            self._views += 1
            self._initialized.clear()
            self._initialize_answered = False
            self._outbox.clear()
            self._sent.clear()
            self._claim += 1  # no reader holds the outbox until the new View's transport claims it
            for event, _ in self._requests.values():
                event.set()
            self._pending = collections.deque(self._replay[k] for k in ("input", "result") if k in self._replay)
            self._out_ready.notify_all()
            log.info(
                "MCP App bridge for %s: a new View took over (%d)", self.tool.name if self.tool else "?", self._views
            )
            return self._views

    @property
    def views(self) -> int:
        """How many times a new View took over this channel (0: still the first View)."""
        return self._views

    def claim_outgoing(self, after: Optional[int] = None) -> Tuple[int, List[Tuple[int, JSON]]]:
        """Make the caller the one reader of the outbox (a transport whose connection to the View opened again);
        a previous reader's :meth:`take_outgoing` returns None from now on. Returns the claim and the messages a
        previous reader took after sequence number ``after`` (the last one the View is known to have received;
        None: nothing is handed again), oldest first, as ``(seq, message)``. Thread-safe; never blocks."""
        with self._lock:
            self._claim += 1
            self._out_ready.notify_all()
            again: List[Tuple[int, JSON]] = []
            if after is not None:
                again = [(seq, m) for seq, m in self._sent if seq > after]
                oldest = self._sent[0][0] if self._sent else self._seq + 1
                if after + 1 < oldest and after < self._seq:
                    log.warning(
                        "MCP App bridge: a reconnecting View missed messages older than the last %d", len(self._sent)
                    )
            return self._claim, again

    def holds_claim(self, claim: int) -> bool:
        """Whether ``claim`` (from :meth:`claim_outgoing`) is still the outbox's reader."""
        with self._lock:
            return claim == self._claim and not self._closed

    def take_outgoing(self, claim: int, timeout: Optional[float] = None) -> Optional[Tuple[int, JSON]]:
        """Like :meth:`next_outgoing` for the holder of ``claim``: ``(seq, message)``, or None on timeout, on
        close, or at once when another reader claimed the outbox or a new View took over (nothing is taken then).
        Blocks up to ``timeout`` seconds; thread-safe."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while True:
                if self._closed or claim != self._claim:
                    return None
                if self._outbox:
                    return self._take()
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                self._out_ready.wait(remaining)

    def _take(self) -> Tuple[int, JSON]:
        self._seq += 1
        message = self._outbox.popleft()
        self._sent.append((self._seq, message))
        return self._seq, message

    def _deliver(self, message: JSON) -> None:
        with self._lock:
            if len(self._outbox) >= self.max_outbox:
                self._outbox.popleft()
                self._warn_drop("the View is not reading; dropped its oldest undelivered message")
            self._outbox.append(message)
            self._out_ready.notify_all()

    def _warn_drop(self, text: str) -> None:
        now = time.monotonic()
        if now - self._dropped_warned > 5.0:
            self._dropped_warned = now
            log.warning("MCP App bridge: %s", text)

    def next_outgoing(self, timeout: Optional[float] = None) -> Optional[JSON]:
        """The next message for the View, waiting up to ``timeout`` seconds (None: forever, until :meth:`close`);
        None when there is none (or the bridge closed). For the transport's sending loop; thread-safe."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._lock:
            while not self._outbox:
                if self._closed:
                    return None
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return None
                self._out_ready.wait(remaining)
            return self._take()[1]

    def send_tool_input(self, arguments: JSON) -> None:
        """``ui/notifications/tool-input``: the complete arguments of the tool call (send it once)."""
        self._send("ui/notifications/tool-input", {"arguments": dict(arguments)})

    def send_tool_input_partial(self, arguments: JSON) -> None:
        """``ui/notifications/tool-input-partial``: arguments so far, while they stream."""
        self._send("ui/notifications/tool-input-partial", {"arguments": dict(arguments)})

    def send_tool_result(self, result: Union[CallToolResult, JSON]) -> None:
        """``ui/notifications/tool-result``: the whole ``CallToolResult`` (``structuredContent`` and ``_meta``)."""
        raw = result.raw if isinstance(result, CallToolResult) else result
        self._send("ui/notifications/tool-result", dict(raw))

    def send_tool_cancelled(self, reason: str = "") -> None:
        """``ui/notifications/tool-cancelled``: the tool call was cancelled."""
        self._send("ui/notifications/tool-cancelled", {"reason": reason} if reason else {})

    def set_host_context(self, **changes: Any) -> None:
        """Update the ``hostContext`` and send the keys that changed (``ui/notifications/host-context-changed``)."""
        with self._lock:
            diff = {k: v for k, v in changes.items() if self._context.get(k) != v}
            if not diff:
                return
            self._context.update(diff)
        self._send("ui/notifications/host-context-changed", diff)

    def call_tool(self, arguments: Optional[JSON] = None, *, timeout: Optional[float] = None) -> CallToolResult:
        """Run this bridge's tool for the host (the model's call): send the View the input, call the server,
        send the result (or ``tool-cancelled`` when the call fails) and return it. Blocks for the call."""
        if self.tool is None:
            raise ValueError("this bridge has no tool")
        args = dict(arguments or {})
        self.send_tool_input(args)
        kwargs: JSON = {}
        if timeout is not None or self.timeout is not None:
            kwargs["timeout"] = timeout if timeout is not None else self.timeout
        try:
            result: CallToolResult = self.client.call_tool(self.tool.name, args, **kwargs)
        except MCPError as exc:
            self.send_tool_cancelled(str(exc)[:500])
            raise
        self.send_tool_result(result)
        return result

    def teardown(self, timeout: float = 5.0) -> bool:
        """Send ``ui/resource-teardown`` and wait up to ``timeout`` seconds for the View's answer (it saves its
        state); returns whether it answered. A View never initialized is not asked. Does not close the bridge."""
        if not self._initialized.is_set():
            return False
        msg_id = next(self._ids)
        event: threading.Event = threading.Event()
        box: List[JSON] = []
        with self._lock:
            if self._closed:
                return False
            self._requests[msg_id] = (event, box)
            self._deliver({"jsonrpc": "2.0", "id": msg_id, "method": "ui/resource-teardown", "params": {}})
        try:
            return event.wait(timeout) and bool(box) and "result" in box[0]
        finally:
            with self._lock:
                self._requests.pop(msg_id, None)

    def close(self, timeout: float = 5.0) -> None:
        """Stop: no callback runs after this returns, the worker thread is joined (up to ``timeout``), waiting
        :meth:`next_outgoing` calls return None. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._out_ready.notify_all()
            worker = self._worker
            for event, _ in self._requests.values():
                event.set()
        if worker is not None:
            while True:
                try:
                    self._inbox.put_nowait(None)
                    break
                except queue.Full:
                    try:
                        self._inbox.get_nowait()
                    except queue.Empty:
                        pass
            if worker is not threading.current_thread():
                worker.join(timeout)

    def __enter__(self) -> "AppBridge":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
