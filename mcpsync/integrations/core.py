"""The core under every framework module: a :class:`McpToolkit` over a :class:`~mcpsync.Client` or a
:class:`~mcpsync.Manager`, and its :class:`McpTool` entries.

A toolkit lists the source's tools on first use and follows the server's list from then on: after
``notifications/tools/list_changed`` (or, with a Manager, a server that came or went) the next read of
:meth:`McpToolkit.tools` lists again; unchanged tools keep their :class:`McpTool` objects. It offers each tool
the model may see:

* **visibility**: a tool whose MCP Apps ``_meta.ui.visibility`` leaves out ``"model"`` is never offered;
* **policy and approval**: the source's :class:`~mcpsync.middleware.ToolPolicy` already hides refused tools, and a call
  it refuses or its approval handler denies comes back as an error result the model reads;
* **naming**: a Manager's tools are offered as ``{server}_{tool}``, a Client's under their own names; ``prefix``
  says otherwise (``prefix=False`` on a Manager: the tools' own names, a clash between two servers resolved by
  a stable hash suffix; ``prefix=True`` on a Client: ``{server}_{tool}``); names are sanitised to
  ``[a-zA-Z0-9_-]{1,64}``;
* **transforms** (:class:`~mcpsync.manager.ToolTransform`): a new name or description, and arguments bound to fixed
  values that the model never sees and every call sends;
* **results**: :func:`~mcpsync.integrations.results.render_result` with the toolkit's
  :class:`~mcpsync.integrations.results.ResultBudget`; the full result of a cut one stays available through
  :meth:`McpToolkit.full_result`.

:meth:`McpTool.call` never raises for what a tool or its server does: an ``isError`` result, a timeout, a
denied call, invalid arguments, a dead server all come back as a :class:`Rendered` with ``is_error`` set and
a message for the model. Programming errors (a bug in a handler) still raise.

Thread-safe: tools may be called from many threads at once; every call blocks the calling thread for the
tool's duration: ``timeout`` is an idle timeout (restarted by each progress notification; the source's default
when not given), ``max_total_timeout`` caps the whole call however much progress the server reports.
"""

from __future__ import annotations

import copy
import json
import logging
import threading
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, TypeVar, Union

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
from ..types import JSON, CallToolResult, Tool
from .results import Rendered, ResultBudget, ResultStore, error_text, render_result
from .values import to_json_value

if TYPE_CHECKING:  # pragma: no cover
    from ..client.client import Client
    from ..manager.manager import Manager

__all__ = ["McpTool", "McpToolkit", "failure", "toolkit_of"]

#: The toolkit options every framework function accepts (McpToolkit's keyword arguments).
TOOLKIT_OPTIONS = frozenset(
    (
        "server",
        "prefix",
        "timeout",
        "max_total_timeout",
        "max_result_chars",
        "max_result_tokens",
        "spill",
        "spill_dir",
        "budget",
        "tool_budgets",
        "transforms",
        "include",
        "close_source",
        "keep_results",
        "follow",
    )
)

log = logging.getLogger(__name__)

Source = Union["Client", "Manager"]
#: What the framework functions take: a Client, a Manager, or an McpToolkit over one of them.
ToolSource = Union["Client", "Manager", "McpToolkit"]


_T = TypeVar("_T")


