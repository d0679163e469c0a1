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
import threading
from dataclasses import dataclass
from typing import (
    TYPE_CHECKING,
    Any,
    Callable,
    Dict,
    Generic,
    Iterable,
    List,
    Literal,
    Mapping,
    NoReturn,
    Optional,
    Sequence,
    Set,
    Tuple,
    Type,
    TypeVar,
    Union,
)

from ..__version__ import __version__
from .._dispatch import NotificationQueue
from .._threads import join, spawn
from ..errors import (
    CapabilityError,
    ClientClosed,
    ConfigError,
    ConnectError,
    ConnectTimeout,
    HeaderMismatch,
    MCPError,
    NotAvailableInEra,
    ProtocolError,
    RequestTimeout,
    ToolInputInvalid,
    ToolOutputInvalid,
)
from ..session import DEFAULT, RequestContext, RequestHandle, Session, Timeout
from ..transports.base import Transport
from ..types import (
    CallToolResult,
    Completion,
    GetPromptResult,
    Implementation,
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
from . import registry, reopen
from .answers import answer_for, as_root, fulfil
from .callbacks import Callbacks
from .client_options import ClientOptions
from .controls import build_pipeline, checked_extensions, split_middleware
from .handlers import ElicitationHandler, SamplingHandler
from .hooks import ClientExtension
from .memory import ServerMemory
from .middleware import RequestInfo, run_chain
from .modern import ModernFeatures, Subscription, listen_filter
from .negotiate import Deadline, Negotiated, Negotiator
from .notify import NotificationRouter
from .options import call_keyword_error, checked_groups, remote_arguments
from .reopen import AfterFork
from .schema import ValidatorCache, validate
from .stdio_options import StdioOptions
from .targets import Target, cache_key, target_name, transport_candidates

#: per-call cache choice for listings and reads: "use" (a fresh cached answer), "refresh" (ask, then cache),
#: "bypass" (ask, keep nothing)
CacheMode = Literal["use", "refresh", "bypass"]

if TYPE_CHECKING:  # pragma: no cover
    from typing import ParamSpec

    from ..transports.http.options import AuthHook, HTTPOptions
    from .controls import MiddlewareEntry
    from .pipeline import Pipeline
    from .policy import ApprovalHandler

    _P = ParamSpec("_P")

__all__ = ["Client", "connect"]

logger = logging.getLogger(__name__)

_I = TypeVar("_I")
_C = TypeVar("_C", bound="Client")
_X = TypeVar("_X", bound=ClientExtension)
_MRTR_METHODS = ("tools/call", "prompts/get", "resources/read")
MAX_INPUT_ROUNDS = 10


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


class Client:
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
        extensions: extensions composed on the client: objects with ``attach(client)``
            (:class:`~mcpsync.client.hooks.Extension`), at most one of each type; docs/guides/client.md lists
            those mcpsync ships.

    A keyword that moved into one of these objects (``cwd=``, ``verify=``, ``on_log=``...) is a ConfigError that
    says where it went; an unknown keyword is a ConfigError naming the nearest option.

    Callbacks run on the client's dispatch thread, never on a reader thread; a
    callback may call the client, including ``close()``.
    """

    #: Whether tools were listed once to validate a result (see :meth:`_tool_for_validation`).
    _validation_listed = False

    # ------------------------------------------------------------------ basics

    def __new__(cls: "Type[_C]", *args: Any, **kwargs: Any) -> _C:
        # type checkers check calls against __init__; at run time an unknown keyword is a ConfigError
        # naming the nearest option (Python's own TypeError would not say which was meant)
        if kwargs:
            from .options import check_keywords

            check_keywords(cls, kwargs)
        return super().__new__(cls)

    def __init__(
        self,
        target: Target,
        *,
        name: Optional[str] = None,
        timeout: Optional[float] = 60.0,
        connect_timeout: Optional[float] = 30.0,
        protocol: str = "auto",
        client_info: Optional[Dict[str, Any]] = None,
        roots: Optional[Iterable[Union[Root, str, Dict[str, Any]]]] = None,
        sampling_handler: Optional[SamplingHandler] = None,
        elicitation_handler: Optional[ElicitationHandler] = None,
        approval_handler: Optional["ApprovalHandler"] = None,
        on_notification: Optional[Callable[[ServerNotification], object]] = None,
        auth: Optional["AuthHook"] = None,
        bearer_token: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
        middleware: Optional[Iterable["MiddlewareEntry"]] = None,
        stdio: Optional[StdioOptions] = None,
        http: Optional["HTTPOptions"] = None,
        callbacks: Optional[Callbacks] = None,
        options: Optional[ClientOptions] = None,
        extensions: Optional[Iterable[object]] = None,
    ) -> None:
        if protocol not in ("auto", "modern", "legacy") and not P.era_of(protocol):
            raise ConfigError(
                "protocol must be 'auto', 'modern', 'legacy' or one of %s"
                % ", ".join(P.MODERN_VERSIONS + P.HANDSHAKE_VERSIONS)
            )
        stdio, callbacks, options = checked_groups(stdio, http, callbacks, options)
        self.stdio_options = stdio
        self.http_options = http
        self.callbacks = callbacks
        self.options = options
        self._target = target
        self.timeout = timeout
        self.max_total_timeout = options.max_total_timeout
        self.connect_timeout = connect_timeout
        self.protocol = protocol
        self.probe_timeout = options.probe_timeout
        #: what this client learned about servers (eras, remote transports): its own, or the one it shares
        self.memory: ServerMemory = options.memory if options.memory is not None else ServerMemory()
        info = {"name": "mcpsync", "version": __version__, "title": "mcpsync"}
        info.update(client_info or {})
        self.client_info = info
        self._roots: Optional[List[Root]] = [as_root(r) for r in roots] if roots is not None else None
        self.sampling_handler = sampling_handler
        self.elicitation_handler = elicitation_handler
        self.on_notification = on_notification
        self.on_log = callbacks.on_log
        self._retired_drops = [0, 0]  # dropped callbacks, refused server requests of earlier sessions
        self.log_level = options.log_level
        self.on_tools_changed = callbacks.on_tools_changed
        self.on_prompts_changed = callbacks.on_prompts_changed
        self.on_resources_changed = callbacks.on_resources_changed
        self.on_resource_updated = callbacks.on_resource_updated
        self.on_connection_lost = callbacks.on_connection_lost
        self.on_task_status = callbacks.on_task_status
        self.validate_input = options.validate_input
        self.validate_output = options.validate_output
        self.keepalive = options.keepalive
        self.max_pages = options.max_pages
        self.use_cache = options.cache
        self.tasks_enabled = options.tasks
        self.apps_enabled = bool(options.apps)
        self.auto_relisten = options.auto_relisten
        self.trace_context = dict(options.trace_context or {})
        #: the extensions hooked into the core (mcpsync.client.hooks), in order
        self._extensions: List[ClientExtension] = [item.attach(self) for item in checked_extensions(extensions)]
        policy, retry, chain = split_middleware(middleware)
        self._pipeline: Optional["Pipeline"] = build_pipeline(
            policy, approval_handler, chain, retry, options.tracing, self.trace_context
        )
        self._stdio_options = stdio.transport_arguments()
        remote_options = remote_arguments(http, headers, bearer_token, auth)
        self._remote_options = remote_options
        if stdio != StdioOptions() and isinstance(target, str):
            raise ConfigError("stdio= was given for a server URL (stdio options apply to a command list)")
        self.lazy = bool(options.lazy)
        self.after_fork: "AfterFork" = options.after_fork
        self.name = target_name(target, name, remote_options)
        self.notifications = NotificationQueue()
        self._tools_epoch = 0  # notifications/tools/list_changed received (read by tools_epoch)
        self._follow_tools = False  # follow_tool_changes(): the 2026-07-28 listen stream carries tools
        self._follow_lock = threading.Lock()
        self._lock = threading.RLock()
        self._open_lock = threading.RLock()  # one open at a time: open(), a lazy first use, a reopen after fork
        self._user_closed = False  # close() was called: never opened again
        self._forked_away = False  # opened in a parent process; this (forked) process has no connection yet
        self._open_attempts = 0
        self._open_error: Optional[BaseException] = None
        self._state = "new"
        self._session: Optional[Session] = None
        self.era: Optional[str] = None
        self.protocol_version: Optional[str] = None
        self.server_info = Implementation()
        self.server_capabilities: Dict[str, Any] = {}
        self.instructions: Optional[str] = None
        self.transport_kind: Optional[str] = None
        self._envelope_cache: Optional[Tuple[Any, Dict[str, Any]]] = None
        self._last_transport: Optional[Transport] = None  # kept after a failed open, for stderr_tail
        self._keepalive_stop = threading.Event()
        self._keepalive_thread: Optional[threading.Thread] = None
        self._notify = NotificationRouter(self)  # reader-thread routing of server notifications
        # the parts the typed API (mcpsync.client.client) works with
        self._validators = ValidatorCache()
        self._tools_by_name: Dict[str, Tool] = {}
        self._task_only: Set[str] = set()  # tools whose execution.taskSupport is "required"
        self._tools_lock = threading.Lock()
        self._modern = ModernFeatures(self)
        if self.lazy:
            registry.track(self)  # a fork while a first use is opening it must not inherit a held lock

    # lifecycle -----------------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True once ``close()`` was called."""
        return self._state == "closed"

    @property
    def connected(self) -> bool:
        """True while the session is open and the connection alive (False in a forked child)."""
        s = self._session
        return self._state == "open" and s is not None and not s.closed and not s.forked

    @property
    def session(self) -> Session:
        """The current session; a ``lazy`` client opens here, and one opened before ``os.fork()`` opens again in the
        child (blocks up to ``connect_timeout``; single flight, see :func:`.reopen.open_on_use`). Raises
        ClientClosed when not open (nor lazy) or closed, ForkedClientError in a child with ``after_fork="error"``."""
        s = self._session
        if s is not None and self._state == "open" and not s.forked:
            return s
        return reopen.open_on_use(self)

    @property
    def tools_epoch(self) -> int:
        """How many ``notifications/tools/list_changed`` this client has received (never reset; 0 at first).

        A tool list read while this was ``n`` is stale once it differs from ``n``: cheap to poll (no I/O, no
        lock), which is how :class:`mcpsync.integrations.McpToolkit` follows the server's list. In the
        2026-07-28 era the notification comes only through a listen stream (``on_tools_changed``,
        :meth:`follow_tool_changes` or ``listen``). Thread-safe read."""
        return self._tools_epoch

    def follow_tool_changes(self) -> None:
        """Hear of every tool list change from now on (:attr:`tools_epoch` counts them), also without
        ``on_tools_changed``: in the 2026-07-28 era the client's own listen stream asks for
        ``notifications/tools/list_changed`` (kept across reconnects, closed with the client); in the handshake
        era the server sends it anyway. Blocks while the stream is reopened (one request). Idempotent;
        thread-safe."""
        with self._follow_lock:
            if self._follow_tools:
                return
            self._follow_tools = True
            if self._state == "open":
                self._modern.follow_tools()

    @property
    def dropped_callbacks(self) -> int:
        """User callbacks this client dropped because too many waited behind a slow one (never reset).

        Callbacks (``on_notification``, ``on_log``, progress, list changes, resource updates, task
        status) run one at a time on the dispatch thread; when ``mcpsync.session.CALLBACK_BACKLOG``
        (1000) already wait, a new one is dropped, counted here and logged (rate-limited). The
        :attr:`notifications` queue is bounded on its own (oldest dropped). Thread-safe read.
        """
        s = self._session
        return self._retired_drops[0] + (s.dropped_callbacks if s is not None else 0)

    @property
    def refused_server_requests(self) -> int:
        """Server requests (sampling, elicitation, roots...) answered "client busy" (JSON-RPC -32603) at once
        because ``mcpsync.session.HANDLER_BACKLOG`` (64) already waited for a handler thread (never reset)."""
        s = self._session
        return self._retired_drops[1] + (s.refused_server_requests if s is not None else 0)

    @property
    def transport(self) -> Transport:
        """The current transport."""
        return self.session.transport

    @property
    def stderr_tail(self) -> List[str]:
        """The last stderr lines of a stdio server ([] for other transports)."""
        s = self._session
        transport = s.transport if s is not None else self._last_transport
        return list(getattr(transport, "stderr_tail", [])) if transport is not None else []

    def _cache_key(self) -> Any:
        return cache_key(self._target, self._stdio_options.get("cwd"))

    def _transport_candidates(
        self, connect_timeout: Optional[float] = None
    ) -> List[Tuple[str, Callable[[], Transport]]]:
        timeout = self.connect_timeout if connect_timeout is None else connect_timeout
        prefer = self.memory.transport(self._target) if isinstance(self._target, str) else None
        return transport_candidates(
            self._target, self.name, timeout, self._stdio_options, self._remote_options, prefer=prefer
        )

    def open(self: _C) -> _C:
        """Start the transport and negotiate the protocol. Blocks up to ``connect_timeout`` in all.

        Thread-safe: a lazy first use in another thread waits for this open instead of starting its own.

        ``connect_timeout`` is one deadline for the whole open: starting the transport, the
        ``server/discover`` probe (its ``probe_timeout`` is clipped to what is left), a fallback to
        the other remote transport, and the handshake.

        Raises:
            ConnectTimeout: the open did not finish within ``connect_timeout``.
            ConnectError: the server could not be started or reached.
            UnsupportedProtocolVersion: no common protocol version.
            ClientClosed: the client was already opened or closed.
        """
        with self._open_lock:
            return self._open_now()

    def _open_now(self: _C) -> _C:
        with self._lock:
            if self._state != "new":
                raise ClientClosed("a client can be opened only once", server=self.name)
            self._state = "opening"
        registry.track(self)  # from now on: a fork in the middle of the open is handled in the child
        errors: List[Tuple[str, BaseException]] = []
        deadline = Deadline(self.connect_timeout)
        extensions = tuple(self._extensions)
        for extension in extensions:
            extension.before_open(self._target)
        candidates = self._transport_candidates()
        for index, (label, factory) in enumerate(candidates):
            session = None
            try:
                if index > 0:  # a fallback gets what is left of the deadline
                    if deadline.expired():
                        raise deadline.error(self.name, errors[-1][1] if errors else None)
                    factory = self._transport_candidates(deadline.remaining())[index][1]
                transport = factory()
                session = Session(
                    transport,
                    name=self.name,
                    request_handler=self._on_server_request,
                    notification_handler=self._on_notification,
                    on_connection_lost=self._on_lost,
                    default_timeout=self.timeout,
                    notification_queue=self.notifications,
                )
                old = self._session
                if old is not None:  # the counters survive a reconnect
                    self._retired_drops[0] += old.dropped_callbacks
                    self._retired_drops[1] += old.refused_server_requests
                self._session = session
                session.start()
                if self._state != "opening":  # close() ran meanwhile: do not negotiate
                    raise ClientClosed("client closed while opening", server=self.name)
                if deadline.expired():
                    raise deadline.error(self.name)
                agreed = next((a for a in (e.prior(session) for e in extensions) if a is not None), None)
                if agreed is None:
                    agreed = self._negotiator(deadline).negotiate(session)
                    for extension in extensions:
                        extension.negotiated(agreed, label)
                self._agreed(agreed)
            except BaseException as exc:
                if isinstance(exc, RequestTimeout) and not isinstance(exc, ConnectTimeout):
                    timeout_exc = deadline.error(self.name, exc)  # every step is bounded by the deadline
                    timeout_exc.__cause__ = exc
                    exc = timeout_exc
                self._session = None
                self._last_transport = session.transport if session is not None else None
                if session is not None:
                    # A server that used up the connect bound has had its chance: a short grace before SIGTERM
                    # keeps the whole open close to connect_timeout (a 1 s grace made 2 s take 3).
                    session.close(0.2 if isinstance(exc, RequestTimeout) else 1.0)
                if self._state == "closed" and not isinstance(exc, ClientClosed):  # close() during the open
                    closed = ClientClosed("client closed while opening", server=self.name)
                    closed.__cause__ = exc
                    exc = closed
                errors.append((label, exc))
                if index + 1 < len(candidates) and self._should_fall_back(exc) and self._state != "closed":
                    logger.info(
                        "[%s] %s transport failed (%s); trying %s", self.name, label, exc, candidates[index + 1][0]
                    )
                    continue
                with self._lock:
                    self._state = "closed"
                self.notifications.close()
                if not self.lazy:
                    registry.untrack(self)
                if len(errors) > 1 and isinstance(exc, MCPError):
                    detail = "; ".join("%s: %s" % (lbl, e) for lbl, e in errors)
                    message = "could not connect to %s (%s)" % (self.name, detail)
                    if isinstance(exc, ConnectTimeout):
                        raise ConnectTimeout(message, timeout=exc.timeout, server=self.name) from exc
                    raise ConnectError(message, server=self.name) from exc
                raise exc
            self.transport_kind = label
            if len(candidates) > 1 and isinstance(self._target, str):
                self.memory.remember_transport(self._target, label)
            break
        with self._lock:
            if self._state != "opening":  # closed concurrently
                if self._session is not None:
                    self._session.close()
                raise ClientClosed("client closed while opening", server=self.name)
            self._state = "open"
        if self.keepalive and self.era == "legacy":
            self._keepalive_thread = spawn("mcpsync-keepalive:%s" % self.name, self._keepalive_loop)
        for extension in extensions:
            extension.opened(self._modern.seed_list)
        self._modern.after_open()
        return self

    def _reconnect_cold(self) -> None:
        """Close the connection and open a new one, negotiating afresh (the kept era verdict and transport choice
        are forgotten). Reached through :meth:`mcpsync.client.host.ClientHost.reconnect`."""
        with self._lock:
            session, self._session = self._session, None
            self._state = "new"
        if session is not None:
            session.close(1.0)
        self.memory.forget_era(self._cache_key())
        if isinstance(self._target, str):
            self.memory.forget_transport(self._target)
        registry.untrack(self)
        self.open()

    def _negotiator(self, deadline: Optional[Deadline] = None) -> Negotiator:
        """The era negotiation of one connection attempt, with what it needs of this client."""
        return Negotiator(
            deadline=deadline,
            name=self.name,
            protocol=self.protocol,
            probe_timeout=self.probe_timeout,
            connect_timeout=self.connect_timeout,
            client_info=self.client_info,
            log_level=self.log_level,
            cache_key=self._cache_key(),
            capabilities=self._capabilities,
            envelope=self._envelope,
            send=self._handshake_request if self._pipeline is not None else None,
            memory=self.memory,
        )

    def _handshake_request(
        self, session: Session, method: str, params: Dict[str, Any], timeout: Optional[float]
    ) -> Any:
        """An opening request (``initialize``, ``server/discover``) through the pipeline (no retries)."""
        assert self._pipeline is not None
        return self._pipeline.handshake(self, session, method, params, timeout)

    def _request_once(self, method: str, params: Optional[Dict[str, Any]]) -> Any:
        """One request through the pipeline, stamped in the modern era, without its completion (input rounds,
        task waits): the raw result."""
        session = self.session

        def send(p: Optional[Dict[str, Any]], on_sent: Optional[Callable[[Any], None]]) -> Any:
            return session.request(method, self._stamp(p) if self.era == "modern" else p, before_send=on_sent)

        pipeline = self._pipeline
        return send(params, None) if pipeline is None else pipeline.call(self, method, params, send)

    def _agreed(self, agreed: Negotiated) -> None:
        """Take on what the negotiation agreed."""
        self.era = agreed.era
        self.protocol_version = agreed.protocol_version
        self.server_info = agreed.server_info
        self.server_capabilities = agreed.server_capabilities
        self.instructions = agreed.instructions

    def _should_fall_back(self, exc: BaseException) -> bool:
        if not isinstance(self._target, str):
            return False
        from ..transports.http import remote as _remote

        return bool(_remote.should_fall_back(exc))

    def close(self, timeout: Optional[float] = None) -> None:
        """Close the connection and stop every thread. Idempotent; callable from any thread and callbacks.

        Pending calls fail with :class:`~mcpsync.errors.ConnectionClosed`. Bounded: a stdio
        server gets ``shutdown_timeout`` after EOF and again after SIGTERM. Callbacks still queued
        are discarded: once it returns no user callback runs (one already running is waited for,
        up to 2 s).
        """
        self._user_closed = True
        s = self._session
        if s is not None and s.forked:
            self._abandon_after_fork()
            return
        with self._lock:
            if self._state == "closed":
                registry.untrack(self)
                return
            self._state = "closed"
            session = self._session
        self._keepalive_stop.set()
        try:
            self._modern.close()
        except Exception:  # noqa: BLE001
            logger.debug("[%s] feature shutdown failed", self.name, exc_info=True)
        if session is not None:
            session.close(timeout)
        join(self._keepalive_thread, 1.0)
        self.notifications.close()
        for extension in self._extensions:
            try:
                extension.close()
            except Exception:  # noqa: BLE001
                logger.debug("[%s] extension shutdown failed", self.name, exc_info=True)
        registry.untrack(self)

    def _abandon_after_fork(self) -> None:
        """In a forked child: closed at once, without I/O or signals (see :func:`.reopen.abandon_after_fork`)."""
        reopen.abandon_after_fork(self)

    def __enter__(self: _C) -> _C:
        if self._state == "new":
            self.open()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return "<%s %r %s era=%s version=%s>" % (
            type(self).__name__,
            self.name,
            self._state,
            self.era,
            self.protocol_version,
        )

    def _on_lost(self, exc: BaseException) -> None:
        logger.warning("[%s] connection lost: %s", self.name, exc)
        if self.on_connection_lost is not None:
            self.on_connection_lost(exc)

    def _keepalive_loop(self) -> None:
        while not self._keepalive_stop.wait(self.keepalive):
            if not self.connected:
                return
            try:
                self._call("ping", None, timeout=max(5.0, float(self.keepalive or 0)))  # through the interceptors
            except ClientClosed:
                return
            except MCPError as exc:
                logger.warning("[%s] keep-alive ping failed: %s", self.name, exc)

    # capabilities ----------------------------------------------------------------

    def _capabilities(self, modern: bool) -> Dict[str, Any]:
        caps: Dict[str, Any] = {}
        if self._roots is not None:
            caps["roots"] = {} if modern else {"listChanged": True}
        if self.sampling_handler is not None:
            caps["sampling"] = {}
        if self.elicitation_handler is not None:
            caps["elicitation"] = {"form": {}, "url": {}}
        extensions: Dict[str, Any] = {}
        if self.tasks_enabled and modern:
            extensions[P.TASKS_EXTENSION] = {}
        if self.apps_enabled:  # MCP Apps: both eras (initialize, and each 2026-07-28 request's envelope)
            extensions[P.UI_EXTENSION] = {"mimeTypes": [P.UI_MIME_TYPE]}
        if extensions:
            caps["extensions"] = extensions
        for extension in self._extensions:  # what an extension answers in the user's place
            extension.capabilities(caps)
        return caps

    # the request funnel ----------------------------------------------------------

    def _envelope(self, version: Optional[str] = None) -> Dict[str, Any]:
        """The 2026-07-28 ``_meta`` envelope (a fresh dict; built once per configuration and copied)."""
        key = (
            version or self.protocol_version,
            self.log_level,
            self._roots is None,
            self.sampling_handler is None,
            self.elicitation_handler is None,
            self.tasks_enabled,
            self.apps_enabled,
            id(self.trace_context),
            len(self.trace_context),
        )
        cached = self._envelope_cache
        if cached is None or cached[0] != key:
            cached = self._envelope_cache = (key, self._build_envelope(version))
        return dict(cached[1])

    def _build_envelope(self, version: Optional[str]) -> Dict[str, Any]:
        meta: Dict[str, Any] = {
            P.META_PROTOCOL_VERSION: version or self.protocol_version or P.LATEST_MODERN_VERSION,
            P.META_CLIENT_CAPABILITIES: self._capabilities(True),
            P.META_CLIENT_INFO: self.client_info,
        }
        if self.log_level is not None:
            meta[P.META_LOG_LEVEL] = self.log_level
        if self.trace_context:  # (also put in each request's own _meta by the pipeline, in both eras)
            meta.update(self.trace_context)
        return meta

    def _stamp(self, params: Optional[Dict[str, Any]]) -> Dict[str, Any]:
        params = dict(params or {})
        meta = self._envelope()
        user_meta = params.get("_meta")
        if isinstance(user_meta, dict):
            meta.update(user_meta)
        params["_meta"] = meta
        return params

    def require_capability(self, capability: str, method: str, sub: Optional[str] = None) -> None:
        """Raise CapabilityError (before anything is sent) when the server did not declare ``capability``.

        A client that is not open raises :class:`~mcpsync.ClientClosed` instead (a lazy one opens first)."""
        self.session  # noqa: B018 - opens a lazy client / reopens in a forked child, or raises ClientClosed
        caps = self.server_capabilities
        declared = caps.get(capability)
        if capability not in caps:
            problem = "did not declare the %r capability needed by %s" % (capability, method)
        elif sub is not None and not (isinstance(declared, dict) and declared.get(sub)):
            problem = "does not support %s.%s (needed by %s)" % (capability, sub, method)
        else:
            return
        raise CapabilityError("server %r %s" % (self.name, problem), server=self.name, method=method)

    def _call(
        self,
        method: str,
        params: Optional[Dict[str, Any]] = None,
        *,
        timeout: Timeout = DEFAULT,
        max_total_timeout: Any = DEFAULT,
        progress: Optional[Callable[..., Any]] = None,
        progress_token: bool = False,
        owned_params: bool = False,
    ) -> Any:
        """Send ``method`` and return its complete result (running input rounds in the modern era)."""
        pipeline = self._pipeline
        if pipeline is not None:  # interceptors, tracing, retries, trace context (mcpsync.client.pipeline)

            def send(p: Optional[Dict[str, Any]], on_sent: Callable[[Any], None]) -> Any:
                return self._send_call(method, p, timeout, max_total_timeout, progress, progress_token, True, on_sent)

            return pipeline.call(self, method, params, send)
        return self._send_call(method, params, timeout, max_total_timeout, progress, progress_token, owned_params)

    def _authorize_tool(
        self, name: str, arguments: Dict[str, Any], lookup: Optional[Callable[[str], Optional[Tool]]] = None
    ) -> Dict[str, Any]:
        """Apply the tool policy and approval handler: the arguments to send (raises ToolDenied)."""
        pipeline = self._pipeline
        return pipeline.authorize_tool(self, name, arguments, lookup) if pipeline is not None else arguments

    def _send_call(
        self,
        method: str,
        params: Optional[Dict[str, Any]],
        timeout: Timeout,
        max_total_timeout: Any,
        progress: Optional[Callable[..., Any]],
        progress_token: bool,
        owned_params: bool,
        before_send: Optional[Callable[[Any], None]] = None,
    ) -> Any:
        total = self.max_total_timeout if max_total_timeout is DEFAULT else max_total_timeout
        if self.era != "modern":
            return self.session.request(
                method,
                params,
                timeout=timeout,
                max_total_timeout=total,
                progress=progress,
                progress_token=progress_token,
                owned_params=owned_params,
                before_send=before_send,
            )
        extensions = self._extensions
        steps = [e for e in extensions if type(e).handle is not ClientExtension.handle] if extensions else None
        if not steps:  # no extension wraps the call: stamp and send here, without a chain, closures or RequestInfo
            fresh = self._stamp(params)
            for extension in extensions:
                extension.stamped(fresh)
            result = self.session.request(
                method,
                fresh,
                timeout=timeout,
                max_total_timeout=total,
                progress=progress,
                progress_token=progress_token,
                owned_params=True,  # _stamp made fresh params and a fresh _meta
                before_send=before_send,
            )
            return self._complete(method, fresh, result, timeout, total, progress, progress_token)

        def send(p: Optional[Dict[str, Any]], owned: bool) -> Any:
            return self.session.request(
                method,
                p,
                timeout=timeout,
                max_total_timeout=total,
                progress=progress,
                progress_token=progress_token,
                owned_params=owned,
                before_send=before_send,
            )

        sent: List[Optional[Dict[str, Any]]] = []

        def wire(request: RequestInfo) -> Any:  # the innermost step: stamped afresh on each call
            if self.era != "modern":  # an extension reconnected, and the server now speaks the handshake era
                sent.append(None)
                return send(request.params, owned_params)
            stamped = self._stamp(request.params)
            for extension in self._extensions:
                extension.stamped(stamped)
            sent.append(stamped)
            return send(stamped, True)  # _stamp made fresh params and a fresh _meta

        request = RequestInfo(self.name, method, params, era="modern")
        result = run_chain(steps, request, wire)  # the extensions that wrap the call, outermost first
        stamped = sent[-1] if sent else None
        if stamped is None:  # an extension answered without sending, or the era changed under it
            return result
        return self._complete(method, stamped, result, timeout, total, progress, progress_token)

    def _complete(
        self,
        method: str,
        params: Dict[str, Any],
        result: Any,
        timeout: Timeout,
        total: Optional[float],
        progress: Optional[Callable[..., Any]],
        progress_token: bool,
    ) -> Any:
        """Modern era: check ``resultType`` and drive ``input_required`` rounds (at most 10).

        An extension's ``input_required`` hook may return an exception to raise instead of asking the handlers.
        """
        rounds: Optional[int] = None  # the input rounds so far: counted at the first input_required
        failed: Optional[Tuple[str, BaseException]] = None
        while True:
            if not isinstance(result, dict):
                raise ProtocolError("%s returned a non-object result" % method, server=self.name, method=method)
            rtype = result.get("resultType", "complete")
            if rtype == "complete" or rtype is None:
                return result
            if rtype == "task":
                from .tasks import wait_task_result  # here: only a task-augmented call loads the task poller

                return wait_task_result(self, method, result, total)
            if rtype != "input_required":
                raise ProtocolError(
                    "unknown resultType %r in %s result" % (rtype, method), server=self.name, method=method
                )
            if method not in _MRTR_METHODS:
                raise ProtocolError("%s may not answer input_required" % method, server=self.name, method=method)
            if rounds is None:
                rounds = sum(extension.input_rounds_before() for extension in self._extensions)
            rounds += 1
            self._modern.mark_mrtr()
            if rounds > MAX_INPUT_ROUNDS:
                raise ProtocolError(
                    "server asked for input more than %d times for one %s" % (MAX_INPUT_ROUNDS, method),
                    server=self.name,
                    method=method,
                )
            retry = {k: v for k, v in params.items() if k not in ("inputResponses", "requestState")}
            requests = result.get("inputRequests")
            for extension in self._extensions:
                stop = extension.input_required(method, params, result, rounds)
                if stop is not None:
                    raise stop
            if failed is not None:  # the server did not take the error answer: it would ask forever
                raise MCPError(
                    "the handler for %s failed (%s: %s) and the server asked for the input again"
                    % (failed[0], type(failed[1]).__name__, failed[1]),
                    server=self.name,
                    method=method,
                ) from failed[1]
            if isinstance(requests, dict) and requests:
                failures: List[Tuple[str, BaseException]] = []
                retry["inputResponses"] = self.fulfil_input_requests(requests, method, failures)
                failed = failures[0] if failures else None
            if "requestState" in result:
                retry["requestState"] = result["requestState"]
            params = retry
            result = self.session.request(
                method,
                retry,
                timeout=timeout,
                max_total_timeout=total,
                progress=progress,
                progress_token=progress_token,
            )

    def fulfil_input_requests(
        self, requests: Dict[str, Any], method: str, failures: Optional[List[Tuple[str, BaseException]]] = None
    ) -> Dict[str, Any]:
        """Answer each entry of ``inputRequests`` through the user's handlers (:func:`.answers.fulfil`)."""
        return fulfil(self, requests, method, failures)

    # server requests ---------------------------------------------------------------

    def _on_server_request(self, method: str, params: Dict[str, Any], ctx: RequestContext) -> Any:
        for extension in self._extensions:
            if extension.takes_server_request(method):
                return extension.server_request(method, params, ctx)
        return answer_for(self, method, params, missing=None, during=None)

    # notifications (reader thread: quick, no user code): mcpsync.client.notify ------------

    def _on_notification(self, method: str, params: Dict[str, Any]) -> None:
        self._notify.on_notification(method, params)

    def _route_notification(self, method: str, params: Dict[str, Any]) -> None:
        self._notify.route(method, params)

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
        **removed: NoReturn,
    ) -> CallToolResult:
        """Call a tool and block until its result.

        The request always carries a progressToken, so progress notifications
        restart the idle ``timeout``; ``max_total_timeout`` caps the whole call.
        On timeout the server gets ``notifications/cancelled`` and
        :class:`~mcpsync.RequestTimeout` (a ``TimeoutError``) is raised.
        A tool that reports failure returns a result with ``is_error`` set (see
        ``CallToolResult.raise_for_error``). A task-augmented answer (2026-07-28
        tasks extension) is polled to its end transparently.

        Raises:
            ToolInputInvalid: arguments fail the inputSchema (with validate_input).
            ToolOutputInvalid: structuredContent fails the outputSchema (``.result`` has the result).
            RequestTimeout, RemoteError, ConnectionClosed, CapabilityError.
            ConfigError: a keyword this method does not take (one that moved says where).
        """
        if removed:
            raise call_keyword_error("call_tool", removed)
        params = self._tool_params(name, arguments, meta, validate_input)
        if self.era == "legacy" and self._task_required(name):
            # 2025-11-25 experimental tasks: this tool only runs as a task; wait for it transparently.
            from .tasks import start_authorized_task

            total = self.max_total_timeout if max_total_timeout is DEFAULT else max_total_timeout
            handle = start_authorized_task(self, name, params["arguments"], on_status=self.on_task_status)
            if isinstance(handle, CallToolResult):
                return handle
            return self._tool_result(name, handle.result_raw(total), validate_output)

        relisted = False
        while True:
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
                return self._tool_result(name, raw, validate_output)
            except HeaderMismatch:
                if relisted:
                    raise
                # 2026-07-28: the Mcp-Param-* headers disagreed with the tool's current schema: re-list, retry once
                relisted = True
                logger.info("[%s] header mismatch on %s; re-listing tools and retrying once", self.name, name)
                self._modern.evict_list("tools")
                self.list_tools(timeout=timeout)

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

        def send(
            sent: Optional[Dict[str, Any]], before: Optional[Callable[[Any], None]]
        ) -> RequestHandle[CallToolResult]:
            stamped = self._stamp(sent) if self.era == "modern" else sent or {}

            def finish(raw: Any) -> CallToolResult:
                if self.era == "modern":
                    raw = self._complete("tools/call", stamped, raw, timeout, total, progress, True)
                return self._tool_result(name, raw, validate_output)

            return self.session.request_async(
                "tools/call",
                stamped,
                timeout=timeout,
                max_total_timeout=total,
                progress=progress,
                progress_token=True,
                transform=finish,
                before_send=before,
            )

        pipeline = self._pipeline  # interceptors: on_request here, on_result/on_error on the dispatch thread
        if pipeline is None:
            return send(params, None)
        return pipeline.request_async(self, "tools/call", params, send)

    # ------------------------------------------------------------------ prompts / resources

    def get_prompt(
        self,
        name: str,
        arguments: Optional[Dict[str, str]] = None,
        *,
        timeout: Timeout = DEFAULT,
        **removed: NoReturn,
    ) -> GetPromptResult:
        """Get a prompt filled with ``arguments`` (string values). A keyword it does not take is a ConfigError."""
        if removed:
            raise call_keyword_error("get_prompt", removed)
        self.require_capability("prompts", "prompts/get")
        params: Dict[str, Any] = {"name": name}
        if arguments:
            params["arguments"] = {k: v if isinstance(v, str) else str(v) for k, v in arguments.items()}
        return GetPromptResult.from_dict(self._call("prompts/get", params, timeout=timeout))

    def read_resource(
        self,
        uri: str,
        *,
        timeout: Timeout = DEFAULT,
        cache: CacheMode = "use",
        **removed: NoReturn,
    ) -> ReadResourceResult:
        """Read a resource. Raises :class:`~mcpsync.errors.ResourceNotFound` for an unknown URI.

        ``cache`` (2026-07-28 response cache, per the server's ``ttlMs``): ``"use"`` a fresh cached answer,
        ``"refresh"`` ask the server and cache its answer, ``"bypass"`` ask the server and keep nothing.
        A keyword it does not take is a ConfigError.
        """
        if removed:
            raise call_keyword_error("read_resource", removed)
        self.require_capability("resources", "resources/read")
        cached = self._modern.cached_read(uri) if _cache_mode(cache) == "use" else None
        if cached is not None:
            return ReadResourceResult.from_dict(cached)
        result = self._call("resources/read", {"uri": uri}, timeout=timeout)
        if cache != "bypass":
            self._modern.store_read(uri, result)
        return ReadResourceResult.from_dict(result)

    # ------------------------------------------------------------------ extensions

    def extension(self, kind: Type[_X]) -> Optional[_X]:
        """The hooks of type ``kind`` an ``extensions=`` entry attached to this client (what its ``attach``
        returned), or None. How an extension's own functions find their state on a client; no I/O."""
        return next((e for e in self._extensions if isinstance(e, kind)), None)

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
        flt = listen_filter(tools=tools, prompts=prompts, resources=resources, resource_uris=resource_uris)
        return self._modern.listen(flt, on_event, auto_relisten)

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
