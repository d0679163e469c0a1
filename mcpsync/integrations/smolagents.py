"""MCP tools as smolagents tools (``pip install mcpsync[smolagents]``).

::

    from mcpsync.integrations.smolagents import McpsyncToolCollection

    with McpsyncToolCollection.from_config("mcp.json", max_result_chars=20_000) as collection:
        agent = smolagents.ToolCallingAgent(tools=collection.tools, model=model)
        agent.run("...")
    # every server is closed here

Each tool is a ``smolagents.Tool`` (:class:`McpsyncTool`): its ``inputs`` come from the MCP schema (types
mapped to smolagents' names, optional arguments ``nullable``; an object or array argument carries its JSON
Schema in its description), its name is made a Python identifier (smolagents requires one: ``get-sum`` becomes
``get_sum``), and ``forward`` validates the arguments with the pydantic model built from the schema and makes
the blocking call. A tool error, a timeout, a denied call or invalid arguments come back as the observation
text (starting ``Error:``), which the agent shows the model on its next step; ``forward`` raises nothing for
them. No event loop is involved, so it runs the same in scripts, threads and Jupyter.
"""

from __future__ import annotations

import json
import keyword
import re
import threading
from typing import Any, Dict, List, Optional, Set

from pydantic import ValidationError
from smolagents import Tool, ToolCollection

from .core import McpTool, McpToolkit, Source, ToolSource, toolkit_of

__all__ = ["McpsyncTool", "McpsyncToolCollection", "smolagents_tools"]

_TYPES = frozenset({"string", "boolean", "integer", "number", "array", "object", "null"})


def _identifier(name: str, taken: Set[str]) -> str:
    ident = re.sub(r"\W", "_", name)
    if not ident or ident[0].isdigit() or keyword.iskeyword(ident):
        ident = "t_" + ident
    base, n = ident, 2
    while ident in taken:
        ident, n = "%s_%d" % (base, n), n + 1
    taken.add(ident)
    return ident


def _input(schema: Any, required: bool) -> Dict[str, Any]:
    schema = schema if isinstance(schema, dict) else {}
    declared = schema.get("type")
    kinds = [declared] if isinstance(declared, str) else [t for t in declared or [] if isinstance(t, str)]
    branches = schema.get("anyOf") or schema.get("oneOf")
    nullable = not required or "null" in kinds
    if isinstance(branches, list):
        branch_kinds = [b.get("type") for b in branches if isinstance(b, dict)]
        nullable = nullable or "null" in branch_kinds
        kinds = [k for k in branch_kinds if isinstance(k, str)]
    kinds = [k for k in kinds if k != "null" and k in _TYPES]
    kind = kinds[0] if len(kinds) == 1 else "any"
    description = str(schema.get("description") or schema.get("title") or "")
    if isinstance(schema.get("enum"), list):
        description = (description + " One of: %s." % json.dumps(schema["enum"])).strip()
    if "default" in schema:
        description = (description + " Default: %s." % json.dumps(schema["default"], default=str)).strip()
    if kind in ("object", "array", "any") and len(json.dumps(schema, default=str)) > 2:
        description = (description + " JSON Schema: %s" % json.dumps(schema, default=str)).strip()
    out: Dict[str, Any] = {"type": kind, "description": description or "(no description)"}
    if nullable:
        out["nullable"] = True
    return out


