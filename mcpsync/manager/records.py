"""Support for :mod:`mcpsync.manager`: statuses, result wrappers, events, per-server records, OAuth methods.

Private: import the public names from :mod:`mcpsync.manager`.
"""

from __future__ import annotations

import logging
import queue
import threading
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, Tuple, TypeVar

from .. import _forks
from .._threads import join, spawn
from ..errors import (
    AuthRequired,
    CapabilityError,
    ConfigError,
    HTTPStatusError,
    MCPError,
    MethodNotFound,
    NeedsClientRegistration,
    RequestTimeout,
    ServerExited,
)
from ..types import GetPromptResult, Prompt, ReadResourceResult, Resource, ResourceTemplate, Tool
from .config import ServerConfig

if TYPE_CHECKING:  # pragma: no cover
    from ..auth import OAuthManager
    from ..client.client import Client

_T = TypeVar("_T")

log = logging.getLogger("mcpsync.manager")

EVENTS = ("tools_changed", "status_changed", "browser_open_failed")

CONNECTED, DISABLED, FAILED = "connected", "disabled", "failed"
NEEDS_AUTH, NEEDS_CLIENT_REGISTRATION = "needs_auth", "needs_client_registration"
CONNECTING, NOT_CONNECTED, DISCONNECTED = "connecting", "not_connected", "disconnected"


class UnknownTool(MCPError, LookupError):
    """No server offers a tool by that (exposed) name."""


