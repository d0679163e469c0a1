"""The handshake-era connect waits for the server's answer to the GET stream (conformance: elicitation
defaults). A server may send requests that belong to no client request (an elicitation from a tool's own
work, as the official TypeScript server does) only on the GET stream, and drops them while that stream is
not open yet: so connect() returns only once the GET has been answered (or refused, or failed)."""

from __future__ import annotations

import threading
from typing import Any, List

import mcpsync

from tests.peers.httpserver import MCPTestServer
from mcpsync.client import HTTPOptions


def test_connect_waits_until_the_get_stream_is_answered() -> None:
    with MCPTestServer(era="legacy") as srv:
        seen, gate, done = threading.Event(), threading.Event(), threading.Event()
        srv.faults.get_seen, srv.faults.get_gate = seen, gate
        clients: List[Any] = []

        def run() -> None:
            clients.append(mcpsync.connect(srv.url, protocol="legacy", http=HTTPOptions(transport="http")))
            done.set()

        t = threading.Thread(target=run, name="test-connect", daemon=True)
        t.start()
        try:
            assert seen.wait(20), "the client never opened its GET stream"
            # the GET is held at the server: the connect has not completed
            assert not done.is_set()
        finally:
            gate.set()
        t.join(20)
        assert done.is_set()
        with clients[0] as client:
            assert client.call_tool("echo", {"message": "hi"}).text == "hi"


def test_a_refused_get_stream_does_not_delay_the_connect() -> None:
    with MCPTestServer(era="legacy") as srv:
        srv.faults.get_status = 405
        with mcpsync.connect(srv.url, protocol="legacy", http=HTTPOptions(transport="http")) as client:
            assert client.call_tool("echo", {"message": "hi"}).text == "hi"
        assert any(r.method == "GET" for r in srv.log)
