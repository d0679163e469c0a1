"""MCP Apps in a Flask app: a tool's interactive page shown in the browser, behind the sandbox proxy.

    python examples/apps_flask.py [--port 5000] [-- SERVER COMMAND...]

Then open http://127.0.0.1:5000/ . The host pages are served on ``127.0.0.1`` and the sandbox proxy on
``localhost`` (the same port, another origin, as the MCP Apps spec requires of web hosts; in production use a
separate domain for the sandbox). Without a server command it runs the bundled example server's counter App
(``python -m mcpsync.example_server --apps``).

* ``GET /``               the server's App tools (those a model may see and that link a ``ui://`` page);
* ``GET /show/<tool>``    runs the tool (query parameters are its integer/string arguments) and redirects to the
                          App's page, which receives the input and the result (and again after a reload, or
                          in a second tab, which takes the App over);
* ``GET /activity``       what the Apps did (their messages, links, logs, model-context updates), newest last.

One :class:`mcpsync.Client` is shared by every request thread (it is thread-safe); ``AppWebHost.middleware``
puts the App endpoints in front of the Flask app.
"""

from __future__ import annotations

import atexit
import collections
import sys
import threading
from typing import Any, Deque, Dict, List, Optional

from flask import Flask, abort, jsonify, redirect, request

import mcpsync
from mcpsync.apps import AppWebHost, HostCallbacks
from mcpsync.client import ClientOptions


def _arguments(args: Any) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for key, value in args.items():
        out[key] = int(value) if value.lstrip("-").isdigit() else value
    return out


def create_app(
    server: Optional[List[str]] = None,
    *,
    host_origin: str = "http://127.0.0.1:5000",
    sandbox_origin: str = "http://localhost:5000",
) -> Flask:
    """The Flask app, its shared client (``app.extensions["mcpsync"]``) and its App host
    (``app.extensions["mcp_apps"]``); ``app.extensions["mcp_apps_activity"]`` is the bounded activity log."""
    app = Flask(__name__)
    client = mcpsync.Client(
        server or [sys.executable, "-m", "mcpsync.example_server", "--apps"], options=ClientOptions(apps=True)
    )
    client.open()
    # a page whose session has ended (closed, evicted, the server restarted) links back to the list of Apps
    host = AppWebHost(host_origin, sandbox_origin, ended_url="/")
    activity: Deque[Dict[str, Any]] = collections.deque(maxlen=500)
    lock = threading.Lock()

    def record(kind: str) -> Any:
        def f(*args: Any) -> bool:
            with lock:
                activity.append({"kind": kind, "data": args[0] if len(args) == 1 else list(args)})
            return True

        return f

    callbacks = HostCallbacks(
        on_message=record("message"),
        on_open_link=record("open-link"),  # a real host would ask the user, then open a browser tab
        on_log=record("log"),
        on_update_model_context=record("model-context"),
        on_size_change=record("size"),
    )
    app.extensions.update(mcpsync=client, mcp_apps=host, mcp_apps_activity=activity)

    @app.get("/")
    def index() -> Any:
        tools = [t for t in client.list_tools(audience="model") if t.ui_resource_uri]
        items = "".join('<li><a href="/show/%s">%s</a></li>' % (t.name, t.title or t.name) for t in tools)
        return "<h1>MCP Apps</h1><ul>%s</ul>" % items

    @app.get("/show/<tool>")
    def show(tool: str) -> Any:
        listed = client.get_tool(tool) or next((t for t in client.list_tools() if t.name == tool), None)
        if listed is None or not listed.visible_to_model or listed.ui_resource_uri is None:
            abort(404)
        session = host.open(client, listed, callbacks=callbacks)
        # the model's call: the View gets the input and the result once it has initialized
        session.bridge.call_tool(_arguments(request.args))
        return redirect(session.url)

    @app.get("/activity")
    def show_activity() -> Any:
        with lock:
            return jsonify(list(activity))

    app.wsgi_app = host.middleware(app.wsgi_app)  # type: ignore[method-assign]

    def shutdown() -> None:
        host.close()
        client.close()

    atexit.register(shutdown)
    app.extensions["mcp_apps_shutdown"] = shutdown
    return app


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    port = 5000
    if argv[:1] == ["--port"]:
        port, argv = int(argv[1]), argv[2:]
    server = argv[1:] if argv[:1] == ["--"] else None
    app = create_app(server, host_origin="http://127.0.0.1:%d" % port, sandbox_origin="http://localhost:%d" % port)
    app.run(host="127.0.0.1", port=port, threaded=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
