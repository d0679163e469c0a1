"""A headless Chromium driven over the DevTools protocol on a pipe (``--remote-debugging-pipe``): no websocket
library, no driver. Chromium reads commands on fd 3 and writes answers and events on fd 4, each message a JSON
text ended by a NUL byte. Enough for the browser tests: open a page, wait, screenshot, close."""

from __future__ import annotations

import base64
import fcntl
import json
import os
import shutil
import subprocess
import threading
from typing import Any, Callable, Dict, List, Optional, Set

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
    "--disable-extensions",
    "--window-size=900,700",
]


def find_chromium() -> str:
    """Chromium's path; skips the test without it (fails under CI=true)."""
    path = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)
    if path is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("chromium is required under CI (apt-get install -y chromium)")
        pytest.skip("chromium not installed (apt-get install -y chromium)")
    return path


class Chromium:
    """One headless browser; ``open(url)`` loads a page in its first tab."""

    def __init__(self, path: str, profile: str) -> None:
        low_r, self._to_chrome = os.pipe()
        self._from_chrome, low_w = os.pipe()
        # move chromium's ends above 9, so the shell's "3<&N 4>&M" never overwrites one with the other
        to_chrome_r, from_chrome_w = fcntl.fcntl(low_r, fcntl.F_DUPFD, 10), fcntl.fcntl(low_w, fcntl.F_DUPFD, 10)
        os.close(low_r)
        os.close(low_w)
        cmd = [path] + FLAGS + ["--user-data-dir=%s" % profile, "--remote-debugging-pipe", "about:blank"]
        # the pipe ends must be fds 3 and 4 in chromium: let bash (which takes fd numbers above 9) put them there
        shell = 'exec "$@" 3<&%d 4>&%d' % (to_chrome_r, from_chrome_w)
        self.proc = subprocess.Popen(
            ["/bin/bash", "-c", shell, "bash"] + cmd,
            pass_fds=(to_chrome_r, from_chrome_w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._ids = 0
        self._lock = threading.Lock()
        self._answers: Dict[int, Dict[str, Any]] = {}
        self._cond = threading.Condition(self._lock)
        self.events: List[Dict[str, Any]] = []
        self._reader = threading.Thread(target=self._read, name="test-cdp-reader", daemon=True)
        self._reader.start()
        self.session: Optional[str] = None
        self._auto_attached: Set[str] = set()

    def _read(self) -> None:
        buf = b""
        while True:
            try:
                chunk = os.read(self._from_chrome, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                with self._cond:
                    self._cond.notify_all()
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw.decode("utf-8"))
                with self._cond:
                    if "id" in msg:
                        self._answers[msg["id"]] = msg
                    else:
                        self.events.append(msg)
                    self._cond.notify_all()

    def send(
        self,
        method: str,
        params: Optional[Dict[str, Any]] = None,
        timeout: float = 60.0,
        session: Optional[str] = None,
    ) -> Dict[str, Any]:
        with self._lock:
            self._ids += 1
            msg_id = self._ids
        msg: Dict[str, Any] = {"id": msg_id, "method": method, "params": params or {}}
        session = session or (self.session if not method.startswith("Target.") else None)
        if session is not None:
            msg["sessionId"] = session
        os.write(self._to_chrome, json.dumps(msg).encode("utf-8") + b"\0")
        with self._cond:
            if not self._cond.wait_for(lambda: msg_id in self._answers or not self._reader.is_alive(), timeout):
                raise TimeoutError("chromium did not answer %s" % method)
            answer = self._answers.pop(msg_id, None)
        if answer is None:
            raise RuntimeError("chromium exited")
        if "error" in answer:
            raise RuntimeError("%s: %s" % (method, answer["error"]))
        return answer.get("result", {})  # type: ignore[no-any-return]

    def open(self, url: str) -> None:
        targets = self.send("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self.session = self.send("Target.attachToTarget", {"targetId": page["targetId"], "flatten": True})["sessionId"]
        self.send("Page.enable")
        # out-of-process frames (the sandbox proxy on its own origin) attach as sessions of their own
        auto = {"autoAttach": True, "waitForDebuggerOnStart": False, "flatten": True}
        self.send("Target.setAutoAttach", auto, session=self.session)
        self.send("Page.navigate", {"url": url})

    def frame_sessions(self) -> List[str]:
        """The sessions of the out-of-process frames attached so far."""
        with self._lock:
            return [
                e["params"]["sessionId"]
                for e in self.events
                if e.get("method") == "Target.attachedToTarget" and e["params"]["targetInfo"]["type"] == "iframe"
            ]

    def evaluate_in_frames(self, expression: str) -> List[Any]:
        """Evaluate ``expression`` in every frame of the page, its own and those of out-of-process frame sessions
        (the proxy and the View inside it); returns the values that are not null."""
        auto = {"autoAttach": True, "waitForDebuggerOnStart": False, "flatten": True}
        while True:  # frames nested in out-of-process frames (the sandboxed View) attach once asked for
            fresh = [s for s in self.frame_sessions() if s not in self._auto_attached]
            if not fresh:
                break
            for session in fresh:
                self._auto_attached.add(session)
                try:
                    self.send("Target.setAutoAttach", auto, session=session)
                except RuntimeError:
                    pass  # a frame that went away already
        values = []
        for session in [self.session] + self.frame_sessions():  # frames may share the page's process
            if session is None:
                continue
            try:
                self.send("Runtime.enable", session=session)
            except RuntimeError:
                continue  # a frame that went away (a reload detaches the old frames' sessions)
            with self._lock:
                contexts = [
                    e["params"]["context"]
                    for e in self.events
                    if e.get("sessionId") == session and e.get("method") == "Runtime.executionContextCreated"
                ]
            for ctx in contexts:
                if not (ctx.get("auxData") or {}).get("isDefault"):
                    continue
                try:
                    out = self.send(
                        "Runtime.evaluate",
                        {"expression": expression, "returnByValue": True, "contextId": ctx["id"]},
                        session=session,
                    )
                except RuntimeError:
                    continue  # the context went away
                value = out.get("result", {}).get("value")
                if value is not None:
                    values.append(value)
        return values

    def load(self, action: Callable[[], Any], timeout: float = 60.0) -> None:
        """Run ``action`` (``open``, a click that submits a form, ``location = ...``) and wait for the page's next
        load event (the page's own pace, bounded by ``timeout``)."""
        with self._lock:
            mark = len(self.events)
        action()

        def loaded() -> bool:
            return any(e.get("method") == "Page.loadEventFired" for e in self.events[mark:])

        with self._cond:
            if not self._cond.wait_for(lambda: loaded() or not self._reader.is_alive(), timeout) or not loaded():
                raise TimeoutError("the page did not load")

    def screenshot(self, path: str) -> None:
        data = self.send("Page.captureScreenshot", {"format": "png"})["data"]
        with open(path, "wb") as fh:
            fh.write(base64.b64decode(data))

    def evaluate(self, expression: str) -> Any:
        out = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        return out.get("result", {}).get("value")

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=10)
        except Exception:  # noqa: BLE001 - it may be gone already
            pass
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(15)
        for fd in (self._to_chrome, self._from_chrome):
            try:
                os.close(fd)
            except OSError:
                pass
        self._reader.join(10)
