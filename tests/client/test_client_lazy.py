"""Issue 19 item 5: a client that is not open says so (ClientClosed, never a misleading CapabilityError), and
``Client(..., options=ClientOptions(lazy=True))`` opens on first use, once, however many threads race that first
use (held at a barrier).

Everything runs against the bundled example server started for real (stdio) and behind the local HTTP server.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any, Callable, Dict, List

import pytest

import mcpsync
from mcpsync import CapabilityError, ClientClosed, MCPError

from tests.conftest import server_cmd
from mcpsync.client import ClientOptions, StdioOptions
from mcpsync.skills import list_skills

BOUND = 60.0  # hang guard, never a measurement

#: Every capability-gated (or era-dependent) method, called the way a user calls it.
USES: Dict[str, Callable[[mcpsync.Client], Any]] = {
    "call_tool": lambda c: c.call_tool("echo", {"message": "x"}),
    "call_tool_async": lambda c: c.call_tool_async("echo", {"message": "x"}),
    "list_tools": lambda c: c.list_tools(),
    "list_tools_page": lambda c: c.list_tools_page(),
    "list_prompts": lambda c: c.list_prompts(),
    "list_resources": lambda c: c.list_resources(),
    "list_resource_templates": lambda c: c.list_resource_templates(),
    "get_prompt": lambda c: c.get_prompt("greet", {"name": "x"}),
    "read_resource": lambda c: c.read_resource("example://hello"),
    "subscribe_resource": lambda c: c.subscribe_resource("example://hello"),
    "unsubscribe_resource": lambda c: c.unsubscribe_resource("example://hello"),
    "complete": lambda c: c.complete(mcpsync.client.prompt_ref("greet"), "name", "a"),
    "set_logging_level": lambda c: c.set_logging_level("info"),
    "list_skills": lambda c: list_skills(c),
    "ping": lambda c: c.ping(),
    "request": lambda c: c.request("tools/list"),
    "notify": lambda c: c.notify("notifications/roots/list_changed"),
    "listen": lambda c: c.listen(tools=True),
    "start_task": lambda c: mcpsync.tasks.start_task(c, "slow", {"seconds": 0.01}),
    "resume_task": lambda c: mcpsync.tasks.resume_task(c, "t1"),
    "transport": lambda c: c.transport,
}


@pytest.mark.parametrize("use", sorted(USES))
def test_a_client_not_yet_open_raises_client_closed_not_capability_error(use: str) -> None:
    c = mcpsync.Client(server_cmd())
    with pytest.raises(ClientClosed, match="not open") as info:
        USES[use](c)
    assert not isinstance(info.value, CapabilityError)
    assert "lazy=True" in str(info.value)
    c.close()


@pytest.mark.parametrize("use", sorted(USES))
def test_a_closed_client_raises_client_closed_not_capability_error(use: str) -> None:
    c = mcpsync.connect(server_cmd())
    c.close()
    with pytest.raises(ClientClosed, match="closed"):
        USES[use](c)


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_lazy_client_opens_on_its_first_use(era: str) -> None:
    c = mcpsync.Client(server_cmd("--era", era), options=ClientOptions(lazy=True))
    try:
        assert not c.connected and c.era is None  # nothing started by the constructor
        c.ping()  # the era is decided by the open, before ping chooses its method
        assert c.connected and c.era == era
        assert c.call_tool("echo", {"message": "hi"}).text == "hi"
    finally:
        c.close()
    with pytest.raises(ClientClosed):
        c.call_tool("echo", {"message": "after close"})  # closed by the user: never reopened


@pytest.mark.parametrize(
    "first", ["call_tool", "list_tools", "read_resource", "list_skills", "request", "start_task", "transport"]
)
def test_every_kind_of_first_use_opens_a_lazy_client(first: str) -> None:
    with mcpsync.Client(
        server_cmd(), options=ClientOptions(lazy=True)
    ) as c:  # `with` opens too; here: first use decides
        pass
    c = mcpsync.Client(server_cmd(), options=ClientOptions(lazy=True))
    try:
        try:
            USES[first](c)
        except CapabilityError:
            pass  # the example server may not declare it: but the client did open to find that out
        assert c.connected
    finally:
        c.close()


def test_threads_racing_the_first_use_open_the_lazy_client_once() -> None:
    c = mcpsync.Client(server_cmd(), options=ClientOptions(lazy=True))
    n = 8
    barrier = threading.Barrier(n)
    pids: List[str] = []
    errors: List[BaseException] = []

    def use() -> None:
        try:
            barrier.wait(BOUND)
            pids.append(c.call_tool("pid").text)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=use, name="racer-%d" % i) for i in range(n)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(BOUND)
        assert not errors, errors
        assert len(pids) == n and len(set(pids)) == 1  # one server process served every thread
        assert c._open_attempts == 1  # noqa: SLF001 - exactly one open ran
    finally:
        c.close()


def test_a_failed_lazy_open_is_reported_and_the_next_use_tries_again(tmp_path: Any) -> None:
    """The server is down at the first request of a web app; the next request finds it up."""
    flag = tmp_path / "server-is-up"
    script = "import os, sys, runpy; os.path.exists(%r) or sys.exit(3); sys.argv = ['x']; " % str(flag)
    script += "runpy.run_module('mcpsync.example_server', run_name='__main__')"
    c = mcpsync.Client(
        [sys.executable, "-c", script],
        stdio=StdioOptions(env=dict(os.environ)),
        options=ClientOptions(lazy=True),
        connect_timeout=30,
    )
    try:
        with pytest.raises(MCPError) as info:
            c.call_tool("echo", {"message": "x"})
        assert not isinstance(info.value, (ClientClosed, CapabilityError)), info.value
        flag.write_text("up")
        assert c.call_tool("echo", {"message": "second"}).text == "second"
        assert c._open_attempts == 2  # noqa: SLF001
    finally:
        c.close()


def test_racing_threads_share_one_failed_open() -> None:
    """Callers waiting for an open that fails get its error; they do not each start an open of their own."""
    c = mcpsync.Client(
        [sys.executable, "-c", "import sys; sys.exit(3)"], options=ClientOptions(lazy=True), connect_timeout=30
    )
    n = 6
    barrier = threading.Barrier(n)
    errors: List[BaseException] = []

    def use() -> None:
        barrier.wait(BOUND)
        try:
            c.call_tool("echo", {"message": "x"})
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=use) for _ in range(n)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(BOUND)
        assert len(errors) == n and all(isinstance(e, MCPError) for e in errors)
        assert not any(isinstance(e, (ClientClosed, CapabilityError)) for e in errors)
        assert c._open_attempts <= n  # noqa: SLF001 - never more opens than callers
    finally:
        c.close()


def test_a_lazy_http_client(era: str) -> None:
    from tests.peers.httpserver import MCPTestServer

    with MCPTestServer(era=era) as srv:
        c = mcpsync.Client(srv.url, options=ClientOptions(lazy=True), timeout=30)
        try:
            assert srv.records("POST") == []  # nothing sent before the first use
            assert c.call_tool("echo", {"message": "over http"}).text == "over http"
        finally:
            c.close()


def test_a_module_level_lazy_client_in_a_flask_app() -> None:
    """The web-app shape: a client made at import time, first used by concurrent requests (Flask's own
    request handling through its test client, from several threads at once)."""
    flask = pytest.importorskip("flask")
    client = mcpsync.Client(server_cmd(), options=ClientOptions(lazy=True))
    app = flask.Flask("lazy_app")

    @app.route("/echo/<text>")
    def echo(text: str) -> str:
        return client.call_tool("echo", {"message": text}).text

    n = 6
    barrier = threading.Barrier(n)
    answers: Dict[int, str] = {}

    def request(i: int) -> None:
        barrier.wait(BOUND)
        with app.test_client() as http:
            answers[i] = http.get("/echo/r%d" % i).get_data(as_text=True)

    threads = [threading.Thread(target=request, args=(i,)) for i in range(n)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(BOUND)
        assert answers == {i: "r%d" % i for i in range(n)}
        assert client._open_attempts == 1  # noqa: SLF001
    finally:
        client.close()


def test_lazy_and_after_fork_are_checked() -> None:
    with pytest.raises(mcpsync.ConfigError, match="after_fork"):
        mcpsync.Client(server_cmd(), options=ClientOptions(after_fork="ignore"))  # type: ignore[arg-type]
