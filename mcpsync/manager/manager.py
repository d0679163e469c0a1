"""Many servers at once: :class:`Manager`.

A manager owns one :class:`~mcpsync.Client` per configured server and is meant
to be created once (at application start-up) and shared by every thread::

    mgr = Manager.from_file("claude_desktop_config.json").open()   # connects all, concurrently
    tools = mgr.tools_for("openai")                                  # ready-to-send definitions
    reply = mgr.call_from_tool_call(tool_call)                       # provider-shaped result
    mgr.close()

Connecting: every enabled server connects on its own daemon thread
(``mcpsync-manager-connect:<name>``) bounded by its own ``connect_timeout``, so a
slow or broken server never delays the others. With ``lazy=True`` (per manager
or per server) a server connects on first use instead.

Status per server (:class:`ServerStatus`): ``connected``, ``disabled``,
``failed`` (with the error and a reason: exit code and stderr tail, or the HTTP
status), ``needs_auth``, ``needs_client_registration``, plus ``connecting``,
``not_connected`` (lazy, not used yet) and ``disconnected`` (by :meth:`Manager.disconnect`).

Recovery: a server whose connection dies (a stdio process exits) is reported
``failed`` and restarted on its next use, with a capped exponential backoff
between failed restarts (reset after a success). A ``tools/call`` that was sent
is never retried. Tool lists are cached; ``notifications/tools/list_changed``
refreshes them in the background (coalesced; the previous list is kept if the
refresh fails) and fires the ``tools_changed`` event.

Events (callbacks run on the ``mcpsync-manager-events`` thread, never on an I/O
thread): ``tools_changed(server)``, ``status_changed(server, ServerStatus)``,
``browser_open_failed(server, url)``.

Thread-safety: every method may be called from any thread at the same time.
No lock is held while talking to a server.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Literal, Mapping, Optional, Tuple, TypeVar, Union, overload

from .. import _forks
from .._threads import join, spawn
from ..client.memory import ServerMemory
from ..errors import (
    AuthRequired,
    CapabilityError,
    ClientClosed,
    ConfigError,
    ConnectError,
    ConnectionClosed,
    HTTPStatusError,
    MCPError,
    MethodNotFound,
    NeedsClientRegistration,
    ProtocolError,
    InputNotResumable,
    RemoteError,
    RequestTimeout,
    ToolDenied,
)
from ..client.flat import HTTP_FIELDS, STDIO_FIELDS
from ..session import DEFAULT, RequestHandle, Timeout
from ..types import CallToolResult, GetPromptResult, ProgressEvent, ReadResourceResult, Tool
from . import adapters as _adapters
from .config import ServerConfig, find_config, load_config, parse_config, server_config
from .flat import flat_options, grouped
from .naming import NameTable
from .records import (
    CONNECTED,
    CONNECTING,
    DISABLED,
    DISCONNECTED,
    FAILED,
    NEEDS_AUTH,
    NEEDS_CLIENT_REGISTRATION,
    NOT_CONNECTED,
    OnBrowserOpenFailed,
    OnStatusChanged,
    OnToolsChanged,
    RemoveListener,
    RestartPolicy,
    ServerPrompt,
    ServerResource,
    ServerResourceTemplate,
    ServerStatus,
    UnknownTool,
    _Attempt,
    _classify,
    _Events,
    _Server,
)

if TYPE_CHECKING:  # pragma: no cover
    from ..auth import OAuthManager
    from ..client.client import Client
    from ..input.deferred import InputRequired

__all__ = ["Manager", "ServerTool"]  # the status names and records: mcpsync.manager (from .records)

_T = TypeVar("_T")

log = logging.getLogger(__name__)

ServerTool = _adapters.ServerTool


class Manager:
    """Connects and manages many MCP servers; see the module docstring.

    Args:
        config: a file path, a dict (any format of :mod:`mcpsync.manager.config`), an
            iterable of :class:`~mcpsync.manager.config.ServerConfig`, or None (add servers later).
        lazy: connect each server on first use rather than in :meth:`open`.
        client_options: keyword arguments for every :class:`~mcpsync.Client`
            (``sampling_handler``, ``roots``, ``options=ClientOptions(...)``...; the flat names of the option
            objects' fields, such as ``verify`` or ``on_log``, work here too); a server's ``options`` win.
            The clients share one :class:`~mcpsync.client.ServerMemory` (:attr:`memory`: the protocol era each
            server spoke, the remote transport that worked per URL), so that a fleet probes each server once and
            the new client of a restarted server starts from what the old one learned; ``memory=`` here names another.
        apps: declare MCP Apps support to every server (``ClientOptions(apps=True)``; a server's
            ``options: {"apps": false}`` opts out). Model-facing listings never include app-only tools either way.
        oauth: an :class:`mcpsync.auth.OAuthManager` to use (default: one created on first need,
            with ``oauth_options``).
        oauth_options: keyword arguments for the OAuthManager created by default.
        restart_backoff: ``(first, cap)`` seconds between failed restarts of a server: the wait
            doubles with each consecutive failure, up to ``cap``.
        stable_after: a connection that stayed up this many seconds, or that answered a
            ``tools/call`` successfully, resets the failure count; one that dies sooner (a server
            that connects fine and crashes on every call) counts as a failure, so restarts back off.
        clock: the monotonic clock used for restart backoff (tests inject a fake one).
        on_tools_changed, on_status_changed, on_browser_open_failed: event listeners (see :meth:`on`).
        client_factory: builds a client from ``(target, **kwargs)`` (default :class:`mcpsync.Client`).
        env: the environment used for ``${VAR}`` interpolation (default ``os.environ``).
        register_clients: when a server answers 401, discover its authorization server and register an
            OAuth client right away (dynamic registration), so that a server with no way to get a client id
            reports ``needs_client_registration``. False: only check that a client id could be obtained,
            registering nothing (the ``mcpsync`` CLI's status and listings use this).
    """

    def __init__(
        self,
        config: Any = None,
        *,
        lazy: bool = False,
        client_options: Optional[Mapping[str, Any]] = None,
        oauth: Any = None,
        oauth_options: Optional[Mapping[str, Any]] = None,
        restart_backoff: Tuple[float, float] = (1.0, 30.0),
        stable_after: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        on_tools_changed: Optional[Callable[[str], Any]] = None,
        on_status_changed: Optional[Callable[[str, ServerStatus], Any]] = None,
        on_browser_open_failed: Optional[Callable[[str, str], Any]] = None,
        client_factory: Optional[Callable[..., Any]] = None,
        env: Optional[Mapping[str, str]] = None,
        register_clients: bool = True,
        apps: bool = False,
    ) -> None:
        if isinstance(config, (str, Path)):
            configs = load_config(config, env=env)
        elif config is None:
            configs = {}
        else:
            configs = parse_config(config, env=env)
        self.lazy = lazy
        self.client_options = flat_options(client_options or {})  # flat names: merged under each server's own
        if apps:
            self.client_options.setdefault("apps", True)
        given = self.client_options.pop("memory", None)
        #: what the manager's clients learned about their servers, shared by all of them (thread-safe)
        self.memory: ServerMemory = given if isinstance(given, ServerMemory) else ServerMemory()
        self._restarts = RestartPolicy(restart_backoff, stable_after, clock)
        self._env = env
        self._register_clients = register_clients
        self._oauth: Optional[OAuthManager] = oauth
        self._owns_oauth = False  # True once the manager made its own OAuthManager (then it closes it)
        self._oauth_options = dict(oauth_options or {})
        self._factory = client_factory
        self._lock = threading.RLock()
        self._servers: Dict[str, _Server] = {}
        self._closed = False
        self._opened = False
        self._version = 0
        self._table_cache: Optional[Tuple[int, NameTable, Dict[str, ServerTool]]] = None
        self._events = _Events()
        for event, cb in (
            ("tools_changed", on_tools_changed),
            ("status_changed", on_status_changed),
            ("browser_open_failed", on_browser_open_failed),
        ):
            if cb is not None:
                self._events.add(event, cb)
        for name, cfg in configs.items():
            self._servers[name] = _Server(cfg, self._is_lazy(cfg))
        _forks.after_fork_in_child(self._reset_after_fork)  # held weakly: goes with this manager

    @classmethod
    def from_file(cls, path: Optional[Union[str, Path]] = None, **kwargs: Any) -> "Manager":
        """A manager for a configuration file; with no path, the first one :func:`~mcpsync.manager.config.find_config`
        finds (raises :class:`~mcpsync.ConfigError` when there is none). Does not connect."""
        if path is None:
            path = find_config()
            if path is None:
                raise ConfigError("no MCP configuration found; pass a path or set $MCPSYNC_CONFIG")
        return cls(path, **kwargs)

    def _reset_after_fork(self) -> None:
        """In a forked child (multiprocessing, gunicorn --preload, Celery prefork): drop the parent's connections
        without touching them (their clients are abandoned: descriptors released, no I/O, no signals) and mark
        each enabled server not connected, so it reconnects, in this process, on next use. Runs in the
        ``os.register_at_fork`` hook, so every lock a dead thread may hold is replaced."""
        self._lock = threading.RLock()
        self._events.reset_after_fork()
        for rec in self._servers.values():
            rec.lock = threading.Lock()
            for client in (rec.client, rec.attempt.client if rec.attempt is not None else None):
                if client is not None:
                    self._close_quietly(client)
            rec.client, rec.attempt, rec.refresh_thread = None, None, None
            rec.generation += 1
            rec.failures, rec.retry_at, rec.lost, rec.served = 0, 0.0, False, False
            if rec.config.enabled and not self._closed:
                rec.status = ServerStatus(rec.config.name, NOT_CONNECTED)

    def _is_lazy(self, cfg: ServerConfig) -> bool:
        return self.lazy if cfg.lazy is None else cfg.lazy

    def __repr__(self) -> str:
        with self._lock:
            counts: Dict[str, int] = {}
            for rec in self._servers.values():
                counts[rec.status.status] = counts.get(rec.status.status, 0) + 1
        return "<Manager %s>" % (", ".join("%s=%d" % kv for kv in sorted(counts.items())) or "empty")

    def __enter__(self) -> "Manager":
        return self.open()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ events

    @overload
    def on(self, event: Literal["tools_changed"], callback: OnToolsChanged) -> RemoveListener: ...
    @overload
    def on(self, event: Literal["status_changed"], callback: OnStatusChanged) -> RemoveListener: ...
    @overload
    def on(self, event: Literal["browser_open_failed"], callback: OnBrowserOpenFailed) -> RemoveListener: ...

    def on(self, event: str, callback: Callable[..., object]) -> RemoveListener:
        """Add a listener for ``event`` (one of :data:`EVENTS`); returns a function that removes it.
        Listeners run on the ``mcpsync-manager-events`` thread; they may call the manager (their arguments:
        :data:`~mcpsync.manager.records.OnToolsChanged`, ``OnStatusChanged``, ``OnBrowserOpenFailed``)."""
        return self._events.add(event, callback)

    def _set_status(self, rec: _Server, status: ServerStatus) -> None:
        """Record a new status (caller holds ``rec.lock``); emits status_changed when it differs."""
        old, rec.status = rec.status, status
        if (old.status, old.reason) != (status.status, status.reason):
            log.info("server %s: %s", status.name, status)
            self._events.emit("status_changed", status.name, status)

    def _bump(self) -> None:
        with self._lock:
            self._version += 1

    # ------------------------------------------------------------------ records

    def _record(self, name: str) -> _Server:
        with self._lock:
            if self._closed:
                raise ClientClosed("the manager is closed")
            rec = self._servers.get(name)
        if rec is None:
            raise ConfigError("unknown server %r" % name)
        return rec

    def _records(self) -> List[_Server]:
        with self._lock:
            if self._closed:
                raise ClientClosed("the manager is closed")
            return list(self._servers.values())

    @property
    def names(self) -> List[str]:
        """Every configured server name, in configuration order."""
        with self._lock:
            return list(self._servers)

    def config(self, name: str) -> ServerConfig:
        """The configuration of server ``name``."""
        return self._record(name).config

    # ------------------------------------------------------------------ connecting

    def open(self, *, wait: bool = True, timeout: Optional[float] = None) -> "Manager":
        """Start connecting every enabled, non-lazy server, all at once; returns self.

        With ``wait`` blocks until each has connected or failed: at most the
        slowest server's connect bound (or ``timeout``). Calling it again
        connects servers that were added or not started; it never retries failures.
        """
        attempts = []
        with self._lock:
            self._opened = True
        for rec in self._records():
            with rec.lock:
                if rec.status.status == NOT_CONNECTED and not rec.lazy:
                    attempts.append((rec, self._start(rec)))
        if wait:
            self._await_all(attempts, timeout)
        return self

    def _bound(self, rec: _Server) -> float:
        probe = float(flat_options(self.client_options).get("probe_timeout", 5.0))
        return 2 * float(rec.config.connect_timeout) + probe + 5.0

    def _start(self, rec: _Server) -> _Attempt:
        """Begin connecting ``rec`` on its own thread (caller holds ``rec.lock``); single flight."""
        if rec.attempt is not None and not rec.attempt.done.is_set():
            return rec.attempt
        attempt = _Attempt()
        rec.attempt = attempt
        rec.generation += 1
        self._set_status(rec, ServerStatus(rec.config.name, CONNECTING))
        attempt.thread = spawn(
            "mcpsync-manager-connect:%s" % rec.config.name, self._connect_worker, rec, attempt, rec.generation
        )
        return attempt

    def _make_client(self, rec: _Server, generation: int) -> Any:
        cfg = rec.config
        if cfg.card and not cfg.url:
            cfg = self._card_config(cfg, seed=rec.card_seed)
        target, kwargs = cfg.client_arguments()
        options = flat_options(self.client_options)
        options.update(flat_options(kwargs))
        options.setdefault("memory", self.memory)  # one memory for the fleet: each server is probed once
        user_changed = options.pop("on_tools_changed", None)
        user_lost = options.pop("on_connection_lost", None)

        def tools_changed() -> None:
            self._tools_changed(rec, generation)
            if user_changed is not None:
                user_changed()

        def lost(exc: BaseException) -> None:
            self._lost(rec, generation, exc)
            if user_lost is not None:
                user_lost(exc)

        options["on_tools_changed"] = tools_changed
        options["on_connection_lost"] = lost
        if cfg.kind == "remote" and cfg.oauth_enabled and "auth" not in options:
            options["auth"] = self._oauth_manager(cfg).auth(cfg.name)
        # the manager's client_options apply to every server: each kind keeps the settings that fit it
        unfit = ("headers", "auth", "bearer_token") + HTTP_FIELDS if cfg.kind == "stdio" else STDIO_FIELDS
        for key in unfit:
            if key != "max_message_size":
                options.pop(key, None)
        if "warm_cache" in options:  # the flat spelling (configuration files, client_options): an extension
            from ..warm.cache import WarmCache

            cache = WarmCache.coerce(options.pop("warm_cache"))
            if cache is not None:
                options["extensions"] = list(options.get("extensions") or ()) + [cache]
        factory = self._factory
        if factory is None:
            from ..client.client import Client

            factory = Client
        arguments = grouped(options, remote=cfg.kind == "remote")
        from ..input.extension import DeferInput  # call_tool(defer_input=True) needs one on every client

        extensions = list(arguments.get("extensions") or ())
        if not any(isinstance(e, DeferInput) for e in extensions):
            arguments["extensions"] = extensions + [DeferInput(every_call=False)]
        return factory(target, **arguments)

    def _registration_check(self, cfg: Any, exc: BaseException) -> BaseException:
        """A 401 from an OAuth-enabled server: discover and register now (no browser), as OpenCode does,
        so that a server whose authorization server offers no way to get a client id reports
        needs_client_registration rather than needs_auth."""
        auth = exc if isinstance(exc, AuthRequired) else getattr(exc, "__cause__", None)
        if not isinstance(auth, AuthRequired) or not cfg.oauth_enabled:  # a static credential: no OAuth
            return exc
        try:
            self._oauth_for(cfg.name).ensure_client(
                cfg.name, challenge=auth.www_authenticate or None, register=self._register_clients
            )
        except NeedsClientRegistration as reg:
            return reg
        except Exception as other:  # noqa: BLE001 - discovery problems keep the needs_auth status
            log.debug("server %s: OAuth preparation failed: %s", cfg.name, other)
        return exc

    def _connect_worker(self, rec: _Server, attempt: _Attempt, generation: int) -> None:
        cfg, client, tools = rec.config, None, None
        deadline = time.monotonic() + self._bound(rec)
        try:
            if cfg.error is not None:
                raise cfg.error
            client = self._make_client(rec, generation)
            with rec.lock:
                attempt.client = client
                if self._closed or rec.attempt is not attempt:
                    raise ClientClosed("connection abandoned")
            client.open()
            tools = self._list_tools(client, max(1.0, min(float(cfg.connect_timeout), deadline - time.monotonic())))
        except BaseException as exc:  # noqa: BLE001 - every failure becomes a status
            stderr = list(getattr(client, "stderr_tail", None) or []) if client is not None else []
            if client is not None:
                self._close_quietly(client)
            exc = self._registration_check(cfg, exc)
            with rec.lock:
                if cfg.card and client is not None and isinstance(exc, (ProtocolError, RemoteError, HTTPStatusError)):
                    rec.card_seed = False  # the card named a revision the server refused: negotiate next time
                if rec.attempt is attempt and not self._closed:
                    rec.count_failure(self._restarts)
                    self._set_status(rec, _classify(cfg.name, exc, rec.secrets(), stderr, cfg.kind))
            log.debug("server %s failed to connect", cfg.name, exc_info=True)
            attempt.done.set()
            return
        old = None
        with rec.lock:
            current = rec.attempt is attempt and not self._closed
            if current:
                old, rec.client, rec.tools = rec.client, client, tools
                # the failure count is reset only once this connection proves itself (see _mark_lost)
                rec.lost, rec.served, rec.connected_at = False, False, self._restarts.clock()
                self._set_status(
                    rec, ServerStatus(cfg.name, CONNECTED, transport=getattr(client, "transport_kind", None))
                )
                if rec.refresh_dirty and rec.refresh_thread is None:  # list_changed arrived while connecting
                    rec.refresh_thread = spawn(
                        "mcpsync-manager-refresh:%s" % cfg.name, self._refresh_worker, rec, generation
                    )
        if not current:
            self._close_quietly(client)
        else:
            self._bump()
            if old is not None:
                self._close_quietly(old)
        attempt.done.set()

    @staticmethod
    def _list_tools(client: Any, timeout: float) -> List[Tool]:
        caps = getattr(client, "server_capabilities", None)
        if isinstance(caps, dict) and "tools" not in caps:
            return []
        try:
            return list(client.list_tools(timeout=timeout))
        except (CapabilityError, MethodNotFound):
            return []

    @staticmethod
    def _close_quietly(client: Any, timeout: float = 5.0) -> None:
        try:
            client.close(timeout)
        except Exception:  # noqa: BLE001
            log.debug("closing a client failed", exc_info=True)

    def _wait(self, rec: _Server, attempt: _Attempt, timeout: Optional[float] = None) -> None:
        """Wait for ``attempt``; past its bound, give up on it (the server is marked failed)."""
        bound = self._bound(rec) if timeout is None else timeout
        if attempt.done.wait(bound):
            return
        with rec.lock:
            if rec.attempt is not attempt or attempt.done.is_set():
                return
            rec.attempt = None
            client = attempt.client
            exc = RequestTimeout("connecting took longer than %.0fs" % bound, timeout=bound, server=rec.config.name)
            rec.count_failure(self._restarts)
            self._set_status(rec, _classify(rec.config.name, exc, rec.secrets(), [], rec.config.kind))
        if client is not None:
            self._close_quietly(client)

    def _await_all(self, attempts: List[Tuple[_Server, _Attempt]], timeout: Optional[float]) -> None:
        for rec, attempt in attempts:
            self._wait(rec, attempt, timeout)

    def _client_for(self, rec: _Server, *, targeted: bool = True) -> Client:
        """The live client of ``rec``, connecting or restarting it when allowed. Blocks up to the connect bound."""
        for round_ in range(2):
            with rec.lock:
                if self._closed:
                    raise ClientClosed("the manager is closed", server=rec.config.name)
                client = rec.client
                if client is not None and rec.status.status == CONNECTED:
                    if getattr(client, "connected", True):
                        return client
                    self._mark_lost(rec, None)
                attempt = rec.attempt if rec.attempt is not None and not rec.attempt.done.is_set() else None
                if attempt is None and round_ == 0 and self._may_connect(rec, targeted):
                    attempt = self._start(rec)
                if attempt is None:
                    raise self._unavailable(rec)
            self._wait(rec, attempt)
        with rec.lock:
            if rec.client is not None and rec.status.status == CONNECTED:
                return rec.client
            raise self._unavailable(rec)

    def _may_connect(self, rec: _Server, targeted: bool) -> bool:
        status = rec.status.status
        if status == NOT_CONNECTED:
            return True
        if status != FAILED or rec.config.error is not None:
            return False
        if not (rec.lost or targeted):
            return False
        return self._restarts.clock() >= rec.retry_at

    def _unavailable(self, rec: _Server) -> MCPError:
        st, name = rec.status, rec.config.name
        if st.status == NEEDS_AUTH:
            return AuthRequired(
                "server %s needs authorization: %s" % (name, st.reason),
                server=name,
                www_authenticate=getattr(st.error, "www_authenticate", None),
            )
        if st.status == NEEDS_CLIENT_REGISTRATION:
            return NeedsClientRegistration(
                "server %s: %s" % (name, st.reason), server=name, redirect_uri=getattr(st.error, "redirect_uri", None)
            )
        if st.status == FAILED and rec.config.error is not None:
            return ConfigError(str(rec.config.error), server=name)
        if st.status == FAILED:
            wait = rec.retry_at - self._restarts.clock()
            more = "; next restart attempt in %.1fs" % wait if wait > 0 else ""
            return ConnectError("server %s is unavailable: %s%s" % (name, st.reason, more), server=name)
        return ConnectError("server %s is %s" % (name, st.status.replace("_", " ")), server=name)

    def _mark_lost(self, rec: _Server, exc: Optional[BaseException]) -> None:
        """The live connection of ``rec`` ended (caller holds ``rec.lock``)."""
        client = rec.client
        if exc is None:
            exc = ConnectionClosed("connection lost", server=rec.config.name)
        stderr = list(getattr(client, "stderr_tail", None) or [])
        rec.connection_ended(self._restarts)  # backoff, or not (defect 8)
        self._set_status(rec, _classify(rec.config.name, exc, rec.secrets(), stderr, rec.config.kind))

    def _lost(self, rec: _Server, generation: int, exc: BaseException) -> None:
        with rec.lock:
            if rec.generation == generation and rec.status.status == CONNECTED:
                self._mark_lost(rec, exc)

    # ------------------------------------------------------------------ public lifecycle

    def connect(self, name: str, *, wait: bool = True, timeout: Optional[float] = None) -> ServerStatus:
        """(Re)connect server ``name`` now, even if disabled, failed or disconnected; resets its backoff.

        Blocks until connected or failed (its connect bound, or ``timeout``) when ``wait``.
        Returns the resulting status; never raises for a connection failure.
        """
        rec = self._record(name)
        with rec.lock:
            if rec.status.status == CONNECTED and rec.client is not None and getattr(rec.client, "connected", True):
                return rec.status
            rec.failures, rec.retry_at = 0, 0.0
            attempt = self._start(rec)
        if wait:
            self._wait(rec, attempt, timeout)
        return self._record(name).status

    def disconnect(self, name: str) -> ServerStatus:
        """Close server ``name``'s connection; it stays ``disconnected`` until :meth:`connect`. Bounded."""
        rec = self._record(name)
        with rec.lock:
            client, attempt = rec.client, rec.attempt
            rec.client, rec.attempt, rec.lost = None, None, False
            rec.generation += 1
            self._set_status(rec, ServerStatus(name, DISCONNECTED if rec.config.enabled else DISABLED))
        for c in (client, attempt.client if attempt is not None else None):
            if c is not None:
                self._close_quietly(c)
        self._bump()
        self._events.emit("tools_changed", name)
        return rec.status

    def add(self, name: str, config: Union[ServerConfig, Mapping[str, Any]], *, wait: bool = True) -> ServerStatus:
        """Add server ``name`` (a :class:`ServerConfig` or a native dict), replacing one of that name.

        Connects it at once unless it is disabled or lazy (or the manager was not opened);
        blocks for that when ``wait``. Returns its status.
        """
        cfg = server_config(name, config, env=self._env)
        rec = _Server(cfg, self._is_lazy(cfg))
        with self._lock:
            if self._closed:
                raise ClientClosed("the manager is closed")
            old = self._servers.get(name)
            self._servers[name] = rec
            opened = self._opened
        if old is not None:
            self._retire(old)
        self._events.emit("status_changed", name, rec.status)
        if opened and cfg.enabled and not rec.lazy:
            with rec.lock:
                attempt = self._start(rec)
            if wait:
                self._wait(rec, attempt)
        self._bump()
        return rec.status

    def remove(self, name: str) -> None:
        """Disconnect and forget server ``name``. Bounded."""
        with self._lock:
            rec = self._servers.pop(name, None)
        if rec is None:
            raise ConfigError("unknown server %r" % name)
        self._retire(rec)
        self._bump()
        self._events.emit("tools_changed", name)

    def _retire(self, rec: _Server) -> None:
        with rec.lock:
            clients = [rec.client, rec.attempt.client if rec.attempt is not None else None]
            rec.client, rec.attempt = None, None
            rec.generation += 1
            threads = [rec.refresh_thread]
        for c in clients:
            if c is not None:
                self._close_quietly(c)
        for t in threads:
            join(t, 5.0)

    def close(self, timeout: float = 10.0) -> None:
        """Close every server (concurrently) and stop every manager thread.

        Bounded by about ``timeout`` seconds; idempotent; callable from any thread,
        including an event listener. Later calls raise :class:`~mcpsync.ClientClosed`.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            records = list(self._servers.values())
        deadline = time.monotonic() + timeout
        clients, threads = [], []
        for rec in records:
            with rec.lock:
                for c in (rec.client, rec.attempt.client if rec.attempt is not None else None):
                    if c is not None:
                        clients.append((rec.config.name, c))
                threads += [rec.attempt.thread if rec.attempt is not None else None, rec.refresh_thread]
                rec.client = None
                rec.generation += 1
        closers = [
            spawn("mcpsync-manager-close:%s" % name, self._close_quietly, c, max(1.0, timeout / 2))
            for name, c in clients
        ]
        for t in closers + threads:
            join(t, max(0.0, deadline - time.monotonic()))
        self._events.close(max(0.1, deadline - time.monotonic()))
        if self._oauth is not None and self._owns_oauth:
            self._oauth.close()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` was called."""
        return self._closed

    # ------------------------------------------------------------------ status

    @overload
    def status(self) -> Dict[str, ServerStatus]: ...

    @overload
    def status(self, name: str) -> ServerStatus: ...

    def status(self, name: Optional[str] = None) -> Union[ServerStatus, Dict[str, ServerStatus]]:
        """``{name: ServerStatus}`` for every server (configuration order), or one server's status. No I/O."""
        records = [self._record(name)] if name is not None else self._records()
        for rec in records:
            with rec.lock:
                if (
                    rec.status.status == CONNECTED
                    and rec.client is not None
                    and not getattr(rec.client, "connected", True)
                ):
                    self._mark_lost(rec, None)
        if name is not None:
            return records[0].status
        return {rec.config.name: rec.status for rec in records}

    def clients(self) -> Dict[str, Client]:
        """``{name: Client}`` of the connected servers. No I/O."""
        out: Dict[str, Client] = {}
        for rec in self._records():
            with rec.lock:
                if rec.status.status == CONNECTED and rec.client is not None and getattr(rec.client, "connected", True):
                    out[rec.config.name] = rec.client
        return out

    def client(self, name: str) -> Client:
        """The connected :class:`~mcpsync.Client` of ``name``, connecting (or restarting) it if needed.

        Raises :class:`~mcpsync.errors.ConnectError`, :class:`~mcpsync.errors.AuthRequired`... when it is unavailable.
        """
        return self._client_for(self._record(name))

    def _ensure_all(self) -> List[_Server]:
        """Connect lazy servers and restart lost ones (all at once); wait; return the records."""
        waits = []
        for rec in self._records():
            with rec.lock:
                client = rec.client
                if rec.status.status == CONNECTED and client is not None and not getattr(client, "connected", True):
                    self._mark_lost(rec, None)
                attempt = rec.attempt if rec.attempt is not None and not rec.attempt.done.is_set() else None
                if attempt is None and rec.config.enabled and self._may_connect(rec, targeted=False):
                    attempt = self._start(rec)
                if attempt is not None:
                    waits.append((rec, attempt))
        self._await_all(waits, None)
        return self._records()

    # ------------------------------------------------------------------ tools

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

    def _prepare_call(
        self, name: str, server: Optional[str], timeout: Timeout
    ) -> Tuple[_Server, Client, str, Optional[float]]:
        """What :meth:`call_tool` and :meth:`call_tool_async` start from: the record of the server that offers
        ``name`` (see :meth:`_route`), its client (connected first when lazy or dead: blocks up to the connect
        bound), the tool's own name, and the idle timeout (``DEFAULT``: the server's configured ``timeout``)."""
        rec, tool = self._route(name, server)
        client = self._client_for(rec)
        return rec, client, tool, rec.config.timeout if timeout is DEFAULT else timeout

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
        or :class:`~mcpsync.errors.ConnectError` when the server is unavailable.

        ``defer_input`` (None: the server's setting, ``client_options={"defer_input": True}`` or its
        configuration's ``options``): True raises :class:`~mcpsync.input.InputRequired` when the server needs
        the user (continue with :meth:`resume`); False asks the handlers (see :func:`mcpsync.input.deferring`).
        """
        rec, client, tool, idle = self._prepare_call(name, server, timeout)
        try:
            with contextlib.ExitStack() as scope:
                if defer_input is not None:
                    from ..input.extension import deferring

                    scope.enter_context(deferring(client, defer_input))
                result = client.call_tool(
                    tool,
                    arguments or {},
                    timeout=idle,
                    max_total_timeout=max_total_timeout,
                    progress=progress,
                    meta=meta,
                )
        except ConnectionClosed as exc:
            with rec.lock:
                if rec.client is client and rec.status.status == CONNECTED:
                    self._mark_lost(rec, exc)
            raise
        rec.served_by(client)  # this connection proved itself: the failure count resets
        return result

    def call_tool_async(
        self,
        name: str,
        arguments: Optional[Dict[str, Any]] = None,
        *,
        server: Optional[str] = None,
        timeout: Timeout = DEFAULT,
        progress: Optional[Callable[[ProgressEvent], object]] = None,
        meta: Optional[Dict[str, Any]] = None,
        max_total_timeout: Timeout = DEFAULT,
    ) -> RequestHandle[CallToolResult]:
        """Start a tool call (named as in :meth:`call_tool`) and return at once with its
        :class:`~mcpsync.handles.RequestHandle`, the same handle :meth:`mcpsync.Client.call_tool_async` returns:
        ``result(timeout)`` blocks like :meth:`call_tool`, ``cancel()`` sends ``notifications/cancelled``,
        ``add_done_callback(fn)`` runs ``fn`` on that server's dispatch thread.

        Blocks only to route the name and, for a lazy or dead server, to connect it (up to the connect bound).
        ``timeout`` defaults to the server's configured ``timeout``. Raises :class:`UnknownTool`,
        :class:`~mcpsync.errors.ConnectError` or the client's errors for a request that cannot be sent.
        """
        rec, client, tool, idle = self._prepare_call(name, server, timeout)
        handle = client.call_tool_async(
            tool, arguments or {}, timeout=idle, max_total_timeout=max_total_timeout, progress=progress, meta=meta
        )

        def ended(h: RequestHandle[CallToolResult]) -> None:  # on the dispatch thread; a lost connection is
            if h.answer_error() is None:  # reported by the client's on_connection_lost, as for call_tool
                rec.served_by(client)  # this connection proved itself: the failure count resets

        handle.add_done_callback(ended)
        return handle

    def resume(
        self, input_required: "InputRequired", answers: Optional[Dict[str, Any]] = None, *, timeout: Timeout = DEFAULT
    ) -> Any:
        """Continue a deferred call (:class:`~mcpsync.input.InputRequired`) on the server it came from
        (``input_required.server``, a configured server's name). See :func:`mcpsync.input.resume`."""
        from ..input.resume import resume

        if input_required.server is None:
            raise InputNotResumable("this input request names no server")
        rec = self._record(input_required.server)
        return resume(self._client_for(rec), input_required, answers, timeout=timeout)

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

    # ------------------------------------------------------------------ prompts and resources

    def _each(self, method: str, wrap: Callable[[str, Any], Any], capability: str) -> List[Any]:
        out: List[Any] = []
        for rec in self._ensure_all():
            with rec.lock:
                client = rec.client if rec.status.status == CONNECTED else None
            if client is None:
                continue
            caps = getattr(client, "server_capabilities", None)
            if isinstance(caps, dict) and capability not in caps:
                continue
            try:
                items = getattr(client, method)(timeout=rec.config.timeout)
            except (CapabilityError, MethodNotFound):
                continue
            except MCPError as exc:
                log.warning("server %s: %s failed: %s", rec.config.name, method, exc)
                continue
            out += [wrap(rec.config.name, item) for item in items]
        return out

    def prompts(self) -> List[ServerPrompt]:
        """Every connected server's prompts, each with its server's name. Blocks for the list requests."""
        return self._each("list_prompts", ServerPrompt, "prompts")

    def resources(self) -> List[ServerResource]:
        """Every connected server's resources, each with its server's name. Blocks for the list requests."""
        return self._each("list_resources", ServerResource, "resources")

    def resource_templates(self) -> List[ServerResourceTemplate]:
        """Every connected server's resource templates, each with its server's name."""
        return self._each("list_resource_templates", ServerResourceTemplate, "resources")

    def get_prompt(self, server: str, name: str, arguments: Optional[Dict[str, str]] = None) -> GetPromptResult:
        """Get prompt ``name`` from ``server``. Blocks up to the server's timeout."""
        rec = self._record(server)
        return self._client_for(rec).get_prompt(name, arguments or {}, timeout=rec.config.timeout)

    def read_resource(self, server: str, uri: str) -> ReadResourceResult:
        """Read ``uri`` from ``server``. Blocks up to the server's timeout."""
        rec = self._record(server)
        return self._client_for(rec).read_resource(uri, timeout=rec.config.timeout)

    # ------------------------------------------------------------------ OAuth

    def _oauth_manager(self, cfg: Optional[ServerConfig] = None) -> OAuthManager:
        with self._lock:
            if self._oauth is None:
                from ..auth import OAuthManager

                options = dict(self._oauth_options)
                options.setdefault("on_browser_open_failed", self._browser_failed)
                self._oauth = OAuthManager(**options)
                self._owns_oauth = True
            oauth = self._oauth
        if cfg is not None:
            oauth.add_server(cfg.name, cfg.url or "", cfg.oauth_settings or True)
            http = self._oauth_http(cfg)
            if http is not None:
                oauth.use_http(cfg.name, http)
        return oauth

    def _oauth_http(self, cfg: ServerConfig) -> Any:
        """The HTTP settings ``cfg``'s client would use (the manager's ``client_options`` under the server's
        own), so that OAuth steps run before any connection (``start_auth``, ``authenticate``, the probe) go
        the way its MCP requests will; None when they are invalid (connecting reports that)."""
        from ..transports.http.oauth_route import oauth_route_from

        options = flat_options(self.client_options)
        options.update(cfg.client_arguments()[1])
        return oauth_route_from(options)

    def _card_config(self, cfg: ServerConfig, seed: bool = True) -> ServerConfig:
        """``cfg`` (a ``card`` entry) as the remote its Server Card describes: the card is fetched (or taken from
        the card cache while fresh), checked and resolved now, on the connecting thread; ``seed``: the card's
        protocol versions choose ``protocol`` (else it negotiates). Raises a CardError, MissingInput (a required
        header or variable the entry does not give)."""
        import dataclasses

        from ..cards.connector import resolve_card

        settings = dict(cfg.card_options)
        http = {
            k: v
            for k, v in dict(flat_options(self.client_options), **cfg.options).items()
            if k in ("verify", "proxies", "trust_env")
        }
        prepared = resolve_card(
            cfg.card or "",
            headers=cfg.headers or None,
            remote=settings.pop("remote", None),
            inputs=settings.pop("inputs", None),
            **settings,
            **http,
        )
        options = dict(cfg.options)
        if seed and "protocol" not in options and "protocol" not in flat_options(self.client_options):
            options["protocol"] = prepared.protocol
        return dataclasses.replace(
            cfg,
            url=prepared.url,
            card=None,
            card_options={},
            headers=dict(prepared.headers),
            options=options,
            transport=cfg.transport if cfg.transport != "auto" else prepared.transport,
        )

    def _browser_failed(self, name: str, url: str) -> None:
        self._events.emit("browser_open_failed", name, url)

    def _oauth_for(self, name: str) -> OAuthManager:
        cfg = self._record(name).config
        if cfg.card and not cfg.url:
            cfg = self._card_config(cfg)  # OAuth is for the card's remote (fetched, checked: it may raise)
        if cfg.kind != "remote" or not cfg.url:
            raise ConfigError("server %r is not a remote server; OAuth does not apply" % name, server=name)
        if cfg.oauth is False:
            raise ConfigError("OAuth is disabled for server %r (oauth: false)" % name, server=name)
        return self._oauth_manager(cfg)

    def supports_oauth(self, name: str) -> bool:
        """True when ``name`` is a remote server with OAuth enabled (configuration only, no I/O)."""
        cfg = self._record(name).config
        return cfg.kind == "remote" and cfg.oauth is not False

    def has_stored_tokens(self, name: str) -> bool:
        """Whether tokens are stored for ``name`` (reads the credential store)."""
        return bool(self._oauth_for(name).has_stored_tokens(name))

    def get_auth_status(self, name: str) -> str:
        """``authenticated``, ``expired`` or ``not_authenticated`` (reads the credential store)."""
        return str(self._oauth_for(name).get_auth_status(name))

    def remove_auth(self, name: str) -> None:
        """Forget the stored credentials of ``name``."""
        self._oauth_for(name).remove_auth(name)

    def start_auth(self, name: str) -> str:
        """Begin a login for ``name`` and return the authorization URL (finish with :meth:`finish_auth`).
        Blocks for discovery and registration; records needs_client_registration when that fails."""
        return self._auth_step(name, lambda oauth: oauth.start_auth(name), reconnect=False, probe=True)

    def finish_auth(self, name: str, code_or_url: Any) -> ServerStatus:
        """Complete a login with the redirect URL (or code); then reconnects ``name`` if enabled."""
        self._auth_step(name, lambda oauth: oauth.finish_auth(name, code_or_url), reconnect=True)
        return self._record(name).status

    def authenticate(self, name: str, timeout: Optional[float] = None) -> ServerStatus:
        """Run the whole browser login of ``name`` (works for a disabled server too), then reconnect it if
        enabled. Blocks until the user approves (up to ``timeout``); returns the new status."""
        self._auth_step(name, lambda oauth: oauth.authenticate(name, timeout), reconnect=True, probe=True)
        return self._record(name).status

    def _auth_step(self, name: str, step: Callable[[OAuthManager], _T], *, reconnect: bool, probe: bool = False) -> _T:
        rec = self._record(name)
        oauth = self._oauth_for(name)
        if probe and rec.status.status != CONNECTED:
            oauth.probe_challenge(name, dict(rec.config.headers))
        try:
            result = step(oauth)
        except NeedsClientRegistration as exc:
            with rec.lock:
                self._set_status(rec, _classify(name, exc, rec.secrets(), [], rec.config.kind))
            raise
        if reconnect and rec.config.enabled:
            self.connect(name)
        return result
