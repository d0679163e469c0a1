"""The blocking MCP client: :class:`Client` and :func:`connect`.

Example::

    import mcpsync
    with mcpsync.connect(["npx", "-y", "@modelcontextprotocol/server-everything"]) as client:
        for tool in client.list_tools():
            print(tool.name)
        print(client.call_tool("echo", {"message": "hi"}, timeout=10).text)

Thread-safety: a Client may be shared by any number of threads; every method
blocks only its caller. Timeouts: each method takes ``timeout`` (seconds of
silence allowed; progress notifications restart it; ``None`` waits forever;
default: the client's ``timeout``, 60 s) and ``max_total_timeout`` (a hard cap).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, Generic, List, Literal, Optional, Sequence, TypeVar, Union

from ..errors import (
    ConfigError,
    HeaderMismatch,
    MCPError,
    NotAvailableInEra,
    ToolInputInvalid,
    ToolOutputInvalid,
)
from ..session import DEFAULT, RequestHandle, Timeout
from ..types import (
    CallToolResult,
    Completion,
    GetPromptResult,
    Page,
    ProgressEvent,
    Prompt,
    ReadResourceResult,
    Resource,
    ResourceTemplate,
    Root,
    ServerNotification,
    Tool,
)
from ..wire import protocol as P
from .core import ClientCore
from .modern import Subscription
from .schema import validate
from .targets import Target

#: per-call cache choice for listings and reads: "use" (a fresh cached answer), "refresh" (ask, then cache),
#: "bypass" (ask, keep nothing)
CacheMode = Literal["use", "refresh", "bypass"]

if TYPE_CHECKING:  # pragma: no cover
    from typing import ParamSpec

    from ..apps.page import AppResource
    from .deferred import InputDeferral, InputRequired, ParkedInputs
    from ..skills.skills import LoadedSkill, Skill, SkillFile

    _P = ParamSpec("_P")

__all__ = ["Client", "connect"]

logger = logging.getLogger(__name__)

_I = TypeVar("_I")


@dataclass(frozen=True)
class _Listing(Generic[_I]):
    """One list method of the protocol: what to send, where the items are in the result, how to build one."""

    method: str  # e.g. "tools/list"
    key: str  # the result's list of items, e.g. "tools"
    capability: str  # the server capability it needs
    build: Callable[[Dict[str, Any]], _I]


_TOOLS = _Listing("tools/list", "tools", "tools", Tool.from_dict)
_PROMPTS = _Listing("prompts/list", "prompts", "prompts", Prompt.from_dict)
_RESOURCES = _Listing("resources/list", "resources", "resources", Resource.from_dict)
_TEMPLATES = _Listing("resources/templates/list", "resourceTemplates", "resources", ResourceTemplate.from_dict)


class Client(ClientCore):
    """A blocking, thread-safe MCP client for one server (stdio command, URL or Transport).

    Args:
        target: a command list (``["python", "server.py"]``, run over stdio), an
            ``http(s)://`` URL (Streamable HTTP, falling back to legacy SSE), or a Transport.
        name: display name for logs, errors and thread names.
        timeout: default idle timeout per request in seconds (None: none); 60 s. Progress notifications
            restart it; ``ClientOptions(max_total_timeout=...)`` is the hard cap.
        connect_timeout: one deadline for the whole open: starting the server or connecting, the era probe, a
            fallback to legacy SSE and the handshake (30 s).
        protocol: "auto" (negotiate), "modern" (2026-07-28 only), "legacy"
            (initialize handshake only), or an explicit revision string.
        client_info: overrides for ``clientInfo`` (name, version, title).
        roots: roots offered to the server (Root objects, file:// URIs or paths);
            None: the roots capability is not declared.
        sampling_handler: answers sampling requests (see :mod:`mcpsync.client.handlers`).
        elicitation_handler: answers elicitation requests (form and URL modes).
        approval_handler: ``f(ToolApprovalRequest) -> Approval``, called before each tool call on
            the calling thread; approves, denies with a reason, or edits the arguments.
        on_notification: called with every ServerNotification (dispatch thread). Callbacks run one at
            a time; when 1000 wait behind a slow one, newer ones are dropped and counted in
            :attr:`dropped_callbacks` (logged, rate-limited). None runs after ``close()`` returns.
        auth: an :class:`mcpsync.Auth` flow (e.g. ``OAuthManager.auth(name)``) or any ``requests.auth.AuthBase``
            for a remote server.
        bearer_token: sugar for a static token: ``Authorization: Bearer <token>`` (not with ``auth``).
        headers: extra HTTP headers sent on every request to a remote server (over ``HTTPOptions.headers``).
        middleware: what wraps each request, as a list: :class:`~mcpsync.middleware.Interceptor` and
            :class:`~mcpsync.middleware.Middleware` objects (in list order), at most one
            :class:`~mcpsync.middleware.Retry` policy (outermost, wherever it stands) and at most one
            :class:`~mcpsync.middleware.ToolPolicy` (allowed / denied tool names or globs: only allowed tools
            are listed and may be called; a refused call raises ToolDenied and is never sent). See
            docs/guides/production.md for the order.
        stdio: a :class:`~mcpsync.client.StdioOptions` for a command target (working directory, environment,
            stderr, framing, shutdown).
        http: a :class:`~mcpsync.client.HTTPOptions` for a URL target (TLS, proxies, read timeout, pool,
            transport choice, stream resumption).
        callbacks: a :class:`~mcpsync.client.Callbacks` with the rarer event callbacks (``on_log``, list
            changes, resource updates, connection lost, task status).
        options: a :class:`~mcpsync.client.ClientOptions` with the protocol knobs (validation, keep-alive,
            caching, tasks, MCP Apps, resumable input, tracing, ``lazy``, ``after_fork``...).
        extensions: extensions composed on the client: a :class:`mcpsync.warm.WarmCache` (near-instant
            reconnects).

    A keyword that moved into one of these objects (``cwd=``, ``verify=``, ``on_log=``...) is a ConfigError that
    says where it went; an unknown keyword is a ConfigError naming the nearest option.

    Callbacks run on the client's dispatch thread, never on a reader thread; a
    callback may call the client, including ``close()``.
    """

    #: Whether tools were listed once to validate a result (see :meth:`_tool_for_validation`).
    _validation_listed = False

    # ------------------------------------------------------------------ basics

    def ping(self, *, timeout: Timeout = DEFAULT) -> None:
        """Check the server is alive (blocks up to ``timeout``).

        In the 2026-07-28 era, which has no ping, this sends ``server/discover``.
        """
        self.session  # noqa: B018 - the era is known once open (a lazy client opens here)
        if self.era == "modern":
            self._call("server/discover", {}, timeout=timeout)
            return
        self._call("ping", None, timeout=timeout)

    def request(
        self,
        method: str,
        params: Optional[Dict[str, Any]] = None,
        *,
        timeout: Timeout = DEFAULT,
        max_total_timeout: Timeout = DEFAULT,
        progress: Optional[Callable[[ProgressEvent], object]] = None,
    ) -> Any:
        """Send any request and return its raw result dict (the escape hatch for new methods)."""
        self.session  # noqa: B018 - a lazy client opens here, before the era decides the envelope
        return self._call(method, params, timeout=timeout, max_total_timeout=max_total_timeout, progress=progress)

    def notify(self, method: str, params: Optional[Dict[str, Any]] = None) -> None:
        """Send any notification."""
        self.session.notify(method, params)

    # ------------------------------------------------------------------ lists

    def _page(
        self,
        listing: _Listing[_I],
        cursor: Optional[str],
        timeout: Timeout,
        cache: CacheMode = "use",
        keep: Optional[Callable[[Optional[str], List[_I]], List[_I]]] = None,
    ) -> Page[_I]:
        """One page of ``listing`` (from the response cache when ``cache`` allows); ``keep`` post-processes
        the items of each page (the tools' filters and name index). Blocks up to ``timeout``."""
        self.require_capability(listing.capability, listing.method)
        params: Dict[str, Any] = {} if cursor is None else {"cursor": cursor}
        cached = self._modern.cached_list(listing.method, cursor) if _cache_mode(cache) == "use" else None
        if cached is not None:
            result = cached
        else:
            result = self._call(listing.method, params, timeout=timeout)
            if cache != "bypass":
                self._modern.store_list(listing.method, cursor, result)
                for extension in self._extensions:
                    extension.listed(listing.method, cursor, result)
        raw_items = result.get(listing.key) if isinstance(result, dict) else None
        items = [listing.build(x) for x in raw_items if isinstance(x, dict)] if isinstance(raw_items, list) else []
        if keep is not None:
            items = keep(cursor, items)
        nxt = result.get("nextCursor") if isinstance(result, dict) else None
        return Page(items=items, next_cursor=nxt if isinstance(nxt, str) else None, raw=result)

    def _all(
        self,
        listing: _Listing[_I],
        timeout: Timeout,
        cache: CacheMode = "use",
        keep: Optional[Callable[[Optional[str], List[_I]], List[_I]]] = None,
    ) -> List[_I]:
        """Every item of ``listing``, following each cursor to the end (at most ``max_pages``; a repeated
        cursor stops it). Blocks up to ``timeout`` per page."""
        items: List[_I] = []
        seen = set()
        cursor: Optional[str] = None
        pages = 0
        while True:
            page = self._page(listing, cursor, timeout, cache, keep)
            items.extend(page.items)
            nxt = page.next_cursor
            if nxt is None:  # an empty-string cursor is NOT the end
                return items
            pages += 1
            if nxt in seen:
                logger.warning("[%s] %s: server repeated cursor %r; stopping", self.name, listing.method, nxt)
                return items
            if pages >= self.max_pages:
                logger.warning("[%s] %s: stopped after %d pages", self.name, listing.method, pages)
                return items
            seen.add(nxt)
            cursor = nxt

    def _keep_tools(self, cursor: Optional[str], tools: List[Tool]) -> List[Tool]:
        """A page of tools: drop what the era and ``allowed_tools``/``disabled_tools`` hide; index the rest by
        name (a first page starts the index afresh)."""
        tools = self._modern.filter_tools(tools)
        if self._pipeline is not None:
            tools = self._pipeline.filter_tools(tools)  # allowed_tools / disabled_tools
        with self._tools_lock:
            if cursor is None:
                self._tools_by_name = {}
                self._task_only = set()
            for t in tools:
                self._tools_by_name[t.name] = t
                execution = t.raw.get("execution")
                if isinstance(execution, dict) and execution.get("taskSupport") == "required":
                    self._task_only.add(t.name)
        return tools

    def list_tools(
        self, *, audience: Optional[str] = None, timeout: Timeout = DEFAULT, cache: CacheMode = "use"
    ) -> List[Tool]:
        """Every tool, following each cursor to the end. Blocks up to ``timeout`` per page.

        ``audience``: None (every tool), ``"model"`` (what a model may see: MCP Apps app-only tools left out,
        as the extension requires of hosts) or ``"app"`` (what an App may call: model-only tools left out).

        ``cache`` (2026-07-28 response cache, per the server's ``ttlMs``; every listing method takes it):
        ``"use"`` fresh cached pages, ``"refresh"`` ask the server and cache, ``"bypass"`` ask and keep nothing.
        """
        if audience not in (None, "model", "app"):
            raise ConfigError("audience must be None, 'model' or 'app'")
        tools = self._all(_TOOLS, timeout, cache, self._keep_tools)
        if audience == "model":
            return [t for t in tools if t.visible_to_model]
        if audience == "app":
            return [t for t in tools if t.visible_to_app]
        return tools

    def list_tools_page(
        self, cursor: Optional[str] = None, *, timeout: Timeout = DEFAULT, cache: CacheMode = "use"
    ) -> Page[Tool]:
        """One page of tools; ``page.next_cursor`` is None at the end."""
        return self._page(_TOOLS, cursor, timeout, cache, self._keep_tools)

    def list_prompts(self, *, timeout: Timeout = DEFAULT, cache: CacheMode = "use") -> List[Prompt]:
        """Every prompt, following each cursor to the end."""
        return self._all(_PROMPTS, timeout, cache)

    def list_prompts_page(
        self, cursor: Optional[str] = None, *, timeout: Timeout = DEFAULT, cache: CacheMode = "use"
    ) -> Page[Prompt]:
        """One page of prompts."""
        return self._page(_PROMPTS, cursor, timeout, cache)

    def list_resources(self, *, timeout: Timeout = DEFAULT, cache: CacheMode = "use") -> List[Resource]:
        """Every resource, following each cursor to the end."""
        return self._all(_RESOURCES, timeout, cache)

    def list_resources_page(
        self, cursor: Optional[str] = None, *, timeout: Timeout = DEFAULT, cache: CacheMode = "use"
    ) -> Page[Resource]:
        """One page of resources."""
        return self._page(_RESOURCES, cursor, timeout, cache)

    def list_resource_templates(
        self, *, timeout: Timeout = DEFAULT, cache: CacheMode = "use"
    ) -> List[ResourceTemplate]:
        """Every resource template, following each cursor to the end."""
        return self._all(_TEMPLATES, timeout, cache)

    def list_resource_templates_page(
        self, cursor: Optional[str] = None, *, timeout: Timeout = DEFAULT, cache: CacheMode = "use"
    ) -> Page[ResourceTemplate]:
        """One page of resource templates."""
        return self._page(_TEMPLATES, cursor, timeout, cache)

    def get_tool(self, name: str) -> Optional[Tool]:
        """The tool called ``name`` from the last listing (None when not listed yet)."""
        return self._tools_by_name.get(name)

    # ------------------------------------------------------------------ tools

    def _tool_params(
        self,
        name: str,
        arguments: Optional[Dict[str, Any]],
        meta: Optional[Dict[str, Any]],
        validate_input: Optional[bool],
    ) -> Dict[str, Any]:
        self.require_capability("tools", "tools/call")
        if arguments is not None and not isinstance(arguments, dict):
            raise ConfigError("tool arguments must be a dict")
        args = arguments if arguments is not None else {}
        # tool policy and approval handler: may refuse (ToolDenied) or edit the arguments
        args = self._authorize_tool(name, args, self._tool_for_approval)
        if self.validate_input if validate_input is None else validate_input:
            tool = self._tools_by_name.get(name)
            if tool is not None:
                validate(
                    self._validators.get(tool.input_schema),
                    args,
                    ToolInputInvalid,
                    "arguments for tool %r" % name,
                    server=self.name,
                    method="tools/call",
                )
        return {"name": name, "arguments": args, "_meta": dict(meta) if meta else {}}

    def _tool_result(self, name: str, raw: Any, validate_output: Optional[bool]) -> CallToolResult:
        result = CallToolResult.from_dict(raw if type(raw) is dict else {})
        if result.is_error or not (self.validate_output if validate_output is None else validate_output):
            return result
        tool = self._tools_by_name.get(name)
        if tool is None and result.structured_content is not None:
            tool = self._tool_for_validation(name)
        if tool is None or tool.output_schema is None:
            return result
        if result.structured_content is None:
            exc = ToolOutputInvalid(
                "tool %r declares an outputSchema but returned no structuredContent" % name,
                server=self.name,
                method="tools/call",
            )
            exc.result = result
            raise exc
        try:
            validate(
                self._validators.get(tool.output_schema),
                result.structured_content,
                ToolOutputInvalid,
                "structuredContent of tool %r" % name,
                server=self.name,
                method="tools/call",
            )
        except ToolOutputInvalid as exc:
            exc.result = result
            raise
        result.output_schema = tool.output_schema
        return result

    def _tool_for_approval(self, name: str) -> Optional[Tool]:
        """The tool's definition for the approval handler: a tool never listed makes the client list
        once (so the handler sees its annotations); a failed listing leaves it unknown."""
        tool = self._tools_by_name.get(name)
        if tool is not None:
            return tool
        try:
            self.list_tools()
        except MCPError as exc:
            logger.debug("[%s] could not list tools for the approval handler: %s", self.name, exc)
        return self._tools_by_name.get(name)

    def _tool_for_validation(self, name: str) -> Optional[Tool]:
        """A result with structuredContent came for a tool not yet known: list the tools once per connection
        (at most once per client) so its outputSchema can be checked. A failed listing skips the check."""
        if self._validation_listed:
            return None
        self._validation_listed = True
        try:
            self.list_tools()
        except MCPError as exc:
            logger.debug("[%s] could not list tools to validate %r: %s", self.name, name, exc)
            return None
        return self._tools_by_name.get(name)

    def call_tool(
        self,
        name: str,
        arguments: Optional[Dict[str, Any]] = None,
        *,
        timeout: Timeout = DEFAULT,
        max_total_timeout: Timeout = DEFAULT,
        progress: Optional[Callable[[ProgressEvent], object]] = None,
        meta: Optional[Dict[str, Any]] = None,
        validate_input: Optional[bool] = None,
        validate_output: Optional[bool] = None,
        defer_input: Optional[bool] = None,
    ) -> CallToolResult:
        """Call a tool and block until its result.

        The request always carries a progressToken, so progress notifications
        restart the idle ``timeout``; ``max_total_timeout`` caps the whole call.
        On timeout the server gets ``notifications/cancelled`` and
        :class:`~mcpsync.RequestTimeout` (a ``TimeoutError``) is raised.
        A tool that reports failure returns a result with ``is_error`` set (see
        ``CallToolResult.raise_for_error``). A task-augmented answer (2026-07-28
        tasks extension) is polled to its end transparently.

        ``defer_input`` (None: the client's setting): when the server needs user input, raise
        :class:`~mcpsync.input.InputRequired` instead of asking the handlers, and continue later with
        :meth:`resume` (2026-07-28); in the handshake era the question is parked in ``pending_input``
        for another thread while this call keeps waiting (see ``mcpsync.client.deferred``).

        Raises:
            ToolInputInvalid: arguments fail the inputSchema (with validate_input).
            ToolOutputInvalid: structuredContent fails the outputSchema (``.result`` has the result).
            RequestTimeout, RemoteError, ConnectionClosed, CapabilityError.
            InputRequired: the server needs input and the call defers it (``defer_input``).
        """
        params = self._tool_params(name, arguments, meta, validate_input)
        with self._deferral.scope(defer_input):
            return self._call_tool(name, params, timeout, max_total_timeout, progress, validate_output)

    def _call_tool(
        self,
        name: str,
        params: Dict[str, Any],
        timeout: Timeout,
        max_total_timeout: Timeout,
        progress: Optional[Callable[[ProgressEvent], object]],
        validate_output: Optional[bool],
    ) -> CallToolResult:
        if self.era == "legacy" and self._task_required(name):
            # 2025-11-25 experimental tasks: this tool only runs as a task; wait for it transparently.
            from .tasks import start_authorized_task

            total = self.max_total_timeout if max_total_timeout is DEFAULT else max_total_timeout
            handle = start_authorized_task(self, name, params["arguments"], on_status=self.on_task_status)
            if isinstance(handle, CallToolResult):
                return handle
            return self._tool_result(name, handle.wait(timeout=total, raw=True), validate_output)
        try:
            raw = self._call(
                "tools/call",
                params,
                timeout=timeout,
                max_total_timeout=max_total_timeout,
                progress=progress,
                progress_token=True,
                owned_params=True,
            )
        except HeaderMismatch:
            # 2026-07-28: the Mcp-Param-* headers disagreed with the tool's current schema: re-list, retry once
            logger.info("[%s] header mismatch on %s; re-listing tools and retrying once", self.name, name)
            self._modern.evict_list("tools")
            self.list_tools(timeout=timeout)
            raw = self._call(
                "tools/call",
                params,
                timeout=timeout,
                max_total_timeout=max_total_timeout,
                progress=progress,
                progress_token=True,
                owned_params=True,
            )
        return self._tool_result(name, raw, validate_output)

    def _task_required(self, name: str) -> bool:
        if name not in self._task_only:
            return False
        return self.tasks_enabled and isinstance(self.server_capabilities.get("tasks"), dict)

    def call_tool_async(
        self,
        name: str,
        arguments: Optional[Dict[str, Any]] = None,
        *,
        timeout: Timeout = DEFAULT,
        max_total_timeout: Timeout = DEFAULT,
        progress: Optional[Callable[[ProgressEvent], object]] = None,
        meta: Optional[Dict[str, Any]] = None,
        validate_input: Optional[bool] = None,
        validate_output: Optional[bool] = None,
    ) -> RequestHandle[CallToolResult]:
        """Start a tool call and return at once; ``handle.result()`` blocks like :meth:`call_tool`.

        ``handle.cancel()`` sends ``notifications/cancelled``.
        """
        params = self._tool_params(name, arguments, meta, validate_input)
        total = self.max_total_timeout if max_total_timeout is DEFAULT else max_total_timeout
        pipeline = self._pipeline
        info = entered = None
        if pipeline is not None:  # interceptors: on_request here, on_result/on_error on the dispatch thread
            info, entered = pipeline.start_async(self, "tools/call", params)
            params = info.params or params
        if self.era == "modern":
            params = self._stamp(params)

        def finish(raw: Any) -> CallToolResult:
            if self.era == "modern":
                raw = self._complete("tools/call", params, raw, timeout, total, progress, True)
            return self._tool_result(name, raw, validate_output)

        try:
            handle = self.session.request_async(
                "tools/call",
                params,
                timeout=timeout,
                max_total_timeout=total,
                progress=progress,
                progress_token=True,
                transform=finish,
                before_send=pipeline.on_sent(self, info) if pipeline is not None and info is not None else None,
            )
        except BaseException as exc:
            if pipeline is not None and info is not None and entered is not None:
                pipeline.abandon(self, info, entered, exc)
            raise
        if pipeline is not None and info is not None and entered is not None:
            pipeline.watch(self, info, entered, handle)
        return handle

    # ------------------------------------------------------------------ prompts / resources

    def get_prompt(
        self,
        name: str,
        arguments: Optional[Dict[str, str]] = None,
        *,
        timeout: Timeout = DEFAULT,
        defer_input: Optional[bool] = None,
    ) -> GetPromptResult:
        """Get a prompt filled with ``arguments`` (string values). ``defer_input`` as in :meth:`call_tool`."""
        self.require_capability("prompts", "prompts/get")
        params: Dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = {k: v if isinstance(v, str) else str(v) for k, v in arguments.items()}
        with self._deferral.scope(defer_input):
            return GetPromptResult.from_dict(self._call("prompts/get", params, timeout=timeout))

    def read_resource(
        self,
        uri: str,
        *,
        timeout: Timeout = DEFAULT,
        cache: CacheMode = "use",
        defer_input: Optional[bool] = None,
    ) -> ReadResourceResult:
        """Read a resource. Raises :class:`~mcpsync.errors.ResourceNotFound` for an unknown URI.

        ``cache`` (2026-07-28 response cache, per the server's ``ttlMs``): ``"use"`` a fresh cached answer,
        ``"refresh"`` ask the server and cache its answer, ``"bypass"`` ask the server and keep nothing.
        ``defer_input`` as in :meth:`call_tool`.
        """
        self.require_capability("resources", "resources/read")
        cached = self._modern.cached_read(uri) if _cache_mode(cache) == "use" else None
        if cached is not None:
            return ReadResourceResult.from_dict(cached)
        with self._deferral.scope(defer_input):
            result = self._call("resources/read", {"uri": uri}, timeout=timeout)
        if cache != "bypass":
            self._modern.store_read(uri, result)
        return ReadResourceResult.from_dict(result)

    # ------------------------------------------------------------------ deferred input

    _deferral: "InputDeferral"  # the core's deferral extension (mcpsync.client.deferred)

    @property
    def pending_input(self) -> "ParkedInputs":
        """Handshake era with ``defer_input``: the server's questions waiting for :meth:`resume` (a bounded
        queue; see :mod:`mcpsync.client.deferred`). Thread-safe."""
        return self._deferral.parked

    def resume(
        self,
        input_required: InputRequired,
        answers: Optional[Dict[str, Any]] = None,
        *,
        timeout: Timeout = DEFAULT,
        max_total_timeout: Timeout = DEFAULT,
        defer_input: Optional[bool] = None,
    ) -> Any:
        """Continue a call that raised :class:`~mcpsync.input.InputRequired`, with the user's ``answers``.

        ``answers`` maps each question's key (``ir.questions[i].key``) to its answer: an elicitation's
        ``{"action": "accept", "content": {...}}`` (``question.accept(content)`` checks it against the
        schema), ``{"action": "decline"}`` or ``{"action": "cancel"}``; a sampling result; ``{"roots": [...]}``.
        A question left out is answered by the client's handlers (or its ``roots``), else
        :class:`~mcpsync.HandlerMissing` is raised before anything is sent.

        2026-07-28: sends the request again with the answers and the server's ``requestState`` and returns
        its typed result (:class:`CallToolResult` for a tool, :class:`GetPromptResult`,
        :class:`ReadResourceResult`); works from any thread or process whose client is connected to the
        same server under the same ``name``. A tool call passes the tool policy and approval hook again. If
        the server asks again, another :class:`InputRequired` is raised (unless ``defer_input=False``:
        then the handlers answer). Blocks like the original call.

        Handshake era (``ir.live``): hands the answer to the call that is still waiting in this process and
        returns ``None`` at once (the result goes to that call's thread). Raises
        :class:`~mcpsync.input.InputExpired` when it is no longer waiting.

        Raises:
            ConfigError: ``answers`` names a key the server did not ask.
            InputNotResumable: ``ir`` names no server, or another one (nothing is sent).
            InputExpired, InputRequired, HandlerMissing, and whatever the original call may raise.
        """
        from .deferred import resume

        return resume(
            self, input_required, answers, timeout=timeout, max_total_timeout=max_total_timeout, defer_input=defer_input
        )

    def resume_tool(
        self,
        input_required: InputRequired,
        answers: Optional[Dict[str, Any]] = None,
        *,
        timeout: Timeout = DEFAULT,
        max_total_timeout: Timeout = DEFAULT,
        defer_input: Optional[bool] = None,
    ) -> CallToolResult:
        """:meth:`resume` for a deferred ``tools/call`` in the 2026-07-28 era, typed: the tool's result."""
        if input_required.method != "tools/call" or input_required.live:
            raise ConfigError("resume_tool() takes a deferred 2026-07-28 tool call", server=self.name)
        result = self.resume(
            input_required, answers, timeout=timeout, max_total_timeout=max_total_timeout, defer_input=defer_input
        )
        assert isinstance(result, CallToolResult)
        return result

    def app_for(
        self,
        tool: Union[Tool, str],
        *,
        sha256: Optional[str] = None,
        max_bytes: Optional[int] = None,
        timeout: Timeout = DEFAULT,
    ) -> "AppResource":
        """The verified MCP Apps page a tool links (``_meta.ui.resourceUri``, or the deprecated flat key).

        ``tool`` is a :class:`~mcpsync.Tool` this client listed, or a tool name (the tools are listed once when
        not yet known). The page is read with ``resources/read`` from this server (a Tool whose listing on this
        server differs is refused: a page is only taken from the server that offers the tool) and checked by
        :func:`mcpsync.apps.page.verify_page` (``ui://``, the exact MIME type, text or base64 blob, at most
        ``max_bytes``, default 8 MiB; ``sha256`` pins the page's digest). Blocks up to ``timeout`` per request.
        Raises :class:`~mcpsync.AppResourceError` (``reason`` says which check failed) or the request's errors.
        """
        from ..apps.page import read_page

        return read_page(self, tool, sha256=sha256, max_bytes=max_bytes, timeout=timeout)

    def subscribe_resource(self, uri: str, *, timeout: Timeout = DEFAULT) -> None:
        """Get ``notifications/resources/updated`` for ``uri`` (``on_resource_updated``, the queue).

        In the 2026-07-28 era this rides a ``subscriptions/listen`` stream.
        """
        self.require_capability("resources", "resources/subscribe", "subscribe")
        if self.era == "modern":
            self._modern.subscribe_resource(uri)
            return
        self._call("resources/subscribe", {"uri": uri}, timeout=timeout)

    def unsubscribe_resource(self, uri: str, *, timeout: Timeout = DEFAULT) -> None:
        """Stop updates for ``uri``."""
        self.require_capability("resources", "resources/unsubscribe", "subscribe")
        if self.era == "modern":
            self._modern.unsubscribe_resource(uri)
            return
        self._call("resources/unsubscribe", {"uri": uri}, timeout=timeout)

    # ------------------------------------------------------------------ skills (SEP-2640 extension)

    def list_skills(self, *, timeout: Timeout = DEFAULT) -> "List[Skill]":
        """The server's skill entries (``skills/list``, every page). Fetches no skill file.

        Raises CapabilityError when the server did not declare ``io.modelcontextprotocol/skills``.
        """
        from ..skills import skills

        return skills.list_skills(self, timeout=timeout, max_pages=self.max_pages)

    def get_skill(self, uri: str, *, timeout: Timeout = DEFAULT) -> "Skill":
        """The current entry of the skill whose ``SKILL.md`` is at ``uri`` (``skills/get``)."""
        from ..skills import skills

        return skills.get_skill(self, uri, timeout=timeout)

    def load_skill(
        self, skill: "Union[Skill, str]", *, allow_dynamic: bool = False, timeout: Timeout = DEFAULT
    ) -> "LoadedSkill":
        """Fetch a skill's ``SKILL.md`` now and verify it (size, digest, frontmatter) against its entry.

        ``skill`` is an entry from :meth:`list_skills`/:meth:`get_skill`, or a ``SKILL.md`` URI (then
        ``skills/get`` fetches the entry first). Raises :class:`~mcpsync.SkillVerificationError` on
        any mismatch; the content is never returned unverified.
        """
        from ..skills import skills

        return skills.load_skill(self, skill, allow_dynamic=allow_dynamic, timeout=timeout)

    def read_skill_file(
        self,
        skill: "Union[Skill, LoadedSkill]",
        path: str,
        *,
        allow_dynamic: bool = False,
        timeout: Timeout = DEFAULT,
    ) -> "SkillFile":
        """Fetch one file of a skill now (a URI inside it or a path relative to its root) and verify it.

        A file the skill's entry does not list raises :class:`~mcpsync.SkillVerificationError`
        without any request.
        """
        from ..skills import skills

        return skills.read_skill_file(self, skill, path, allow_dynamic=allow_dynamic, timeout=timeout)

    def complete(
        self,
        ref: Dict[str, Any],
        argument: str,
        value: str,
        *,
        context: Optional[Dict[str, str]] = None,
        timeout: Timeout = DEFAULT,
    ) -> Completion:
        """Ask for completions of ``argument`` (partial ``value``).

        ``ref`` is ``{"type": "ref/prompt", "name": ...}`` or ``{"type": "ref/resource", "uri": ...}``
        (see :func:`prompt_ref` / :func:`resource_ref`); ``context`` passes the other arguments already known.
        """
        self.require_capability("completions", "completion/complete")
        params: Dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
        if context:
            params["context"] = {"arguments": dict(context)}
        return Completion.from_dict(self._call("completion/complete", params, timeout=timeout))

    def set_logging_level(self, level: str, *, timeout: Timeout = DEFAULT) -> None:
        """Ask the server for log messages at ``level`` and above.

        Handshake era: ``logging/setLevel``. 2026-07-28 era: the level rides every
        later request's ``_meta``.
        """
        if level not in P.LOG_LEVELS:
            raise ConfigError("level must be one of %s" % ", ".join(P.LOG_LEVELS))
        self.session  # noqa: B018 - not open: ClientClosed (a lazy client opens here)
        self.log_level = level
        if self.era == "modern":
            return
        self.require_capability("logging", "logging/setLevel")
        self._call("logging/setLevel", {"level": level}, timeout=timeout)

    # ------------------------------------------------------------------ roots

    @property
    def roots(self) -> Optional[List[Root]]:
        """The roots offered to the server (None: roots not declared)."""
        return list(self._roots) if self._roots is not None else None

    def set_roots(self, roots: Sequence[Union[Root, str, Dict[str, Any]]]) -> None:
        """Replace the roots; the server is told with ``notifications/roots/list_changed`` (handshake era).

        The 2026-07-28 era has no such notification: servers ask for roots on each
        request that needs them, so the new list simply applies from now on.
        """
        from .answers import as_root

        if self._roots is None:
            raise ConfigError("roots were not declared when the client was created (pass roots=[...])")
        self._roots = [as_root(r) for r in roots]
        if self.era == "legacy" and self.connected:
            self.session.notify("notifications/roots/list_changed")

    # ------------------------------------------------------------------ modern-only helpers

    def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Optional[List[str]] = None,
        on_event: Optional[Callable[[ServerNotification], object]] = None,
        auto_relisten: Optional[bool] = None,
    ) -> Subscription:
        """Open a ``subscriptions/listen`` stream (2026-07-28 era); see :class:`mcpsync.client.Subscription`.

        ``tools``/``prompts``/``resources`` ask for their list_changed notifications,
        ``resource_uris`` for ``notifications/resources/updated`` of those URIs; ``on_event``
        gets each event on the dispatch thread (or iterate the subscription).
        """
        self.session  # noqa: B018 - a lazy client opens here
        if self.era != "modern":
            raise NotAvailableInEra(
                "subscriptions/listen exists only in the 2026-07-28 era (this server speaks %s)"
                % self.protocol_version,
                server=self.name,
                method="subscriptions/listen",
            )
        return self._modern.listen(
            tools=tools,
            prompts=prompts,
            resources=resources,
            resource_uris=resource_uris,
            on_event=on_event,
            auto_relisten=auto_relisten,
        )

    def clear_cache(self) -> None:
        """Forget every cached list and read result (2026-07-28 ``ttlMs`` caching)."""
        self._modern.clear_cache()


def _cache_mode(mode: str) -> str:
    if mode not in ("use", "refresh", "bypass"):
        raise ConfigError("cache must be 'use', 'refresh' or 'bypass', not %r" % (mode,))
    return mode


def prompt_ref(name: str) -> Dict[str, Any]:
    """A completion reference to a prompt."""
    return {"type": "ref/prompt", "name": name}


def resource_ref(uri: str) -> Dict[str, Any]:
    """A completion reference to a resource template."""
    return {"type": "ref/resource", "uri": uri}


def _signature_of(factory: Callable[_P, Client]) -> Callable[[Callable[..., Client]], Callable[_P, Client]]:
    """For type checkers: the decorated function takes exactly ``factory``'s arguments (a no-op at run time)."""

    def same(function: Callable[..., Client]) -> Callable[_P, Client]:
        return function

    return same


@_signature_of(Client)
def connect(target: Target, **options: Any) -> Client:
    """Create a :class:`Client` for ``target`` and open it (blocks up to ``connect_timeout``).

    ``target`` is a command list (stdio), an ``http(s)://`` URL, or a Transport;
    ``options`` are :class:`Client`'s keyword arguments. Use it as a context
    manager, or call ``close()``.
    """
    client = Client(target, **options)
    client.open()
    return client
