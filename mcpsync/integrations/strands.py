"""MCP tools as Strands Agents tools (``pip install mcpsync[strands]``).

::

    from strands import Agent
    from mcpsync.integrations.strands import McpsyncToolProvider

    with mcpsync.Manager("mcp.json") as manager:
        agent = Agent(model=model, tools=[McpsyncToolProvider(manager, max_result_chars=20_000)])
        agent("...")                       # or: await agent.invoke_async("...")

Each tool is a ``strands.types.tools.AgentTool`` (:class:`McpsyncAgentTool`) whose spec carries the MCP tool's
JSON Schema. Its ``stream`` checks the arguments against a pydantic model built from the schema and runs the
blocking mcpsync call on a worker thread (``asyncio.to_thread``), so the agent's event loop never blocks: the
same in a script (``agent(...)``), in threads and inside Jupyter. The result is a Strands ``ToolResult``: text
and image blocks with ``status="success"``, or, for a tool error, a timeout, a denied call or invalid arguments,
``status="error"`` with the message as text, which is how Strands tells the model a tool failed (as its own MCP
client does); the agent goes on.

:class:`McpsyncToolProvider` is a ``strands.tools.ToolProvider``: the agent loads its tools when it is built,
and when the last agent using it is cleaned up (``agent.cleanup()``) it closes the source it owns
(``close_source=True``, as :meth:`McpsyncToolProvider.from_config` sets). :func:`strands_tools` gives the plain
list of tools instead.
"""

from __future__ import annotations

import asyncio
import base64
import threading
from types import MappingProxyType
from typing import Any, AsyncGenerator, Dict, List, Optional, Sequence, Set

from pydantic import ValidationError
from strands.tools import ToolProvider
from strands.types.tools import AgentTool

from .core import McpTool, McpToolkit, ToolSource, over_new_manager, toolkit_of
from .results import Rendered


def _result_event_class() -> Any:
    """The event the SDK's own tools end their stream with (a private name: a plain ToolResult dict, which the
    SDK also takes as a tool's last value, where it is missing)."""
    try:
        from strands.types._events import ToolResultEvent
    except ImportError:  # pragma: no cover - other SDK layouts
        return None
    return ToolResultEvent


_RESULT_EVENT: Any = _result_event_class()

__all__ = ["McpsyncAgentTool", "McpsyncToolProvider", "strands_tools"]

_FORMATS = MappingProxyType(
    {"image/jpeg": "jpeg", "image/jpg": "jpeg", "image/png": "png", "image/gif": "gif", "image/webp": "webp"}
)


def _result(tool_use_id: str, rendered: Rendered) -> Dict[str, Any]:
    content: List[Dict[str, Any]] = [{"text": rendered.text}]
    for mime, data in rendered.images:
        fmt = _FORMATS.get(mime)
        try:
            raw = base64.b64decode(data) if fmt else b""
        except ValueError:
            fmt = None
        if fmt:
            content.append({"image": {"format": fmt, "source": {"bytes": raw}}})
    out: Dict[str, Any] = {
        "toolUseId": tool_use_id,
        "status": "error" if rendered.is_error else "success",
        "content": content,
    }
    return out


