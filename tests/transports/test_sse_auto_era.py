"""Issue 9 defect 14: ``protocol="auto"`` over legacy HTTP+SSE tries 2026-07-28 like every transport.

The ``server/discover`` probe goes out first (bounded by ``probe_timeout``); a server that answers it is
used in the 2026-07-28 era, one that refuses or stays silent gets the ``initialize`` handshake. Against
a real local HTTP+SSE server (tests/peers/httpserver.py) in each case.
"""

from __future__ import annotations

from typing import Any, List, Optional


import mcpsync

from tests.peers.httpserver import MCPTestServer
from mcpsync.client import ClientOptions, HTTPOptions



def _methods(srv: MCPTestServer) -> List[Optional[str]]:
    out: List[Optional[str]] = []
    for r in srv.records("POST"):
        body: Any = r.body
        out.append(body.get("method") if isinstance(body, dict) else None)
    return out


def test_auto_over_sse_speaks_2026_07_28_when_the_server_does() -> None:
    with MCPTestServer(era="auto") as srv:
        with mcpsync.connect(srv.sse_url(), http=HTTPOptions(transport="sse"), timeout=20) as c:
            assert c.transport_kind == "sse"
            assert c.era == "modern" and c.protocol_version == "2026-07-28"
            assert c.call_tool("echo", {"message": "m"}).text == "m"
        methods = _methods(srv)
        assert methods[0] == "server/discover" and "initialize" not in methods


def test_auto_over_sse_falls_back_to_the_handshake() -> None:
    with MCPTestServer(era="legacy") as srv:
        with mcpsync.connect(srv.sse_url(), http=HTTPOptions(transport="sse"), timeout=20) as c:
            assert c.era == "legacy"
            assert c.call_tool("echo", {"message": "l"}).text == "l"
        assert _methods(srv)[:2] == ["server/discover", "initialize"]


def test_auto_over_sse_silent_probe_is_bounded_then_falls_back() -> None:
    with MCPTestServer(era="auto", discover="never") as srv:
        c = mcpsync.Client(
            srv.sse_url(),
            http=HTTPOptions(transport="sse"),
            options=ClientOptions(probe_timeout=0.5),
            timeout=20,
            connect_timeout=30,
        )
        with c:
            assert c.era == "legacy"
            assert c.call_tool("echo", {"message": "s"}).text == "s"
        # the probe timed out (probe_timeout), was cancelled, and the handshake followed
        assert _methods(srv)[:3] == ["server/discover", "notifications/cancelled", "initialize"]


def test_legacy_and_modern_modes_over_sse() -> None:
    with MCPTestServer(era="auto") as srv:
        with mcpsync.connect(srv.sse_url(), http=HTTPOptions(transport="sse"), protocol="legacy", timeout=20) as c:
            assert c.era == "legacy"
        with mcpsync.connect(srv.sse_url(), http=HTTPOptions(transport="sse"), protocol="modern", timeout=20) as c:
            assert c.era == "modern"
