"""The loopback OAuth callback server (``http.server``), shared by every login of a process.

``expect_callback(state, ...)`` returns a :class:`PendingCallback` registered under the
login's ``state`` *before* the browser is sent to the authorization server;
``PendingCallback.result()`` blocks until the redirect arrives (or ``finish_auth`` pastes it
back, or the timeout passes). The server listens on ``127.0.0.1:19876`` by default, is
started on demand in the daemon thread ``mcpsync-oauth-callback`` and stops (thread
joined) as soon as no login is pending.

Answers: missing ``state`` -> 400 "Missing state parameter"; a state nobody waits for ->
400 "Invalid state"; an ``error`` parameter -> the error page (the login fails with the
error and its description); otherwise the success page.

Port already taken: before binding, the port is probed. When the holder is another
mcpsync process (it answers ``GET /mcp/oauth/whoami`` with ``{"app": "mcpsync", ...}``
and sends the ``X-MCPSync-Callback`` header on every response) using the same
credential store, the login still completes: the holder records callbacks for states
owned by another process's login in progress (``oauthState`` in the store) under
``callbacks`` in the store, and the waiting process polls the store for its state, taking
the port over if the holder goes away. Any other listener fails the login at once with a
:class:`~mcpsync.errors.CallbackError` naming the port and how to change it.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import logging
import os
import socket
import sys
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Set, Tuple
from urllib.parse import parse_qsl, urlsplit

from .. import _threads
from ..errors import CallbackError, OAuthError
from . import pages
from .store_base import find_state_owner

__all__ = [
    "AuthorizationRequest",
    "CallbackResult",
    "parse_redirect",
    "PendingCallback",
    "expect_callback",
    "authorize_in_browser",
    "DEFAULT_CALLBACK_HOST",
    "DEFAULT_CALLBACK_PORT",
    "DEFAULT_CALLBACK_PATH",
    "WHOAMI_PATH",
]

log = logging.getLogger(__name__)

DEFAULT_CALLBACK_HOST = "127.0.0.1"
DEFAULT_CALLBACK_PORT = 19876
DEFAULT_CALLBACK_PATH = "/mcp/oauth/callback"
WHOAMI_PATH = "/mcp/oauth/whoami"
MARKER_HEADER = "X-MCPSync-Callback"
DEFAULT_WAIT = 300.0
_POLL = 0.2
_PORT_HINT = (
    "choose another port with callback_port= (OAuthManager), --callback-port (CLI) "
    "or the MCPSYNC_OAUTH_CALLBACK_PORT environment variable"
)


class CallbackResult:
    """The query parameters of one authorization redirect (``code`` is never shown in reprs)."""

    __slots__ = ("code", "state", "iss", "error", "error_description")

    def __init__(self, params: Dict[str, str]) -> None:
        self.code: Optional[str] = params.get("code")
        self.state: Optional[str] = params.get("state")
        self.iss: Optional[str] = params.get("iss")
        self.error: Optional[str] = params.get("error")
        self.error_description: Optional[str] = params.get("error_description")

    def __repr__(self) -> str:
        return "CallbackResult(code=%s, error=%r, iss=%r)" % (
            "<hidden>" if self.code else None,
            self.error,
            self.iss,
        )


class AuthorizationRequest:
    """What an authorization handler receives.

    Attributes:
        server: the server name.
        url: the authorization URL to open.
        redirect_uri: where the authorization server will redirect.
        state: the ``state`` of this login.
    """

    __slots__ = ("server", "url", "redirect_uri", "state")

    def __init__(self, server: str, url: str, redirect_uri: str, state: str) -> None:
        self.server = server
        self.url = url
        self.redirect_uri = redirect_uri
        self.state = state

    def __repr__(self) -> str:
        return "AuthorizationRequest(server=%r, redirect_uri=%r)" % (self.server, self.redirect_uri)


def parse_redirect(value: Any, fallback_state: Optional[str] = None) -> Dict[str, str]:
    """Redirect parameters from a redirect URL, a bare code, a (code, state) pair or a dict."""
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items() if v is not None}
    if isinstance(value, (tuple, list)) and len(value) == 2:
        params = {"code": str(value[0])}
        if value[1] is not None:
            params["state"] = str(value[1])
        return params
    if isinstance(value, str):
        text = value.strip()
        if "://" in text or text.startswith("?") or ("=" in text and "&" in text):
            query = urlsplit(text).query if "://" in text else text.lstrip("?")
            return dict(parse_qsl(query, keep_blank_values=True))
        if text:
            params = {"code": text}
            if fallback_state:
                params["state"] = fallback_state
            return params
    raise CallbackError("expected a redirect URL, an authorization code or (code, state)")


def _store_tag(store: Any) -> str:
    path = getattr(store, "location", "") or getattr(store, "path", "") or ""
    return hashlib.sha256(path.encode("utf-8")).hexdigest()[:16] if path else ""


class PendingCallback:
    """One login waiting for its redirect. Thread-safe; the first delivery wins.

    Its members have the names of :class:`~mcpsync.handles.Handle`'s (``id``, ``done()``, ``result(timeout)``,
    ``exception(timeout)``, ``cancel()``, ``cancelled()``) but it is not a ``Handle``: there is no
    ``add_done_callback``, because the redirect is delivered on the callback server's HTTP thread, or (when
    another mcpsync process holds the port) only while someone waits in :meth:`result` polling the shared
    store, and a login has no client whose dispatch thread could run the callback. Use as a context manager
    (or call :meth:`close`) so the server stops when idle.
    """

    def __init__(self, state: str, server: Optional["_CallbackServer"], key: Tuple[str, int, str], store: Any) -> None:
        self.state = state
        self._server = server
        self._key = key
        self._store = store
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._result: Optional[CallbackResult] = None
        self._cancelled: Optional[str] = None
        self._closed = False

    def __enter__(self) -> "PendingCallback":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @property
    def id(self) -> str:
        """The login's OAuth ``state`` (the same as :attr:`state`)."""
        return self.state

    def done(self) -> bool:
        """True once the redirect was delivered or the wait cancelled. Never blocks."""
        return self._event.is_set()

    def cancelled(self) -> bool:
        """True when :meth:`cancel` ended the wait before a redirect arrived."""
        return self._cancelled is not None

    @property
    def relayed(self) -> bool:
        """True while another mcpsync process holds the port and relays through the store."""
        return self._server is None

    def deliver(self, params: Dict[str, str]) -> bool:
        """Complete the wait with redirect parameters; returns False if already completed."""
        with self._lock:
            if self._result is not None or self._cancelled is not None:
                return False
            self._result = CallbackResult(params)
        self._event.set()
        return True

    def cancel(self, reason: str = "the login was cancelled") -> bool:
        """Make :meth:`result` raise :class:`~mcpsync.errors.CallbackError` with ``reason``."""
        with self._lock:
            if self._result is not None or self._cancelled is not None:
                return False
            self._cancelled = reason
        self._event.set()
        return True

    def exception(self, timeout: Optional[float] = DEFAULT_WAIT) -> Optional[BaseException]:
        """Wait like :meth:`result`; return its error instead of raising it (None on success). A timeout is
        raised, not returned: the login may still complete."""
        try:
            self.result(timeout)
        except (CallbackError, OAuthError) as exc:
            if not self.done():
                raise
            return exc
        return None

    def result(self, timeout: Optional[float] = DEFAULT_WAIT) -> CallbackResult:
        """Block until the redirect arrives, at most ``timeout`` seconds (None: forever).

        Raises :class:`~mcpsync.errors.OAuthError` when the redirect carries ``error``,
        :class:`~mcpsync.errors.CallbackError` on timeout or when the wait was cancelled.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                break
            if self._server is not None:
                self._event.wait(remaining)
                if self._event.is_set() or remaining is not None:
                    break
                continue
            # Relay mode: poll the store, and take the port over when the holder leaves.
            if self._event.wait(min(_POLL, remaining) if remaining is not None else _POLL):
                break
            params = self._store.take_callback(self.state) if self._store is not None else None
            if params:
                self.deliver(params)
                break
            self._try_take_over()
        result = self._result
        if result is None and self._cancelled is not None:
            raise CallbackError(self._cancelled)
        if result is None:
            raise CallbackError("timed out after %ss waiting for the OAuth redirect to %s:%d%s" % (timeout, *self._key))
        if result.error:
            raise OAuthError(error=result.error, description=result.error_description or "")
        return result

    def _try_take_over(self) -> None:
        host, port, path = self._key
        try:
            server = _acquire_server(host, port, self._store, self, probe_only_free=True)
        except (CallbackError, OSError):
            return
        if server is None:
            return
        with self._lock:
            self._server = server
        log.debug("took over the OAuth callback port %s:%d", host, port)
        # A callback may have been recorded just before the holder left.
        params = self._store.take_callback(self.state) if self._store is not None else None
        if params:
            self.deliver(params)

    def close(self) -> None:
        """Unregister; stops the server when this was the last pending login. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            server = self._server
        if server is not None:
            server.unregister(self.state)


