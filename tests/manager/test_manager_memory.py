"""A manager's clients share one ServerMemory (``manager.memory``): a fleet connecting to one server probes its
protocol era once and learns its remote transport once. Plain clients each keep a memory of their own, and
nothing is kept at module level. Real local HTTP servers (tests/peers/httpserver.py) count what they see."""

from __future__ import annotations

import pytest

import mcpsync
from mcpsync.client import ClientOptions, ServerMemory
from mcpsync.manager.manager import Manager
from tests.peers.httpserver import MCPTestServer


def test_a_fleet_probes_a_handshake_only_server_once() -> None:
    with MCPTestServer(era="legacy") as srv:
        config = {name: {"url": srv.url, "oauth": False} for name in ("a", "b", "c")}
        with Manager(config) as mgr:  # the three connect at the same time, on threads of their own
            clients = mgr.clients()
            assert sorted(clients) == ["a", "b", "c"]
            assert all(c.memory is mgr.memory for c in clients.values())
            assert all(c.era == "legacy" for c in clients.values())
            assert mgr.call_tool("echo", {"message": "hi"}, server="b").text == "hi"
        # one probe for the fleet: the others waited for its verdict (single flight) or found it kept
        assert len(srv.records("POST", rpc="server/discover")) == 1
        assert len(srv.records("POST", rpc="initialize")) == 3


def test_clients_without_a_shared_memory_probe_each() -> None:
    with MCPTestServer(era="legacy") as srv:
        for _ in range(2):
            with mcpsync.connect(srv.url, timeout=20) as c:
                assert c.era == "legacy"
        assert len(srv.records("POST", rpc="server/discover")) == 2


def test_the_fallback_to_legacy_sse_is_learned_once_per_manager() -> None:
    with MCPTestServer(era="legacy") as srv:
        url = srv.sse_url()
        config = {name: {"url": url, "oauth": False} for name in ("first", "second")}
        with Manager(config, lazy=True) as mgr:
            assert mgr.client("first").transport_kind == "sse"  # Streamable HTTP refused (405), then SSE
            assert mgr.memory.transport(url) == "sse"
            tried = len([r for r in srv.records("POST") if r.path == "/sse"])
            assert tried >= 1
            assert mgr.client("second").transport_kind == "sse"
            # the second client went to legacy SSE directly: no new Streamable HTTP POST to the SSE URL
            assert len([r for r in srv.records("POST") if r.path == "/sse"]) == tried


def test_a_memory_given_to_the_manager_is_the_one_its_clients_share() -> None:
    memory = ServerMemory()
    with MCPTestServer(era="legacy") as srv:
        with Manager({"s": {"url": srv.url, "oauth": False}}, client_options={"memory": memory}) as mgr:
            assert mgr.memory is memory and mgr.client("s").memory is memory
        # a later client given the same memory skips the probe
        before = len(srv.records("POST", rpc="server/discover"))
        with mcpsync.connect(srv.url, options=ClientOptions(memory=memory), timeout=20) as c:
            assert c.era == "legacy"
        assert len(srv.records("POST", rpc="server/discover")) == before


def test_the_memory_option_is_checked() -> None:
    with pytest.raises(mcpsync.ConfigError, match="ServerMemory"):
        ClientOptions(memory={})  # type: ignore[arg-type]
    assert ClientOptions(memory=ServerMemory()) == ClientOptions()  # not part of the options' equality
    one, other = mcpsync.Client("http://127.0.0.1:1/mcp"), mcpsync.Client("http://127.0.0.1:1/mcp")
    try:
        assert isinstance(one.memory, ServerMemory) and one.memory is not other.memory  # each its own
    finally:
        one.close()
        other.close()