@dataclass(frozen=True)
class ServerStatus:
    """The state of one server. Immutable; a new object on every change.

    Attributes:
        name: the server's name.
        status: ``connected``, ``disabled``, ``failed``, ``needs_auth``, ``needs_client_registration``,
            ``connecting``, ``not_connected`` or ``disconnected``.
        error: the exception behind ``failed``/``needs_*`` (None otherwise).
        reason: a one-line human explanation of ``error`` (configured secrets masked).
        exit_code: the exit status of a stdio server that exited.
        stderr_tail: its last stderr lines.
        http_status: the HTTP status that failed the connection.
        transport: ``stdio``, ``http`` or ``sse`` once connected.
    """

    name: str
    status: str
    error: Optional[BaseException] = field(default=None, compare=False)
    reason: Optional[str] = None
    exit_code: Optional[int] = None
    stderr_tail: Tuple[str, ...] = ()
    http_status: Optional[int] = None
    transport: Optional[str] = None

    def to_dict(self) -> Dict[str, Any]:
        """A JSON-ready dict (``error`` is the error's class name)."""
        out: Dict[str, Any] = {"name": self.name, "status": self.status}
        if self.error is not None:
            out["error"] = type(self.error).__name__
        for key in ("reason", "exit_code", "http_status", "transport"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.stderr_tail:
            out["stderr_tail"] = list(self.stderr_tail)
        return out

    def __str__(self) -> str:
        return "%s: %s%s" % (self.name, self.status, " (%s)" % self.reason if self.reason else "")


#: Manager event listeners (``Manager.on``): ``tools_changed(server)``, ``status_changed(server, status)``,
#: ``browser_open_failed(server, url)``; ``on`` returns a function that removes the listener.
OnToolsChanged = Callable[[str], object]
OnStatusChanged = Callable[[str, ServerStatus], object]
OnBrowserOpenFailed = Callable[[str, str], object]
RemoveListener = Callable[[], None]


@dataclass(frozen=True)
class ServerPrompt:
    """A prompt and the server offering it."""

    server: str
    prompt: Prompt

    @property
    def name(self) -> str:
        """The prompt's name on its server."""
        return self.prompt.name


@dataclass(frozen=True)
class ServerResource:
    """A resource and the server offering it."""

    server: str
    resource: Resource

    @property
    def uri(self) -> str:
        """The resource's URI."""
        return self.resource.uri


@dataclass(frozen=True)
class ServerResourceTemplate:
    """A resource template and the server offering it."""

    server: str
    template: ResourceTemplate


def _chain(exc: BaseException) -> Iterable[BaseException]:
    seen = 0
    cur: Optional[BaseException] = exc
    while cur is not None and seen < 8:
        yield cur
        seen += 1
        cur = cur.__cause__ or cur.__context__


def _find(exc: BaseException, kind: Any) -> Any:
    return next((e for e in _chain(exc) if isinstance(e, kind)), None)


def _classify(name: str, exc: BaseException, secrets: Iterable[str], stderr: List[str], kind: str) -> ServerStatus:
    """The status a connection error gives, with a reason that hides configured secrets."""
    status, exit_code, http_status, tail = FAILED, None, None, list(stderr)
    if _find(exc, NeedsClientRegistration) is not None:
        status = NEEDS_CLIENT_REGISTRATION
        reg = _find(exc, NeedsClientRegistration)
        reason = "register a client (redirect URI %s) and set oauth.client_id: %s" % (reg.redirect_uri, reg.message)
    elif _find(exc, AuthRequired) is not None:
        status, auth = NEEDS_AUTH, _find(exc, AuthRequired)
        http_status = auth.status_code
        reason = auth.message if auth.message.startswith("HTTP") else "HTTP %d: %s" % (auth.status_code, auth.message)
    elif _find(exc, ServerExited) is not None:
        exited = _find(exc, ServerExited)
        exit_code, tail = exited.exit_code, exited.stderr_tail or tail
        reason = "server process exited with code %s" % exit_code
    elif _find(exc, HTTPStatusError) is not None:
        err = _find(exc, HTTPStatusError)
        http_status = err.status_code
        reason = "HTTP %d%s" % (err.status_code, ": " + " ".join(err.body.split())[:200] if err.body else "")
    elif isinstance(exc, RequestTimeout):
        reason = "timed out after %ss" % exc.timeout
    elif isinstance(exc, MCPError):
        reason = "%s: %s" % (type(exc).__name__, exc.message or exc)
    else:
        reason = "%s: %s" % (type(exc).__name__, exc)
    if tail and status == FAILED:
        reason += "; stderr: " + " | ".join(line.strip() for line in tail[-5:])
    for secret in secrets:
        if secret and len(secret) >= 4:
            reason = reason.replace(secret, "***")
    return ServerStatus(name, status, exc, reason, exit_code, tuple(tail[-20:]), http_status, None)


class _Events:
    """Delivers events to listeners on one daemon thread, started on first use."""

    def __init__(self) -> None:
        self._listeners: Dict[str, List[Callable[..., Any]]] = {e: [] for e in EVENTS}
        self._queue: "queue.Queue[Any]" = queue.Queue()
        self._lock = threading.Lock()
        self._thread: Optional[threading.Thread] = None
        self._closed = False

    def add(self, event: str, callback: Callable[..., Any]) -> Callable[[], None]:
        if event not in self._listeners:
            raise ConfigError("unknown event %r; expected one of %s" % (event, ", ".join(EVENTS)))
        with self._lock:
            self._listeners[event] = self._listeners[event] + [callback]

        def remove() -> None:
            with self._lock:
                self._listeners[event] = [c for c in self._listeners[event] if c is not callback]

        return remove

    def emit(self, event: str, *args: Any) -> None:
        with self._lock:
            if self._closed or not self._listeners[event]:
                return
            if self._thread is None:
                self._thread = spawn("mcpsync-manager-events", self._run)
            self._queue.put((event, args))

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            event, args = item
            for callback in self._listeners[event]:
                try:
                    callback(*args)
                except Exception:  # noqa: BLE001 - a listener's bug must not stop the others
                    log.exception("%s listener failed", event)

    def reset_after_fork(self) -> None:
        """In a forked child: the delivery thread is gone; start afresh (a new one starts on first use)."""
        self._lock = threading.Lock()
        self._queue = queue.Queue()
        self._thread = None

    def close(self, timeout: float) -> None:
        with self._lock:
            self._closed = True
            thread = self._thread
        if thread is not None:
            self._queue.put(None)
            join(thread, timeout)


class _Attempt:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.client: Optional[Client] = None
        self.thread: Optional[threading.Thread] = None


class _Server:
    """Per-server state, guarded by ``lock``."""

    def __init__(self, config: ServerConfig, lazy: bool) -> None:
        self.config = config
        self.lazy = lazy
        self.lock = threading.Lock()
        self.client: Optional[Client] = None
        self.generation = 0
        self.attempt: Optional[_Attempt] = None
        self.tools: Optional[List[Tool]] = None
        self.failures = 0
        self.retry_at = 0.0
        self.lost = False  # connected once, then the connection died: restart on next use
        self.connected_at = 0.0  # when the live connection came up (the manager's clock)
        self.served = False  # the live connection answered a tools/call successfully
        self.refresh_dirty = False
        self.refresh_thread: Optional[threading.Thread] = None
        self.status = ServerStatus(config.name, DISABLED if not config.enabled else NOT_CONNECTED)
        #: a ``card`` entry: use the card's supportedProtocolVersions (False once the server refused them)
        self.card_seed = True

    def count_failure(self, now: float, backoff: Tuple[float, float]) -> None:
        """One more consecutive failure (caller holds ``lock``): the next restart waits ``first * 2 ** (n - 1)``,
        at most ``cap`` (``backoff = (first, cap)``)."""
        self.failures += 1
        self.retry_at = now + min(backoff[1], backoff[0] * 2 ** min(self.failures - 1, 32))

    def connection_ended(self, now: float, stable_after: float, backoff: Tuple[float, float]) -> None:
        """The live connection died (caller holds ``lock``). One that answered a tools/call or stayed up
        ``stable_after`` seconds resets the failure count (restart on next use); one that died sooner counts as a
        failure, so a server that connects fine and crashes on every call backs off instead of looping."""
        self.lost = True
        if self.served or now - self.connected_at >= stable_after:
            self.failures, self.retry_at = 0, 0.0
        else:
            self.count_failure(now, backoff)

    def served_by(self, client: Any) -> None:
        """``client`` answered a tools/call: if it is the live connection, it proved itself."""
        with self.lock:
            if self.client is client and not self.served:
                self.served, self.failures = True, 0

    def secrets(self) -> List[str]:
        cfg = self.config
        inputs = cfg.card_options.get("inputs")
        values = list(cfg.env.values()) + list(cfg.headers.values()) + [cfg.bearer_token or ""] + (
            [str(v) for v in inputs.values()] if isinstance(inputs, dict) else [])
        return [v.split(" ", 1)[-1] for v in values] + values


class OAuthMethods:
    """The per-server OAuth API of the manager (mixed into :class:`mcpsync.manager.Manager`)."""

    _lock: Any
    _oauth: Optional[OAuthManager]
    _oauth_options: Dict[str, Any]
    _events: "_Events"

    def _record(self, name: str) -> "_Server":  # pragma: no cover - provided by Manager
        raise NotImplementedError

    def _set_status(self, rec: "_Server", status: ServerStatus) -> None:  # pragma: no cover
        raise NotImplementedError

    def connect(
        self, name: str, *, wait: bool = True, timeout: Optional[float] = None
    ) -> ServerStatus:  # pragma: no cover
        raise NotImplementedError

    _owns_oauth = False

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

    client_options: Dict[str, Any]

    def _oauth_http(self, cfg: ServerConfig) -> Any:
        """The HTTP settings ``cfg``'s client would use (the manager's ``client_options`` under the server's
        own), so that OAuth steps run before any connection (``start_auth``, ``authenticate``, the probe) go
        the way its MCP requests will; None when they are invalid (connecting reports that)."""
        from ..transports.http.oauth_route import oauth_route_from

        options = dict(self.client_options)
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
        http = {k: v for k, v in dict(self.client_options, **cfg.options).items()
                if k in ("verify", "proxies", "trust_env")}
        prepared = resolve_card(cfg.card or "", headers=cfg.headers or None, remote=settings.pop("remote", None),
                                inputs=settings.pop("inputs", None), **settings, **http)
        options = dict(cfg.options)
        if seed and "protocol" not in options and "protocol" not in self.client_options:
            options["protocol"] = prepared.protocol
        return dataclasses.replace(
            cfg, url=prepared.url, card=None, card_options={}, headers=dict(prepared.headers), options=options,
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


class ListingMethods:
    """Prompts and resources of every server (mixed into :class:`mcpsync.manager.Manager`)."""

    def _ensure_all(self) -> List["_Server"]:  # pragma: no cover - provided by Manager
        raise NotImplementedError

    def _record(self, name: str) -> "_Server":  # pragma: no cover - provided by Manager
        raise NotImplementedError

    def _client_for(self, rec: "_Server", *, targeted: bool = True) -> Client:  # pragma: no cover
        raise NotImplementedError

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


_MANAGERS: "weakref.WeakSet[Any]" = weakref.WeakSet()


def reopen_after_fork(manager: Any) -> None:
    """Make ``manager`` reopen its servers in any child forked from now on (see :func:`_reset_in_child`)."""
    _MANAGERS.add(manager)


def _reset_in_child() -> None:
    """In a forked child (multiprocessing, gunicorn --preload, Celery prefork), for every manager: drop the
    parent's connections without touching them (their clients are abandoned: descriptors released, no I/O,
    no signals) and mark each enabled server not connected, so it reconnects, in this process, on next use.
    Runs in the ``os.register_at_fork`` hook, so every lock a dead thread may hold is replaced."""
    for m in list(_MANAGERS):
        m._lock = threading.RLock()
        m._events.reset_after_fork()
        for rec in m._servers.values():
            rec.lock = threading.Lock()
            for client in (rec.client, rec.attempt.client if rec.attempt is not None else None):
                if client is not None:
                    m._close_quietly(client)
            rec.client, rec.attempt, rec.refresh_thread = None, None, None
            rec.generation += 1
            rec.failures, rec.retry_at, rec.lost, rec.served = 0, 0.0, False, False
            if rec.config.enabled and not m._closed:
                rec.status = ServerStatus(rec.config.name, NOT_CONNECTED)


_forks.after_fork_in_child(_reset_in_child)
