"""The two small pages a web host serves for an MCP App (used by :mod:`mcpsync.apps.web`; hand-written, no SDK).

- The **host page** (host origin) holds the sandbox-proxy iframe and relays: View messages arriving from the proxy
  go to the host's ``rpc`` endpoint with ``fetch`` (HTTP POST) and the answers go back; Host -> View messages
  arrive on an ``EventSource`` and are posted to the proxy. It answers ``ui/notifications/sandbox-proxy-ready``
  with ``ui/notifications/sandbox-resource-ready`` (the page's HTML, fetched from the host) and resizes the iframe
  on ``ui/notifications/size-changed``. :func:`embed_snippet` is the same markup for a page of your own.
- The **sandbox proxy** (the second origin) announces itself, loads the View's HTML into an inner
  ``srcdoc`` iframe (``sandbox="allow-scripts allow-forms"``: an opaque origin) under the page's CSP (the proxy is
  served with it as a header, which the ``srcdoc`` document inherits, and a ``<meta>`` copy is put first in the
  View's ``<head>``), and relays every message that is not ``ui/notifications/sandbox-*``, only between its
  parent (checked against the host origin) and its own inner frame.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["embed_snippet", "host_page", "js_value", "sandbox_page"]


def js_value(value: Any) -> str:
    """``value`` as a JavaScript literal safe inside an inline ``<script>`` (no ``</script>``, no ``<!--``)."""
    return (
        json.dumps(value)
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


_SANDBOX = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>MCP App sandbox</title>
<style>html,body{margin:0;padding:0;border:0;overflow:hidden;height:100%%}iframe{border:0;width:100%%;height:100%%;display:block}
</style></head>
<body>
<script>
(function () {
  "use strict";
  var HOST = %(host_origin)s, inner = null;
  function toHost(msg) { window.parent.postMessage(msg, HOST); }
  function withCsp(html, csp) {
    var meta = '<meta http-equiv="Content-Security-Policy" content="' +
      csp.replace(/&/g, "&amp;").replace(/"/g, "&quot;") + '">';
    var m = /<head[^>]*>/i.exec(html);
    return m ? html.slice(0, m.index + m[0].length) + meta + html.slice(m.index + m[0].length) : meta + html;
  }
  window.addEventListener("message", function (ev) {
    var msg = ev.data;
    if (!msg || typeof msg !== "object") { return; }
    if (ev.source === window.parent && ev.origin === HOST) {
      if (msg.method === "ui/notifications/sandbox-resource-ready") {
        if (inner) { return; }
        var p = msg.params || {};
        inner = document.createElement("iframe");
        inner.setAttribute("sandbox", %(inner_sandbox)s);
        if (typeof p.allow === "string" && p.allow) { inner.setAttribute("allow", p.allow); }
        inner.srcdoc = withCsp(String(p.html || ""), String(p.cspHeader || %(csp)s));
        document.body.appendChild(inner);
        return;
      }
      if (typeof msg.method === "string" && msg.method.indexOf("ui/notifications/sandbox-") === 0) { return; }
      if (inner && inner.contentWindow) { inner.contentWindow.postMessage(msg, "*"); }
    } else if (inner && ev.source === inner.contentWindow) {
      if (typeof msg.method === "string" && msg.method.indexOf("ui/notifications/sandbox-") === 0) { return; }
      toHost(msg);
    }
  });
  toHost({jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {}});
})();
</script>
</body></html>
"""


def sandbox_page(host_origin: str, csp: str, inner_sandbox: str = "allow-scripts allow-forms") -> str:
    """The sandbox proxy's HTML (serve it from the sandbox origin with ``csp`` as its CSP header)."""
    return _SANDBOX % {
        "host_origin": js_value(host_origin),
        "inner_sandbox": js_value(inner_sandbox),
        "csp": js_value(csp),
    }