class McpsyncTool(Tool):  # type: ignore[misc,unused-ignore]
    """One MCP tool as a smolagents ``Tool`` (see the module docstring)."""

    skip_forward_signature_validation = True
    output_type = "string"

    def __init__(self, mcp_tool: McpTool, name: Optional[str] = None) -> None:
        self.mcp_tool = mcp_tool
        self.name = name or _identifier(mcp_tool.name, set())
        self.description = mcp_tool.description or mcp_tool.name
        props = mcp_tool.parameters.get("properties") or {}
        required = set(mcp_tool.parameters.get("required") or [])
        self.inputs = {str(k): _input(v, k in required) for k, v in props.items()}
        super().__init__()

    def forward(self, *args: Any, **kwargs: Any) -> str:
        if args and len(args) == 1 and isinstance(args[0], dict) and not kwargs:
            kwargs = dict(args[0])
        elif args:
            return "Error: %s takes keyword arguments only" % self.name
        try:
            arguments = self.mcp_tool.args_model.model_validate(kwargs)
        except ValidationError as exc:
            return "Error: invalid arguments for %s: %s" % (self.name, exc)
        return self.mcp_tool.call(arguments).text


def smolagents_tools(source: ToolSource, *, toolkit: Optional[McpToolkit] = None, **options: Any) -> List[McpsyncTool]:
    """Every tool of ``source`` the model may see, as :class:`McpsyncTool` (blocks while listing). ``options``
    are :class:`~mcpsync.integrations.core.McpToolkit`'s."""
    kit = toolkit_of(source, toolkit, options)
    taken: Set[str] = set()
    return [McpsyncTool(t, _identifier(t.name, taken)) for t in kit.tools()]


class McpsyncToolCollection(ToolCollection):  # type: ignore[misc,unused-ignore]
    """A ``smolagents.ToolCollection`` of a Client's or a Manager's tools that closes them when it closes.

    :attr:`tools` follows the server's list: each read after ``notifications/tools/list_changed`` (or, with a
    Manager, a server that came or went) gives the new list; unchanged tools are the same objects. A smolagents
    agent copies the tools it is given, so build each agent from a fresh read of :attr:`tools`.

    Args:
        source: a :class:`~mcpsync.Client` or :class:`~mcpsync.Manager`.
        close_source: :meth:`close` (and leaving the ``with`` block) closes ``source`` (default True).
        options: :class:`~mcpsync.integrations.core.McpToolkit`'s keyword arguments (``prefix=False`` on a
            Manager: the tools' own names).
    """

    def __init__(self, source: Source, *, close_source: bool = True, **options: Any) -> None:
        # ToolCollection.__init__ only stores a list: the toolkit is the list here (see ``tools``)
        self.toolkit = toolkit_of(source, None, dict(options, close_source=close_source))
        self._lock = threading.Lock()
        self._built: List[McpsyncTool] = []
        self._by_tool: Dict[int, McpsyncTool] = {}  # id(McpTool) -> its smolagents tool
        try:
            self.tools  # noqa: B018 - list now: a server that cannot list fails here, not in the agent
        except BaseException:
            self.toolkit.close()
            raise

    @property
    def tools(self) -> List[McpsyncTool]:
        """The tools now (blocks while the toolkit lists again after a change; otherwise no I/O)."""
        listed = self.toolkit.tools()
        with self._lock:
            taken: Set[str] = set()
            built: List[McpsyncTool] = []
            by_tool: Dict[int, McpsyncTool] = {}
            for t in listed:
                name = _identifier(t.name, taken)
                made = self._by_tool.get(id(t))
                if made is None or made.mcp_tool is not t or made.name != name:
                    made = McpsyncTool(t, name)
                built.append(made)
                by_tool[id(t)] = made
            self._built, self._by_tool = built, by_tool
            return list(built)

    @classmethod
    def from_config(cls, config: Any, **options: Any) -> "McpsyncToolCollection":
        """A collection over a new :class:`~mcpsync.Manager` built from ``config`` (a path or a dict), closed
        with the collection. Blocks while the servers connect and list their tools."""
        from ..manager.manager import Manager

        manager = Manager(config)
        try:
            return cls(manager, close_source=True, **options)
        except BaseException:
            manager.close()
            raise

    def close(self) -> None:
        """Close the toolkit (and the source when it owns it). Blocks while servers shut down. Idempotent."""
        self.toolkit.close()

    def __enter__(self) -> "McpsyncToolCollection":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
