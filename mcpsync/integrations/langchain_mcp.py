"""``langchain.mcp``'s ``MCPAdapter`` shape over mcpsync (``pip install mcpsync[langchain]``).

LangChain's own MCP support (``langchain.mcp.MCPAdapter``, over FastMCP and the ``mcp`` SDK) takes a target --
a URL, a local server script, or a configuration of servers -- and gives LangChain tools. This class takes the
same targets and gives the same kind of tools, so moving is one line::

    # from langchain.mcp import MCPAdapter
    from mcpsync.integrations.langchain_mcp import MCPAdapter

    async with MCPAdapter({"mcpServers": {...}}) as adapter:
        agent = create_agent(model, await adapter.list_tools())
        result = await agent.ainvoke({"messages": [{"role": "user", "content": "..."}]})

    with MCPAdapter("https://example.com/mcp") as adapter:      # no event loop needed
        agent = create_agent(model, adapter.list_tools_sync())

The tools are :func:`~mcpsync.integrations.langchain.langchain_tool`'s ``StructuredTool``: ``invoke`` and
``ainvoke``, ``response_format="content_and_artifact"``, errors as a ``ToolMessage`` with ``status="error"``.
Where it differs from ``langchain.mcp`` (docs/guides/frameworks.md): the tools work synchronously too; a timeout, a
denied call, invalid arguments and a dead server reach the model as an error message too (not only
``isError`` results); the tools use the adapter's connection, so call them before the adapter closes
(``langchain.mcp`` reconnects for each call); a configuration of several servers names tools
``{server}_{tool}``; a server asking for input mid-call is answered by the Client's elicitation handler
(``client_options``), not a LangGraph ``interrupt()``.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path
from typing import Any, List, Mapping, Optional

from ..errors import ConfigError
from .core import McpToolkit, toolkit_of
from .langchain import langchain_tool

__all__ = ["MCPAdapter"]


def _source(target: Any, client_options: Mapping[str, Any]) -> Any:
    """A new (unopened) Client or Manager for ``target``."""
    from ..client.client import Client
    from ..manager.flat import grouped
    from ..manager.manager import Manager

    if isinstance(target, str):
        if not target.startswith(("http://", "https://")):
            raise ConfigError(
                "MCP target %r is not an http(s) URL; a local server is a Path, a command list, or a "
                "configuration of servers (a string is never run as a program)" % target
            )
        return Client(target, **grouped(client_options, remote=True))
    if isinstance(target, Path):
        runner = {".py": [sys.executable], ".js": ["node"], ".mjs": ["node"]}
        command = runner.get(target.suffix.lower())
        if command is None:
            raise ConfigError("cannot tell how to run %s: give a command list instead" % target)
        return Client(command + [str(target)], **grouped(client_options, remote=False))
    if isinstance(target, (list, tuple)):
        return Client([str(part) for part in target], **grouped(client_options, remote=False))
    if isinstance(target, Mapping):
        return Manager(dict(target), client_options=client_options or None)
    raise ConfigError("unsupported MCP target: %s" % type(target).__name__)


class MCPAdapter:
    """MCP servers' tools as LangChain tools, in ``langchain.mcp.MCPAdapter``'s shape.

    Args:
        target: an ``http(s)://`` URL (a string is never run as a program), a ``Path`` to a local server
            script (``.py`` runs with this Python, ``.js`` with node), a command list, a configuration of
            servers (any format :class:`~mcpsync.Manager` reads: ``{"mcpServers": {...}}``...), or an open
            :class:`~mcpsync.Client` / :class:`~mcpsync.Manager` (which the adapter then does not close).
        client_options: :class:`~mcpsync.Client` keyword arguments for the connections the adapter makes; flat
            names (``cwd``, ``verify``, ``disabled_tools``...) are accepted as in a :class:`~mcpsync.Manager`'s
            ``client_options`` and gathered into their option groups.
        options: :class:`~mcpsync.integrations.core.McpToolkit`'s (``timeout``, ``max_result_chars``,
            ``transforms``...).

    The adapter connects on ``with`` / ``async with`` (or on the first ``list_tools``) and closes on leaving
    the block or on :meth:`close`; ``async with`` connects and closes on a worker thread. Thread-safe.
    """

    def __init__(self, target: Any, *, client_options: Optional[Mapping[str, Any]] = None, **options: Any) -> None:
        from ..client.client import Client
        from ..manager.manager import Manager

        self._lock = threading.Lock()
        self._closed = False
        self._owned = not isinstance(target, (Client, Manager))
        self._opened = not self._owned
        self._source: Any = _source(target, client_options or {}) if self._owned else target
        try:
            self._toolkit = toolkit_of(self._source, None, options)
        except BaseException:  # an unknown option: nothing was opened, but the new source is let go of
            if self._owned:
                self._source.close()
            raise

    @property
    def client(self) -> Any:
        """The mcpsync :class:`~mcpsync.Client` or :class:`~mcpsync.Manager` behind the adapter."""
        return self._source

    @property
    def toolkit(self) -> McpToolkit:
        """The :class:`~mcpsync.integrations.core.McpToolkit` (``full_result(handle)`` for cut results)."""
        return self._toolkit

    def open(self) -> "MCPAdapter":
        """Connect (blocks up to the connect timeout; a Manager starts its servers). Idempotent."""
        with self._lock:
            if self._closed:
                raise ConfigError("this MCPAdapter is closed")
            if self._opened:
                return self
            try:
                self._source.open()
            except BaseException:
                self._closed = True  # a failed connect leaves nothing behind: the adapter is done
                self._toolkit.close()
                self._source.close()
                raise
            self._opened = True
        return self

    def list_tools_sync(self, *, cache_mode: str = "use") -> List[Any]:
        """The tools as ``StructuredTool`` objects (connects first if needed; blocks while listing).
        ``cache_mode="refresh"`` or ``"bypass"`` lists again instead of reusing the adapter's last listing."""
        self.open()
        if cache_mode not in ("use", "refresh", "bypass"):
            raise ConfigError("cache_mode must be 'use', 'refresh' or 'bypass', not %r" % cache_mode)
        tools = self._toolkit.tools(refresh=cache_mode != "use")
        return [langchain_tool(t) for t in tools]

    async def list_tools(self, *, cache_mode: str = "use") -> List[Any]:
        """:meth:`list_tools_sync` on a worker thread (the event loop never blocks)."""
        return await asyncio.to_thread(self.list_tools_sync, cache_mode=cache_mode)

    def close(self) -> None:
        """Close the adapter's connection (not a Client or Manager it was given). Blocks while servers shut
        down. Idempotent; tools called afterwards answer with an error the model reads."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._toolkit.close()
        if self._owned:
            self._source.close()

    def __enter__(self) -> "MCPAdapter":
        return self.open()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    async def __aenter__(self) -> "MCPAdapter":
        return await asyncio.to_thread(self.open)

    async def __aexit__(self, *exc: Any) -> None:
        await asyncio.to_thread(self.close)

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open" if self._opened else "new"
        return "MCPAdapter(%r, %s)" % (self._source, state)
