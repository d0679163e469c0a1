"""MCP Apps (``io.modelcontextprotocol/ui``) in the example server: a counter App, its tools and its page.

Enabled with ``ExampleServer(apps=True)`` / ``--apps``. The tools cover every visibility:

- ``show_counter`` (model and app) links the page ``ui://example/counter``;
- ``counter_increment`` is app-only (``visibility: ["app"]``): a host must never show it to a model;
- ``model_only_fact`` is model-only (``visibility: ["model"]``): a host must refuse an App's call to it;
- ``app_host_capability`` reports whether the client declared the extension (in either era).

Hostile variants for host tests: ``ui://example/wrong-mime`` (``text/html``), ``ui://example/not-html``
(a blob that is not base64) and ``ui://example/mismatch`` (contents for another URI).

The page is a small hand-written View speaking the protocol with ``postMessage`` (no SDK): it initializes,
shows the tool input and result, calls ``counter_increment`` through the host, tries ``model_only_fact``
(which the host must refuse), tries a ``fetch`` its CSP does not allow, reports its size, and tells the host
what happened in a log message (``notifications/message``) and the model context.
"""

from __future__ import annotations

import base64
from typing import Any, Callable, Dict, List, Optional

__all__ = ["APP_RESOURCES", "APP_TOOL_DEFS", "APP_TOOL_FUNCS", "COUNTER_HTML", "COUNTER_URI", "UI_MIME_TYPE"]

UI_EXTENSION = "io.modelcontextprotocol/ui"
UI_MIME_TYPE = "text/html;profile=mcp-app"
COUNTER_URI = "ui://example/counter"


def _obj(props: Dict[str, Any], required: Optional[List[str]] = None) -> Dict[str, Any]:
    schema: Dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return schema


APP_TOOL_DEFS: List[Dict[str, Any]] = [
    {
        "name": "show_counter",
        "title": "Show counter",
        "description": "Shows an interactive counter (an MCP App) starting at `start`.",
        "inputSchema": _obj(
            {
                "start": {"type": "integer", "default": 0},
                "probe_url": {"type": "string", "description": "a URL the page tries to fetch (its CSP forbids it)"},
            }
        ),
        "_meta": {"ui": {"resourceUri": COUNTER_URI, "visibility": ["model", "app"]}},
    },
    {
        "name": "counter_increment",
        "title": "Increment",
        "description": "Adds one to a count (called by the counter App only).",
        "inputSchema": _obj({"count": {"type": "integer"}}, ["count"]),
        "_meta": {"ui": {"resourceUri": COUNTER_URI, "visibility": ["app"]}},
    },
    {
        "name": "model_only_fact",
        "title": "Model-only fact",
        "description": "A fact for the model; an App may not call this tool.",
        "inputSchema": _obj({}),
        "_meta": {"ui": {"visibility": ["model"]}},
    },
    {
        "name": "app_host_capability",
        "title": "Apps capability",
        "description": "Reports whether the client declared the MCP Apps extension.",
        "inputSchema": _obj({}),
    },
    {
        "name": "show_legacy_link",
        "description": "Links the counter page with the deprecated flat _meta key.",
        "inputSchema": _obj({}),
        "_meta": {"ui/resourceUri": COUNTER_URI},
    },
]


def _result(text: str, structured: Any = None) -> Dict[str, Any]:
    out: Dict[str, Any] = {"content": [{"type": "text", "text": text}], "isError": False}
    if structured is not None:
        out["structuredContent"] = structured
    return out