class _Handler(http.server.BaseHTTPRequestHandler):
    server: "_HTTPServer"
    timeout = 10  # idle connections (browser pre-connects) are dropped after this
    server_version = "mcpsync-oauth-callback"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
        log.debug("callback server: %s", self.requestline.split("?", 1)[0] if self.requestline else "")

    def _reply(self, status: int, body: str, content_type: str = "text/html; charset=utf-8") -> None:
        data = body.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header(MARKER_HEADER, "1")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def do_GET(self) -> None:  # noqa: N802 - stdlib name
        owner: _CallbackServer = self.server.owner
        parts = urlsplit(self.path)
        if parts.path == WHOAMI_PATH:
            body = {
                "app": "mcpsync",
                "pid": os.getpid(),
                "store": _store_tag(owner.store),
                "paths": sorted(owner.paths),
            }
            self._reply(200, json.dumps(body), "application/json")
            return
        params = dict(parse_qsl(parts.query, keep_blank_values=True))
        known_path = parts.path in owner.paths
        state = params.get("state")
        if not state:
            if not known_path:
                self._reply(404, "Not found", "text/plain; charset=utf-8")
                return
            self._reply(400, pages.missing_state_page())
            return
        waiter = owner.lookup(state) if known_path else None
        relayed = False
        if waiter is None:
            relayed = owner.relay(state, params)
            if not relayed:
                self._reply(400, pages.invalid_state_page())
                return
        if params.get("error"):
            self._reply(200, pages.error_page(params["error"], params.get("error_description", "")))
        else:
            self._reply(200, pages.success_page(owner.label_for(state)))
        if waiter is not None:
            waiter.deliver(params)

    def do_POST(self) -> None:  # noqa: N802 - stdlib name
        self._reply(405, "Method not allowed", "text/plain; charset=utf-8")


