"""MCP Apps against a real FastMCP 4.2 App server (tests/peers/fastmcp_app_server.py: a ``FastMCPApp`` backend
tool the server leaves out of ``tools/list``, and FastMCP's ``__<hash>_<name>`` address for it). An App's call to
a tool the server serves to apps works through the bridge whether or not the listing shows it; a model-only tool
is still refused before anything is sent; and the counter App served by FastMCP runs in headless Chromium.

FastMCP is kept out of the test virtualenv: ``bash .ci/apps`` installs it (pinned) into ``.ci/apps-fastmcp``
(or set ``MCPSYNC_APPS_FASTMCP_PYTHON`` to an interpreter that has it). Skipped without one, failing under
CI=true instead.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import pytest

from mcpsync import Client
from mcpsync.apps import AppBridge, HostCallbacks

from tests.conftest import wait_for
from mcpsync.client import ClientOptions, StdioOptions

ROOT = Path(__file__).resolve().parents[2]
SERVER = str(ROOT / "tests" / "peers" / "fastmcp_app_server.py")
FASTMCP_VERSION = "4.2"


def _python() -> str:
    for path in (
        os.environ.get("MCPSYNC_APPS_FASTMCP_PYTHON") or "",
        str(ROOT / ".ci" / "apps-fastmcp" / "bin" / "python"),
    ):
        if path and os.path.exists(path):
            probe = subprocess.run(
                [path, "-c", "import fastmcp; print(fastmcp.__version__)"], capture_output=True, text=True
            )
            if probe.returncode == 0 and probe.stdout.strip().startswith(FASTMCP_VERSION + "."):
                return path
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(
            "the FastMCP App tests need fastmcp %s under CI (bash .ci/apps builds .ci/apps-fastmcp)" % FASTMCP_VERSION
        )
    pytest.skip("no interpreter with fastmcp %s (bash .ci/apps, or set MCPSYNC_APPS_FASTMCP_PYTHON)" % FASTMCP_VERSION)


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    with Client([_python(), SERVER], stdio=StdioOptions(env=env), options=ClientOptions(apps=True)) as c:
        yield c


def req(msg_id: int, method: str, params: Any = None) -> Dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params or {}}


def _bridge(client: Client, calls: List[Tuple[str, Dict[str, Any]]], **options: Any) -> AppBridge:
    def approve(name: str, arguments: Dict[str, Any]) -> bool:
        calls.append((name, arguments))
        return True

    bridge = AppBridge(
        client, client.get_tool("show_counter"), callbacks=HostCallbacks(approve_tool_call=approve), **options
    )
    answer = bridge.handle(req(1, "ui/initialize", {"protocolVersion": "2026-01-26", "appInfo": {"name": "t"}}))
    assert answer is not None and "result" in answer
    bridge.handle({"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
    return bridge


def test_the_server_leaves_its_app_only_tool_out_of_the_listing(client: Client) -> None:
    names = {t.name for t in client.list_tools()}
    assert names == {"show_counter", "model_only_fact"}
    assert client.get_tool("show_counter").visibility == ("model", "app")  # type: ignore[union-attr]
    assert {t.name for t in client.list_tools(audience="model")} == {"show_counter", "model_only_fact"}


def test_an_app_calls_backend_tools_the_listing_does_not_show(client: Client) -> None:
    calls: List[Tuple[str, Dict[str, Any]]] = []
    bridge = _bridge(client, calls)
    try:
        plain = bridge.handle(req(2, "tools/call", {"name": "counter_increment", "arguments": {"count": 3}}))
        assert plain is not None and plain["result"]["structuredContent"] == {"count": 4}, plain
        # FastMCP's identity address of the same backend tool: __<sha256(app NUL tool)[:12]>_<tool>
        digest = hashlib.sha256(b"Counter\x00counter_increment").hexdigest()[:12]
        hashed = "__%s_counter_increment" % digest
        by_hash = bridge.handle(req(3, "tools/call", {"name": hashed, "arguments": {"count": 41}}))
        assert by_hash is not None and by_hash["result"]["structuredContent"] == {"count": 42}, by_hash
        # a model-only tool the server lists is refused by the host, before approval and before the server
        refused = bridge.handle(req(4, "tools/call", {"name": "model_only_fact"}))
        assert refused is not None and refused["error"]["code"] == -32602
        assert "not visible to apps" in refused["error"]["message"]
        # a name the server does not serve: the server's own answer comes back (FastMCP: an isError result)
        unknown = bridge.handle(req(5, "tools/call", {"name": "no_such_tool"}))
        assert unknown is not None and unknown["result"]["isError"] is True, unknown
        assert calls == [("counter_increment", {"count": 3}), (hashed, {"count": 41}), ("no_such_tool", {})]
    finally:
        bridge.close()


def test_a_strict_host_can_refuse_unlisted_tools(client: Client) -> None:
    calls: List[Tuple[str, Dict[str, Any]]] = []
    bridge = _bridge(client, calls, allow_unlisted_tools=False)
    try:
        refused = bridge.handle(req(2, "tools/call", {"name": "counter_increment", "arguments": {"count": 3}}))
        assert refused is not None and refused["error"]["code"] == -32602 and calls == []
    finally:
        bridge.close()


@pytest.mark.browser
def test_the_fastmcp_counter_app_in_chromium(client: Client, tmp_path: Path) -> None:
    from tests.peers.cdp import Chromium, find_chromium
    from tests.browser.test_apps_browser import Seen, Site

    seen = Seen()
    site = Site()
    browser = Chromium(find_chromium(), str(tmp_path / "profile"))
    try:
        session = site.host.open(client, "show_counter", callbacks=seen.callbacks())
        assert session.bridge.call_tool({"start": 10}).structured_content == {"count": 10}
        browser.open(session.url)
        assert wait_for(lambda: "done" in seen.checks(), 60), seen.checks()
        assert seen.checks() == {
            "initialized": True,
            "tool-input": True,
            "tool-result": True,
            "app-tool": True,  # counter_increment, which tools/list never showed
            "model-only-refused": True,
            "done": True,
        }
        assert seen.calls == [("counter_increment", {"count": 10})]
        assert browser.evaluate_in_frames("(document.getElementById('count')||{}).textContent || null") == ["11"]
        session.close(teardown_timeout=10)
    finally:
        browser.close()
        site.close()
