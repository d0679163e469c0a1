"""Retries of requests safe to repeat, against the fault-injection server (tests/peers/faultserver.py) misbehaving
on purpose: 502/503/504 with and without Retry-After, resets, connections cut before or inside the headers or
body. The sleep and the jitter source are injected: nothing waits, and nothing is asserted about time."""

from __future__ import annotations

from typing import Any, Iterator, List

import pytest

import mcpsync
from mcpsync.middleware import Retry
from mcpsync.client.retry import SAFE_METHODS
from mcpsync.transports.http.remote import parse_retry_after
from tests.conftest import server_cmd

from tests.peers.faultserver import FaultServer


class Sleeps:
    def __init__(self) -> None:
        self.calls: List[float] = []

    def __call__(self, seconds: float) -> None:
        self.calls.append(seconds)


@pytest.fixture(params=["legacy", "modern"])
def server(request: pytest.FixtureRequest) -> Iterator[FaultServer]:
    with FaultServer(era=request.param, response_mode="json") as srv:
        yield srv


def posts(server: FaultServer, method: str, tool: Any = None) -> int:
    return len(
        [r for r in server.records("POST", method) if tool is None or (r.body.get("params") or {}).get("name") == tool]
    )


def policy(sleeps: Sleeps, **kw: Any) -> Retry:
    return Retry(sleep=sleeps, random=lambda: 0.0, **kw)


def test_retry_is_immutable_and_counts() -> None:
    r = Retry(total=2, backoff_factor=1.0, backoff_jitter=0.0)
    err = mcpsync.errors.HTTPStatusError(status_code=503)
    r1 = r.increment("tools/list", err)
    r2 = r1.increment("tools/list", err)
    assert r.history == () and len(r1.history) == 1 and len(r2.history) == 2
    assert [e.delay for e in r2.history] == [1.0, 2.0] and r2.history[0].status == 503
    with pytest.raises(mcpsync.errors.HTTPStatusError):
        r2.increment("tools/list", err)  # exhausted: the error itself is raised
    with pytest.raises(mcpsync.errors.HTTPStatusError):
        r.increment("tools/list", mcpsync.errors.HTTPStatusError(status_code=500))  # not in status_forcelist
    with pytest.raises(mcpsync.errors.ServerExited):
        r.increment("tools/list", mcpsync.errors.ServerExited("gone"))  # a dead stdio server is not retried
    capped = Retry(total=10, backoff_factor=1.0, backoff_max=4.0, backoff_jitter=0.0)
    for _ in range(6):
        capped = capped.increment("ping", err)
    assert [e.delay for e in capped.history] == [1.0, 2.0, 4.0, 4.0, 4.0, 4.0]
    assert Retry(backoff_jitter=1.0, random=lambda: 0.5).delay_for(err) == 0.5 + 0.5
    with pytest.raises(mcpsync.ConfigError):
        Retry(total=-1)


def test_which_methods_and_tools_may_be_retried() -> None:
    r = Retry()
    assert all(r.allows(m) for m in SAFE_METHODS)
    echo = mcpsync.Tool.from_dict({"name": "echo", "annotations": {"idempotentHint": True}})
    add = mcpsync.Tool.from_dict({"name": "add"})
    assert not r.allows("tools/call", echo)  # never without the opt-in
    assert Retry(idempotent_tools=True).allows("tools/call", echo)
    assert not Retry(idempotent_tools=True).allows("tools/call", add)
    assert not Retry(idempotent_tools=True).allows("tools/call", None)
    assert not r.allows("resources/subscribe") and not r.allows("logging/setLevel")


def test_parse_retry_after() -> None:
    assert parse_retry_after("7") == 7.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412470.0) == 10.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=1445412490.0) == 0.0
    for bad in (None, "", "soon", "-3", "1.5"):
        assert parse_retry_after(bad) is None


def test_503_with_retry_after_is_retried_after_that_wait(server: FaultServer) -> None:
    sleeps = Sleeps()
    with mcpsync.connect(server.url, middleware=[policy(sleeps)]) as c:
        rule = server.inject("status", rpc="tools/list", times=2, status=503, headers={"Retry-After": "3"})
        assert "echo" in [t.name for t in c.list_tools()]
    assert sleeps.calls == [3.0, 3.0] and rule.hits == 2
    assert posts(server, "tools/list") == 3


