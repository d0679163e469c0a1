"""MCP Apps, part 4: the web host over real HTTP (a threaded WSGI server): what each origin serves, the CSP
headers, and refusals of cross-origin, oversized, mistyped and junk requests; the event stream."""

from __future__ import annotations

import json
import threading
from typing import Any, Dict, Iterator, List

import pytest
import requests
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpsync import Client
from mcpsync.apps import AppWebHost

from tests.conftest import fuzz_examples, server_cmd
from tests.browser.test_apps_browser import Site
from mcpsync.client import ClientOptions


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    with Client(server_cmd("--apps"), options=ClientOptions(apps=True)) as c:
        yield c


@pytest.fixture
def site() -> Iterator[Site]:
    s = Site()
    yield s
    s.close()


def urls(site: Site, token: str) -> Dict[str, str]:
    host, sandbox = site.host.host_origin, site.host.sandbox_origin
    base = "/mcp-apps/s/%s/" % token
    return {
        "page": host + base,
        "rpc": host + base + "rpc",
        "events": host + base + "events",
        "resource": host + base + "resource",
        "sandbox": sandbox + base + "sandbox",
        "sandbox_on_host": host + base + "sandbox",
        "rpc_on_sandbox": sandbox + base + "rpc",
    }


def test_origins_serve_only_their_part(site: Site, client: Client) -> None:
    session = site.host.open(client, "show_counter")
    u = urls(site, session.token)
    page = requests.get(u["page"], timeout=30)
    assert (
        page.status_code == 200 and "frame-src " + site.host.sandbox_origin in page.headers["Content-Security-Policy"]
    )
    assert session.sandbox_url in page.text and 'sandbox="allow-scripts allow-same-origin"' in page.text
    proxy = requests.get(u["sandbox"], timeout=30)
    assert proxy.status_code == 200 and proxy.headers["Content-Security-Policy"] == session.page.csp_header()
    assert json.dumps(site.host.host_origin) in proxy.text  # the proxy only talks to the host origin
    assert requests.get(u["sandbox_on_host"], timeout=30).status_code == 405
    assert requests.post(u["rpc_on_sandbox"], json={}, timeout=30).status_code == 404
    resource = requests.get(u["resource"], timeout=30).json()
    assert resource["html"] == session.page.html and resource["cspHeader"] == session.page.csp_header()
    assert resource["allow"] == ""  # permissions are not granted unless the host opts in
    assert requests.get(site.host.host_origin + "/mcp-apps/s/nope/", timeout=30).status_code == 404
    assert requests.get(site.host.host_origin + "/elsewhere", timeout=30).text == "recorded"  # passed through


def test_rpc_refusals_and_answers(site: Site, client: Client) -> None:
    session = site.host.open(client, "show_counter")
    u = urls(site, session.token)
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    assert requests.post(u["rpc"], json=ping, timeout=30).json() == {"jsonrpc": "2.0", "id": 1, "result": {}}
    evil = requests.post(u["rpc"], json=ping, headers={"Origin": "https://evil.example"}, timeout=30)
    assert evil.status_code == 403
    from_sandbox = requests.post(u["rpc"], json=ping, headers={"Origin": site.host.sandbox_origin}, timeout=30)
    assert from_sandbox.status_code == 403
    assert requests.post(u["rpc"], data="x", headers={"Content-Type": "text/plain"}, timeout=30).status_code == 415
    junk = requests.post(u["rpc"], data=b"\xff{", headers={"Content-Type": "application/json"}, timeout=30)
    assert junk.json()["error"]["code"] == -32700
    note = {"jsonrpc": "2.0", "method": "ui/notifications/initialized"}
    assert requests.post(u["rpc"], json=note, timeout=30).status_code == 204
    big = requests.post(
        u["rpc"],
        data=b"[" + b"0," * (3 * 1024 * 1024) + b"0]",
        timeout=60,
        headers={"Content-Type": "application/json"},
    )
    assert big.status_code == 413


def test_event_stream_delivers_after_initialized_and_ends_on_close(site: Site, client: Client) -> None:
    session = site.host.open(client, "show_counter")
    u = urls(site, session.token)
    session.bridge.send_tool_input({"start": 1})  # held until initialized
    got: List[Dict[str, Any]] = []
    old: List[Dict[str, Any]] = []

    def listen(into: List[Dict[str, Any]], opened: threading.Event) -> None:
        with requests.get(u["events"], stream=True, timeout=60) as resp:
            assert resp.headers["Content-Type"] == "text/event-stream"
            opened.set()
            for line in resp.iter_lines():
                if line.startswith(b"data: "):
                    into.append(json.loads(line[6:]))

    first_open = threading.Event()
    first = threading.Thread(target=listen, args=(old, first_open))
    first.start()
    assert first_open.wait(30)
    opened = threading.Event()
    t = threading.Thread(target=listen, args=(got, opened))  # a second stream takes over: the first one ends
    t.start()
    assert opened.wait(30)
    first.join(30)
    assert not first.is_alive() and old == []
    init = {"jsonrpc": "2.0", "id": 1, "method": "ui/initialize", "params": {"protocolVersion": "2026-01-26"}}
    assert "result" in requests.post(u["rpc"], json=init, timeout=30).json()
    requests.post(u["rpc"], json={"jsonrpc": "2.0", "method": "ui/notifications/initialized"}, timeout=30)
    session.close(teardown_timeout=0.5)  # nobody answers the teardown: bounded wait, then the stream ends
    t.join(30)
    assert not t.is_alive()
    methods = [m.get("method") for m in got]
    assert methods[0] == "ui/notifications/tool-input" and got[0]["params"] == {"arguments": {"start": 1}}
    assert "ui/resource-teardown" in methods
    assert requests.get(u["page"], timeout=30).status_code == 404  # the session is gone


def test_same_origin_for_both_is_refused() -> None:
    with pytest.raises(ValueError):
        AppWebHost("http://127.0.0.1:8000", "http://127.0.0.1:8000/")
    with pytest.raises(ValueError):
        AppWebHost("http://127.0.0.1:8000/path", "http://localhost:8000")


@settings(max_examples=fuzz_examples(100, 30))
@given(body=st.binary(max_size=300), ctype=st.sampled_from(["application/json", "application/json; charset=utf-8"]))
def test_junk_bodies_never_break_the_host(client: Client, body: bytes, ctype: str) -> None:
    host = AppWebHost("http://127.0.0.1:1", "http://localhost:1")
    try:
        session = host.open(client, "show_counter")
        import io

        environ: Dict[str, Any] = {
            "REQUEST_METHOD": "POST",
            "PATH_INFO": "/mcp-apps/s/%s/rpc" % session.token,
            "HTTP_HOST": "127.0.0.1:1",
            "wsgi.url_scheme": "http",
            "CONTENT_TYPE": ctype,
            "CONTENT_LENGTH": str(len(body)),
            "wsgi.input": io.BytesIO(body),
        }
        status = []
        out = b"".join(host(environ, lambda s, h: status.append(s)))
        assert status[0].split()[0] in ("200", "204")
        if status[0].startswith("200"):
            answer = json.loads(out)
            assert answer["jsonrpc"] == "2.0" and ("result" in answer or "error" in answer)
    finally:
        host.close()
