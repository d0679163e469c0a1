"""A desktop host for MCP Apps with pywebview (``pip install pywebview``; any of its GUI backends).

A desktop host may render the View directly (the sandbox-proxy origin rule is for web hosts). The window holds a
small host document; the View runs inside it in a ``srcdoc`` iframe with ``sandbox="allow-scripts allow-forms"``
(an opaque origin: no access to the host document or to pywebview's bridge) under the page's CSP, put first in
its ``<head>``. The host document relays: View -> Host messages go to Python through pywebview's ``js_api``
(answered by :meth:`AppBridge.handle` on pywebview's API thread, never a transport reader), and Host -> View
messages are pushed by a pump thread (``mcpsync-apps-desktop:<tool>``) with ``window.evaluate_js``.

    from mcpsync.apps.desktop import DesktopApp

    app = DesktopApp(client, "show_counter", callbacks=HostCallbacks(on_open_link=webbrowser.open))
    app.run({"start": 1})   # blocks the main thread until the window closes (pywebview's rule)

When the window's document loads again (:meth:`DesktopApp.reload`, or a reload the user asks the web engine for),
the new View's ``ui/initialize`` makes it the bridge's View: it is replayed the tool input and result and gets the
current host context (see :meth:`AppBridge.begin_view`), so the App carries on instead of showing an empty page.

pywebview is imported only when a window is created.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Dict, Optional, Union

from .._threads import spawn
from ..errors import ConfigError
from ..types import Tool
from .bridge import AppBridge, HostCallbacks
from .page import app_for
from .web_pages import js_value

__all__ = ["DesktopApp", "desktop_document"]


def _webview() -> Any:
    try:
        import webview
    except ImportError as exc:
        raise ConfigError("DesktopApp needs pywebview: pip install 'mcpsync[desktop]'") from exc
    return webview


log = logging.getLogger("mcpsync.apps")

_DOC = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>%(title)s</title>
<style>html,body{margin:0;padding:0;height:100%%;background:#fff}
iframe{border:%(border)s;width:100%%;height:100%%;display:block;box-sizing:border-box}</style></head>
<body><iframe id="view" title="MCP App" sandbox="%(sandbox)s" %(allow)s></iframe>
<script>
(function () {
  "use strict";
  var frame = document.getElementById("view"), ready = false, waiting = [];
  function withCsp(html, csp) {
    var meta = '<meta http-equiv="Content-Security-Policy" content="' +
      csp.replace(/&/g, "&amp;").replace(/"/g, "&quot;") + '">';
    var m = /<head[^>]*>/i.exec(html);
    return m ? html.slice(0, m.index + m[0].length) + meta + html.slice(m.index + m[0].length) : meta + html;
  }
  window.__mcpAppDeliver = function (msg) { if (frame.contentWindow) { frame.contentWindow.postMessage(msg, "*"); } };
  function post(msg) {
    window.pywebview.api.post(msg).then(function (answer) { if (answer) { window.__mcpAppDeliver(answer); } });
  }
  window.addEventListener("pywebviewready", function () {
    ready = true;
    while (waiting.length) { post(waiting.shift()); }
  });
  window.addEventListener("message", function (ev) {
    if (ev.source !== frame.contentWindow) { return; }
    var msg = ev.data;
    if (!msg || typeof msg !== "object" || msg.jsonrpc !== "2.0") { return; }
    if (ready) { post(msg); } else if (waiting.length < 256) { waiting.push(msg); }
  });
  frame.srcdoc = withCsp(%(html)s, %(csp)s);
})();
</script>
</body></html>
"""


def desktop_document(page: Any, *, title: str = "MCP App", grant_permissions: bool = False) -> str:
    """The host document for a verified :class:`~mcpsync.apps.AppResource` (the View in a sandboxed ``srcdoc`` frame
    under its CSP, and the relay to pywebview's ``js_api``)."""
    allow = page.allow_attribute() if grant_permissions else ""
    return _DOC % {
        "title": title.replace("&", "&amp;").replace("<", "&lt;"),
        "border": "1px solid #d0d7de" if page.prefers_border else "0",
        "sandbox": "allow-scripts allow-forms",
        "allow": ('allow="%s"' % allow) if allow else "",
        "html": js_value(page.html),
        "csp": js_value(page.csp_header()),
    }


