"""MCP Apps in a desktop tool: a tool's interactive page in a pywebview window (``pip install pywebview``).

    python examples/apps_desktop.py [TOOL] [-- SERVER COMMAND...]

Without a server command it shows the bundled example server's counter App (``show_counter``). Links the App
asks to open go to the system browser; its messages, logs and model-context updates are printed.
"""

from __future__ import annotations

import json
import sys
import webbrowser
from typing import Any, Callable, List, Optional

import mcpsync
from mcpsync.apps import HostCallbacks
from mcpsync.apps.desktop import DesktopApp
from mcpsync.client import ClientOptions


def make_app(client: mcpsync.Client, tool: str, report: Callable[[str, Any], None]) -> DesktopApp:
    """The window for ``tool``'s App; ``report(kind, data)`` hears what the App does (pywebview's API thread)."""
    callbacks = HostCallbacks(
        on_open_link=lambda url: bool(webbrowser.open(url)),
        on_message=lambda params: report("message", params),
        on_log=lambda params: report("log", params),
        on_update_model_context=lambda params: report("model-context", params),
    )
    return DesktopApp(client, tool, callbacks=callbacks, width=760, height=520)


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    tool = argv[0] if argv and argv[0] != "--" else "show_counter"
    server = (
        argv[argv.index("--") + 1 :] if "--" in argv else [sys.executable, "-m", "mcpsync.example_server", "--apps"]
    )
    with mcpsync.Client(server, options=ClientOptions(apps=True)) as client:
        app = make_app(client, tool, lambda kind, data: print(kind, json.dumps(data)))
        app.run({"start": 1} if tool == "show_counter" else {})
    return 0


if __name__ == "__main__":
    sys.exit(main())
