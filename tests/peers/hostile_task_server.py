"""A stdio MCP server (2025-11-25) whose one tool runs as a task and whose task polls misbehave on purpose.

Run as ``python tests/peers/hostile_task_server.py [--garbage N] [--hang N] [--polls-to-finish N]``:

- ``tools/call`` of ``job`` with a ``task`` parameter answers a task (``pollInterval`` 20 ms);
- the task completes on the ``--polls-to-finish``-th ``tasks/get`` (default 3); ``tasks/result`` then answers
  ``{"content": [{"type": "text", "text": "job done"}]}``;
- ``--garbage N``: the first N ``tasks/get`` answers are not a task (a JSON array result); N < 0: every one;
- ``--hang N``: the first N ``tasks/get`` requests are never answered.

Each line on stderr records a request's method (the tests count polls with it).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Dict, List, Optional


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--garbage", type=int, default=0)
    parser.add_argument("--hang", type=int, default=0)
    parser.add_argument("--polls-to-finish", type=int, default=3)
    args = parser.parse_args(argv)
    gets = 0

    def send(message: Dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(message) + "\n")
        sys.stdout.flush()

    def task(status: str) -> Dict[str, Any]:
        return {"taskId": "job-1", "status": status, "pollInterval": 20, "createdAt": "2026-11-28T00:00:00Z"}

    for line in sys.stdin:
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        method, rid = msg.get("method"), msg.get("id")
        sys.stderr.write("%s\n" % method)
        sys.stderr.flush()
        if rid is None:
            continue  # a notification
        result: Any
        if method == "initialize":
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}, "tasks": {"requests": {"tools": {"call": {}}}}},
                "serverInfo": {"name": "hostile-tasks", "version": "1"},
            }
        elif method == "tools/list":
            tool = {"name": "job", "inputSchema": {"type": "object"}, "execution": {"taskSupport": "optional"}}
            result = {"tools": [tool]}
        elif method == "tools/call":
            result = {"task": task("working")}
        elif method == "tasks/get":
            gets += 1
            if gets <= args.hang:
                continue
            if args.garbage < 0 or gets - args.hang <= args.garbage:
                result = ["not", "a", "task"]
            else:
                done = gets - args.hang - max(args.garbage, 0) >= args.polls_to_finish
                result = task("completed" if done else "working")
        elif method == "tasks/result":
            result = {"content": [{"type": "text", "text": "job done"}]}
        elif method == "ping":
            result = {}
        else:
            send({"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "Method not found"}})
            continue
        send({"jsonrpc": "2.0", "id": rid, "result": result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
