"""Connections to the same server started together probe its era once, when they share a ServerMemory
(single flight: a Manager's clients share its memory).

The probing connection is held inside its ``server/discover`` (threading.Event), so the others are
known to connect while the probe is under way; they must send no probe of their own, start their
handshake as soon as the probe says "handshake era", and probe themselves when the probe failed.
"""

from __future__ import annotations

import threading
from typing import Any, Dict, List, Optional

import pytest

from mcpsync.client.memory import ServerMemory
from mcpsync.client.negotiate import Negotiator
from mcpsync.errors import ConnectionClosed, RemoteError

KEY = ("cmd", ("single-flight-test-server",), None)


class _Transport:
    kind = "stdio"

    def set_protocol(self, version: str, era: str) -> None:
        self.era = era


class _Session:
    closed = False

    def __init__(self) -> None:
        self.transport = _Transport()

    def notify(self, method: str, params: Optional[Dict[str, Any]] = None) -> None:
        pass


class _Server:
    """Answers like a handshake-only server; the first discover can be held, or made to fail."""

    def __init__(self, hold_first_probe: bool, fail_first_probe: bool = False) -> None:
        self.sent: Dict[str, List[str]] = {}
        self.in_probe = threading.Event()
        self.release = threading.Event()
        self.hold = hold_first_probe
        self.fail = fail_first_probe
        self.lock = threading.Lock()

    def send_for(self, who: str) -> Any:
        def send(session: Any, method: str, params: Dict[str, Any], timeout: Optional[float]) -> Any:
            with self.lock:
                self.sent.setdefault(who, []).append(method)
                first = self.hold
                self.hold = False
            if method == "server/discover":
                if first:
                    self.in_probe.set()
                    assert self.release.wait(10)
                    if self.fail:  # the server went away: a real session is closed before the call fails
                        session.closed = True
                        raise ConnectionClosed("the server went away during the probe")
                raise RemoteError(-32601, "Method not found")
            assert method == "initialize"
            return {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}

        return send


def _negotiator(server: _Server, who: str, memory: ServerMemory) -> Negotiator:
    return Negotiator(
        name=who,
        protocol="auto",
        probe_timeout=10.0,
        connect_timeout=30.0,
        client_info={"name": "t", "version": "1"},
        log_level=None,
        cache_key=KEY,
        capabilities=lambda modern: {},
        envelope=lambda version: {"io.modelcontextprotocol/protocolVersion": version},
        send=server.send_for(who),
        memory=memory,
    )


def test_concurrent_connections_wait_for_one_probe() -> None:
    server = _Server(hold_first_probe=True)
    memory = ServerMemory()
    results: Dict[str, Any] = {}

    def connect(who: str) -> None:
        results[who] = _negotiator(server, who, memory).negotiate(_Session())  # type: ignore[arg-type]

    first = threading.Thread(target=connect, args=("first",))
    first.start()
    assert server.in_probe.wait(10)
    others = [threading.Thread(target=connect, args=("other%d" % i,)) for i in range(5)]
    for t in others:
        t.start()
    assert all("other%d" % i not in server.sent for i in range(5))  # nobody else probes, nor starts early
    server.release.set()
    for t in [first] + others:
        t.join(10)
        assert not t.is_alive()
    assert server.sent["first"] == ["server/discover", "initialize"]
    for i in range(5):
        assert server.sent["other%d" % i] == ["initialize"]
        assert results["other%d" % i].era == "legacy"
    assert results["first"].era == "legacy"


def test_a_failed_probe_lets_the_waiters_probe_themselves() -> None:
    server = _Server(hold_first_probe=True, fail_first_probe=True)
    memory = ServerMemory()
    errors: Dict[str, BaseException] = {}
    results: Dict[str, Any] = {}

    def connect(who: str) -> None:
        try:
            results[who] = _negotiator(server, who, memory).negotiate(_Session())  # type: ignore[arg-type]
        except BaseException as exc:  # noqa: BLE001 - checked below
            errors[who] = exc

    first = threading.Thread(target=connect, args=("first",))
    first.start()
    assert server.in_probe.wait(10)
    waiter = threading.Thread(target=connect, args=("waiter",))
    waiter.start()
    server.release.set()
    for t in (first, waiter):
        t.join(10)
        assert not t.is_alive()
    assert isinstance(errors["first"], ConnectionClosed)
    assert server.sent["waiter"] == ["server/discover", "initialize"]
    assert results["waiter"].era == "legacy"


def test_connections_with_memories_of_their_own_probe_each() -> None:
    """Nothing is shared behind the user's back: a connection with another memory does not wait for the probe
    under way, it probes itself (held probe or not)."""
    server = _Server(hold_first_probe=True)
    results: Dict[str, Any] = {}

    def connect(who: str) -> None:
        results[who] = _negotiator(server, who, ServerMemory()).negotiate(_Session())  # type: ignore[arg-type]

    first = threading.Thread(target=connect, args=("first",))
    first.start()
    assert server.in_probe.wait(10)
    connect("other")  # not held: the first connection's probe is still under way
    assert server.sent["other"] == ["server/discover", "initialize"]
    server.release.set()
    first.join(10)
    assert not first.is_alive()
    assert results["first"].era == results["other"].era == "legacy"


def test_a_fork_child_does_not_wait_for_a_probe_of_the_parent() -> None:
    """A probe under way in the parent at fork time has no thread in the child: the child probes itself; the
    verdicts learned before the fork carry over."""
    import os

    if not hasattr(os, "fork"):
        pytest.skip("no fork on this platform")
    memory = ServerMemory()
    memory.remember_era(("known",), "2025-11-25")
    assert memory.begin_probe(KEY) is None  # "a connection of the parent probes KEY"
    pid = os.fork()
    if pid == 0:  # the child: report through the exit status only
        ok = memory.begin_probe(KEY) is None and memory.era(("known",)) == "2025-11-25"
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    memory.end_probe(KEY)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    assert memory.begin_probe(KEY) is None  # the parent's probe ended: the next caller probes again
