"""A local AI Catalog and Server Card host for the tests: stdlib ``http.server`` on 127.0.0.1, port 0, in a thread.

``server.route(path, body, ...)`` publishes a document (a dict is JSON-encoded) with its ``Content-Type``,
``ETag`` (by default a digest of the body) and ``Cache-Control``; a matching ``If-None-Match`` gets ``304`` with
no body. ``server.redirect(path, location, status)`` answers with a redirect; ``server.stream(path, size)`` sends
``size`` bytes of JSON-looking junk without a ``Content-Length`` (a huge card); ``server.status(path, code)``
answers an error. Every request is recorded in ``server.requests`` as ``(method, path, headers)``; bodies sent
are counted in ``server.bodies_sent``.
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional, Tuple

CARD_TYPE = "application/mcp-server-card+json"
CATALOG_TYPE = "application/ai-catalog+json"
SCHEMA = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"


def card_document(url: str, *, name: str = "io.example/weather", versions: Optional[List[str]] = None,
                  headers: Optional[List[Dict[str, Any]]] = None, **extra: Any) -> Dict[str, Any]:
    """A valid v1 Server Card whose one Streamable HTTP remote is ``url``."""
    remote: Dict[str, Any] = {"type": "streamable-http", "url": url}
    if versions is not None:
        remote["supportedProtocolVersions"] = versions
    if headers is not None:
        remote["headers"] = headers
    doc: Dict[str, Any] = {"$schema": SCHEMA, "name": name, "version": "1.2.0", "description": "Weather for tests",
                           "title": "Weather", "remotes": [remote]}
    doc.update(extra)
    return doc


@dataclass
class Route:
    body: bytes = b""
    content_type: str = "application/json"
    etag: Optional[str] = None
    cache_control: Optional[str] = None
    status: int = 200
    location: Optional[str] = None
    stream: int = 0  # send this many junk bytes without a Content-Length
    extra_headers: Dict[str, str] = field(default_factory=dict)


class _Handler(BaseHTTPRequestHandler):
    server: "_Server"
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802
        owner = self.server.owner
        path = self.path
        with owner.lock:
            owner.requests.append(("GET", path, {k.lower(): v for k, v in self.headers.items()}))
            route = owner.routes.get(path)
        if route is None:
            self._plain(404, b"not found")
            return
        if route.location is not None:
            self.send_response(route.status)
            self.send_header("Location", route.location)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if route.stream:
            self.send_response(200)
            self.send_header("Content-Type", route.content_type)
            self.send_header("Connection", "close")
            self.end_headers()
            chunk = b'{"a": "' + b"x" * 65536
            sent = 0
            try:
                while sent < route.stream:
                    self.wfile.write(chunk)
                    sent += len(chunk)
            except OSError:
                pass
            self.close_connection = True
            return
        if route.status != 200:
            self._plain(route.status, route.body or b"error")
            return
        etag = route.etag
        wanted = self.headers.get("If-None-Match")
        if etag and wanted and etag in [t.strip() for t in wanted.split(",")]:
            self.send_response(304)
            self.send_header("ETag", etag)
            if route.cache_control:
                self.send_header("Cache-Control", route.cache_control)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", route.content_type)
        self.send_header("Content-Length", str(len(route.body)))
        if etag:
            self.send_header("ETag", etag)
        if route.cache_control:
            self.send_header("Cache-Control", route.cache_control)
        self.send_header("Access-Control-Allow-Origin", "*")
        for k, v in route.extra_headers.items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(route.body)
        with owner.lock:
            owner.bodies_sent += 1

    def _plain(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: "CardServer"

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up on a huge answer is what the tests want


class CardServer:
    """The host; use as a context manager. ``base`` is ``http://127.0.0.1:PORT`` (``https`` with ``tls``, a
    server-side ``ssl.SSLContext``)."""

    def __init__(self, tls: Any = None) -> None:
        self.scheme = "https" if tls is not None else "http"
        self.lock = threading.Lock()
        self.routes: Dict[str, Route] = {}
        self.requests: List[Tuple[str, str, Dict[str, str]]] = []
        self.bodies_sent = 0
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        if tls is not None:  # an ssl.SSLContext for the server side: the host serves HTTPS
            self._httpd.socket = tls.wrap_socket(self._httpd.socket, server_side=True)
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="test-cardserver", daemon=True)

    @property
    def base(self) -> str:
        return "%s://127.0.0.1:%d" % (self.scheme, self._httpd.server_address[1])

    def url(self, path: str) -> str:
        return self.base + path

    def __enter__(self) -> "CardServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)

    def route(self, path: str, body: Any, *, content_type: str = CARD_TYPE, etag: Optional[str] = "auto",
              cache_control: Optional[str] = None, **extra: Any) -> str:
        data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
        tag = '"%s"' % hashlib.sha256(data).hexdigest()[:16] if etag == "auto" else etag
        with self.lock:
            self.routes[path] = Route(data, content_type, tag, cache_control, **extra)
        return self.url(path)

    def catalog(self, entries: List[Dict[str, Any]], **kwargs: Any) -> str:
        kwargs.setdefault("content_type", CATALOG_TYPE)
        return self.route("/.well-known/ai-catalog.json", {"specVersion": "1.0", "entries": entries}, **kwargs)

    def redirect(self, path: str, location: str, status: int = 302) -> str:
        with self.lock:
            self.routes[path] = Route(status=status, location=location)
        return self.url(path)

    def hits(self, path: str) -> List[Dict[str, str]]:
        with self.lock:
            return [h for (_m, p, h) in self.requests if p == path]