def over_new_manager(config: Any, build: Callable[[Source], _T]) -> _T:
    """``build(manager)`` over a new :class:`~mcpsync.Manager` built from ``config`` (a path or a dict); the
    manager is closed when ``build`` raises (otherwise what ``build`` returns owns it). Blocks while the servers
    connect."""
    from ..manager.manager import Manager

    manager: Source = Manager(config)
    try:
        return build(manager)
    except BaseException:
        manager.close()
        raise


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
        server: with a Manager, only this server's tools (a Client refuses a ``server`` other than its own name).
        prefix: ``True``: ``{server}_{tool}`` names; ``False``: the tools' own names; None (default): prefixed
            for a Manager, own names for a Client.
        timeout: the idle timeout of each call (default: the source's; a Manager's per-server ``timeout``).
        max_total_timeout: the cap on each call's whole duration, progress or not (default: the Client's
            ``max_total_timeout``; none for a Manager).
        max_result_chars, max_result_tokens, spill, spill_dir: the result budget (:class:`ResultBudget`).
        budget: a whole :class:`ResultBudget` instead of the four arguments above.
        tool_budgets: ``{tool name: ResultBudget}`` for tools that need another budget (keys: the offered name or
            the tool's own name); a call can also pass its own (:meth:`McpTool.call`'s ``budget``).
        transforms: ``{tool name: ToolTransform}`` applied to the offered tools (keys are the exposed names for
            a Manager, the tools' own names for a Client); added to the transforms a Manager's config has.
        include: offer only these (exposed, untransformed) names.
        close_source: :meth:`close` also closes ``source``.
        keep_results: how many cut results :meth:`full_result` can still give back.
        follow: follow the server's tool list (default True): a read after a change lists again. In the
            2026-07-28 era a Client hears of changes only through a listen stream: the toolkit asks the Client
            to keep one (:meth:`mcpsync.Client.follow_tool_changes`; one per Client, closed with it). With a
            Manager the toolkit listens to its events until :meth:`close` (or until it is garbage). False: list
            once; :meth:`tools` with ``refresh=True`` re-lists.
    """

    def __init__(
        self,
        source: Source,
        *,
        server: Optional[str] = None,
        prefix: Optional[bool] = None,
        timeout: Timeout = DEFAULT,
        max_total_timeout: Timeout = DEFAULT,
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
        follow: bool = True,
    ) -> None:
        from ..manager.manager import Manager

        self._is_manager = isinstance(source, Manager)
        if not self._is_manager and server is not None and server != getattr(source, "name", None):
            raise ConfigError(
                "server=%r names a server of a Manager; this is a Client of %r" % (server, getattr(source, "name", "?"))
            )
        if prefix is not None and not isinstance(prefix, bool):
            raise ConfigError("prefix must be True, False or None, not %r" % (prefix,))
        self.source = source
        self.server = server
        self.prefix = prefix
        self.timeout = timeout
        self.max_total_timeout = max_total_timeout
        self.follow = follow
        self.budget = budget or ResultBudget(max_result_chars, max_result_tokens, spill, spill_dir)
        self.tool_budgets: Dict[str, ResultBudget] = dict(tool_budgets or {})
        self.transforms: Dict[str, ToolTransform] = dict(transforms or {})
        for key, value in self.transforms.items():
            if not isinstance(value, ToolTransform):
                raise ConfigError("transforms[%r] must be a ToolTransform, got %s" % (key, type(value).__name__))
        self.include = set(include) if include is not None else None
        self.close_source = close_source
        self.store = ResultStore(keep_results)
        self._lock = threading.Lock()
        self._tools: Optional[List[McpTool]] = None
        self._listed_at = -1  # the change count the current listing was read at
        self._changes = 0  # a Manager's tools_changed / status_changed events seen
        self._closed = False
        self._following = False
        self._unlisten: Optional[Any] = None  # a weakref.finalize removing the Manager listeners
        if follow and self._is_manager:
            manager: Any = source
            me = weakref.ref(self)  # the Manager must not keep a dropped toolkit alive

            def changed(*args: Any) -> None:  # a Manager's events thread
                kit = me()
                if kit is not None:
                    kit._changed()

            removers = [manager.on("tools_changed", changed), manager.on("status_changed", changed)]
            self._unlisten = weakref.finalize(self, _call_each, removers)

    # ------------------------------------------------------------------ listing

    def _changed(self, *args: Any) -> None:  # a Manager's events thread
        with self._lock:
            self._changes += 1

    def _change_count(self) -> int:
        if self._is_manager:
            with self._lock:
                return self._changes
        return int(getattr(self.source, "tools_epoch", 0))

    def _follow_client(self) -> None:
        """A Client hears of list changes in the 2026-07-28 era only on a listen stream: ask it to keep one
        (its own, shared by every toolkit over it, closed with it). Idempotent; a lazy Client not open yet
        is asked again after the first listing."""
        client: Any = self.source
        follow = getattr(client, "follow_tool_changes", None)
        if self._is_manager or self._following or follow is None:
            return
        try:
            follow()
        except MCPError as exc:
            log.warning("could not follow the tool list of %s: %s", getattr(client, "name", "?"), exc)
        self._following = True

    @property
    def stale(self) -> bool:
        """True when the source's tool list changed since the toolkit last listed it (no I/O)."""
        with self._lock:
            listed, at = self._tools is not None, self._listed_at
        return not listed or (self.follow and self._change_count() != at)

    def tools(self, *, refresh: bool = False) -> List[McpTool]:
        """The tools the model may see, sorted by name. Lists the source's tools on the first call, with
        ``refresh``, and (``follow``) after the server's list changed; that blocks up to the source's
        list/connect timeout. Otherwise served from memory (no I/O). When listing again after a change fails,
        the previous list is kept (logged; the next read tries again); a first listing or ``refresh`` raises."""
        if not refresh and not self.stale:
            with self._lock:
                if self._tools is not None:
                    return list(self._tools)
        if self.follow:
            self._follow_client()
        at = self._change_count()  # read before listing: a change during the listing makes it stale again
        try:
            listed = self._list()
        except MCPError as exc:
            with self._lock:
                kept = self._tools
            if refresh or kept is None:
                raise
            # a re-listing after a change failed: the model keeps the tools it had (calls to a tool that went
            # away come back as errors it reads); the next read tries again
            log.warning("re-listing the tools after a change failed (%s); keeping the previous list", exc)
            return list(kept)
        with self._lock:
            previous = {_identity(t): t for t in self._tools or []}
            listed = [previous.get(_identity(t), t) for t in listed]  # unchanged tools keep their objects
            self._tools, self._listed_at = listed, at
        return list(listed)

    def _list(self) -> List[McpTool]:
        entries: List[tuple] = []  # type: ignore[type-arg]  # (exposed, route, server, Tool)
        configured: Dict[str, ToolTransform] = {}  # exposed name -> the configuration file's transform
        if self._is_manager:
            manager: Any = self.source
            served = list(manager.tools(self.server))
            table = None
            if self.prefix is False:  # the tools' own names (routed by the manager's exposed name)
                table = NameTable(((st.server, st.tool.name) for st in served), prefix=False)
            for st in served:
                exposed = table.name_for(st.server, st.tool.name) if table is not None else st.name
                entries.append((exposed, st.name, st.server, st.tool))
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
            own = NameTable(((name, t.name) for t in listed), prefix=bool(self.prefix))
            for t in listed:
                entries.append((own.name_for(name, t.name), t.name, name, t))
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
        if self.max_total_timeout is DEFAULT:
            result: CallToolResult = source.call_tool(tool._route, args, timeout=timeout)
        else:
            result = source.call_tool(tool._route, args, timeout=timeout, max_total_timeout=self.max_total_timeout)
        return result

    def full_result(self, handle: str) -> CallToolResult:
        """The full result of a call whose text was cut (the handle is in its marker); KeyError when it was
        dropped (only the last ``keep_results`` are kept)."""
        return self.store.get(handle)

    # ------------------------------------------------------------------ lifetime

    def close(self) -> None:
        """Stop following a Manager's list, forget kept results, remove a private spill directory, and close
        the source when ``close_source``. Blocks while the source closes. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            unlisten, self._unlisten = self._unlisten, None
        if unlisten is not None:
            unlisten()
        self.store.close()
        if self.close_source:
            closer: Optional[Callable[[], None]] = getattr(self.source, "close", None)
            if closer is not None:
                closer()

    def __enter__(self) -> "McpToolkit":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _call_each(functions: List[Callable[[], object]]) -> None:
    for function in functions:
        function()


def _identity(tool: McpTool) -> Any:
    """What makes two listings' entries the same tool (its offered name, route, server and definition)."""
    return (tool.name, tool._route, tool.server, json.dumps(tool.tool.raw, sort_keys=True, default=repr))


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
    unknown = sorted(set(options) - TOOLKIT_OPTIONS)
    if unknown:
        raise ConfigError(
            "unknown tool option%s %s (the options are: %s)"
            % ("s" if len(unknown) > 1 else "", ", ".join(unknown), ", ".join(sorted(TOOLKIT_OPTIONS)))
        )
    return McpToolkit(source, **dict(options))
