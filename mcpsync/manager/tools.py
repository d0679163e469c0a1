"""The manager's tools: the name table over every server's tools, listing (``tools``, ``tools_for``), refreshing
on ``list_changed``, and calling by exposed name. Mixed into :class:`mcpsync.manager.Manager`, whose connection
machinery it uses (declared below). Thread-safe as the Manager is.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

from .._threads import spawn
from ..errors import ConfigError, ConnectionClosed, InputNotResumable, MCPError, ToolDenied
from ..session import DEFAULT, Timeout
from ..types import CallToolResult, ProgressEvent, Tool
from . import adapters as _adapters
from .naming import NameTable
from .records import CONNECTED, UnknownTool, _Events, _Server

if TYPE_CHECKING:  # pragma: no cover
    from ..client.client import Client
    from ..client.deferred import InputRequired

__all__ = ["ToolMethods"]

log = logging.getLogger("mcpsync.manager.manager")

ServerTool = _adapters.ServerTool


class ToolMethods:
    """Every server's tools under one name table (mixed into :class:`mcpsync.manager.Manager`)."""

    _lock: "threading.RLock"
    _servers: Dict[str, _Server]
    _closed: bool
    _version: int
    _table_cache: Optional[Tuple[int, NameTable, Dict[str, "_adapters.ServerTool"]]]
    _events: _Events

    def _record(self, name: str) -> _Server:  # pragma: no cover - provided by Manager
        raise NotImplementedError

    def _records(self) -> List[_Server]:  # pragma: no cover - provided by Manager
        raise NotImplementedError

    def _ensure_all(self) -> List[_Server]:  # pragma: no cover - provided by Manager
        raise NotImplementedError

    def _client_for(self, rec: _Server, *, targeted: bool = True) -> "Client":  # pragma: no cover
        raise NotImplementedError

    def _mark_lost(self, rec: _Server, exc: BaseException) -> None:  # pragma: no cover - provided by Manager
        raise NotImplementedError

    def _bump(self) -> None:  # pragma: no cover - provided by Manager
        raise NotImplementedError

    @staticmethod
    def _list_tools(client: Any, timeout: float) -> List[Tool]:  # pragma: no cover - provided by Manager
        raise NotImplementedError

    def _table(self) -> Tuple[NameTable, Dict[str, ServerTool]]:
        with self._lock:
            version, cached = self._version, self._table_cache
            if cached is not None and cached[0] == version:
                return cached[1], cached[2]
            records = list(self._servers.values())
        known: List[Tuple[str, Tool]] = []
        for rec in records:
            with rec.lock:
                known += [(rec.config.name, t) for t in rec.tools or []]
        table = NameTable((s, t.name) for s, t in known)
        by_name = {}
        for server, tool in known:
            exposed = table.name_for(server, tool.name)
            by_name[exposed] = ServerTool(exposed, server, tool, _adapters.object_schema(tool.input_schema))
        with self._lock:
            if self._version == version:
                self._table_cache = (version, table, by_name)
        return table, by_name

    def tools(self, server: Optional[str] = None, *, audience: Optional[str] = None) -> List[ServerTool]:
        """Every connected server's tools as :class:`~mcpsync.manager.adapters.ServerTool` (exposed name, server,
        original :class:`~mcpsync.Tool`, converted input schema), sorted by name.

        ``audience``: None (every tool), ``"model"`` (MCP Apps app-only tools left out: what a model may see)
        or ``"app"`` (model-only tools left out).

        Served from the cache (no request) once servers are connected; connects lazy
        servers and restarts lost ones first, which blocks up to their connect bound.
        """
        if audience not in (None, "model", "app"):
            raise ConfigError("audience must be None, 'model' or 'app'")
        records = self._ensure_all() if server is None else [self._record(server)]
        if server is not None:
            try:
                self._client_for(records[0])
            except MCPError:
                return []
        live = set()
        for rec in records:
            with rec.lock:
                if rec.status.status == CONNECTED:
                    live.add(rec.config.name)
        _, by_name = self._table()
        return [
            t
            for name, t in sorted(by_name.items())
            if t.server in live
            and (audience is None or (t.tool.visible_to_model if audience == "model" else t.tool.visible_to_app))
        ]

    def tools_for(self, provider: str, *, strict: bool = False, server: Optional[str] = None) -> List[Dict[str, Any]]:
        """The tools as ready-to-send definitions for ``provider`` (``openai``, ``openai-responses``,
        ``anthropic``); see :func:`mcpsync.manager.adapters.tool_definitions`. MCP Apps app-only tools are
        never included (a model must not see them)."""
        return _adapters.tool_definitions(self.tools(server, audience="model"), provider, strict=strict)

    def refresh_tools(self, name: Optional[str] = None) -> None:
        """Re-list the tools of one or every connected server now (blocks; the previous list is kept on error)."""
        for rec in [self._record(name)] if name is not None else self._records():
            with rec.lock:
                client, generation = rec.client, rec.generation
                if rec.status.status != CONNECTED or client is None:
                    continue
            self._refresh_once(rec, client, generation)

    def _refresh_once(self, rec: _Server, client: Any, generation: int) -> bool:
        try:
            tools = self._list_tools(client, float(rec.config.connect_timeout))
        except MCPError as exc:
            log.warning(
                "server %s: refreshing the tool list failed (%s); keeping the previous list", rec.config.name, exc
            )
            return False
        with rec.lock:
            if rec.generation != generation:
                return False
            rec.tools = tools
        self._bump()
        self._events.emit("tools_changed", rec.config.name)
        return True

    def _tools_changed(self, rec: _Server, generation: int) -> None:
        """list_changed arrived (client dispatch thread): refresh in the background, coalesced."""
        with rec.lock:
            if rec.generation != generation or self._closed:
                return
            rec.refresh_dirty = True
            if rec.refresh_thread is not None:
                return
            rec.refresh_thread = spawn(
                "mcpsync-manager-refresh:%s" % rec.config.name, self._refresh_worker, rec, generation
            )

    def _refresh_worker(self, rec: _Server, generation: int) -> None:
        while True:
            with rec.lock:
                if not rec.refresh_dirty or rec.generation != generation or self._closed or rec.client is None:
                    rec.refresh_thread = None
                    return
                rec.refresh_dirty = False
                client = rec.client
            self._refresh_once(rec, client, generation)

    def _route(self, name: str, server: Optional[str]) -> Tuple[_Server, str]:
        if server is not None:
            return self._record(server), name
        table, _ = self._table()
        pair = table.resolve(name)
        if pair is None:
            self._ensure_all()
            table, _ = self._table()
            pair = table.resolve(name)
        if pair is None:
            raise UnknownTool("no server offers a tool named %r" % name)
        return self._record(pair[0]), pair[1]

    def call_tool(
        self,
        name: str,
        arguments: Optional[Dict[str, Any]] = None,
        *,
        server: Optional[str] = None,
        timeout: Timeout = DEFAULT,
        progress: Optional[Callable[[ProgressEvent], object]] = None,
        meta: Optional[Dict[str, Any]] = None,
        defer_input: Optional[bool] = None,
        max_total_timeout: Timeout = DEFAULT,
    ) -> CallToolResult:
        """Call a tool by its exposed name (``{server}_{tool}``), or by its own name on ``server``.

        Blocks until the result. ``timeout`` (default: the server's configured
        ``timeout``, 30 s) is an idle timeout restarted by progress notifications;
        ``max_total_timeout`` (default: the client's, none) caps the whole call.
        A dead stdio server is restarted first (backoff permitting); a call that
        was sent is never retried. Raises :class:`UnknownTool`, the client's errors
        (:class:`~mcpsync.RequestTimeout`, :class:`~mcpsync.errors.ConnectionClosed`...),
        or :class:`~mcpsync.errors.ConnectError` when the server is unavailable. ``defer_input`` as in
        :meth:`mcpsync.Client.call_tool`: :class:`~mcpsync.input.InputRequired` goes to :meth:`resume`.
        """
        rec, tool = self._route(name, server)
        client = self._client_for(rec)
        idle = rec.config.timeout if timeout is DEFAULT else timeout
        try:
            result = client.call_tool(
                tool,
                arguments or {},
                timeout=idle,
                max_total_timeout=max_total_timeout,
                progress=progress,
                meta=meta,
                defer_input=defer_input,
            )
        except ConnectionClosed as exc:
            with rec.lock:
                if rec.client is client and rec.status.status == CONNECTED:
                    self._mark_lost(rec, exc)
            raise
        rec.served_by(client)  # this connection proved itself: the failure count resets
        return result

    def resume(
        self, input_required: "InputRequired", answers: Optional[Dict[str, Any]] = None, *, timeout: Timeout = DEFAULT
    ) -> Any:
        """Continue a deferred call (:class:`~mcpsync.input.InputRequired`) on the server it came from
        (``input_required.server``, a configured server's name). See :meth:`mcpsync.Client.resume`."""
        if input_required.server is None:
            raise InputNotResumable("this input request names no server")
        rec = self._record(input_required.server)
        return self._client_for(rec).resume(input_required, answers, timeout=timeout)

    def input_schema(self, name: str) -> Optional[Dict[str, Any]]:
        """The original input schema of the tool exposed as ``name`` (None when unknown). No I/O."""
        _, by_name = self._table()
        tool = by_name.get(name)
        return tool.tool.input_schema if tool is not None else None

    def call_from_tool_call(
        self, tool_call: Any, *, provider: Optional[str] = None, raise_errors: bool = False
    ) -> Dict[str, Any]:
        """Execute an OpenAI / Responses / Anthropic tool call; return that provider's tool-result shape.

        Blocks for the call. Failures become an error result the model can read
        (see :func:`mcpsync.manager.adapters.execute_tool_call`) unless ``raise_errors``. A call to an MCP Apps
        app-only tool (``_meta.ui.visibility`` without ``"model"``) is refused with :class:`~mcpsync.ToolDenied`
        and never sent: a model cannot have seen it.
        """

        def call(name: str, arguments: Dict[str, Any]) -> CallToolResult:
            rec, original = self._route(name, None)
            with rec.lock:
                listed = {t.name: t for t in rec.tools or []}
            tool = listed.get(original)
            if tool is not None and not tool.visible_to_model:
                raise ToolDenied(
                    "tool %r is app-only (MCP Apps visibility); a model may not call it" % name,
                    tool=name,
                    reason="app-only",
                    by="visibility",
                    server=rec.config.name,
                    method="tools/call",
                )
            return self.call_tool(original, arguments, server=rec.config.name)

        return _adapters.execute_tool_call(
            tool_call,
            call,
            provider=provider,
            schema_for=self.input_schema,
            raise_errors=raise_errors,
        )
