"""The per-call HTTP path (transports/http/fast.py) behaves as ``requests.Session.request`` would.

Against a real local server: headers and body arrive intact (one write), the auth hook runs per request,
a changed session setting is picked up, cookies and same-origin redirects work as in requests, and
failures surface as the requests exceptions the transports already map.
"""

from __future__ import annotations

import http.server
import socket
import threading
from typing import Any, Dict, Iterator, List, Tuple

import pytest
import requests

from mcpsync.transports.http.fast import FastSender
from mcpsync.transports.http.remote import HTTPOptions, build_session

TIMEOUT = (30.0, 30.0)  # (connect, read) bounds against the in-process server, sized for a loaded CI machine


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: List[Tuple[str, str, Dict[str, str], bytes]] = []
    release = threading.Event()

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.seen.append(("POST", self.path, dict(self.headers.items()), body))
        if self.path == "/redirect":
            self._answer(307, b"", {"Location": "/target"})
        elif self.path == "/cookie":
            self._answer(200, b"{}", {"Set-Cookie": "sticky=node7; Path=/"})
        elif self.path == "/slow":
            self.release.wait(10)
            self._answer(200, b"{}")
        else:
            self._answer(200, b'{"path": "%s"}' % self.path.encode())

    def _answer(self, status: int, body: bytes, headers: Dict[str, str] = {}) -> None:  # noqa: B006
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture()
def server() -> Iterator[str]:
    _Handler.seen = []
    _Handler.release = threading.Event()
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    srv.daemon_threads = True
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield "http://127.0.0.1:%d" % srv.server_address[1]
    _Handler.release.set()
    srv.shutdown()
    srv.server_close()
    t.join(5)


def _sender(base: str, **options: Any) -> FastSender:
    return FastSender(build_session(base + "/mcp", HTTPOptions(trust_env=False, **options)))


def _post(sender: FastSender, url: str, body: bytes = b'{"a": 1}', **headers: str) -> Any:
    r = sender.send("POST", url, body, dict({"Content-Type": "application/json"}, **headers), TIMEOUT)
    try:
        return r.status_code, r.raw.read(), r
    finally:
        r.close()


def test_headers_and_body_arrive_and_the_connection_is_reused(server: str) -> None:
    sender = _sender(server, headers={"X-Api-Key": "k1"})
    for i in range(3):
        status, body, _ = _post(sender, server + "/mcp", b'{"n": %d}' % i, **{"Mcp-Method": "tools/call"})
        assert status == 200 and body == b'{"path": "/mcp"}'
    got = _Handler.seen
    assert [b for _, _, _, b in got] == [b'{"n": 0}', b'{"n": 1}', b'{"n": 2}']
    h = got[0][2]
    assert h["X-Api-Key"] == "k1" and h["Mcp-Method"] == "tools/call" and h["Content-Length"] == "8"
    assert h["User-Agent"].startswith("mcpsync/")
    pool = sender._routes[("POST", server + "/mcp")].pool
    assert pool.num_connections == 1  # one keep-alive connection served all three


def test_a_large_body_is_sent_whole(server: str) -> None:
    body = b'{"x": "' + b"y" * 300_000 + b'"}'
    assert _post(_sender(server), server + "/mcp", body)[0] == 200
    assert _Handler.seen[0][3] == body


def test_auth_runs_for_every_request(server: str) -> None:
    counter = iter(range(100))

    def auth(r: Any) -> Any:
        r.headers["Authorization"] = "Proof %d %s %s" % (next(counter), r.method, r.url)
        return r

    sender = _sender(server, auth=auth)
    _post(sender, server + "/mcp")
    _post(sender, server + "/other")
    assert _Handler.seen[0][2]["Authorization"] == "Proof 0 POST %s/mcp" % server
    assert _Handler.seen[1][2]["Authorization"] == "Proof 1 POST %s/other" % server


def test_a_changed_session_setting_is_used(server: str) -> None:
    sender = _sender(server)
    _post(sender, server + "/mcp")
    sender.session.headers["X-Later"] = "yes"
    _post(sender, server + "/mcp")
    assert "X-Later" not in _Handler.seen[0][2] and _Handler.seen[1][2]["X-Later"] == "yes"


def test_cookies_are_kept_and_sent_back(server: str) -> None:
    sender = _sender(server)
    _post(sender, server + "/cookie")
    assert sender.session.cookies.get("sticky") == "node7"
    _post(sender, server + "/mcp")
    assert _Handler.seen[1][2].get("Cookie") == "sticky=node7"


def test_a_same_origin_redirect_is_followed_with_the_body(server: str) -> None:
    status, body, r = _post(_sender(server), server + "/redirect", b'{"r": 1}')
    assert status == 200 and body == b'{"path": "/target"}'
    assert [(m, p, b) for m, p, _, b in _Handler.seen] == [
        ("POST", "/redirect", b'{"r": 1}'),
        ("POST", "/target", b'{"r": 1}'),
    ]
    assert [h.status_code for h in r.history] == [307]


def test_failures_are_the_requests_exceptions(server: str) -> None:
    with socket.socket() as s:  # bound, never listening: connections are refused and no one else gets the port
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        with pytest.raises(requests.exceptions.ConnectionError):
            _sender(server).send("POST", "http://127.0.0.1:%d/mcp" % port, b"{}", {}, TIMEOUT)
    with pytest.raises(requests.exceptions.ReadTimeout):
        _sender(server).send("POST", server + "/slow", b"{}", {}, (5.0, 0.2))
