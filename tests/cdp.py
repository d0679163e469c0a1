"""A headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``).

No websocket library: Chromium reads commands from fd 3 and writes answers to fd 4, each a JSON text
ended by a NUL byte. Enough to load a page, wait for it, run JavaScript in it, and take a screenshot.

    with Chromium.launch(tmp_path) as browser:
        page = browser.open("http://127.0.0.1:8000/")
        page.evaluate("document.title")
        page.screenshot(tmp_path / "page.png")

Needs Debian's ``chromium``; :func:`chromium_path` skips the test when it is missing (fails under CI=true).
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Dict, List, Optional

import pytest

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1000,700",
]


def chromium_path() -> str:
    path = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
    if path is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("chromium is required under CI (apt-get install -y chromium)")
        pytest.skip("chromium not installed (apt-get install -y chromium)")
    return path


class CDPError(RuntimeError):
    pass


class Chromium:
    """One headless Chromium process and its DevTools pipe. Thread-safe for one caller at a time."""

    def __init__(self, proc: subprocess.Popen, to_browser: int, from_browser: int) -> None:  # type: ignore[type-arg]
        self.proc = proc
        self._out = os.fdopen(to_browser, "wb", buffering=0)
        self._in = os.fdopen(from_browser, "rb", buffering=0)
        self._ids = 0
        self._lock = threading.Lock()
        self._buf = b""
        self.events: List[Dict[str, Any]] = []

    @classmethod
    def launch(cls, profile_dir: Path) -> "Chromium":
        cmd_r, cmd_w = os.pipe()  # the browser reads commands (its fd 3)
        ans_r, ans_w = os.pipe()  # the browser writes answers (its fd 4)

        def wire() -> None:  # in the child, before exec: put the pipe ends at fds 3 and 4
            os.dup2(cmd_r, 3)
            os.dup2(ans_w, 4)

        proc = subprocess.Popen(
            [chromium_path(), *FLAGS, "--remote-debugging-pipe", "--user-data-dir=%s" % profile_dir, "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=wire,  # noqa: PLW1509 - the test process has no threads that matter here
            close_fds=False,
        )
        os.close(cmd_r)
        os.close(ans_w)
        return cls(proc, cmd_w, ans_r)

    def _read_message(self, deadline: float) -> Dict[str, Any]:
        import select

        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise CDPError("no answer from Chromium in time")
            ready, _, _ = select.select([self._in], [], [], left)
            if ready:
                chunk = self._in.read(65536)
                if not chunk:
                    raise CDPError("Chromium closed its DevTools pipe")
                self._buf += chunk
        raw, _, self._buf = self._buf.partition(b"\0")
        return json.loads(raw)  # type: ignore[no-any-return]

    def send(self, method: str, params: Optional[Dict[str, Any]] = None, session: Optional[str] = None,
             timeout: float = 60.0) -> Dict[str, Any]:
        with self._lock:
            self._ids += 1
            msg: Dict[str, Any] = {"id": self._ids, "method": method, "params": params or {}}
            if session:
                msg["sessionId"] = session
            self._out.write(json.dumps(msg).encode() + b"\0")
            deadline = time.monotonic() + timeout
            while True:
                answer = self._read_message(deadline)
                if answer.get("id") == msg["id"]:
                    if "error" in answer:
                        raise CDPError("%s: %s" % (method, answer["error"]))
                    return answer.get("result", {})  # type: ignore[no-any-return]
                self.events.append(answer)

    def wait_event(self, method: str, session: Optional[str] = None, timeout: float = 60.0) -> Dict[str, Any]:
        with self._lock:
            deadline = time.monotonic() + timeout
            while True:
                for i, ev in enumerate(self.events):
                    if ev.get("method") == method and (session is None or ev.get("sessionId") == session):
                        return self.events.pop(i)
                self.events.append(self._read_message(deadline))

    def open(self, url: str) -> "Page":
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        page = Page(self, session)
        self.send("Page.enable", session=session)
        self.send("Runtime.enable", session=session)
        page.goto(url)
        return page

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=5)
        except (CDPError, OSError, ValueError):
            pass
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)
        for f in (self._out, self._in):
            try:
                f.close()
            except OSError:
                pass

    def __enter__(self) -> "Chromium":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class Page:
    """One tab, attached with a flat session."""

    def __init__(self, browser: Chromium, session: str) -> None:
        self.browser = browser
        self.session = session

    def goto(self, url: str) -> None:
        self.browser.events.clear()
        self.browser.send("Page.navigate", {"url": url}, session=self.session)
        self.browser.wait_event("Page.loadEventFired", session=self.session)

    def evaluate(self, expression: str, timeout: float = 60.0) -> Any:
        """Run ``expression`` in the page (promises awaited) and return its JSON value."""
        res = self.browser.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            session=self.session,
            timeout=timeout,
        )
        if "exceptionDetails" in res:
            raise CDPError("page script failed: %s" % res["exceptionDetails"])
        return res.get("result", {}).get("value")

    def submit_and_wait(self, expression: str) -> None:
        """Run ``expression`` (which submits a form or follows a link) and wait for the next page."""
        self.browser.events.clear()
        self.evaluate(expression)
        self.browser.wait_event("Page.loadEventFired", session=self.session)

    def wait_for(self, expression: str, timeout: float = 60.0) -> Any:
        """Poll ``expression`` in the page until it is truthy (the page's own pace, bounded)."""
        deadline = time.monotonic() + timeout
        while True:
            value = self.evaluate(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise CDPError("timed out waiting for %s" % expression)
            time.sleep(0.05)

    def screenshot(self, path: Path) -> Path:
        data = self.browser.send("Page.captureScreenshot", {"format": "png"}, session=self.session)["data"]
        path.write_bytes(base64.b64decode(data))
        return path
