"""A web host for MCP Apps, as a WSGI application (Flask, Django, any WSGI server; standard library only).

The spec requires a web host to put the View behind a sandbox proxy on a **different origin**. One
:class:`AppWebHost` serves both: the host endpoints on the host origin (say ``http://127.0.0.1:8000``) and the
proxy page on the sandbox origin (say ``http://localhost:8000``: another host name is another origin, even on the
same port; in production use a separate domain). Requests are told apart by their ``Host`` header.

Per App session (``/<prefix>/s/<token>/``, the token is unguessable):

- ``GET  .../``          a ready-made host page showing the App (or put :meth:`AppSession.embed_html` in yours);
- ``GET  .../resource``  the verified page and its CSP, for ``ui/notifications/sandbox-resource-ready``;
- ``POST .../rpc``       one View -> Host JSON-RPC message; the answer is the response body (204 for none);
- ``GET  .../events``    Host -> View messages as a ``text/event-stream`` (one stream per session);
- ``GET  .../sandbox``   (sandbox origin only) the proxy page, served with the page's CSP as its header.

Cross-origin POSTs are refused (the ``Origin`` header must be the host origin when present) and nothing but the
proxy is served on the sandbox origin. Mount it in Flask with
``app.wsgi_app = host.middleware(app.wsgi_app)``; in Django wrap ``get_wsgi_application()`` the same way.
Thread-safe; each event stream holds one server thread while open (a threaded WSGI server is needed).
"""

from __future__ import annotations

import collections
import json
import logging
import re
import secrets
import threading
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union
from urllib.parse import urlsplit

from ..client.app_page import AppResource
from ..types import Tool
from .bridge import AppBridge, HostCallbacks
from .web_pages import embed_snippet, host_page, sandbox_page

__all__ = ["AppSession", "AppWebHost"]

log = logging.getLogger("mcpsync.apps")

WSGIApp = Callable[[Dict[str, Any], Callable[..., Any]], Iterable[bytes]]
MAX_BODY = 4 * 1024 * 1024
_HOST_CSP = "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; frame-src %s"


# host[:port] of an origin given to AppWebHost (a name, an IPv4 address or a bracketed IPv6 address)
_NETLOC = re.compile(r"(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])(?::[0-9]{1,5})?")
# a header value: printable ASCII and the space, nothing else (no CR/LF: a header can never be split)
_HEADER_VALUE = re.compile(r"[\x20-\x7e]*")


def _origin(url: str) -> str:
    if not isinstance(url, str) or _HEADER_VALUE.fullmatch(url) is None:
        raise ValueError("an origin is scheme://host[:port], not %r" % (url,))
    parts = urlsplit(url)
    if (
        parts.scheme not in ("http", "https")
        or _NETLOC.fullmatch(parts.netloc) is None
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
    ):
        raise ValueError("an origin is scheme://host[:port], not %r" % url)
    return "%s://%s" % (parts.scheme, parts.netloc.lower())


class AppSession:
    """One App shown in a browser: its verified page, its :class:`~mcpsync.apps.AppBridge` and its URLs."""

    def __init__(self, host: "AppWebHost", token: str, page: AppResource, bridge: AppBridge, title: str) -> None:
        self.host = host
        self.token = token
        self.page = page
        self.bridge = bridge
        self.title = title
        self.streaming = threading.Lock()

    @property
    def path(self) -> str:
        """The session's path prefix on both origins (ends with ``/``)."""
        return "%s/s/%s/" % (self.host.prefix, self.token)

    @property
    def url(self) -> str:
        """The ready-made host page (host origin)."""
        return self.host.host_origin + self.path

    @property
    def sandbox_url(self) -> str:
        """The sandbox proxy (sandbox origin)."""
        return self.host.sandbox_origin + self.path + "sandbox"

    def embed_html(self, *, height: int = 200, frame_id: str = "mcp-app") -> str:
        """The markup (iframe and relay script) to show this App on a page of your own (host origin)."""
        border = self.page.prefers_border is not False
        return embed_snippet(
            proxy_url=self.sandbox_url,
            sandbox_origin=self.host.sandbox_origin,
            base=self.path,
            allow=self.page.allow_attribute() if self.host.grant_permissions else "",
            height=height,
            border=border,
            frame_id=frame_id,
        )

    def close(self, teardown_timeout: float = 2.0) -> None:
        """Ask the View to tear down (bounded wait), close the bridge and forget the session."""
        self.host.close_session(self.token, teardown_timeout)


