"""MCP Apps in a desktop window: examples/apps_desktop.py's pywebview window (Qt WebEngine, offscreen) shows the
example server's counter App; the App initializes, gets the tool input and result, calls its app-only tool, has
the model-only tool refused, and updates the model context, all through :class:`mcpsync.apps.desktop.DesktopApp`.

pywebview and PyQt6-WebEngine are a heavy stack kept out of the test virtualenv: ``bash .ci/apps`` builds
``.ci/apps-venv`` with them (or set ``MCPSYNC_APPS_DESKTOP_PYTHON`` to an interpreter that has them). Skipped
without one, failing under CI=true instead.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any, Dict

import pytest
from mcpsync.client import ClientOptions

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]


def _python() -> str:
    candidates = [
        os.environ.get("MCPSYNC_APPS_DESKTOP_PYTHON") or "",
        str(ROOT / ".ci" / "apps-venv" / "bin" / "python"),
    ]
    for path in candidates:
        if path and os.path.exists(path):
            probe = subprocess.run([path, "-c", "import webview, PyQt6.QtWebEngineWidgets"], capture_output=True)
            if probe.returncode == 0:
                return path
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail("the desktop App test needs pywebview with Qt under CI (bash .ci/apps builds .ci/apps-venv)")
    pytest.skip("no interpreter with pywebview[qt] (bash .ci/apps, or set MCPSYNC_APPS_DESKTOP_PYTHON)")


def _run_driver(*args: str) -> Dict[str, Any]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", QTWEBENGINE_DISABLE_SANDBOX="1", PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [_python(), str(ROOT / "tests" / "peers" / "apps_desktop_driver.py"), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        start_new_session=True,  # its own process group: Qt WebEngine's helpers go with it
    )
    try:
        stdout, stderr = proc.communicate(timeout=240)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # stragglers of the group, if any
        except ProcessLookupError:
            pass
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    assert proc.returncode == 0 and lines, stderr[-3000:]
    out: Dict[str, Any] = json.loads(lines[-1])
    assert out["checks"] == {
        "initialized": True,
        "tool-input": True,
        "tool-result": True,
        "app-tool": True,
        "model-only-refused": True,
        "done": True,
    }
    assert out["contexts"][-1]["structuredContent"]["count"] == 8
    assert not any(name.startswith("mcpsync-session") or "reader" in name for name in out["threads"])
    assert out["pumps_left"] == []
    return out


def test_desktop_window_runs_the_counter_app() -> None:
    out = _run_driver()
    assert out["done"] == 1 and out["views"] == 0


def test_a_reloaded_desktop_window_carries_on() -> None:
    """The window's document loads again: the new View is replayed the tool input and result, and finishes."""
    out = _run_driver("--reload")
    assert out["done"] == 2 and out["views"] == 1
    assert [c["structuredContent"]["count"] for c in out["contexts"]] == [8, 8]  # input 7 replayed, then +1


def test_without_pywebview_the_error_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from mcpsync import Client, ConfigError
    from mcpsync.apps.desktop import DesktopApp, desktop_document

    from tests.conftest import server_cmd

    monkeypatch.setitem(sys.modules, "webview", None)  # "import webview" fails
    with Client(server_cmd("--apps"), options=ClientOptions(apps=True)) as client:
        app = DesktopApp(client, "show_counter")
        try:
            with pytest.raises(ConfigError, match="mcpsync\\[desktop\\]"):
                app.create_window()
            doc = desktop_document(app.page)
            assert (
                'sandbox="allow-scripts allow-forms"' in doc and "</script>" not in doc.split("frame.srcdoc")[1][:200]
            )
        finally:
            app.close()
