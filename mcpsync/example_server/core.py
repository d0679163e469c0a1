"""Transport-independent core of the mcpsync example MCP server (standard library only).

Mounting the core behind a transport
====================================

::

    from mcpsync.example_server import ExampleServer

    server = ExampleServer(era="auto", page_size=2)      # options: see Options below
    session = server.new_session(conn)                    # one per connection / legacy HTTP session
    session.handle(message_dict_or_list, conn)            # for every decoded frame from the client
    ...
    session.close()                                       # connection gone: cancels its work
    server.shutdown()                                     # process ending: ends listen streams gracefully

``conn`` is any object with a thread-safe ``send(message)`` method (see
:class:`Connection`); ``message`` is a dict or, for batches, a list of dicts.
``send`` may be called from several threads at once and must serialise
writes. An optional ``send_raw(data: bytes)`` lets a subclass (the test suite's) inject
invalid bytes. ``handle`` never blocks on tool work: each request runs on its
own thread and its response (or error) is sent through the ``conn`` that was
passed with it. Notifications (``initialized``, ``cancelled``) and the client's
responses to server requests (matched by id) are processed inline.

* stdio: one session for the process, ``new_session(stdout_conn)``.
* modern (2026-07-28) HTTP: each POST is one request and its response. Create a
  session per POST with ``new_session(post_conn)``, call ``handle``, stream
  whatever ``post_conn.send`` receives (progress/log notifications, then the
  response; a ``subscriptions/listen`` stays open until its response arrives),
  and ``session.close()`` when the client disconnects (that is cancellation).
* legacy HTTP: one session per ``Mcp-Session-Id``. Pass each POST's connection
  to ``session.handle(message, post_conn)``; responses, and the server requests
  a tool makes while serving that POST, go to ``post_conn``. The client's
  answers arrive in later POSTs through the same ``session.handle``. Call
  ``session.attach(get_stream_conn)`` for the optional GET stream (unsolicited
  list_changed / resources/updated / ping). ``session.initialized`` tells
  whether ``initialize`` was answered; ``session.protocol_version`` the version.

Era selection (``era=``): ``"legacy"`` (initialize handshake only),
``"modern"`` (stateless only), ``"auto"`` (both: ``initialize`` selects legacy
for the session, a request carrying ``_meta`` ``io.modelcontextprotocol/protocolVersion``
is served statelessly).
"""

from __future__ import annotations

import itertools
import logging
import threading
from typing import Any, Callable, Dict, List, Optional

from . import apps, catalog, tasks, tools
from .protocol import (
    ALL_VERSIONS,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LATEST_LEGACY,
    LEGACY_VERSIONS,
    LOG_LEVELS,
    META_CAPS,
    META_CLIENT_INFO,
    META_SERVER_INFO,
    META_SUBSCRIPTION,
    META_VERSION,
    METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY,
    MODERN_VERSIONS,
    RESOURCE_NOT_FOUND_LEGACY,
    SERVER_NAME,
    SERVER_TITLE,
    SERVER_VERSION,
    TASKS_EXTENSION,
    UNSUPPORTED_PROTOCOL_VERSION,
    RpcError,
    notification,
    result_response,
)
from .options import Options
from .session import DEFER, Connection, RequestContext, ServerSession

__all__ = ["Connection", "ExampleServer", "Options", "RequestContext", "ServerSession"]

logger = logging.getLogger("mcpsync.example_server")


class _Listen:
    __slots__ = ("session", "conn", "request_id", "honoured")

    def __init__(self, session: ServerSession, conn: Connection, request_id: Any, honoured: Dict[str, Any]) -> None:
        self.session = session
        self.conn = conn
        self.request_id = request_id
        self.honoured = honoured


Handler = Callable[["ExampleServer", RequestContext], Any]


