"""MCP Apps in a real browser: headless Chromium loads Apps from real servers through :class:`AppWebHost` (the host
page on ``127.0.0.1``, the sandbox proxy on ``localhost``: two origins), and the tests assert on what the page did.

- our own counter App (``python -m mcpsync.example_server --apps``): initialized, got the tool input and result,
  called an app-only tool through the bridge, had the model-only tool refused, had a fetch to an undeclared
  origin blocked by the CSP (the origin is a live local server that records hits: it sees none), resized;
- the official ``@modelcontextprotocol/server-basic-vanillajs`` (pinned by ``.ci/apps``) through its own SDK: it
  initialized, rendered the result, and its buttons (clicked over the DevTools protocol) called the server's tool,
  sent a message, a log and a link through the host callbacks.

Screenshots land in ``tests/artifacts/``. Skipped without chromium (or node and the npm package), failing
under CI=true instead.
"""

from __future__ import annotations

import os
import shutil
import socketserver
import threading
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

import pytest

from mcpsync import Client
from mcpsync.apps import HostCallbacks
from mcpsync.apps.web import AppWebHost
from mcpsync.manager.adapters import definitions_by_name, to_openai_tools

from tests.peers.cdp import Chromium, find_chromium
from tests.conftest import server_cmd, wait_for
from mcpsync.client import ClientOptions

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "artifacts"
BASIC_BIN = os.environ.get("MCPSYNC_APPS_BASIC_BIN") or str(
    ROOT / ".ci" / "apps-node" / "node_modules" / ".bin" / "mcp-server-basic-vanillajs"
)