def test_502_and_504_back_off_exponentially(server: FaultServer) -> None:
    sleeps = Sleeps()
    with mcpsync.connect(server.url, middleware=[policy(sleeps, backoff_factor=0.5)]) as c:
        server.inject("status", rpc="resources/read", status=502)
        server.inject("status", rpc="resources/read", status=504)
        assert c.read_resource("example://hello").contents
    assert sleeps.calls == [0.5, 1.0]
    assert posts(server, "resources/read") == 3


def test_exhausted_retries_raise_the_last_error(server: FaultServer) -> None:
    sleeps = Sleeps()
    with mcpsync.connect(server.url, middleware=[policy(sleeps, total=1)]) as c:
        rule = server.inject("status", rpc="prompts/list", times=3, status=503)
        with pytest.raises(mcpsync.errors.HTTPStatusError) as info:
            c.list_prompts()
        assert info.value.status_code == 503 and rule.hits == 2
        server.clear()
        assert c.list_prompts()  # the client stays usable
    assert sleeps.calls == [0.5]


def test_a_retry_after_beyond_the_cap_is_not_waited_for(server: FaultServer) -> None:
    sleeps = Sleeps()
    with mcpsync.connect(server.url, middleware=[policy(sleeps, max_retry_after=10)]) as c:
        server.inject("status", rpc="tools/list", status=503, headers={"Retry-After": "3600"})
        with pytest.raises(mcpsync.errors.HTTPStatusError) as info:
            c.list_tools()
        assert info.value.retry_after == 3600.0
    assert sleeps.calls == []


def test_500_is_not_retried(server: FaultServer) -> None:
    sleeps = Sleeps()
    with mcpsync.connect(server.url, middleware=[policy(sleeps)]) as c:
        server.inject("status", rpc="tools/list", status=500)
        with pytest.raises(mcpsync.errors.HTTPStatusError):
            c.list_tools()
    assert sleeps.calls == [] and posts(server, "tools/list") == 1


@pytest.mark.parametrize("kind", ["reset", "reset_headers", "close_before_body"])
def test_broken_connections_are_retried(server: FaultServer, kind: str) -> None:
    sleeps = Sleeps()
    with mcpsync.connect(server.url, middleware=[policy(sleeps)]) as c:
        rule = server.inject(kind, rpc="tools/list")
        assert "echo" in [t.name for t in c.list_tools()]
    assert rule.hits == 1 and len(sleeps.calls) == 1


def test_tools_call_is_never_retried_without_the_opt_in(server: FaultServer) -> None:
    sleeps = Sleeps()
    with mcpsync.connect(server.url, middleware=[policy(sleeps)]) as c:
        c.list_tools()  # echo is listed as idempotentHint: true
        server.inject("status", rpc="tools/call", status=503)
        with pytest.raises(mcpsync.errors.HTTPStatusError):
            c.call_tool("echo", {"message": "x"})
        server.inject("reset", rpc="tools/call")
        with pytest.raises(mcpsync.TransportError):
            c.call_tool("echo", {"message": "y"})
    assert sleeps.calls == [] and posts(server, "tools/call", "echo") == 2  # each sent once, never again


def test_idempotent_tools_are_retried_only_with_the_opt_in(server: FaultServer) -> None:
    sleeps = Sleeps()
    with mcpsync.connect(server.url, middleware=[policy(sleeps, idempotent_tools=True)]) as c:
        c.list_tools()
        server.inject("status", rpc="tools/call", status=503)
        assert c.call_tool("echo", {"message": "x"}).text == "x"  # idempotentHint: retried
        server.inject("status", rpc="tools/call", status=503)
        with pytest.raises(mcpsync.errors.HTTPStatusError):
            c.call_tool("add", {"a": 1, "b": 2})  # no idempotentHint: never retried
    assert sleeps.calls == [0.5]
    assert posts(server, "tools/call", "echo") == 2 and posts(server, "tools/call", "add") == 1


def test_stdio_crash_is_not_retried() -> None:
    sleeps = Sleeps()
    with mcpsync.connect(server_cmd(), middleware=[policy(sleeps)]) as c:
        with pytest.raises(mcpsync.errors.ConnectionClosed):
            c.call_tool("crash", {"code": 3})
        with pytest.raises(mcpsync.errors.ConnectionClosed):
            c.list_tools()  # the pipe is dead: no point waiting and retrying
    assert sleeps.calls == []
