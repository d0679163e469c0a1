"""Shared by the framework examples: the two servers they use, and what a stand-in model asks for.

The examples call tools of two real MCP servers: mcpsync's bundled example server and the npm reference server
(``@modelcontextprotocol/server-everything``; its command comes from ``MCPSYNC_EVERYTHING_BIN``, else ``npx``).
Each example drives its framework with the framework's own scripted/fake model so it runs offline; swap in
your real model where the example says so.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Dict, List, Tuple

#: The tool calls the stand-in models make: one tool of each server.
CALLS: List[Tuple[str, Dict[str, Any]]] = [
    ("example_add", {"a": 2, "b": 3}),
    ("everything_get-sum", {"a": 4, "b": 5}),
]


def servers() -> Dict[str, Any]:
    """The Manager configuration of the two servers."""
    everything = os.environ.get("MCPSYNC_EVERYTHING_BIN")
    command = [everything, "stdio"] if everything else ["npx", "-y", "@modelcontextprotocol/server-everything", "stdio"]
    return {
        "mcpServers": {
            "example": {"command": sys.executable, "args": ["-m", "mcpsync.example_server"]},
            "everything": {"command": command[0], "args": command[1:]},
        }
    }