class _HTTPServer(http.server.HTTPServer):
    # Linux and macOS refuse to bind over a live listener even with SO_REUSEADDR (the port is
    # probed first anyway); the option only lets a restart reuse a port left in TIME_WAIT.
    allow_reuse_address = not sys.platform.startswith("win")
    owner: "_CallbackServer"

    def server_bind(self) -> None:
        if hasattr(socket, "SO_EXCLUSIVEADDRUSE"):  # Windows: never share the port
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_EXCLUSIVEADDRUSE, 1)
        super().server_bind()

    def process_request(self, request: Any, client_address: Any) -> None:
        thread = _threads.spawn("mcpsync-oauth-callback-conn", self._serve_one, request, client_address)
        with self.owner.lock:
            self.owner.conns = [c for c in self.owner.conns if c[0].is_alive()] + [(thread, request)]

    def _serve_one(self, request: Any, client_address: Any) -> None:
        try:
            self.finish_request(request, client_address)
        except Exception:  # noqa: BLE001 - a broken browser connection must not kill anything
            log.debug("callback connection failed", exc_info=True)
        finally:
            self.shutdown_request(request)


class _CallbackServer:
    """A listening socket plus the map state -> pending login. Internal."""

    def __init__(self, host: str, port: int, store: Any) -> None:
        self.host = host
        self.port = port
        self.store = store
        self.paths: Set[str] = set()
        self.lock = threading.Lock()
        self.pending: Dict[str, PendingCallback] = {}
        self.labels: Dict[str, str] = {}
        self.conns: List[Tuple[threading.Thread, socket.socket]] = []
        self.httpd = _HTTPServer((host, port), _Handler)
        self.httpd.owner = self
        self.thread = _threads.spawn("mcpsync-oauth-callback", self.httpd.serve_forever, 0.2)
        log.debug("OAuth callback server listening on %s:%d", host, port)

    def register(self, state: str, waiter: PendingCallback, label: str = "") -> None:
        with self.lock:
            self.pending[state] = waiter
            self.labels[state] = label
            self.paths.add(waiter._key[2])

    def lookup(self, state: str) -> Optional[PendingCallback]:
        with self.lock:
            return self.pending.get(state)

    def label_for(self, state: str) -> str:
        with self.lock:
            return self.labels.get(state, "")

    def relay(self, state: str, params: Dict[str, str]) -> bool:
        """Record the callback for another process's login that uses ``state``."""
        if self.store is None or len(state) > 256:
            return False
        try:
            if find_state_owner(self.store, state) is None:
                return False
            self.store.record_callback(state, params)
        except Exception:  # noqa: BLE001 - a store failure becomes "Invalid state", logged
            log.warning("could not relay an OAuth callback through the credential store", exc_info=True)
            return False
        return True

    def unregister(self, state: str) -> None:
        with self.lock:
            self.pending.pop(state, None)
            self.labels.pop(state, None)
            idle = not self.pending
        if idle:
            _release_server(self)

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        _threads.join(self.thread, 5.0)
        with self.lock:
            conns = list(self.conns)
            self.conns = []
        for thread, sock in conns:
            if thread.is_alive():
                # An idle keep-alive or pre-connect socket from the browser: end it now.
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            _threads.join(thread, 5.0)
        log.debug("OAuth callback server on %s:%d stopped", self.host, self.port)