_EMBED = """<div id="%(frame_id)s-status" role="alert" hidden
 style="padding:8px 12px;margin:0 0 8px;border:1px solid #d4a72c;background:#fff8c5;font:14px sans-serif"></div>
<iframe id="%(frame_id)s" title="MCP App" src="%(proxy_url)s" sandbox="allow-scripts allow-same-origin"
 %(allow)s style="width:100%%;height:%(height)dpx;border:%(border)s;display:block"></iframe>
<script>
(function () {
  "use strict";
  var SANDBOX = %(sandbox_origin)s, BASE = %(base)s, frame = document.getElementById(%(frame_id_js)s);
  var status = document.getElementById(%(status_id_js)s);
  var resource = null, events = null, ended = false;
  // one id per page load: a reload or another tab is a new View, which the host replays the tool input and result
  var VIEW = Array.prototype.map.call(crypto.getRandomValues(new Uint8Array(16)), function (b) {
    return ("0" + b.toString(16)).slice(-2);
  }).join("");
  function toView(msg) { if (!ended && frame.contentWindow) { frame.contentWindow.postMessage(msg, SANDBOX); } }
  function end(text) {
    if (ended) { return; }
    ended = true;
    if (events) { events.close(); }
    status.textContent = text;
    status.hidden = false;
    frame.style.opacity = "0.5";  // still visible, no longer live: clicks would go nowhere
    frame.style.pointerEvents = "none";
  }
  function refused(r) {
    return r.text().then(function (text) { end(text || ("The App's host answered " + r.status)); return null; });
  }
  function post(msg) {
    if (ended) { return; }
    return fetch(BASE + "rpc", {method: "POST", credentials: "same-origin",
                                headers: {"Content-Type": "application/json", "X-MCP-App-View": VIEW},
                                body: JSON.stringify(msg)})
      .then(function (r) {
        if (r.status === 404 || r.status === 409) { return refused(r); }
        return r.status === 200 ? r.json() : null;
      })
      .then(function (answer) { if (answer) { toView(answer); } })
      .catch(function (e) { console.warn("MCP App relay failed", e); });
  }
  function listen() {
    if (events || ended) { return; }
    events = new EventSource(BASE + "events?view=" + VIEW);
    events.onmessage = function (ev) { try { toView(JSON.parse(ev.data)); } catch (e) { /* junk */ } };
    events.onerror = function () {
      if (events.readyState !== EventSource.CLOSED || ended) { return; }  // CONNECTING: it reconnects by itself
      fetch(BASE + "events?probe=1&view=" + VIEW, {credentials: "same-origin"}).then(function (r) {
        if (r.status === 404 || r.status === 409) { return refused(r); }
        end("The connection to the App's host was lost. Reload this page to continue.");
      }, function () { end("The connection to the App's host was lost. Reload this page to continue."); });
    };
  }
  window.addEventListener("message", function (ev) {
    if (ev.source !== frame.contentWindow || ev.origin !== SANDBOX) { return; }
    var msg = ev.data;
    if (!msg || typeof msg !== "object" || msg.jsonrpc !== "2.0") { return; }
    if (msg.method === "ui/notifications/sandbox-proxy-ready") {
      fetch(BASE + "resource", {credentials: "same-origin"}).then(function (r) {
        if (r.status !== 200) { return refused(r); }
        return r.json();
      }).then(function (res) {
        if (!res) { return; }
        resource = res;
        toView({jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-ready", params: res});
      });
      return;
    }
    if (typeof msg.method === "string" && msg.method.indexOf("ui/notifications/sandbox-") === 0) { return; }
    if (msg.method === "ui/notifications/size-changed" && msg.params) {
      var h = Number(msg.params.height);
      if (h > 0 && h < 100000) { frame.style.height = Math.ceil(h) + "px"; }
    }
    if (msg.method === "ui/initialize") { listen(); }
    post(msg);
  });
})();
</script>
"""


def embed_snippet(
    *,
    proxy_url: str,
    sandbox_origin: str,
    base: str,
    allow: str = "",
    height: int = 200,
    border: bool = True,
    frame_id: str = "mcp-app",
) -> str:
    """The markup that shows one App on a host page: the proxy iframe and the relay script. ``base`` is the URL
    prefix of the session's endpoints (``rpc``, ``events``, ``resource``), ending with ``/``."""
    return _EMBED % {
        "frame_id": frame_id,
        "frame_id_js": js_value(frame_id),
        "status_id_js": js_value(frame_id + "-status"),
        "proxy_url": proxy_url.replace('"', "%22"),
        "allow": ('allow="%s"' % allow.replace('"', "")) if allow else "",
        "height": height,
        "border": "1px solid #d0d7de" if border else "0",
        "sandbox_origin": js_value(sandbox_origin),
        "base": js_value(base),
    }


_HOST = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>%(title)s</title>
<style>body{font-family:sans-serif;margin:16px;max-width:900px}</style></head>
<body>
<h1 style="font-size:16px">%(title)s</h1>
%(embed)s
</body></html>
"""


def host_page(title: str, embed: str) -> str:
    """A minimal host page around :func:`embed_snippet`'s markup (``title`` is escaped)."""
    safe = title.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _HOST % {"title": safe, "embed": embed}