class ExampleServer:
    """The example MCP server's protocol logic, shared by the stdio and HTTP fronts."""

    def __init__(self, era: str = "auto", **options: Any) -> None:
        self.options = Options(era=era, **options)
        self.counter = itertools.count(1)
        self.lock = threading.RLock()
        self.sessions: List[ServerSession] = []
        self.listens: List[_Listen] = []
        self.extra_tools: Dict[str, Dict[str, Any]] = {}
        self.extra_prompts: Dict[str, Dict[str, Any]] = {}
        self.extra_resources: Dict[str, Dict[str, Any]] = {}
        self.tasks = tasks.TaskStore(self)
        self._conn_sessions: Dict[int, ServerSession] = {}

    @property
    def era(self) -> str:
        return self.options.era

    # ------------------------------------------------------------------ sessions

    def new_session(self, conn: Optional[Connection] = None) -> ServerSession:
        """A new per-connection session (``conn`` is its default connection)."""
        session = ServerSession(self, conn)
        with self.lock:
            self.sessions.append(session)
        return session

    def handle(self, message: Any, conn: Connection) -> None:
        """Convenience: one session per ``conn`` object, created on first use."""
        with self.lock:
            session = self._conn_sessions.get(id(conn))
            if session is None:
                session = self._conn_sessions[id(conn)] = self.new_session(conn)
        session.handle(message, conn)

    def close_connection(self, conn: Connection) -> None:
        """Close the session :meth:`handle` created for ``conn``."""
        with self.lock:
            session = self._conn_sessions.pop(id(conn), None)
        if session is not None:
            session.close()

    def shutdown(self) -> None:
        """End listen streams gracefully and cancel running tasks."""
        self.end_listens()
        self.tasks.cancel_all()

    def _session_closed(self, session: ServerSession) -> None:
        with self.lock:
            if session in self.sessions:
                self.sessions.remove(session)
            self.listens = [lst for lst in self.listens if lst.session is not session]

    # ------------------------------------------------------------------ catalog mutations + broadcasts

    def add_tool(self, name: str) -> None:
        with self.lock:
            self.extra_tools[name] = tools.dynamic_tool_def(name)
        self._broadcast("notifications/tools/list_changed", "toolsListChanged")

    def add_prompt(self, name: str) -> None:
        with self.lock:
            self.extra_prompts[name] = catalog.dynamic_prompt_def(name)
        self._broadcast("notifications/prompts/list_changed", "promptsListChanged")

    def add_resource(self, uri: str, text: str) -> None:
        with self.lock:
            self.extra_resources[uri] = catalog.dynamic_resource(uri, text)
        self._broadcast("notifications/resources/list_changed", "resourcesListChanged")

    def _broadcast(self, method: str, listen_key: str) -> None:
        with self.lock:
            sessions = [s for s in self.sessions if s.initialized]
            listens = [lst for lst in self.listens if lst.honoured.get(listen_key)]
        for session in sessions:
            session.notify(method)
        for lst in listens:
            self._listen_send(lst, method, {})

    def resource_updated(self, uri: str) -> int:
        """Send notifications/resources/updated to legacy subscribers and listen streams. Returns the count."""
        with self.lock:
            sessions = [s for s in self.sessions if s.initialized and uri in s.subscriptions]
            listens = [lst for lst in self.listens if uri in (lst.honoured.get("resourceSubscriptions") or ())]
        for session in sessions:
            session.notify("notifications/resources/updated", {"uri": uri})
        for lst in listens:
            self._listen_send(lst, "notifications/resources/updated", {"uri": uri})
        return len(sessions) + len(listens)

    def task_status_changed(self, task_id: str, params: Dict[str, Any]) -> None:
        """Modern tasks: notifications/tasks to listen streams that asked for ``task_id``."""
        with self.lock:
            listens = [lst for lst in self.listens if task_id in (lst.honoured.get("taskIds") or ())]
        for lst in listens:
            self._listen_send(lst, "notifications/tasks", params)

    def _listen_send(self, lst: _Listen, method: str, params: Dict[str, Any]) -> None:
        params = dict(params)
        params["_meta"] = {META_SUBSCRIPTION: lst.request_id}
        lst.session.send_out([notification(method, params)], lst.conn)

    def end_listens(self) -> int:
        """Gracefully end every listen stream with a ``{resultType: complete}`` response."""
        with self.lock:
            ended, self.listens = self.listens, []
        for lst in ended:
            result = {"resultType": "complete", "_meta": {META_SUBSCRIPTION: lst.request_id}}
            lst.conn.send(result_response(lst.request_id, result))
        return len(ended)

    def _cancel_listen(self, session: ServerSession, request_id: Any) -> bool:
        with self.lock:
            keep = [lst for lst in self.listens if not (lst.session is session and lst.request_id == request_id)]
            ended = len(keep) != len(self.listens)
            self.listens = keep
        return ended

    # ------------------------------------------------------------------ capabilities

    def supported_versions(self) -> List[str]:
        if self.options.era == "modern":
            return list(MODERN_VERSIONS)
        if self.options.era == "legacy":
            return list(LEGACY_VERSIONS)
        return list(ALL_VERSIONS)

    def server_info(self) -> Dict[str, Any]:
        return {"name": SERVER_NAME, "title": SERVER_TITLE, "version": SERVER_VERSION}

    def capabilities(self, era: str, version: Optional[str]) -> Dict[str, Any]:
        caps: Dict[str, Any] = {
            "tools": {"listChanged": True},
            "prompts": {"listChanged": True},
            "resources": {"subscribe": True, "listChanged": True},
            "logging": {},
            "completions": {},
        }
        if era == "modern":
            if self.options.refuse_resource_subscriptions:
                caps["resources"]["subscribe"] = False
            if self.options.tasks:
                caps["extensions"] = {TASKS_EXTENSION: {}}
        elif self.options.tasks and version == "2025-11-25":
            caps["tasks"] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        return caps

    # ------------------------------------------------------------------ dispatch

    def _dispatch(self, session: ServerSession, msg: Dict[str, Any], conn: Connection, ev: threading.Event) -> Any:
        method = msg["method"]
        params = msg.get("params")
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise RpcError(INVALID_PARAMS, "params must be an object")
        meta = params.get("_meta")
        meta = meta if isinstance(meta, dict) else {}
        if method == "initialize":
            return self._initialize(session, params)
        era = self._era_for(session, method, meta)
        if era == "modern":
            return self._dispatch_modern(session, msg, params, meta, conn, ev)
        handler = LEGACY_HANDLERS.get(method)
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, "Method not found: %s" % method)
        if method != "ping":
            if not session.initialized:
                raise RpcError(INVALID_REQUEST, "Server not initialized: send initialize first")
            if self.options.strict_init and not session.ready:
                raise RpcError(INVALID_REQUEST, "Server not initialized: send notifications/initialized first")
        ctx = RequestContext(
            self, session, conn, msg, params, "legacy", session.protocol_version, session.client_capabilities, ev
        )
        return handler(self, ctx)

    def _era_for(self, session: ServerSession, method: str, meta: Dict[str, Any]) -> str:
        era = self.options.era
        if era != "auto":
            return era
        if META_VERSION in meta or method == "server/discover":
            return "modern"
        if session.initialized or method == "ping":
            return "legacy"
        return "modern"

    def _dispatch_modern(
        self,
        session: ServerSession,
        msg: Dict[str, Any],
        params: Dict[str, Any],
        meta: Dict[str, Any],
        conn: Connection,
        ev: threading.Event,
    ) -> Any:
        method = msg["method"]
        version = meta.get(META_VERSION)
        if not isinstance(version, str):
            raise RpcError(INVALID_PARAMS, "Missing _meta %s (or send initialize first)" % META_VERSION)
        if version not in MODERN_VERSIONS:
            raise RpcError(
                UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version: %s" % version,
                {"supported": self.supported_versions(), "requested": version},
            )
        caps = meta.get(META_CAPS)
        if not isinstance(caps, dict):
            raise RpcError(INVALID_PARAMS, "Missing _meta %s" % META_CAPS)
        handler = MODERN_HANDLERS.get(method)
        if handler is None:
            raise RpcError(METHOD_NOT_FOUND, "Method not found: %s" % method)
        ctx = RequestContext(self, session, conn, msg, params, "modern", version, caps, ev)
        result = handler(self, ctx)
        if result is DEFER:
            return result
        result.setdefault("resultType", "complete")
        result_meta = result.setdefault("_meta", {})
        result_meta.setdefault(META_SERVER_INFO, self.server_info())
        if method in CACHEABLE:
            result["ttlMs"] = max(0, int(self.options.ttl_ms))
            result["cacheScope"] = self.options.cache_scope
        return result

    # ------------------------------------------------------------------ lifecycle

    def _initialize(self, session: ServerSession, params: Dict[str, Any]) -> Dict[str, Any]:
        requested = params.get("protocolVersion")
        if self.options.era == "modern":
            raise RpcError(
                UNSUPPORTED_PROTOCOL_VERSION,
                "This server speaks only the stateless protocol %s; initialize is not supported"
                % ", ".join(MODERN_VERSIONS),
                {"supported": list(MODERN_VERSIONS), "requested": requested},
            )
        if not isinstance(requested, str):
            raise RpcError(INVALID_PARAMS, "initialize: protocolVersion is required")
        version = requested if requested in LEGACY_VERSIONS else LATEST_LEGACY
        caps = params.get("capabilities")
        info = params.get("clientInfo")
        with session.lock:
            session.initialized = True
            session.ready = False
            session.protocol_version = version
            session.client_capabilities = caps if isinstance(caps, dict) else {}
            session.client_info = info if isinstance(info, dict) else {}
            session.log_level = None
            session.subscriptions = set()
        return {
            "protocolVersion": version,
            "capabilities": self.capabilities("legacy", version),
            "serverInfo": self.server_info(),
            "instructions": self.options.instructions,
        }

    # ------------------------------------------------------------------ handlers shared by both eras

    def _h_ping(self, ctx: RequestContext) -> Dict[str, Any]:
        return {}

    def _h_discover(self, ctx: RequestContext) -> Dict[str, Any]:
        return {
            "supportedVersions": self.supported_versions(),
            "capabilities": self.capabilities("modern", None),
            "serverInfo": self.server_info(),
            "instructions": self.options.instructions,
            "_meta": {META_SERVER_INFO: self.server_info()},
        }

    def _paginate(self, items: List[Dict[str, Any]], params: Dict[str, Any], key: str) -> Dict[str, Any]:
        size = max(0, int(self.options.page_size or 0))
        cursor = params.get("cursor")
        if cursor is None:
            start = 0
        elif cursor == "":
            start = size or len(items)
        elif isinstance(cursor, str) and cursor.startswith("page-") and cursor[5:].isdigit():
            start = int(cursor[5:])
        else:
            raise RpcError(INVALID_PARAMS, "Invalid cursor")
        if not size:
            return {key: items[start:]}
        end = start + size
        result: Dict[str, Any] = {key: items[start:end]}
        if end < len(items):
            result["nextCursor"] = "" if end == size else "page-%d" % end
        return result

    def _h_tools_list(self, ctx: RequestContext) -> Dict[str, Any]:
        with self.lock:
            items = list(tools.TOOL_DEFS) + list(self.extra_tools.values())
        if self.options.apps:
            items += apps.APP_TOOL_DEFS
        if ctx.era == "legacy" and ctx.version != "2025-11-25":
            items = [{k: v for k, v in t.items() if k != "execution"} for t in items]
        return self._paginate(items, ctx.params, "tools")

    def _h_tools_call(self, ctx: RequestContext) -> Dict[str, Any]:
        params = ctx.params
        name = params.get("name")
        args = params.get("arguments")
        args = {} if args is None else args
        if not isinstance(name, str):
            raise RpcError(INVALID_PARAMS, "tools/call: name is required")
        with self.lock:
            definition = next((t for t in tools.TOOL_DEFS if t["name"] == name), None) or self.extra_tools.get(name)
        if definition is None and self.options.apps:
            definition = next((t for t in apps.APP_TOOL_DEFS if t["name"] == name), None)
        if definition is None:
            raise RpcError(INVALID_PARAMS, "Unknown tool: %s" % name)
        if not isinstance(args, dict):
            raise RpcError(INVALID_PARAMS, "tools/call: arguments must be an object")
        ctx.tool_name = name
        problem = tools.validate_arguments(definition["inputSchema"], args)
        if problem is not None:
            return tools.tool_result("Invalid arguments for %s: %s" % (name, problem), is_error=True)
        task_support = (definition.get("execution") or {}).get("taskSupport", "forbidden")
        if (
            ctx.era == "legacy"
            and isinstance(params.get("task"), dict)
            and "tasks" in self.capabilities("legacy", ctx.version)
        ):
            if task_support == "forbidden":
                raise RpcError(METHOD_NOT_FOUND, "Tool %s does not support task execution" % name)
            return self.tasks.create_legacy(ctx, args, params["task"])
        if (
            ctx.era == "modern"
            and task_support != "forbidden"
            and self.options.tasks
            and isinstance((ctx.client_caps.get("extensions") or {}).get(TASKS_EXTENSION), dict)
        ):
            return self.tasks.create_modern(ctx, args)
        fn = tools.TOOL_FUNCS.get(name) or (apps.APP_TOOL_FUNCS.get(name) if self.options.apps else None)
        fn = fn or tools.t_dynamic
        return fn(ctx, args)

    def _h_prompts_list(self, ctx: RequestContext) -> Dict[str, Any]:
        with self.lock:
            items = list(catalog.PROMPT_DEFS) + list(self.extra_prompts.values())
        return self._paginate(items, ctx.params, "prompts")

    def _h_prompts_get(self, ctx: RequestContext) -> Dict[str, Any]:
        name = ctx.params.get("name")
        if not isinstance(name, str):
            raise RpcError(INVALID_PARAMS, "prompts/get: name is required")
        args = ctx.params.get("arguments")
        with self.lock:
            extra = dict(self.extra_prompts)
        return catalog.prompt_messages(name, {} if args is None else args, extra)

    def _h_resources_list(self, ctx: RequestContext) -> Dict[str, Any]:
        with self.lock:
            items = [e["def"] for e in catalog.RESOURCES.values()] + [e["def"] for e in self.extra_resources.values()]
        if self.options.apps:
            items += [e["def"] for e in apps.APP_RESOURCES.values()]
        return self._paginate(items, ctx.params, "resources")

    def _h_templates_list(self, ctx: RequestContext) -> Dict[str, Any]:
        return self._paginate(list(catalog.TEMPLATE_DEFS), ctx.params, "resourceTemplates")

    def _h_resources_read(self, ctx: RequestContext) -> Dict[str, Any]:
        uri = ctx.params.get("uri")
        if not isinstance(uri, str):
            raise RpcError(INVALID_PARAMS, "resources/read: uri is required")
        app_page = apps.APP_RESOURCES.get(uri) if self.options.apps else None
        if app_page is not None:
            return {"contents": [dict({"uri": uri}, **app_page["contents"])]}
        with self.lock:
            extra = dict(self.extra_resources)
        contents = catalog.read_resource(uri, extra)
        if contents is None:
            code = INVALID_PARAMS if ctx.era == "modern" else RESOURCE_NOT_FOUND_LEGACY
            raise RpcError(code, "Resource not found", {"uri": uri})
        return {"contents": contents}

    def _h_subscribe(self, ctx: RequestContext) -> Dict[str, Any]:
        uri = ctx.params.get("uri")
        if not isinstance(uri, str):
            raise RpcError(INVALID_PARAMS, "uri is required")
        with ctx.session.lock:
            if ctx.msg["method"] == "resources/subscribe":
                ctx.session.subscriptions.add(uri)
            else:
                ctx.session.subscriptions.discard(uri)
        return {}

    def _h_complete(self, ctx: RequestContext) -> Dict[str, Any]:
        with self.lock:
            extra = dict(self.extra_prompts)
        return catalog.complete(ctx.params.get("ref"), ctx.params.get("argument"), ctx.params.get("context"), extra)

    def _h_set_level(self, ctx: RequestContext) -> Dict[str, Any]:
        level = ctx.params.get("level")
        if level not in LOG_LEVELS:
            raise RpcError(INVALID_PARAMS, "Invalid log level: %r" % (level,))
        ctx.session.log_level = level
        return {}

    def _h_listen(self, ctx: RequestContext) -> Any:
        wanted = ctx.params.get("notifications")
        wanted = {} if wanted is None else wanted
        if not isinstance(wanted, dict):
            raise RpcError(INVALID_PARAMS, "subscriptions/listen: notifications must be an object")
        honoured: Dict[str, Any] = {}
        for key in ("toolsListChanged", "promptsListChanged", "resourcesListChanged"):
            if wanted.get(key) is True:
                honoured[key] = True
        uris = wanted.get("resourceSubscriptions")
        if isinstance(uris, list) and not self.options.refuse_resource_subscriptions:
            honoured["resourceSubscriptions"] = [u for u in uris if isinstance(u, str)]
        task_ids = wanted.get("taskIds")
        if isinstance(task_ids, list):
            if not isinstance((ctx.client_caps.get("extensions") or {}).get(TASKS_EXTENSION), dict):
                raise RpcError(
                    MISSING_CLIENT_CAPABILITY,
                    "Missing required client capability",
                    {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
                )
            if self.options.tasks:
                honoured["taskIds"] = [t for t in task_ids if isinstance(t, str)]
        lst = _Listen(ctx.session, ctx.conn, ctx.request_id, honoured)
        with self.lock:  # ack first, then register, under the lock: nothing can precede the ack
            self._listen_send(lst, "notifications/subscriptions/acknowledged", {"notifications": honoured})
            self.listens.append(lst)
        return DEFER


CACHEABLE = frozenset(
    ["server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"]
)

_COMMON: Dict[str, Handler] = {
    "tools/list": ExampleServer._h_tools_list,
    "tools/call": ExampleServer._h_tools_call,
    "prompts/list": ExampleServer._h_prompts_list,
    "prompts/get": ExampleServer._h_prompts_get,
    "resources/list": ExampleServer._h_resources_list,
    "resources/templates/list": ExampleServer._h_templates_list,
    "resources/read": ExampleServer._h_resources_read,
    "completion/complete": ExampleServer._h_complete,
}

LEGACY_HANDLERS: Dict[str, Handler] = dict(_COMMON)
LEGACY_HANDLERS.update(
    {
        "ping": ExampleServer._h_ping,
        "resources/subscribe": ExampleServer._h_subscribe,
        "resources/unsubscribe": ExampleServer._h_subscribe,
        "logging/setLevel": ExampleServer._h_set_level,
        "tasks/get": lambda server, ctx: server.tasks.legacy_get(ctx),
        "tasks/result": lambda server, ctx: server.tasks.legacy_result(ctx),
        "tasks/list": lambda server, ctx: server.tasks.legacy_list(ctx),
        "tasks/cancel": lambda server, ctx: server.tasks.legacy_cancel(ctx),
    }
)

MODERN_HANDLERS: Dict[str, Handler] = dict(_COMMON)
MODERN_HANDLERS.update(
    {
        "server/discover": ExampleServer._h_discover,
        "subscriptions/listen": ExampleServer._h_listen,
        "tasks/get": lambda server, ctx: server.tasks.modern_get(ctx),
        "tasks/update": lambda server, ctx: server.tasks.modern_update(ctx),
        "tasks/cancel": lambda server, ctx: server.tasks.modern_cancel(ctx),
    }
)

# Silence "imported but unused" for names re-exported for convenience.
_ = META_CLIENT_INFO
