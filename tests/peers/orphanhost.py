"""A host process for the orphan test: it holds three stdio servers, then waits to be killed.

``python tests/peers/orphanhost.py [--fork | --fork-opens] [--as-platform darwin]``. ``--as-platform`` sets
``sys.platform`` before mcpsync is imported, so the host takes the code path of that platform (``darwin``: the path
macOS takes).
Each client is opened on a short-lived thread that ends before the host reports (the servers must not die
with the thread that started them); then every server answers a call,
and the host prints one JSON line ``{"host": pid, "pgids": [...], "forked": pid or null}`` and blocks until
killed. With ``--fork`` it first forks a child that lives on (like a multiprocessing worker): that child
must not keep the host's servers alive once the host is killed. With ``--fork-opens`` the forked child opens a
server of its own and prints ``{"child": pid, "pgid": ..., "reaper": pid}`` (before or after the host's line).
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Any, List

if "--as-platform" in sys.argv:
    sys.platform = sys.argv[sys.argv.index("--as-platform") + 1]

import mcpsync  # noqa: E402 - after the platform is set
from mcpsync.transports import lifeline  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLE = [sys.executable, "-m", "mcpsync.example_server"]
MISBEHAVING = [sys.executable, os.path.join(HERE, "misbehaving_server.py")]  # test-only flags

SERVERS = [
    ("plain", EXAMPLE, "legacy"),
    ("grandchild", MISBEHAVING + ["--spawn-grandchild", "--ignore-sigterm"], "modern"),
    ("wrapper", [sys.executable, os.path.join(HERE, "stdiowrapper.py")] + MISBEHAVING + ["--spawn-grandchild"], "auto"),
]


def main() -> None:
    clients: List[Any] = [None] * len(SERVERS)

    def open_one(i: int) -> None:
        name, cmd, protocol = SERVERS[i]
        clients[i] = mcpsync.connect(cmd, name=name, protocol=protocol, timeout=60, connect_timeout=60)

    for i in range(len(SERVERS)):  # each opener thread ends before the servers are used
        t = threading.Thread(target=open_one, args=(i,))
        t.start()
        t.join()
    for c in clients:
        assert c.call_tool("echo", {"message": "alive"}).text == "alive"
    pgids = [c.transport.pid for c in clients]
    forked = None
    if "--fork-opens" in sys.argv[1:]:
        forked = os.fork()
        if forked == 0:  # the child: a host of its own, with a server and a reaper of its own
            import signal

            own = mcpsync.connect(EXAMPLE, name="child's", protocol="legacy", timeout=60, connect_timeout=60)
            assert own.call_tool("echo", {"message": "alive"}).text == "alive"
            mine = {"child": os.getpid(), "pgid": own.transport.pid, "reaper": lifeline.LIFELINE.reaper_pid}
            sys.stdout.write(json.dumps(mine) + "\n")
            sys.stdout.flush()
            while True:
                signal.pause()
    elif "--fork" in sys.argv[1:]:
        forked = os.fork()
        if forked == 0:  # the child: lives until the test kills it; it holds no server
            import signal

            while True:
                signal.pause()
    report = {
        "host": os.getpid(),
        "pgids": pgids,
        "forked": forked,
        "platform": sys.platform,
        "reaper": lifeline.LIFELINE.reaper_pid,
    }
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()
    sys.stdin.read()  # until killed (or the test closes our stdin)


if __name__ == "__main__":
    main()
