"""Keep-alive, server pings, use from inside a running event loop and from worker threads."""

from __future__ import annotations

import asyncio
import concurrent.futures

import mcpsync

from tests.conftest import server_cmd, wait_for
from mcpsync.client import ClientOptions


def test_keepalive_pings_in_the_handshake_era() -> None:
    with mcpsync.connect(server_cmd("--era", "legacy"), options=ClientOptions(keepalive=0.1)) as c:
        start = c.session._ids.next()  # noqa: SLF001
        assert wait_for(lambda: c.session._ids.next() > start + 3, 10)  # noqa: SLF001
        assert c.call_tool("echo", {"message": "alive"}).text == "alive"


def test_server_pings_are_answered() -> None:
    with mcpsync.connect(server_cmd("--era", "legacy", "--ping", "0.05")) as c:
        for i in range(5):
            assert c.call_tool("echo", {"message": str(i)}).text == str(i)


def test_sync_api_inside_a_running_event_loop() -> None:
    async def main() -> str:
        # a blocking call from a coroutine (Jupyter, FastAPI handler): no asyncio.run anywhere in mcpsync
        with mcpsync.connect(server_cmd()) as c:
            return c.call_tool("echo", {"message": "in loop"}).text

    assert asyncio.run(main()) == "in loop"


def test_same_process_and_session_from_worker_threads() -> None:
    with mcpsync.connect(server_cmd("--era", "legacy")) as c:
        pid = c.call_tool("pid").text
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            pids = list(pool.map(lambda _: c.call_tool("pid").text, range(16)))
        assert set(pids) == {pid}
