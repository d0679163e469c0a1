"""A local MCP Registry (``/v0.1``) for the tests: stdlib ``http.server`` on 127.0.0.1, port 0, in a thread.

It serves ``{"server": <server.json>, "_meta": {"io.modelcontextprotocol.registry/official": {...}}}`` entries
the way the official registry does (``docs/reference/api/openapi.yaml``): ``GET /v0.1/servers`` with
``search`` (a case-insensitive substring of the name), ``version=latest``, ``limit`` and an opaque ``cursor``;
``GET /v0.1/servers/{name}/versions`` and ``.../versions/{version}`` (names URL-encoded); ``include_deleted``.
Every answer carries an ``ETag``; a matching ``If-None-Match`` gets ``304``. Files under ``/bundles/`` are
served from ``server.files``. ``server.junk`` (bytes) replaces every API answer's body (status
``server.junk_status``), ``server.stall`` (an Event) holds answers until it is set, ``server.cut`` sends a
truncated body and closes, ``server.trickle`` (seconds) sends every body (API answers and bundles) one byte per
that many seconds, ``server.trickle_headers`` its status line and headers instead (``server.trickle_cut`` is
set when the client hung up first): hostile-registry tests. Every
request is recorded in ``server.requests``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import pathlib
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import parse_qs, unquote, urlsplit

FIXTURES = pathlib.Path(__file__).parent.parent / "registry" / "data"
OFFICIAL = "io.modelcontextprotocol.registry/official"


def fixture(name: str) -> Dict[str, Any]:
    """A server.json document of tests/registry/data/."""
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def entry(server: Dict[str, Any], status: str = "active", *, latest: bool = True,
          message: Optional[str] = None) -> Dict[str, Any]:
    """A registry list item for ``server``."""
    meta: Dict[str, Any] = {"status": status, "publishedAt": "2026-11-01T00:00:00Z",
                            "updatedAt": "2026-11-02T00:00:00Z", "isLatest": latest}
    if message:
        meta["statusMessage"] = message
    return {"server": server, "_meta": {OFFICIAL: meta}}


class _Handler(BaseHTTPRequestHandler):
    server: "_Server"
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def _trickle(self, data: bytes) -> bool:
        """Send ``data`` a byte per ``trickle`` seconds; False when the client hung up (or the test ended it)."""
        owner = self.server.owner
        for i in range(len(data)):  # a byte at a time: every read gets something, none ever times out
            try:
                self.wfile.write(data[i:i + 1])
                self.wfile.flush()
            except OSError:
                owner.trickle_cut.set()
                self.close_connection = True
                return False
            if owner.trickle_cut.wait(owner.trickle or 0.05):  # set by the test once the client has given up
                self.close_connection = True
                return False
        return True

    def _send(self, status: int, body: bytes, ctype: str = "application/json", etag: Optional[str] = None) -> None:
        owner = self.server.owner
        if owner.trickle_headers:
            head = ("HTTP/1.1 %d OK\r\nContent-Type: %s\r\nContent-Length: %d\r\nX-Pad: %s\r\n\r\n"
                    % (status, ctype, len(body), "a" * 4000)).encode()
            if self._trickle(head):
                self.wfile.write(body)
            return
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        if etag:
            self.send_header("ETag", etag)
        self.end_headers()
        if owner.trickle is None:
            self.wfile.write(body)
            return
        self.wfile.flush()
        self._trickle(body)

    def do_GET(self) -> None:  # noqa: N802
        owner = self.server.owner
        parts = urlsplit(self.path)
        with owner.lock:
            owner.requests.append((parts.path, parts.query, dict(self.headers)))
        if parts.path.startswith("/bundles/"):
            data = owner.files.get(parts.path[len("/bundles/"):])
            self._send(200 if data is not None else 404, data or b"missing", "application/octet-stream")
            return
        if owner.stall is not None:
            owner.stall.wait(60)
        if owner.cut:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", "100000")
            self.end_headers()
            self.wfile.write(b'{"servers": [')
            self.wfile.flush()
            self.close_connection = True
            return
        if owner.junk is not None:
            self._send(owner.junk_status, owner.junk)
            return
        status, payload = owner.answer(parts.path, parse_qs(parts.query))
        body = json.dumps(payload).encode()
        etag = '"%s"' % hashlib.sha256(body).hexdigest()[:20]
        if status == 200 and self.headers.get("If-None-Match") == etag:
            self._send(304, b"", etag=etag)
            return
        self._send(status, body, etag=etag if status == 200 else None)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    owner: "RegistryServer"


class RegistryServer:
    """See the module docstring. Use as a context manager."""

    def __init__(self, entries: Optional[List[Dict[str, Any]]] = None, *, page_size: int = 2) -> None:
        self.entries: List[Dict[str, Any]] = list(entries or [])
        self.page_size = page_size
        self.files: Dict[str, bytes] = {}
        self.junk: Optional[bytes] = None
        self.junk_status = 200
        self.stall: Optional[threading.Event] = None  # hold every API answer until this is set
        self.cut = False  # promise a longer body than is sent, then close the connection
        self.trickle: Optional[float] = None  # seconds between the bytes of every body
        self.trickle_cut = threading.Event()  # the trickle stopped early (the client hung up, or the test said so)
        self.trickle_headers = False  # trickle the status line and headers instead (a byte per trickle seconds)
        self.requests: List[Tuple[str, str, Dict[str, str]]] = []
        self.lock = threading.Lock()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        self.url = "http://127.0.0.1:%d" % self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="test-registry", daemon=True)

    def __enter__(self) -> "RegistryServer":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.stall is not None:
            self.stall.set()
        self.trickle_cut.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(10)

    def api_requests(self) -> List[str]:
        with self.lock:
            return [p for p, _q, _h in self.requests if p.startswith("/v0.1/")]

    def _visible(self, include_deleted: bool) -> List[Dict[str, Any]]:
        return [e for e in self.entries if include_deleted or e["_meta"][OFFICIAL]["status"] != "deleted"]

    def answer(self, path: str, query: Dict[str, List[str]]) -> Tuple[int, Any]:
        q = {k: v[-1] for k, v in query.items()}
        include_deleted = q.get("include_deleted") == "true"
        if path == "/v0.1/servers":
            items = self._visible(include_deleted)
            if q.get("search"):
                items = [e for e in items if q["search"].lower() in e["server"]["name"].lower()]
            if q.get("version") == "latest":
                items = [e for e in items if e["_meta"][OFFICIAL]["isLatest"]]
            elif q.get("version"):
                items = [e for e in items if e["server"]["version"] == q["version"]]
            limit = min(int(q.get("limit", "30")), self.page_size)
            start = int(base64.urlsafe_b64decode(q["cursor"]).decode()) if q.get("cursor") else 0
            page = items[start:start + limit]
            metadata: Dict[str, Any] = {"count": len(page)}
            if start + limit < len(items):
                metadata["nextCursor"] = base64.urlsafe_b64encode(str(start + limit).encode()).decode()
            return 200, {"servers": page, "metadata": metadata}
        prefix = "/v0.1/servers/"
        if path.startswith(prefix) and "/versions" in path:
            raw_name, _sep, rest = path[len(prefix):].partition("/versions")
            name = unquote(raw_name)
            if "/" in raw_name:  # a name must arrive URL-encoded as one segment
                return 404, {"title": "Not Found", "status": 404, "detail": "unencoded name"}
            versions = [e for e in self._visible(True) if e["server"]["name"] == name]
            if not versions:
                return 404, {"title": "Not Found", "status": 404, "detail": "Server not found"}
            if rest in ("", "/"):
                return 200, {"servers": versions, "metadata": {"count": len(versions)}}
            version = unquote(rest.lstrip("/"))
            for e in versions:
                if (version == "latest" and e["_meta"][OFFICIAL]["isLatest"]) or e["server"]["version"] == version:
                    return 200, e
            return 404, {"title": "Not Found", "status": 404, "detail": "Version not found"}
        return 404, {"title": "Not Found", "status": 404}