class AppWebHost:
    """Serves MCP Apps to browsers; see the module docstring.

    Args:
        host_origin: the origin users load the host pages from (``http://127.0.0.1:8000``).
        sandbox_origin: a different origin for the sandbox proxy (``http://localhost:8000``).
        prefix: the URL path prefix of every endpoint (default ``/mcp-apps``).
        max_sessions: sessions kept; opening more closes the oldest.
        grant_permissions: put the page's declared permissions (camera...) in the iframe ``allow`` attribute
            (default False: the host grants nothing it did not decide to).
        keepalive: seconds between comment lines on an idle event stream.
    """

    def __init__(
        self,
        host_origin: str,
        sandbox_origin: str,
        *,
        prefix: str = "/mcp-apps",
        max_sessions: int = 64,
        grant_permissions: bool = False,
        keepalive: float = 15.0,
    ) -> None:
        self.host_origin = _origin(host_origin)
        self.sandbox_origin = _origin(sandbox_origin)
        if self.host_origin == self.sandbox_origin:
            raise ValueError("the sandbox proxy must be on another origin than the host (the MCP Apps spec)")
        self.prefix = "/" + prefix.strip("/")
        self.max_sessions = max(1, max_sessions)
        self.grant_permissions = grant_permissions
        self.keepalive = keepalive
        self._lock = threading.Lock()
        self._sessions: "collections.OrderedDict[str, AppSession]" = collections.OrderedDict()
        self._closed = False

    # ------------------------------------------------------------------ sessions

    def open(
        self,
        client: Any,
        tool: Union[Tool, str],
        *,
        callbacks: Optional[HostCallbacks] = None,
        host_context: Optional[Dict[str, Any]] = None,
        sha256: Optional[str] = None,
        title: Optional[str] = None,
        **bridge_options: Any,
    ) -> AppSession:
        """Fetch and verify ``tool``'s page from ``client`` (:meth:`mcpsync.Client.app_for`, blocks for the read)
        and start a session for it. Show ``session.url`` (or ``session.embed_html()``) in a browser, then run the
        tool with ``session.bridge.call_tool(arguments)``: the View gets the input and the result once it is up."""
        page = client.app_for(tool, sha256=sha256)
        listed = client.get_tool(page.tool)
        context = {"platform": "web"}
        context.update(host_context or {})
        bridge = AppBridge(client, listed, callbacks=callbacks, host_context=context, **bridge_options)
        session = AppSession(self, secrets.token_urlsafe(24), page, bridge, title or (listed.title or page.tool))
        evicted: List[AppSession] = []
        with self._lock:
            if self._closed:
                bridge.close()
                raise RuntimeError("the AppWebHost is closed")
            self._sessions[session.token] = session
            while len(self._sessions) > self.max_sessions:
                evicted.append(self._sessions.popitem(last=False)[1])
        for old in evicted:
            old.bridge.close()
        return session

    def session(self, token: str) -> Optional[AppSession]:
        """The open session with this token, or None."""
        with self._lock:
            return self._sessions.get(token)

    def close_session(self, token: str, teardown_timeout: float = 2.0) -> None:
        """Tear one session down (the View is asked first, up to ``teardown_timeout`` seconds)."""
        with self._lock:
            session = self._sessions.pop(token, None)
        if session is not None:
            session.bridge.teardown(teardown_timeout)
            session.bridge.close()

    def close(self) -> None:
        """Close every session (no teardown wait); event streams end. Idempotent."""
        with self._lock:
            self._closed = True
            sessions = list(self._sessions.values())
            self._sessions.clear()
        for session in sessions:
            session.bridge.close()

    # ------------------------------------------------------------------ WSGI

    def middleware(self, app: WSGIApp) -> WSGIApp:
        """A WSGI app answering this host's paths and passing every other request to ``app``."""

        def wrapped(environ: Dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
            path = environ.get("PATH_INFO") or "/"
            if path == self.prefix or path.startswith(self.prefix + "/"):
                return self(environ, start_response)
            return app(environ, start_response)

        return wrapped

    def __call__(self, environ: Dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        try:
            status, headers, body = self._route(environ)
        except Exception:  # noqa: BLE001 - a request must never take the server down
            log.exception("MCP Apps web host: request failed")
            status, headers, body = "500 Internal Server Error", [("Content-Type", "text/plain")], [b"error"]
        bad = [name for name, value in headers if _HEADER_VALUE.fullmatch(value) is None]
        if bad:  # never hand a WSGI server a header it would split (or pass on) at a CR/LF or another control
            log.error("MCP Apps web host: refused to send header(s) %s holding a control character", bad)
            status, headers, body = "500 Internal Server Error", [("Content-Type", "text/plain")], [b"error"]
        start_response(status, headers + [("X-Content-Type-Options", "nosniff"), ("Cache-Control", "no-store")])
        return body

    def _request_origin(self, environ: Dict[str, Any]) -> str:
        host = environ.get("HTTP_HOST") or "%s:%s" % (environ.get("SERVER_NAME", ""), environ.get("SERVER_PORT", ""))
        return "%s://%s" % (environ.get("wsgi.url_scheme", "http"), str(host).lower())

    def _route(self, environ: Dict[str, Any]) -> Tuple[str, List[Tuple[str, str]], Iterable[bytes]]:
        path = environ.get("PATH_INFO") or "/"
        method = environ.get("REQUEST_METHOD", "GET")
        rest = path[len(self.prefix) :].strip("/").split("/")
        if len(rest) not in (2, 3) or rest[0] != "s":
            return _text("404 Not Found", "not found")
        session = self.session(rest[1])
        action = rest[2] if len(rest) == 3 else ""
        if session is None:
            return _text("404 Not Found", "no such App session")
        origin = self._request_origin(environ)
        if origin == self.sandbox_origin:
            if action == "sandbox" and method == "GET":
                page = session.page
                html = sandbox_page(self.host_origin, page.csp_header())
                return (
                    "200 OK",
                    [
                        ("Content-Type", "text/html; charset=utf-8"),
                        ("Content-Security-Policy", page.csp_header()),
                        ("Referrer-Policy", "no-referrer"),
                    ],
                    [html.encode("utf-8")],
                )
            return _text("404 Not Found", "only the sandbox proxy is served on this origin")
        if origin != self.host_origin:
            return _text("421 Misdirected Request", "unknown origin")
        sent_origin = environ.get("HTTP_ORIGIN")
        if sent_origin is not None and sent_origin.lower() != self.host_origin:
            return _text("403 Forbidden", "cross-origin request refused")
        if action == "" and method == "GET":
            html = host_page(session.title, session.embed_html())
            csp = _HOST_CSP % self.sandbox_origin
            return (
                "200 OK",
                [("Content-Type", "text/html; charset=utf-8"), ("Content-Security-Policy", csp)],
                [html.encode("utf-8")],
            )
        if action == "resource" and method == "GET":
            resource = session.page.sandbox_resource()
            if not self.grant_permissions:
                resource["allow"] = ""
            return _json("200 OK", resource)
        if action == "rpc" and method == "POST":
            return self._rpc(environ, session)
        if action == "events" and method == "GET":
            return self._events(session)
        return _text("405 Method Not Allowed", "not allowed")

    def _rpc(self, environ: Dict[str, Any], session: AppSession) -> Tuple[str, List[Tuple[str, str]], Iterable[bytes]]:
        ctype = str(environ.get("CONTENT_TYPE", "")).split(";")[0].strip().lower()
        if ctype != "application/json":
            return _text("415 Unsupported Media Type", "send application/json")
        try:
            length = int(environ.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = -1
        if length < 0 or length > MAX_BODY:
            return _text("413 Payload Too Large", "too large")
        raw = environ["wsgi.input"].read(length) if length else b""
        try:
            message = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return _json("200 OK", {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}})
        answer = session.bridge.handle(message)  # on this request's thread: never a reader thread
        if answer is None:
            return "204 No Content", [], []
        return _json("200 OK", answer)

    def _events(self, session: AppSession) -> Tuple[str, List[Tuple[str, str]], Iterable[bytes]]:
        if not session.streaming.acquire(blocking=False):
            return _text("409 Conflict", "this session already has an event stream")
        return "200 OK", [("Content-Type", "text/event-stream"), ("X-Accel-Buffering", "no")], self._stream(session)

    def _stream(self, session: AppSession) -> Iterator[bytes]:
        try:
            yield b": mcpsync MCP Apps event stream\n\n"
            while True:
                message = session.bridge.next_outgoing(self.keepalive)
                if message is None:
                    if session.bridge.closed or self.session(session.token) is not session:
                        return
                    yield b": keep-alive\n\n"
                    continue
                yield b"data: " + json.dumps(message, separators=(",", ":")).encode("utf-8") + b"\n\n"
        finally:
            session.streaming.release()


def _text(status: str, text: str) -> Tuple[str, List[Tuple[str, str]], Iterable[bytes]]:
    return status, [("Content-Type", "text/plain; charset=utf-8")], [text.encode("utf-8")]


def _json(status: str, value: Any) -> Tuple[str, List[Tuple[str, str]], Iterable[bytes]]:
    return status, [("Content-Type", "application/json")], [json.dumps(value).encode("utf-8")]
