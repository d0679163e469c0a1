"""The examples run: a Flask app and a Django view sharing one manager across threads, a desktop-plugin script."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, List

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
PY = sys.executable
ROOT_DIR = str(EXAMPLES.parent)
CONFIG = {
    "example": {"command": [PY, "-m", "mcpsync.example_server"]},
    "second": {"command": [PY, "-m", "mcpsync.example_server"]},
}


def load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location("example_" + name, EXAMPLES / ("%s.py" % name))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # Django resolves ROOT_URLCONF by module name
    assert spec.loader is not None
    spec.loader.exec_module(module)
    return module


def hammer(work: Any, threads: int = 8) -> List[BaseException]:
    errors: List[BaseException] = []

    def run(n: int) -> None:
        try:
            work(n)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    pool = [threading.Thread(target=run, args=(n,)) for n in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join(120)
    return errors


def test_flask_app_shares_one_manager_across_threads():
    pytest.importorskip("flask")
    app = load("flask_app").create_app(CONFIG)
    mgr = app.extensions["mcpsync"]
    try:

        def work(n: int) -> None:
            client = app.test_client()
            for i in range(5):
                r = client.post("/call/example_add", json={"a": n, "b": i})
                assert r.status_code == 200 and r.get_json()["structured"] == {"sum": n + i}
                r = client.post(
                    "/tool-call",
                    json={"type": "tool_use", "id": "t", "name": "second_echo", "input": {"message": "m%d" % i}},
                )
                assert r.get_json()["content"][0]["text"] == "m%d" % i
            assert client.get("/status").get_json()["example"]["status"] == "connected"
            names = [t["function"]["name"] for t in client.get("/tools?provider=openai").get_json()]
            assert "example_echo" in names and "second_echo" in names

        assert hammer(work) == []
        client = app.test_client()
        assert client.post("/call/nope_tool", json={}).status_code == 404
        assert len(mgr.clients()) == 2  # one manager, one client per server, for every thread
    finally:
        mgr.close()


def test_django_view_shares_one_manager_across_threads():
    pytest.importorskip("django")
    module = load("django_view")
    module.configure_standalone(CONFIG)
    from django.test import Client as TestClient

    try:

        def work(n: int) -> None:
            client = TestClient()
            for i in range(5):
                r = client.post(
                    "/mcp/call/example_add", data=json.dumps({"a": n, "b": i}), content_type="application/json"
                )
                assert r.status_code == 200 and r.json()["text"] == str(n + i)
            assert client.get("/mcp/status").json()["second"]["status"] == "connected"
            assert "example_echo" in [t["name"] for t in client.get("/mcp/tools").json()["tools"]]

        assert hammer(work) == []
        assert module.get_manager() is module.get_manager()
        client = TestClient()
        assert client.post("/mcp/call/example_add", data="{bad", content_type="application/json").status_code == 400
        assert client.post("/mcp/call/zzz_tool", data="{}", content_type="application/json").status_code == 404
    finally:
        module.close_manager()


def test_desktop_plugin_script(tmp_path, capsys):
    path = tmp_path / "claude_desktop_config.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "example": {"command": PY, "args": ["-m", "mcpsync.example_server"]},
                    "off": {"command": "nothing", "disabled": True},
                }
            }
        )
    )
    assert load("desktop_plugin").main([str(path)]) == 0
    out = capsys.readouterr().out
    assert "example" in out and "connected" in out and "disabled" in out
    results = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert {"role": "tool", "tool_call_id": "call_1", "content": "42"} in results
    assert {"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "hello"}]} in results


def test_desktop_plugin_without_a_configuration_says_so(tmp_path):
    """Run as a user would, where no configuration exists: a message and exit 2, no traceback."""
    env = dict(os.environ, HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "cfg"), APPDATA=str(tmp_path))
    env.pop("MCPSYNC_CONFIG", None)
    env["PYTHONPATH"] = ROOT_DIR
    proc = subprocess.run(
        [PY, os.path.join(ROOT_DIR, "examples", "desktop_plugin.py")],
        cwd=str(tmp_path),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert "no MCP configuration found" in proc.stderr and "Traceback" not in proc.stderr
    proc = subprocess.run(
        [PY, os.path.join(ROOT_DIR, "examples", "desktop_plugin.py"), str(tmp_path / "missing.json")],
        cwd=str(tmp_path),
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