class _Threaded(socketserver.ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Quiet(WSGIRequestHandler):
    def log_message(self, *args: Any) -> None:
        pass


class Site:
    """A threaded WSGI server: the AppWebHost in front of a tiny app that records every other request."""

    def __init__(self) -> None:
        self.hits: List[str] = []

        def base(environ: Dict[str, Any], start_response: Any) -> List[bytes]:
            self.hits.append(str(environ.get("PATH_INFO")))
            start_response("200 OK", [("Content-Type", "text/plain"), ("Access-Control-Allow-Origin", "*")])
            return [b"recorded"]

        self.server = make_server("127.0.0.1", 0, base, server_class=_Threaded, handler_class=_Quiet)
        port = self.server.server_port
        self.host = AppWebHost("http://127.0.0.1:%d" % port, "http://localhost:%d" % port)
        self.probe_url = "http://127.0.0.1:%d/probe" % port
        self.server.set_app(self.host.middleware(base))
        self.thread = threading.Thread(target=self.server.serve_forever, name="test-apps-site", daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.host.close()
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(10)


@pytest.fixture
def site() -> Iterator[Site]:
    s = Site()
    yield s
    s.close()


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Chromium]:
    b = Chromium(find_chromium(), str(tmp_path / "profile"))
    yield b
    b.close()


class Seen:
    """What the host callbacks received (from the request threads of the WSGI server)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.logs: List[Any] = []
        self.sizes: List[Tuple[Any, Any]] = []
        self.messages: List[Any] = []
        self.links: List[str] = []
        self.calls: List[str] = []

    def callbacks(self) -> HostCallbacks:
        def add(items: List[Any]) -> Any:
            def f(*args: Any) -> Any:
                with self.lock:
                    items.append(args[0] if len(args) == 1 else args)
                return True

            return f

        return HostCallbacks(
            on_log=add(self.logs),
            on_size_change=add(self.sizes),
            on_message=add(self.messages),
            on_open_link=add(self.links),
            approve_tool_call=add(self.calls),
        )

    def checks(self) -> Dict[str, bool]:
        with self.lock:
            return {
                d["check"]: d["ok"]
                for d in (log.get("data") for log in self.logs)
                if isinstance(d, dict) and "check" in d
            }


def _screenshot(browser: Chromium, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    browser.screenshot(str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return path


def test_our_app_in_chromium_behind_the_sandbox_proxy(site: Site, browser: Chromium) -> None:
    seen = Seen()
    with Client(server_cmd("--apps"), options=ClientOptions(apps=True)) as client:
        # the model side never sees the app-only tool
        model_tools = set(definitions_by_name(to_openai_tools(client.list_tools(audience="model"))))
        assert "show_counter" in model_tools and "counter_increment" not in model_tools
        session = site.host.open(client, "show_counter", callbacks=seen.callbacks())
        assert session.page.csp_header().startswith("default-src 'none'")
        result = session.bridge.call_tool({"start": 5, "probe_url": site.probe_url})  # queued until initialized
        assert result.structured_content == {"count": 5}
        browser.open(session.url)
        assert session.bridge.wait_initialized(60), "the View never initialized"
        assert wait_for(lambda: "done" in seen.checks(), 60), seen.checks()
        checks = seen.checks()
        assert checks == {
            "initialized": True,
            "tool-input": True,
            "tool-result": True,
            "app-tool": True,
            "model-only-refused": True,
            "csp-blocked": True,
            "done": True,
        }
        assert seen.calls == [("counter_increment", {"count": 5})]  # the refused one never reached approval
        assert "/probe" not in site.hits  # the CSP stopped the request before it left the browser
        assert seen.sizes and all(h is not None and h > 0 for _, h in seen.sizes)
        context = session.bridge.model_context  # ui/update-model-context: the View's last word for the model
        assert context is not None and context["structuredContent"]["count"] == 6
        assert context["structuredContent"]["checks"]["csp-blocked"] is True
        counts = browser.evaluate_in_frames("(document.getElementById('count')||{}).textContent || null")
        assert counts == ["6"]
        _screenshot(browser, "apps-counter.png")
        session.close(teardown_timeout=10)


def _basic_bin() -> str:
    if os.path.exists(BASIC_BIN) and shutil.which("node"):
        return BASIC_BIN
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail("the official MCP Apps example server is required under CI (bash .ci/apps)")
    pytest.skip("@modelcontextprotocol/server-basic-vanillajs not installed (bash .ci/apps)")


def test_official_basic_vanillajs_app_in_chromium(site: Site, browser: Chromium) -> None:
    seen = Seen()
    with Client([_basic_bin(), "--stdio"], options=ClientOptions(apps=True)) as client:
        session = site.host.open(client, "get-time", callbacks=seen.callbacks())
        assert session.page.uri == "ui://get-time/mcp-app.html" and len(session.page.html) > 1000
        result = session.bridge.call_tool({})
        time_text = result.structured_content["time"]
        browser.open(session.url)
        assert session.bridge.wait_initialized(60), "the official App never initialized"
        assert session.bridge.app_info.get("name"), session.bridge.app_info

        def shown() -> List[Any]:
            return browser.evaluate_in_frames("(document.getElementById('server-time')||{}).textContent || null")

        assert wait_for(lambda: shown() == [time_text], 60), shown()  # the tool result reached the page

        def click(button: str) -> None:
            code = "(function(){var b=document.getElementById(%r); if(!b) return null; b.click(); return true;})()"
            assert browser.evaluate_in_frames(code % button) == [True]

        click("get-time-btn")  # the App calls the server's tool through the bridge
        assert wait_for(lambda: seen.calls == [("get-time", {})], 60), seen.calls
        assert wait_for(lambda: shown() not in ([time_text], [], ["Loading..."]), 60), shown()
        click("send-message-btn")
        assert wait_for(lambda: len(seen.messages) == 1, 60)
        assert seen.messages[0]["role"] == "user"
        assert seen.messages[0]["content"][0]["text"] == "This is message text."
        click("send-log-btn")
        assert wait_for(lambda: any(log.get("data") == "This is log text." for log in seen.logs), 60), seen.logs
        click("open-link-btn")
        assert wait_for(lambda: seen.links == ["https://modelcontextprotocol.io/"], 60), seen.links
        assert wait_for(lambda: len(seen.sizes) > 0, 60)  # the SDK's autoResize
        _screenshot(browser, "apps-basic-vanillajs.png")
        # F5: the official SDK's View initializes again and is replayed the result it shows
        browser.load(lambda: browser.send("Page.reload"))
        assert wait_for(lambda: session.bridge.views == 1 and session.bridge.initialized, 60)
        assert wait_for(lambda: shown() == [time_text], 60), shown()
        session.close(teardown_timeout=10)


def test_flask_example_in_chromium(browser: Chromium) -> None:
    pytest.importorskip("flask")
    from tests.docs.test_examples import load

    server = make_server("127.0.0.1", 0, lambda e, s: [], server_class=_Threaded, handler_class=_Quiet)
    port = server.server_port
    app = load("apps_flask").create_app(
        host_origin="http://127.0.0.1:%d" % port, sandbox_origin="http://localhost:%d" % port
    )
    server.set_app(app)
    thread = threading.Thread(target=server.serve_forever, name="test-apps-flask", daemon=True)
    thread.start()
    activity = app.extensions["mcp_apps_activity"]

    def checks() -> Dict[str, bool]:
        logs = [a["data"].get("data") for a in list(activity) if a["kind"] == "log"]
        return {d["check"]: d["ok"] for d in logs if isinstance(d, dict) and "check" in d}

    try:
        browser.open("http://127.0.0.1:%d/show/show_counter?start=40" % port)
        assert wait_for(lambda: "done" in checks(), 60), (checks(), list(activity))
        assert all(checks().values()) and "csp-blocked" not in checks()  # no probe URL given: nothing to block
        contexts = [a["data"] for a in list(activity) if a["kind"] == "model-context"]
        assert contexts and contexts[-1]["structuredContent"]["count"] == 41
        assert any(a["kind"] == "size" for a in list(activity))
        _screenshot(browser, "apps-flask-example.png")

        def dones() -> int:
            logs = [a["data"].get("data") for a in list(activity) if a["kind"] == "log"]
            return sum(1 for d in logs if isinstance(d, dict) and d.get("check") == "done")

        browser.load(lambda: browser.send("Page.reload"))  # F5 on the App's page: the App comes back and works
        assert wait_for(lambda: dones() == 2, 60), list(activity)[-5:]
        assert wait_for(lambda: browser.evaluate_in_frames(_COUNT) == ["41"], 60)
        assert browser.evaluate_in_frames(_CLICK_PLUS) == [True]
        assert wait_for(lambda: browser.evaluate_in_frames(_COUNT) == ["42"], 60)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)
        app.extensions["mcp_apps_shutdown"]()


def _done_count(seen: Seen) -> int:
    with seen.lock:
        return sum(1 for log in seen.logs if isinstance(log.get("data"), dict) and log["data"].get("check") == "done")


_CLICK_PLUS = (
    "(function(){var b=document.getElementById('plus'); if(!b||b.disabled) return null; b.click(); return true;})()"
)
_COUNT = "(document.getElementById('count')||{}).textContent || null"


def test_reload_second_tab_and_dropped_stream_keep_the_app_alive(site: Site, browser: Chromium) -> None:
    """F5 on the App's page, a dropped event stream and a second tab: the App works again each time."""
    seen = Seen()
    with Client(server_cmd("--apps"), options=ClientOptions(apps=True)) as client:
        session = site.host.open(client, "show_counter", callbacks=seen.callbacks())
        bridge = session.bridge
        bridge.call_tool({"start": 5})
        browser.open(session.url)
        assert wait_for(lambda: _done_count(seen) == 1, 60), seen.checks()
        assert wait_for(lambda: browser.evaluate_in_frames(_COUNT) == ["6"], 60)
        assert browser.evaluate_in_frames(_CLICK_PLUS) == [True]
        assert wait_for(lambda: browser.evaluate_in_frames(_COUNT) == ["7"], 60)

        # F5: a new View takes the session over and is replayed the tool input and result
        browser.load(lambda: browser.send("Page.reload"))
        assert wait_for(lambda: _done_count(seen) == 2, 60), list(seen.logs)[-5:]
        assert bridge.views == 1 and bridge.initialized
        assert wait_for(lambda: browser.evaluate_in_frames(_COUNT) == ["6"], 60)  # 5 replayed, +1 by the View
        assert browser.evaluate_in_frames(_CLICK_PLUS) == [True]  # the button works again
        assert wait_for(lambda: browser.evaluate_in_frames(_COUNT) == ["7"], 60), browser.evaluate_in_frames(_COUNT)

        # the event stream drops (the host ends it): the page reconnects on its own and messages flow again
        claim, _ = bridge.claim_outgoing()
        assert wait_for(lambda: not bridge.holds_claim(claim), 60), "the page's EventSource never reconnected"
        bridge.set_host_context(theme="dark")
        background = "document.body.style.background || null"
        assert wait_for(lambda: any("34, 34, 34" in v for v in browser.evaluate_in_frames(background)), 60)
        assert bridge.views == 1  # the same View: nothing was replayed
        assert browser.evaluate_in_frames(_CLICK_PLUS) == [True]
        assert wait_for(lambda: browser.evaluate_in_frames(_COUNT) == ["8"], 60)

        # a second tab takes the App over; the first one says so instead of going dead
        browser.send("Target.createTarget", {"url": session.url})
        assert wait_for(lambda: _done_count(seen) == 3, 60)
        assert bridge.views == 2

        def notice() -> Any:
            return browser.evaluate(
                "(function(){var s=document.getElementById('mcp-app-status');"
                " return s && !s.hidden ? s.textContent : null;})()"
            )

        assert wait_for(lambda: notice() is not None, 60)
        assert "another tab or window" in notice()
        _screenshot(browser, "apps-replaced-tab.png")
        session.close(teardown_timeout=10)