class McpsyncAgentTool(AgentTool):  # type: ignore[misc,unused-ignore]
    """One MCP tool as a Strands ``AgentTool`` (see the module docstring)."""

    def __init__(self, mcp_tool: McpTool) -> None:
        super().__init__()
        self.mcp_tool = mcp_tool

    @property
    def tool_name(self) -> str:
        return self.mcp_tool.name

    @property
    def tool_spec(self) -> Any:
        return {
            "name": self.mcp_tool.name,
            "description": self.mcp_tool.description or self.mcp_tool.name,
            "inputSchema": {"json": self.mcp_tool.json_schema()},
        }

    @property
    def tool_type(self) -> str:
        return "python"

    def invoke(self, tool_use_id: str, arguments: Any) -> Dict[str, Any]:
        """Call the tool with the model's ``arguments`` and return the Strands ``ToolResult``. Blocks for the
        call; raises nothing for what the tool, its server or the arguments do."""
        try:
            model = self.mcp_tool.args_model.model_validate(arguments if arguments is not None else {})
        except ValidationError as exc:
            text = "Error: invalid arguments for %s: %s" % (self.mcp_tool.name, exc)
            return {"toolUseId": tool_use_id, "status": "error", "content": [{"text": text}]}
        return _result(tool_use_id, self.mcp_tool.call(model))

    async def stream(self, tool_use: Any, invocation_state: Dict[str, Any], **kwargs: Any) -> AsyncGenerator[Any, None]:
        result = await asyncio.to_thread(self.invoke, str(tool_use.get("toolUseId")), tool_use.get("input"))
        yield _RESULT_EVENT(result) if _RESULT_EVENT is not None else result


def strands_tools(
    source: ToolSource, *, toolkit: Optional[McpToolkit] = None, **options: Any
) -> List[McpsyncAgentTool]:
    """Every tool of ``source`` (a Client or a Manager) the model may see, as :class:`McpsyncAgentTool` (blocks
    while listing). ``options`` are :class:`~mcpsync.integrations.core.McpToolkit`'s."""
    kit = toolkit_of(source, toolkit, options)
    return [McpsyncAgentTool(t) for t in kit.tools()]


class McpsyncToolProvider(ToolProvider):  # type: ignore[misc,unused-ignore]
    """A Client's or a Manager's tools as a Strands ``ToolProvider``.

    Args:
        source: a :class:`~mcpsync.Client` or :class:`~mcpsync.Manager` (or pass ``toolkit=``).
        toolkit: a ready :class:`~mcpsync.integrations.core.McpToolkit`.
        close_source: close the source when the last agent using the provider is cleaned up, and on
            :meth:`close` (default False: the caller owns it).
        options: :class:`~mcpsync.integrations.core.McpToolkit`'s keyword arguments.

    ``load_tools`` lists on a worker thread, once (``refresh()`` re-lists; the next agent built gets the new
    list). Thread-safe.
    """

    def __init__(
        self,
        source: Optional[ToolSource] = None,
        *,
        toolkit: Optional[McpToolkit] = None,
        close_source: bool = False,
        **options: Any,
    ) -> None:
        if toolkit is None and source is None:
            raise TypeError("give a Client, a Manager or an McpToolkit")
        if close_source and toolkit is None and not isinstance(source, McpToolkit):
            options["close_source"] = True
        self.toolkit = toolkit_of(source, toolkit, options)
        self._close_source = close_source
        self._consumers: Set[Any] = set()
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, config: Any, **options: Any) -> "McpsyncToolProvider":
        """A provider over a new :class:`~mcpsync.Manager` built from ``config`` (a path or a dict), closed with
        the provider. Blocks while the servers connect."""
        return over_new_manager(config, lambda manager: cls(manager, close_source=True, **options))

    async def load_tools(self, **kwargs: Any) -> Sequence[AgentTool]:
        tools = await asyncio.to_thread(self.toolkit.tools)
        return [McpsyncAgentTool(t) for t in tools]

    def refresh(self) -> None:
        """Re-list the tools now (blocks)."""
        self.toolkit.tools(refresh=True)

    def add_consumer(self, consumer_id: Any, **kwargs: Any) -> None:
        with self._lock:
            self._consumers.add(consumer_id)

    def remove_consumer(self, consumer_id: Any, **kwargs: Any) -> None:
        with self._lock:
            if consumer_id not in self._consumers:
                return
            self._consumers.discard(consumer_id)
            last = not self._consumers
        if last and self._close_source:
            self.close()

    def close(self) -> None:
        """Close the toolkit (and the source when the provider owns it). Blocks while servers shut down.
        Idempotent."""
        self.toolkit.close()

    def __enter__(self) -> "McpsyncToolProvider":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
