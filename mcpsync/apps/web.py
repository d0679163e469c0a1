"""A web host for MCP Apps, as a WSGI application (Flask, Django, any WSGI server; standard library only).

The spec requires a web host to put the View behind a sandbox proxy on a **different origin**. One
:class:`AppWebHost` serves both: the host endpoints on the host origin (say ``http://127.0.0.1:8000``) and the
proxy page on the sandbox origin (say ``http://localhost:8000``: another host name is another origin, even on the
same port; in production use a separate domain). Requests are told apart by their ``Host`` header.

Per App session (``/<prefix>/s/<token>/``, the token is unguessable):

- ``GET  .../``          a ready-made host page showing the App (or put :meth:`AppSession.embed_html` in yours);
- ``GET  .../resource``  the verified page and its CSP, for ``ui/notifications/sandbox-resource-ready``;
- ``POST .../rpc``       one View -> Host JSON-RPC message; the answer is the response body (204 for none);
- ``GET  .../events``    Host -> View messages as a ``text/event-stream`` (one reader at a time: the newest wins);
- ``GET  .../sandbox``   (sandbox origin only) the proxy page, served with the page's CSP as its header.

Reloads, second tabs and dropped streams: every page load of the host page is a new View with its own random view
id (sent as ``?view=`` on ``events`` and the ``X-MCP-App-View`` header on ``rpc``). The newest View takes the session
over: the bridge replays it the tool input and result (:meth:`AppBridge.begin_view`), and the View it replaced is
told, on its next request or stream, that the App is now shown elsewhere (409; its page says so). A session
remembers the last 32 Views it replaced; an older one coming back counts as new and takes over again. An event stream
that drops and reconnects from the same View resumes where it left off (``Last-Event-ID``). A session that no
longer exists (closed, evicted, the server restarted) answers 404 with a message saying to open the App again
(with a link to ``ended_url`` when given).

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
from typing import Any, Callable, Deque, Dict, Iterable, Iterator, List, Optional, Tuple, Union
from urllib.parse import parse_qs, urlsplit

from .page import AppResource, app_for
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
        self._lock = threading.Lock()
        self._view: Optional[str] = None
        self._replaced: Deque[str] = collections.deque(maxlen=32)

    def view_state(self, view: Optional[str]) -> str:
        """What :meth:`enter_view` would answer, without entering: ``"current"``, ``"new"`` or ``"replaced"``."""
        with self._lock:
            if view is None or view == self._view:
                return "current"
            return "replaced" if view in self._replaced else "new"

    def enter_view(self, view: Optional[str]) -> str:
        """Record that the View ``view`` (its page load's random id) is speaking: ``"current"`` (the View showing
        the App), ``"new"`` (a reload or another tab: it takes the session over and the bridge replays it what
        it needs) or ``"replaced"`` (a View a newer one took over: refuse it). None (no id: a page of your own
        without it) is always ``"current"``. Thread-safe; never blocks."""
        if view is None:
            return "current"
        with self._lock:
            if view == self._view:
                return "current"
            if view in self._replaced:
                return "replaced"
            previous, self._view = self._view, view
            if previous is not None:
                self._replaced.append(previous)
        if previous is not None:
            log.info("MCP App %s: a new View took over session %s...", self.page.tool, self.token[:6])
            self.bridge.begin_view()
        return "new"

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
        ended_url: where the "this App session has ended" page links to open the App again (None: no link).
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
        ended_url: Optional[str] = None,
    ) -> None:
        self.host_origin = _origin(host_origin)
        self.sandbox_origin = _origin(sandbox_origin)
        if self.host_origin == self.sandbox_origin:
            raise ValueError("the sandbox proxy must be on another origin than the host (the MCP Apps spec)")
        self.prefix = "/" + prefix.strip("/")
        self.max_sessions = max(1, max_sessions)
        self.grant_permissions = grant_permissions
        self.keepalive = keepalive
        self.ended_url = ended_url
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
        """Fetch and verify ``tool``'s page from ``client`` (:func:`mcpsync.apps.app_for`, blocks for the read)
        and start a session for it. Show ``session.url`` (or ``session.embed_html()``) in a browser, then run the
        tool with ``session.bridge.call_tool(arguments)``: the View gets the input and the result once it is up."""
        page = app_for(client, tool, sha256=sha256)
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
            if action == "" and method == "GET":
                return _ended_page(self.ended_url)
            return _text("404 Not Found", ENDED)
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
            if session.enter_view(_view_id(environ.get("HTTP_X_MCP_APP_VIEW"))) == "replaced":
                return _text("409 Conflict", REPLACED)
            return self._rpc(environ, session)
        if action == "events" and method == "GET":
            query = parse_qs(str(environ.get("QUERY_STRING") or ""))
            view = _view_id(next(iter(query.get("view", [])), None))
            if "probe" in query:  # the relay asks why its stream was refused, without opening one
                if session.view_state(view) == "replaced":
                    return _text("409 Conflict", REPLACED)
                return _text("200 OK", "open")
            state = session.enter_view(view)
            if state == "replaced":
                return _text("409 Conflict", REPLACED)
            last = str(environ.get("HTTP_LAST_EVENT_ID") or "")
            after = int(last) if state == "current" and last.isdigit() and len(last) < 19 else None
            return self._events(session, after)
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

    def _events(self, session: AppSession, after: Optional[int]) -> Tuple[str, List[Tuple[str, str]], Iterable[bytes]]:
        # the newest stream takes the outbox over: an older one (a dead connection, the View it replaced) ends
        claim, again = session.bridge.claim_outgoing(after)
        headers = [("Content-Type", "text/event-stream"), ("X-Accel-Buffering", "no")]
        return "200 OK", headers, self._stream(session, claim, again)

    def _stream(self, session: AppSession, claim: int, again: List[Tuple[int, Dict[str, Any]]]) -> Iterator[bytes]:
        bridge = session.bridge
        yield b": mcpsync MCP Apps event stream\nretry: 1000\n\n"
        for seq, message in again:  # what a dropped stream took but the View never acknowledged
            yield _event(seq, message)
        while True:
            item = bridge.take_outgoing(claim, self.keepalive)
            if item is None:
                if not bridge.holds_claim(claim) or self.session(session.token) is not session:
                    return
                yield b": keep-alive\n\n"
                continue
            yield _event(*item)


ENDED = (
    "This App session has ended (it was closed, replaced by newer ones, or the server restarted). "
    "Open the App again to start a new session."
)
REPLACED = (
    "This App was opened again in another tab or window (or this page was reloaded), and that View took it "
    "over. Reload this page to show it here again."
)
_VIEW_ID = re.compile(r"[A-Za-z0-9_-]{8,64}")


def _view_id(value: Any) -> Optional[str]:
    return value if isinstance(value, str) and _VIEW_ID.fullmatch(value) else None


def _event(seq: int, message: Dict[str, Any]) -> bytes:
    data = json.dumps(message, separators=(",", ":")).encode("utf-8")
    return b"id: %d\ndata: %s\n\n" % (seq, data)


def _ended_page(ended_url: Optional[str]) -> Tuple[str, List[Tuple[str, str]], Iterable[bytes]]:
    link = ""
    if ended_url is not None:
        href = ended_url.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
        link = ' <a href="%s">Open it again</a>.' % href
    html = ENDED_HTML % {"message": ENDED, "link": link}
    headers = [("Content-Type", "text/html; charset=utf-8"), ("Content-Security-Policy", "default-src 'none'")]
    return "404 Not Found", headers, [html.encode("utf-8")]


ENDED_HTML = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>App session ended</title></head>
<body><p role="alert">%(message)s%(link)s</p></body></html>
"""


def _text(status: str, text: str) -> Tuple[str, List[Tuple[str, str]], Iterable[bytes]]:
    return status, [("Content-Type", "text/plain; charset=utf-8")], [text.encode("utf-8")]


def _json(status: str, value: Any) -> Tuple[str, List[Tuple[str, str]], Iterable[bytes]]:
    return status, [("Content-Type", "application/json")], [json.dumps(value).encode("utf-8")]
