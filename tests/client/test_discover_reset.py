"""Issue 18 defect 6b: a server that resets (or cuts) the ``server/discover`` probe falls back to ``initialize``.

The same as a 500 does. A real local server (tests/peers/faultserver.py) misbehaves on the probe only.
"""

from __future__ import annotations

from typing import Iterator

import pytest

import mcpsync
from mcpsync.wire import protocol as P
from tests.peers.faultserver import FaultServer
from mcpsync.client import HTTPOptions


@pytest.fixture(params=["sse", "json"])
def srv(request: pytest.FixtureRequest) -> Iterator[FaultServer]:
    server = FaultServer(era="auto", response_mode=request.param)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.mark.parametrize("kind", ["reset", "reset_headers", "close_before_body", "close_during_body"])
def test_a_cut_discover_probe_falls_back_to_initialize(srv: FaultServer, kind: str) -> None:
    srv.inject(kind, rpc="server/discover", times=None)
    with mcpsync.Client(srv.url, protocol="auto", connect_timeout=30, timeout=30) as c:
        assert c.protocol_version in P.HANDSHAKE_VERSIONS  # the handshake era, negotiated by initialize
        assert c.call_tool("echo", {"message": "hi"}).text == "hi"
    methods = [m.get("method") for m in srv.rules[0].messages]
    assert methods and set(methods) == {"server/discover"}


def test_a_cut_probe_in_strict_modern_mode_still_fails(srv: FaultServer) -> None:
    """protocol="modern" asks for 2026-07-28 only: a cut probe is that open's error, never a silent downgrade."""
    srv.inject("reset", rpc="server/discover", times=None)
    with pytest.raises(mcpsync.TransportError):
        mcpsync.Client(srv.url, protocol="modern", connect_timeout=30).open()


@pytest.mark.parametrize("kind", ["reset", "reset_headers"])
def test_a_reset_discover_post_over_legacy_sse_falls_back_too(kind: str) -> None:
    """Legacy HTTP+SSE (the probe's POST is reset; the event stream stays up): the same fallback."""
    server = FaultServer(era="auto")
    server.start()
    try:
        server.inject(kind, rpc="server/discover", times=None)
        with mcpsync.connect(
            server.sse_url(), http=HTTPOptions(transport="sse"), protocol="auto", timeout=30, connect_timeout=30
        ) as c:
            assert c.transport_kind == "sse"
            assert c.protocol_version in P.HANDSHAKE_VERSIONS
            assert c.call_tool("echo", {"message": "sse"}).text == "sse"
    finally:
        server.stop()