_SERVERS: Dict[Tuple[str, int], _CallbackServer] = {}
_SERVERS_LOCK = threading.Lock()


def _probe(host: str, port: int) -> Optional[Dict[str, Any]]:
    """None when nothing listens; {} when a foreign program does; the whoami document if mcpsync does.

    One GET through urllib3 (the library every HTTP request of mcpsync goes through), ``retries=False``; blocks
    at most 1 s to connect and 1.5 s per read."""
    import urllib3

    pool = urllib3.HTTPConnectionPool(
        host, port, maxsize=1, retries=False, timeout=urllib3.Timeout(connect=1.0, read=1.5)
    )
    try:
        try:
            resp = pool.urlopen(
                "GET", WHOAMI_PATH, headers={"Connection": "close"}, preload_content=False, redirect=False
            )
        except (urllib3.exceptions.NewConnectionError, urllib3.exceptions.ConnectTimeoutError):
            return None
        except (urllib3.exceptions.HTTPError, OSError):
            return {}
        try:
            body = resp.read(65536)
        except (urllib3.exceptions.HTTPError, OSError):
            return {}
        finally:
            resp.release_conn()
        if resp.headers.get(MARKER_HEADER) is None:
            return {}
    finally:
        pool.close()
    try:
        doc = json.loads(body.decode("utf-8"))
    except ValueError:
        return {}
    return doc if isinstance(doc, dict) and doc.get("app") == "mcpsync" else {}


def _acquire_server(
    host: str,
    port: int,
    store: Any,
    waiter: PendingCallback,
    label: str = "",
    *,
    probe_only_free: bool = False,
) -> Optional[_CallbackServer]:
    """The running server for (host, port) with ``waiter`` registered, starting it if the port is free.

    Returns None when another mcpsync process sharing our store holds the port (relay).
    Raises CallbackError when a foreign program (or mcpsync with another store) holds it.
    With ``probe_only_free`` a busy port simply returns None.
    """
    with _SERVERS_LOCK:
        server = _acquire_locked(host, port, store, probe_only_free)
        if server is not None:
            server.register(waiter.state, waiter, label)
        return server


