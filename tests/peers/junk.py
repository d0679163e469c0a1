"""Hostile frames for the test servers' ``--junk-ids``: ids, progress tokens and request ids of every JSON type.

Each frame is well-formed JSON whose id-like members have a type a client must check before any
lookup (objects and arrays are unhashable in Python; floats, bools and huge integers must never
match a pending integer id). A robust client drops every one of them and keeps the connection.
Used by ``tests/peers/misbehaving_server.py --junk-ids`` (stdio) and by tests/peers/httpserver.py (HTTP).
"""

from __future__ import annotations

import json
from typing import Any, List

__all__ = ["JUNK_VALUES", "junk_frames"]

#: One value of every JSON type, plus the tricky numbers (1.0 == 1 and True == 1 in Python).
JUNK_VALUES: List[Any] = [
    {"nested": {"id": 1}},
    [1, 2, [3]],
    [],
    {},
    True,
    False,
    1.0,
    2.5,
    -0.0,
    10**40,
    -(10**30),
    None,
]


def junk_frames(real_id: Any = None) -> List[bytes]:
    """Frames to write before a response; ``real_id`` (the id about to be answered) is echoed as a float."""
    out: List[Any] = []
    for value in JUNK_VALUES:
        out.append(
            {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": value, "progress": 1}}
        )
        out.append({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": value}})
        out.append({"jsonrpc": "2.0", "id": value, "result": {"junk": True}})
        out.append({"jsonrpc": "2.0", "id": value, "error": {"code": -32603, "message": "junk"}})
        out.append(
            {
                "jsonrpc": "2.0",
                "method": "notifications/resources/updated",
                "params": {"uri": "example://junk", "_meta": {"io.modelcontextprotocol/subscriptionId": value}},
            }
        )
        out.append({"jsonrpc": "2.0", "id": value, "method": "ping"})
    out.append([{"jsonrpc": "2.0", "id": [1], "result": {}}, [[{"nested": "batch"}]], 7, None])
    out.append([])
    out.append({"jsonrpc": "2.0", "method": "notifications/progress", "params": [1, 2]})
    out.append({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": 1, "progress": {}}})
    out.append({"jsonrpc": "2.0", "method": {"not": "a string"}})
    if isinstance(real_id, int) and not isinstance(real_id, bool):
        out.append({"jsonrpc": "2.0", "id": float(real_id), "result": {"junk": "float twin of the real id"}})
        out.append(
            {
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": {"progressToken": float(real_id), "progress": 1},
            }
        )
    return [json.dumps(m, separators=(",", ":")).encode("utf-8") for m in out]
