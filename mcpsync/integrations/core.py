"""The core under every framework module: a :class:`McpToolkit` over a :class:`~mcpsync.Client` or a
:class:`~mcpsync.Manager`, and its :class:`McpTool` entries.

A toolkit lists the source's tools once (:meth:`McpToolkit.tools`; call it again to re-list) and offers each
tool the model may see:

* **visibility**: a tool whose MCP Apps ``_meta.ui.visibility`` leaves out ``"model"`` is never offered;
* **policy and approval**: the source's :class:`~mcpsync.ToolPolicy` already hides refused tools, and a call
  it refuses or its approval handler denies comes back as an error result the model reads;
* **naming**: a Manager's tools keep their ``{server}_{tool}`` names; a Client's tools keep their own names
  (sanitised to ``[a-zA-Z0-9_-]{1,64}``), or get the ``{server}_`` prefix with ``prefix=True``;
* **transforms** (:class:`~mcpsync.ToolTransform`): a new name or description, and arguments bound to fixed
  values that the model never sees and every call sends;
* **results**: :func:`~mcpsync.integrations.results.render_result` with the toolkit's
  :class:`~mcpsync.integrations.results.ResultBudget`; the full result of a cut one stays available through
  :meth:`McpToolkit.full_result`.

:meth:`McpTool.call` never raises for what a tool or its server does: an ``isError`` result, a timeout, a
denied call, invalid arguments, a dead server all come back as a :class:`Rendered` with ``is_error`` set and
a message for the model. Programming errors (a bug in a handler) still raise.

Thread-safe: tools may be called from many threads at once; every call blocks the calling thread for the
tool's duration (bounded by ``timeout``, the source's default when not given).
"""

from __future__ import annotations

import copy
import logging
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Union

from ..errors import (
    ConfigError,
    ConnectionClosed,
    MCPError,
    RequestTimeout,
    SchemaValidationError,
    ToolDenied,
)
from ..manager.adapters import provider_schema, restore_arguments
from ..manager.naming import NameTable
from ..manager.transforms import ToolTransform, apply_transform
from ..session import DEFAULT, Timeout
from ..types import CallToolResult, Tool
from .results import Rendered, ResultBudget, ResultStore, error_text, render_result
from .values import to_json_value

if TYPE_CHECKING:  # pragma: no cover
    from ..client.client import Client
    from ..manager.manager import Manager

__all__ = ["McpTool", "McpToolkit", "failure", "toolkit_of"]

log = logging.getLogger(__name__)

JSON = Dict[str, Any]
Source = Union["Client", "Manager"]
#: What the framework functions take: a Client, a Manager, or an McpToolkit over one of them.
ToolSource = Union["Client", "Manager", "McpToolkit"]


def failure(exc: BaseException, tool: str) -> Rendered:
    """The model-facing error for an exception raised while calling ``tool``."""
    if isinstance(exc, ToolDenied):
        message = "the call to %s was denied: %s" % (tool, exc)
    elif isinstance(exc, RequestTimeout):
        message = "the tool %s timed out (%s); it may be retried" % (tool, exc)
    elif isinstance(exc, SchemaValidationError):
        message = "invalid arguments or result for %s: %s" % (tool, exc)
    elif isinstance(exc, ConnectionClosed):
        message = "the server of %s is unavailable: %s" % (tool, exc)
    else:
        message = "the tool %s failed: %s" % (tool, exc or type(exc).__name__)
    return Rendered(text=error_text(message), is_error=True, result=getattr(exc, "result", None), error=exc)


@dataclass
class McpTool:
    """One tool as a model sees it, bound to its toolkit.

    Attributes:
        name: the name the model uses (provider-safe).
        description: the description the model reads.
        parameters: the JSON Schema of the arguments the model gives (an object schema; ``$ref`` inlined where
            possible, root combinators merged, bound arguments removed).
        tool: the :class:`~mcpsync.Tool` as its server listed it.
        server: the server's name (the Manager's configured name, or the Client's name).
        bound: the arguments every call sends and the model never sees.
    """

    name: str
    description: str
    parameters: JSON
    tool: Tool
    server: str
    bound: JSON = field(default_factory=dict)
    _route: str = ""
    _kit: Optional["McpToolkit"] = field(default=None, repr=False)
    _model: Any = field(default=None, repr=False)

    @property
    def args_model(self) -> Any:
        """A pydantic model of :attr:`parameters` (built on first use; needs pydantic)."""
        if self._model is None:
            from .schema_model import argument_model

            self._model = argument_model(self.parameters, self.name)
        return self._model

    def call(
        self, arguments: Any = None, *, timeout: Timeout = DEFAULT, budget: Optional[ResultBudget] = None
    ) -> Rendered:
        """Call the tool with the model's ``arguments`` (a mapping or an :attr:`args_model` instance; pydantic
        models inside are dumped by their original names) and the
        bound ones. Blocks for the call; never raises for what the tool or its server does (see the module)."""
        if self._kit is None:  # pragma: no cover - always set by McpToolkit
            raise ConfigError("this McpTool is not bound to a toolkit")
        return self._kit._call(self, arguments, timeout, budget)

    def json_schema(self) -> JSON:
        """A deep copy of :attr:`parameters` (frameworks may mutate what they are given)."""
        return copy.deepcopy(self.parameters)


