"""A desktop-plugin style script: load the user's existing MCP configuration, offer every server's tools
to a model, and run the model's tool calls.

    python examples/desktop_plugin.py [CONFIG_FILE]

Without an argument the configuration is found in the usual places (``.mcp.json``,
``opencode.json``, Cursor, VS Code, Claude Desktop; see ``mcpsync.manager.config.find_config``).
The "model" here is a stand-in that calls two tools, once in OpenAI's shape and
once in Anthropic's; swap in your provider's SDK. Status changes and tool-list
changes are reported as they happen (events run on the manager's own thread).
"""

from __future__ import annotations

import json
import sys
from typing import Any, Dict, List, Optional

import mcpsync
import mcpsync.manager


def fake_model(tools: List[Dict[str, Any]], provider: str) -> List[Dict[str, Any]]:
    """A stand-in for an LLM: asks for the first echo-like and add-like tools it was offered."""
    names = [t.get("name") or t["function"]["name"] for t in tools]
    echo = next((n for n in names if n.endswith("_echo")), None)
    add = next((n for n in names if n.endswith("_add")), None)
    calls = []
    if provider == "openai":
        if add:
            calls.append(
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": add, "arguments": json.dumps({"a": 20, "b": 22})},
                }
            )
    else:
        if echo:
            calls.append({"type": "tool_use", "id": "toolu_1", "name": echo, "input": {"message": "hello"}})
    return calls


def main(argv: Optional[List[str]] = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    events: List[str] = []
    try:
        mgr = mcpsync.manager.Manager.from_file(
            argv[0] if argv else None,
            on_status_changed=lambda name, st: events.append("status %s" % st),
            on_tools_changed=lambda name: events.append("tools changed: %s" % name),
            on_browser_open_failed=lambda name, url: events.append("open %s to log in to %s" % (url, name)),
        )
    except mcpsync.ConfigError as exc:  # no configuration found, or one that cannot be read
        print("desktop_plugin: %s" % exc.message, file=sys.stderr)
        print("usage: python examples/desktop_plugin.py CONFIG_FILE  (a .mcp.json, opencode.json...)", file=sys.stderr)
        return 2
    with mgr:
        for name, st in mgr.status().items():
            print("%-20s %s" % (name, st.status + (" (%s)" % st.reason if st.reason else "")))
        for provider in ("openai", "anthropic"):
            tools = mgr.tools_for(provider)
            print("%d tools offered to the %s model" % (len(tools), provider))
            for call in fake_model(tools, provider):
                print(json.dumps(mgr.call_from_tool_call(call)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
