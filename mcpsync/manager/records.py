"""Support for :mod:`mcpsync.manager`: statuses, result wrappers, events, per-server records.

Private: import the public names from :mod:`mcpsync.manager`.
"""

from __future__ import annotations

import logging
import queue
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Optional, Tuple, TypeVar

from .._threads import join, spawn
from ..errors import (
    AuthRequired,
    ConfigError,
    HTTPStatusError,
    MCPError,
    NeedsClientRegistration,
    RequestTimeout,
    ServerExited,
)
from ..types import Prompt, Resource, ResourceTemplate, Tool
from .config import ServerConfig

if TYPE_CHECKING:  # pragma: no cover
    from ..client.client import Client

_T = TypeVar("_T")

log = logging.getLogger(__name__)

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


@dataclass(frozen=True)
class RestartPolicy:
    """When the manager may restart a server whose connection failed or died (the manager's
    ``restart_backoff``, ``stable_after`` and ``clock``). Immutable; ``clock`` gives monotonic seconds."""

    backoff: Tuple[float, float]  # (first, cap) seconds
    stable_after: float
    clock: Callable[[], float]

    def wait(self, failures: int) -> float:
        """Seconds before the next restart after ``failures`` consecutive failures: ``first * 2 ** (failures - 1)``,
        at most ``cap``."""
        first, cap = self.backoff
        return min(cap, first * 2.0 ** min(failures - 1, 32))


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

    def count_failure(self, restarts: RestartPolicy) -> None:
        """One more consecutive failure (caller holds ``lock``): no restart before :meth:`RestartPolicy.wait`."""
        self.failures += 1
        self.retry_at = restarts.clock() + restarts.wait(self.failures)

    def connection_ended(self, restarts: RestartPolicy) -> None:
        """The live connection died (caller holds ``lock``). One that answered a tools/call or stayed up
        ``stable_after`` seconds resets the failure count (restart on next use); one that died sooner counts as a
        failure, so a server that connects fine and crashes on every call backs off instead of looping."""
        self.lost = True
        if self.served or restarts.clock() - self.connected_at >= restarts.stable_after:
            self.failures, self.retry_at = 0, 0.0
        else:
            self.count_failure(restarts)

    def served_by(self, client: Any) -> None:
        """``client`` answered a tools/call: if it is the live connection, it proved itself."""
        with self.lock:
            if self.client is client and not self.served:
                self.served, self.failures = True, 0

    def secrets(self) -> List[str]:
        cfg = self.config
        inputs = cfg.card_options.get("inputs")
        values = (
            list(cfg.env.values())
            + list(cfg.headers.values())
            + [cfg.bearer_token or ""]
            + ([str(v) for v in inputs.values()] if isinstance(inputs, dict) else [])
        )
        return [v.split(" ", 1)[-1] for v in values] + values