class McpToolkit:
    """A Client's or a Manager's tools for an agent framework (see the module docstring).

    Args:
        source: a connected :class:`~mcpsync.Client` or a :class:`~mcpsync.Manager`.
        server: with a Manager, only this server's tools.
        prefix: with a Client, expose ``{server}_{tool}`` names (default False: the tools' own names).
        timeout: the idle timeout of each call (default: the source's; a Manager's per-server ``timeout``).
        max_result_chars, max_result_tokens, spill, spill_dir: the result budget (:class:`ResultBudget`).
        budget: a whole :class:`ResultBudget` instead of the four arguments above.
        tool_budgets: ``{tool name: ResultBudget}`` for tools that need another budget (keys: the offered name or
            the tool's own name); a call can also pass its own (:meth:`McpTool.call`'s ``budget``).
        transforms: ``{tool name: ToolTransform}`` applied to the offered tools (keys are the exposed names for
            a Manager, the tools' own names for a Client); added to the transforms a Manager's config has.
        include: offer only these (exposed, untransformed) names.
        close_source: :meth:`close` also closes ``source``.
        keep_results: how many cut results :meth:`full_result` can still give back.
    """

    def __init__(
        self,
        source: Source,
        *,
        server: Optional[str] = None,
        prefix: bool = False,
        timeout: Timeout = DEFAULT,
        max_result_chars: Optional[int] = None,
        max_result_tokens: Optional[int] = None,
        spill: bool = False,
        spill_dir: Optional[str] = None,
        budget: Optional[ResultBudget] = None,
        tool_budgets: Optional[Mapping[str, ResultBudget]] = None,
        transforms: Optional[Mapping[str, ToolTransform]] = None,
        include: Optional[List[str]] = None,
        close_source: bool = False,
        keep_results: int = 32,
    ) -> None:
        self.source = source
        self.server = server
        self.prefix = prefix
        self.timeout = timeout
        self.budget = budget or ResultBudget(max_result_chars, max_result_tokens, spill, spill_dir)
        self.tool_budgets: Dict[str, ResultBudget] = dict(tool_budgets or {})
        self.transforms: Dict[str, ToolTransform] = dict(transforms or {})
        for key, value in self.transforms.items():
            if not isinstance(value, ToolTransform):
                raise ConfigError("transforms[%r] must be a ToolTransform, got %s" % (key, type(value).__name__))
        self.include = set(include) if include is not None else None
        self.close_source = close_source
        self.store = ResultStore(keep_results)
        from ..manager.manager import Manager

        self._is_manager = isinstance(source, Manager)
        self._lock = threading.Lock()
        self._tools: Optional[List[McpTool]] = None
        self._closed = False

    # ------------------------------------------------------------------ listing

    def tools(self, *, refresh: bool = False) -> List[McpTool]:
        """The tools the model may see, sorted by name. Lists the source's tools on the first call (or with
        ``refresh``), which blocks up to the source's list/connect timeout; later calls are served from memory."""
        with self._lock:
            if self._tools is not None and not refresh:
                return list(self._tools)
        listed = self._list()
        with self._lock:
            self._tools = listed
        return list(listed)

    def _list(self) -> List[McpTool]:
        entries: List[tuple] = []  # type: ignore[type-arg]  # (exposed, route, server, Tool)
        configured: Dict[str, ToolTransform] = {}  # exposed name -> the configuration file's transform
        if self._is_manager:
            manager: Any = self.source
            for st in manager.tools(self.server):
                entries.append((st.name, st.name, st.server, st.tool))
                try:  # the server's configured transforms, keyed by the tool's own name
                    per_server = manager.config(st.server).tool_transforms
                except (KeyError, MCPError):
                    per_server = {}
                if st.tool.name in per_server:
                    configured[st.name] = per_server[st.tool.name]
        else:
            client: Any = self.source
            name = str(getattr(client, "name", "server"))
            listed = list(client.list_tools())
            table = NameTable(((name, t.name) for t in listed), prefix=self.prefix)
            for t in listed:
                entries.append((table.name_for(name, t.name), t.name, name, t))
        out: List[McpTool] = []
        taken: Dict[str, str] = {}
        for exposed, route, server, tool in entries:
            if not tool.visible_to_model:
                continue
            if self.include is not None and exposed not in self.include:
                continue
            # code's transforms win over the configuration file's
            transform = self.transforms.get(exposed) or self.transforms.get(tool.name) or configured.get(exposed)
            schema = provider_schema(tool.input_schema)
            name, description, schema, bound = apply_transform(
                transform, exposed, tool.description or tool.title or "", schema
            )
            if name in taken:
                log.warning(
                    "tool %s (%s) is renamed to %r, which %s already has; skipped", exposed, server, name, taken[name]
                )
                continue
            taken[name] = exposed
            out.append(McpTool(name, description, schema, tool, server, bound, route, self))
        return sorted(out, key=lambda t: t.name)

    def get(self, name: str) -> McpTool:
        """The offered tool named ``name`` (lists first if needed); raises KeyError when there is none."""
        for tool in self.tools():
            if tool.name == name:
                return tool
        raise KeyError(name)

    # ------------------------------------------------------------------ calling

    def call(
        self,
        name: str,
        arguments: Optional[Mapping[str, Any]] = None,
        *,
        timeout: Timeout = DEFAULT,
        budget: Optional[ResultBudget] = None,
    ) -> Rendered:
        """Call the offered tool ``name``; an unknown name is an error result (see :meth:`McpTool.call`)."""
        try:
            tool = self.get(name)
        except KeyError:
            known = ", ".join(t.name for t in self.tools()) or "none"
            return Rendered(text=error_text("there is no tool named %r (tools: %s)" % (name, known)), is_error=True)
        return tool.call(arguments, timeout=timeout, budget=budget)

    def _call(self, tool: McpTool, arguments: Any, timeout: Timeout, budget: Optional[ResultBudget] = None) -> Rendered:
        if self._closed:
            return Rendered(text=error_text("the tools were closed"), is_error=True)
        raw = arguments if arguments is not None else {}
        args = to_json_value(raw if not isinstance(raw, Mapping) else dict(raw))  # a pydantic model: by alias
        if not isinstance(args, dict):
            return Rendered(text=error_text("the arguments must be an object"), is_error=True)
        args = restore_arguments(restore_arguments(args, tool.parameters), tool.tool.input_schema)
        args.update(copy.deepcopy(tool.bound))
        idle = self.timeout if timeout is DEFAULT else timeout
        try:
            result = self._send(tool, args, idle)
        except MCPError as exc:
            log.debug("tool %s failed: %s", tool.name, exc)
            return failure(exc, tool.name)
        if budget is None:
            budget = self.tool_budgets.get(tool.name) or self.tool_budgets.get(tool.tool.name) or self.budget
        rendered = render_result(result, budget, self.store)
        if rendered.is_error:
            rendered.text = error_text(rendered.text or "the tool %s reported a failure" % tool.name)
        return rendered

    def _send(self, tool: McpTool, args: JSON, timeout: Timeout) -> CallToolResult:
        source: Any = self.source  # Client.call_tool and Manager.call_tool take the same arguments
        result: CallToolResult = source.call_tool(tool._route, args, timeout=timeout)
        return result

    def full_result(self, handle: str) -> CallToolResult:
        """The full result of a call whose text was cut (the handle is in its marker); KeyError when it was
        dropped (only the last ``keep_results`` are kept)."""
        return self.store.get(handle)

    # ------------------------------------------------------------------ lifetime

    def close(self) -> None:
        """Forget kept results, remove a private spill directory, and close the source when ``close_source``.
        Blocks while the source closes. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self.store.close()
        if self.close_source:
            closer: Optional[Callable[[], None]] = getattr(self.source, "close", None)
            if closer is not None:
                closer()

    def __enter__(self) -> "McpToolkit":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def toolkit_of(source: Any, toolkit: Optional[McpToolkit], options: Mapping[str, Any]) -> McpToolkit:
    """The toolkit a framework function works on: ``toolkit``, or ``source`` itself when it is an
    :class:`McpToolkit` (keep it to read cut results with :meth:`McpToolkit.full_result`), or a new one over
    ``source`` (a Client or a Manager) with ``options``."""
    if toolkit is not None:
        if options:
            raise ConfigError("give toolkit options to the McpToolkit, not next to toolkit=")
        return toolkit
    if isinstance(source, McpToolkit):
        if options:
            raise ConfigError("give toolkit options to the McpToolkit, not next to it")
        return source
    return McpToolkit(source, **dict(options))
