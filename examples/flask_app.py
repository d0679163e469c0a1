"""A Flask app sharing one mcpsync Manager across its worker threads.

The manager is created once, at start-up, and closed at exit; every request
thread uses it directly (it is thread-safe). Run it with::

    MCPSYNC_CONFIG=claude_desktop_config.json flask --app examples/flask_app.py run --with-threads

With no configuration it serves the bundled example server. Endpoints:

* ``GET /status``: each server's status;
* ``GET /tools?provider=openai``: the tools as ready-to-send definitions;
* ``POST /call/<tool>`` with a JSON body: call a tool (``{server}_{tool}`` name);
* ``POST /tool-call``: execute a provider's tool call (OpenAI or Anthropic shape), get the provider-shaped result.
"""

from __future__ import annotations

import atexit
import os
import sys
from typing import Any, Optional

from flask import Flask, jsonify, request

import mcpsync.manager


def default_config() -> Any:
    """The configuration file named by $MCPSYNC_CONFIG, else the bundled example server."""
    path = os.environ.get("MCPSYNC_CONFIG")
    if path:
        return path
    return {"example": {"command": [sys.executable, "-m", "mcpsync.example_server"]}}


def create_app(config: Any = None, manager: Optional[mcpsync.manager.Manager] = None) -> Flask:
    """Build the app around one shared manager (created and connected here unless given)."""
    app = Flask(__name__)
    mgr = manager or mcpsync.manager.Manager(config or default_config()).open()
    app.extensions["mcpsync"] = mgr

    @app.get("/status")
    def status() -> Any:
        return jsonify({name: s.to_dict() for name, s in mgr.status().items()})

    @app.get("/tools")
    def tools() -> Any:
        return jsonify(mgr.tools_for(request.args.get("provider", "openai")))

    @app.post("/call/<name>")
    def call(name: str) -> Any:
        try:
            result = mgr.call_tool(name, request.get_json(silent=True) or {})
        except mcpsync.manager.UnknownTool as exc:
            return jsonify({"error": str(exc)}), 404
        except mcpsync.MCPError as exc:
            return jsonify({"error": str(exc)}), 502
        return jsonify({"text": result.text, "is_error": result.is_error, "structured": result.structured_content})

    @app.post("/tool-call")
    def tool_call() -> Any:
        return jsonify(mgr.call_from_tool_call(request.get_json(force=True)))

    return app


if __name__ == "__main__":  # pragma: no cover - manual use
    application = create_app()
    atexit.register(application.extensions["mcpsync"].close)
    application.run(threaded=True)