class _Api:
    """What the host document may call (pywebview's ``js_api``): one method, the View's messages."""

    def __init__(self, bridge: AppBridge) -> None:
        self._bridge = bridge

    def post(self, message: Any) -> Optional[Dict[str, Any]]:
        return self._bridge.handle(message)


class DesktopApp:
    """One App in a pywebview window. Fetches and verifies the page on construction (blocks for the read).

    Args:
        client: the :class:`~mcpsync.Client` of the App's server.
        tool: the tool (or its name) whose page to show.
        callbacks: the host's :class:`~mcpsync.apps.HostCallbacks` (run on pywebview's API thread).
        host_context: extra ``hostContext`` (``platform`` is ``"desktop"``).
        sha256: pin the page's digest.
        title, width, height: the window's.
        grant_permissions: give the page the permissions it declared (camera...; default False).
    """

    def __init__(
        self,
        client: Any,
        tool: Union[Tool, str],
        *,
        callbacks: Optional[HostCallbacks] = None,
        host_context: Optional[Dict[str, Any]] = None,
        sha256: Optional[str] = None,
        title: Optional[str] = None,
        width: int = 720,
        height: int = 560,
        grant_permissions: bool = False,
        **bridge_options: Any,
    ) -> None:
        self.page = app_for(client, tool, sha256=sha256)
        listed = client.get_tool(self.page.tool)
        context: Dict[str, Any] = {"platform": "desktop"}
        context.update(host_context or {})
        self.bridge = AppBridge(client, listed, callbacks=callbacks, host_context=context, **bridge_options)
        self.title = title or (listed.title if listed is not None and listed.title else self.page.tool)
        self.width = width
        self.height = height
        self.grant_permissions = grant_permissions
        self.window: Any = None
        self._stop = threading.Event()
        self._pump: Optional[threading.Thread] = None

    def create_window(self) -> Any:
        """Create the pywebview window (call before ``webview.start()``); returns it."""
        webview = _webview()
        html = desktop_document(self.page, title=self.title, grant_permissions=self.grant_permissions)
        self.window = webview.create_window(
            self.title, html=html, js_api=_Api(self.bridge), width=self.width, height=self.height
        )
        self.window.events.loaded += self._loaded
        self.window.events.closed += self.close
        return self.window

    def reload(self) -> None:
        """Load the host document into the window again (a fresh View, as after a reload): the View is replayed
        the tool input and result once it has initialized. Returns at once (pywebview loads it on its GUI
        thread); call it from any thread but pywebview's API thread (a host callback): pywebview would wait on
        itself."""
        if self.window is None:
            raise RuntimeError("the window is not created yet")
        self.window.load_html(desktop_document(self.page, title=self.title, grant_permissions=self.grant_permissions))

    def _loaded(self, *args: Any) -> None:
        if self._pump is None:
            name = "mcpsync-apps-desktop:%s" % self.page.tool
            self._pump = spawn(name, self._run_pump)

    def _run_pump(self) -> None:
        while not self._stop.is_set():
            message = self.bridge.next_outgoing(0.5)
            if message is None:
                continue
            try:
                self.window.evaluate_js("window.__mcpAppDeliver(%s)" % js_value(message))
            except Exception as exc:  # noqa: BLE001 - the window is going away
                log.debug("MCP App desktop: delivery failed: %s", exc)

    def run(self, arguments: Optional[Dict[str, Any]] = None, **start_options: Any) -> None:
        """Create the window, run the tool with ``arguments`` (the View gets the input and result), and run
        pywebview's loop: blocks the calling (main) thread until the window closes."""
        webview = _webview()
        self.create_window()

        def work() -> None:
            try:
                self.bridge.call_tool(arguments or {})
            except Exception as exc:  # noqa: BLE001 - the View was told (tool-cancelled); keep the window
                log.warning("MCP App desktop: the tool call failed: %s", exc)

        webview.start(work, **start_options)
        self.close()

    def close(self, *args: Any) -> None:
        """Stop the pump thread (joined) and close the bridge. Idempotent; the window is not destroyed."""
        self._stop.set()
        self.bridge.close()
        pump = self._pump
        if pump is not None and pump is not threading.current_thread():
            pump.join(5.0)