def _int(args: Dict[str, Any], key: str, default: int) -> int:
    value = args.get(key, default)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def t_show_counter(ctx: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    start = _int(args, "start", 0)
    return _result("The counter starts at %d." % start, {"count": start})


def t_counter_increment(ctx: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    count = _int(args, "count", 0) + 1
    return _result("count=%d" % count, {"count": count})


def t_model_only_fact(ctx: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    return _result("Octopuses have three hearts.")


def t_app_host_capability(ctx: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    extensions = ctx.client_caps.get("extensions") if isinstance(ctx.client_caps, dict) else None
    ui = extensions.get(UI_EXTENSION) if isinstance(extensions, dict) else None
    mime_types = ui.get("mimeTypes") if isinstance(ui, dict) else None
    structured = {"apps": ui is not None, "mimeTypes": mime_types}
    return _result("apps: %s" % ("yes" if ui is not None else "no"), structured)


def t_show_legacy_link(ctx: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    return _result("legacy link", {"count": 0})


APP_TOOL_FUNCS: Dict[str, Callable[[Any, Dict[str, Any]], Dict[str, Any]]] = {
    "show_counter": t_show_counter,
    "counter_increment": t_counter_increment,
    "model_only_fact": t_model_only_fact,
    "app_host_capability": t_app_host_capability,
    "show_legacy_link": t_show_legacy_link,
}

COUNTER_HTML = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Counter App</title>
<style>
  body { font-family: sans-serif; margin: 0; padding: 16px; background: #f4f7fb; color: #17202a; }
  h1 { font-size: 18px; margin: 0 0 8px; }
  #count { font-size: 48px; font-weight: bold; color: #1f6feb; }
  button { font-size: 16px; padding: 6px 14px; }
  ul { padding-left: 18px; font-size: 13px; }
  .ok { color: #1a7f37; } .bad { color: #cf222e; }
</style>
</head>
<body>
<h1>mcpsync example counter</h1>
<div>count: <span id="count">?</span> <button id="plus" disabled>+1</button></div>
<ul id="checks"></ul>
<script>
(function () {
  "use strict";
  var nextId = 1, pending = {}, state = {count: 0}, checks = {};
  function post(msg) { window.parent.postMessage(msg, "*"); }
  function request(method, params) {
    var id = nextId++;
    post({jsonrpc: "2.0", id: id, method: method, params: params});
    return new Promise(function (resolve, reject) { pending[id] = {resolve: resolve, reject: reject}; });
  }
  function notify(method, params) { post({jsonrpc: "2.0", method: method, params: params}); }
  function check(name, ok, detail) {
    checks[name] = ok;
    var li = document.createElement("li");
    li.className = ok ? "ok" : "bad";
    li.id = "check-" + name;
    li.textContent = name + ": " + (ok ? "ok" : "FAILED") + (detail ? " (" + detail + ")" : "");
    document.getElementById("checks").appendChild(li);
    notify("notifications/message",
           {level: "info", logger: "counter-app", data: {check: name, ok: ok, detail: detail || ""}});
    resize();
  }
  function resize() {
    notify("ui/notifications/size-changed",
           {width: document.documentElement.scrollWidth, height: document.documentElement.scrollHeight});
  }
  function show(count) { state.count = count; document.getElementById("count").textContent = String(count); }
  function respond(msg, result) { post({jsonrpc: "2.0", id: msg.id, result: result}); }
  var blocked = [];
  document.addEventListener("securitypolicyviolation", function (e) {
    blocked.push(e.blockedURI || e.violatedDirective);
  });
  function runChecks() {
    request("tools/call", {name: "counter_increment", arguments: {count: state.count}}).then(function (r) {
      var c = r && r.structuredContent ? r.structuredContent.count : null;
      if (typeof c === "number") { show(c); }
      check("app-tool", c === state.count && typeof c === "number", "count=" + c);
    }, function (e) { check("app-tool", false, String(e && e.message)); }).then(function () {
      return request("tools/call", {name: "model_only_fact", arguments: {}}).then(function () {
        check("model-only-refused", false, "the host let the App call a model-only tool");
      }, function (e) { check("model-only-refused", true, String(e && e.message)); });
    }).then(function () {
      if (!state.probe) { return; }
      return fetch(state.probe).then(function () {
        check("csp-blocked", false, "an undeclared domain was reachable");
      }, function () {
        return new Promise(function (resolve) {
          var waited = 0;
          (function poll() {
            if (blocked.length > 0 || waited >= 5000) {
              check("csp-blocked", blocked.length > 0, "violations: " + blocked.join(","));
              resolve();
            } else { waited += 50; setTimeout(poll, 50); }
          })();
        });
      });
    }).then(function () {
      return request("ui/update-model-context", {structuredContent: {count: state.count, checks: checks}});
    }).then(function () {
      check("done", true, "blocked=" + blocked.join(","));
      document.getElementById("plus").disabled = false;
    });
  }
  document.getElementById("plus").addEventListener("click", function () {
    request("tools/call", {name: "counter_increment", arguments: {count: state.count}}).then(function (r) {
      show(r.structuredContent.count);
    });
  });
  window.addEventListener("message", function (ev) {
    if (ev.source !== window.parent) { return; }
    var msg = ev.data;
    if (!msg || msg.jsonrpc !== "2.0") { return; }
    if (msg.id !== undefined && msg.method === undefined) {
      var p = pending[msg.id];
      if (!p) { return; }
      delete pending[msg.id];
      if (msg.error) { p.reject(new Error(msg.error.message)); } else { p.resolve(msg.result); }
      return;
    }
    if (msg.method === "ui/notifications/tool-input") {
      var args = (msg.params && msg.params.arguments) || {};
      show(typeof args.start === "number" ? args.start : 0);
      state.probe = typeof args.probe_url === "string" ? args.probe_url : null;
      check("tool-input", true, JSON.stringify(args));
    } else if (msg.method === "ui/notifications/tool-result") {
      var sc = msg.params && msg.params.structuredContent;
      if (sc && typeof sc.count === "number") { show(sc.count); }
      check("tool-result", !!sc, JSON.stringify(sc));
      runChecks();
    } else if (msg.method === "ui/notifications/tool-cancelled") {
      check("cancelled", true, msg.params && msg.params.reason);
    } else if (msg.method === "ui/notifications/host-context-changed") {
      if (msg.params && msg.params.theme === "dark") { document.body.style.background = "#222"; }
    } else if (msg.method === "ui/resource-teardown" || msg.method === "ping") {
      respond(msg, {});
    } else if (msg.id !== undefined) {
      post({jsonrpc: "2.0", id: msg.id, error: {code: -32601, message: "Method not found"}});
    }
  });
  request("ui/initialize", {
    protocolVersion: "2026-01-26",
    appInfo: {name: "mcpsync-counter", version: "1.0.0"},
    appCapabilities: {availableDisplayModes: ["inline", "fullscreen"]}
  }).then(function (result) {
    check("initialized", !!(result && result.hostInfo), result && result.hostInfo && result.hostInfo.name);
    notify("ui/notifications/initialized", {});
  }, function (e) { check("initialized", false, String(e && e.message)); });
})();
</script>
</body>
</html>
"""

_META = {
    "ui": {
        "csp": {"connectDomains": [], "resourceDomains": []},
        "permissions": {"clipboardWrite": {}},
        "prefersBorder": True,
    }
}

#: uri -> the resource's entry (``def`` for resources/list, ``contents`` without the uri)
APP_RESOURCES: Dict[str, Dict[str, Any]] = {
    COUNTER_URI: {
        "def": {"uri": COUNTER_URI, "name": "counter", "title": "Counter App", "mimeType": UI_MIME_TYPE},
        "contents": {"mimeType": UI_MIME_TYPE, "text": COUNTER_HTML, "_meta": _META},
    },
    "ui://example/counter-blob": {
        "def": {"uri": "ui://example/counter-blob", "name": "counter-blob", "mimeType": UI_MIME_TYPE},
        "contents": {"mimeType": UI_MIME_TYPE, "blob": base64.b64encode(COUNTER_HTML.encode()).decode("ascii")},
    },
    "ui://example/wrong-mime": {
        "def": {"uri": "ui://example/wrong-mime", "name": "wrong-mime", "mimeType": "text/html"},
        "contents": {"mimeType": "text/html", "text": COUNTER_HTML},
    },
    "ui://example/not-html": {
        "def": {"uri": "ui://example/not-html", "name": "not-html", "mimeType": UI_MIME_TYPE},
        "contents": {"mimeType": UI_MIME_TYPE, "blob": "%%% not base64 %%%"},
    },
    "ui://example/mismatch": {
        "def": {"uri": "ui://example/mismatch", "name": "mismatch", "mimeType": UI_MIME_TYPE},
        "contents": {"mimeType": UI_MIME_TYPE, "text": COUNTER_HTML, "uri": "ui://elsewhere/page"},
    },
}
