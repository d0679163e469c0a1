"""``mcpsync demo``: a short, readable session with the bundled example server.

Starts ``python -m mcpsync.example_server`` with the current interpreter over
stdio and walks through the protocol: the handshake, the tool list, two tool
calls, a server log message, a prompt, a resource read and a slow call that
reports progress. With ``--json`` the same session is written as one JSON
document.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any, Dict, List

from . import output as out
from .context import EXAMPLE_SERVER, Cli


if TYPE_CHECKING:  # pragma: no cover
    from ..client.client import Client

__all__ = ["run_demo"]


def _server_logs(client: Client) -> List[Dict[str, Any]]:
    """Log messages (notifications/message) received so far, taken from the notification queue."""
    return [n.params for n in client.notifications.drain() if n.method == "notifications/message"]


def run_demo(cli: Cli) -> int:
    """Run the demo; returns the exit code."""
    from ..client.client import Client
    from ..manager.flat import grouped

    opts = cli.client_options()
    opts.pop("on_log", None)  # the demo shows log messages itself, in order
    opts["log_level"] = "info"
    opts.setdefault("name", "example")
    if cli.verbose:
        opts["on_stderr"] = cli.on_stderr
    show = not cli.json
    console = out.Console(cli.stdout)
    report: Dict[str, Any] = {"command": EXAMPLE_SERVER, "steps": []}

    def say(text: str = "") -> None:
        if show:
            console.line(text)

    def step(title: str, detail: Any = None) -> None:
        if show:
            console.line("")
            console.line("> %s" % title if detail is None else "> %s %s" % (title, json.dumps(detail)))

    def show_logs() -> None:
        for params in _server_logs(client):
            report["steps"].append({"log": params})
            say("  server log [%s] %s" % (params.get("level"), params.get("data")))

    say("Starting the example server: %s" % " ".join(("python",) + EXAMPLE_SERVER[1:]))
    started = time.monotonic()
    client = Client(list(EXAMPLE_SERVER), **grouped(opts, remote=False))
    client.open()
    try:
        say("Connected in %.2f s." % (time.monotonic() - started))
        say("")
        report["server"] = out.server_json(client)
        if show:
            for line in out.table(out.describe_server(client)):
                console.line(line)

        tools = client.list_tools()
        report["tools"] = [t.name for t in tools]
        step("tools/list: %d tools" % len(tools))
        if show:
            for line in out.table(out.tool_rows(tools), indent="  ", width=out.terminal_width(cli.stdout, 0)):
                console.line(line)

        for name, args in (
            ("echo", {"message": "Hello from mcpsync!"}),
            ("add", {"a": 2, "b": 40}),
            ("log", {"level": "info", "message": "a log message from the server"}),
        ):
            step("tools/call %s" % name, args)
            result = client.call_tool(name, args)
            report["steps"].append({"call": name, "arguments": args, "result": result.raw})
            for line in out.format_call_result(result).splitlines():
                say("  " + line if line else "")
            show_logs()

        prompt_args = {"name": "Ada", "style": "pirate"}
        step("prompts/get greet", prompt_args)
        prompt = client.get_prompt("greet", prompt_args)
        report["steps"].append({"prompt": "greet", "arguments": prompt_args, "result": prompt.raw})
        for line in out.format_prompt_result(prompt).splitlines():
            say("  " + line if line else "")

        resources = client.list_resources()
        report["resources"] = [r.uri for r in resources]
        step("resources/list: %d resources" % len(resources))
        if show:
            for line in out.table(out.resource_rows(resources), indent="  "):
                console.line(line)
        uri = "example://hello"
        step("resources/read %s" % uri)
        read = client.read_resource(uri)
        report["steps"].append({"read": uri, "result": read.raw})
        for line in out.format_read_result(read).splitlines():
            say("  " + line if line else "")

        slow_args = {"seconds": 1.0, "steps": 5}
        step("tools/call slow (with progress notifications)", slow_args)
        mode = "off" if not show else ("bar" if console.isatty else "lines")
        bar = out.ProgressBar(console, mode, label="  slow")
        events: List[Dict[str, Any]] = []

        def progress(event: Any) -> None:
            events.append({"progress": event.progress, "total": event.total, "message": event.message})
            bar(event)

        from .commands import run_call

        result = run_call(cli, client, "slow", slow_args, bar, progress)
        cli.in_flight = False
        report["steps"].append({"call": "slow", "arguments": slow_args, "progress": events, "result": result.raw})
        say("  %s (%d progress notifications)" % (out.format_call_result(result), bar.events))
    finally:
        closing = time.monotonic()
        client.close()
    say("")
    say(
        "Closed the connection in %.2f s. Try: mcpsync tools -- %s"
        % (time.monotonic() - closing, " ".join(("python",) + EXAMPLE_SERVER[1:]))
    )
    if cli.json:
        cli.emit_json(report)
    return 0