def _acquire_locked(host: str, port: int, store: Any, probe_only_free: bool) -> Optional[_CallbackServer]:
    server = _SERVERS.get((host, port))
    if server is not None:
        return server
    holder = _probe(host, port)
    if holder is None:
        try:
            server = _CallbackServer(host, port, store)
        except OSError as exc:
            if probe_only_free:
                return None
            holder = _probe(host, port)
            if holder is None:
                raise CallbackError(
                    "cannot listen for the OAuth redirect on %s:%d: %s; %s" % (host, port, exc, _PORT_HINT)
                ) from exc
        else:
            _SERVERS[(host, port)] = server
            return server
    if probe_only_free:
        return None
    if not holder:
        raise CallbackError(
            "the OAuth callback port %s:%d is already in use by another program; %s" % (host, port, _PORT_HINT)
        )
    if holder.get("store") != _store_tag(store):
        raise CallbackError(
            "the OAuth callback port %s:%d is held by another mcpsync process (pid %s) that uses a different "
            "credential store; finish that login first or %s" % (host, port, holder.get("pid"), _PORT_HINT)
        )
    log.info(
        "OAuth callback port %s:%d is held by mcpsync process %s; waiting through the credential store",
        host,
        port,
        holder.get("pid"),
    )
    return None


def _release_server(server: _CallbackServer) -> None:
    with _SERVERS_LOCK:
        with server.lock:
            if server.pending:
                return
        if _SERVERS.get((server.host, server.port)) is server:
            del _SERVERS[(server.host, server.port)]
        server.stop()


def expect_callback(
    state: str,
    *,
    host: str = DEFAULT_CALLBACK_HOST,
    port: int = DEFAULT_CALLBACK_PORT,
    path: str = DEFAULT_CALLBACK_PATH,
    store: Any = None,
    label: str = "",
) -> PendingCallback:
    """Register a login waiting for the redirect carrying ``state``; starts the server if needed.

    Blocks at most ~3 seconds (probing a busy port). Raises
    :class:`~mcpsync.errors.CallbackError` at once when a foreign program holds the port.
    ``label`` (the server name) is shown on the success page.
    """
    waiter = PendingCallback(state, None, (host, port, path), store)
    waiter._server = _acquire_server(host, port, store, waiter, label)
    return waiter


def running_servers() -> List[Tuple[str, int]]:
    """(host, port) of the callback servers running in this process (for tests and diagnostics)."""
    with _SERVERS_LOCK:
        return sorted(_SERVERS)


def authorize_in_browser(manager: Any, name: str, url: str, state: str, timeout: Optional[float]) -> Dict[str, str]:
    """The browser step of an :class:`~mcpsync.auth.OAuthManager` login: the authorization handler, or
    the browser plus the loopback callback (registered as the manager's pending login of ``name`` so
    ``finish_auth`` can deliver a pasted redirect). Returns the redirect's ``state``, ``code``, ``iss``.
    """
    request = AuthorizationRequest(name, url, manager.redirect_uri, state)
    if manager.on_authorization_url is not None:
        manager.on_authorization_url(name, url)
    if manager.authorize_handler is not None:
        value = manager.authorize_handler(request)
        if value is None:
            raise CallbackError("the authorization handler returned nothing", server=name)
        return parse_redirect(value, state)
    waiter = expect_callback(
        state,
        host=manager.callback_host,
        port=manager.callback_port,
        path=manager.callback_path,
        store=manager.store,
        label=name,
    )
    with manager._lock:
        if manager._closed:
            waiter.close()
            raise CallbackError("the OAuth manager is closed", server=name)
        manager._pending[name] = waiter
    try:
        opened = False
        try:
            opened = bool((manager.open_browser or _webbrowser_open())(url))
        except Exception:  # noqa: BLE001 - any browser failure becomes the event below
            log.debug("opening the browser failed", exc_info=True)
        if not opened:
            if manager.on_browser_open_failed is not None:  # the application shows the URL its own way
                manager.on_browser_open_failed(name, url)
            else:
                log.warning(
                    "could not open a browser for the login of %s; paste the redirect URL into finish_auth", name
                )
        result = waiter.result(manager.callback_timeout if timeout is None else timeout)
    finally:
        with manager._lock:
            if manager._pending.get(name) is waiter:
                del manager._pending[name]
        waiter.close()
    params = {"state": result.state or "", "code": result.code or ""}
    if result.iss is not None:
        params["iss"] = result.iss
    return params


def _webbrowser_open() -> Callable[[str], bool]:
    import webbrowser

    return webbrowser.open
