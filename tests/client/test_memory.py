"""ServerMemory on its own: the per-URL transport memory's keys, forgetting, and its checks. (Its use by clients
and managers against real servers: tests/manager/test_manager_memory.py, tests/transports/test_sse_transport.py,
tests/client/test_probe_single_flight.py.)"""

from __future__ import annotations

import threading

import pytest

import mcpsync
from mcpsync.client import ServerMemory


def test_a_url_is_remembered_by_scheme_host_path_and_query() -> None:
    m = ServerMemory()
    m.remember_transport("HTTP://Example.COM:8080/mcp?tenant=a", "sse")
    assert m.transport("http://example.com:8080/mcp?tenant=a") == "sse"  # scheme and host are case-insensitive
    assert m.transport("http://example.com:8080/MCP?tenant=a") is None  # the path is not
    assert m.transport("http://example.com:8080/mcp?tenant=b") is None  # another query, another endpoint
    m.remember_transport("http://example.com", "http")
    assert m.transport("http://example.com/") == "http"  # no path is "/"
    m.forget_transport("http://EXAMPLE.com:8080/mcp?tenant=a")
    assert m.transport("http://example.com:8080/mcp?tenant=a") is None
    assert m.transport("http://example.com/") == "http"


def test_only_the_two_remote_transports_are_remembered() -> None:
    with pytest.raises(mcpsync.ConfigError, match="'http' or 'sse'"):
        ServerMemory().remember_transport("http://h/mcp", "stdio")


def test_clear_forgets_everything_and_a_probe_under_way_still_ends() -> None:
    m = ServerMemory()
    m.remember_era(("cmd", ("a",), None), "2025-11-25")
    m.remember_transport("http://h/mcp", "sse")
    assert m.begin_probe("k") is None
    waiter = m.begin_probe("k")
    assert isinstance(waiter, threading.Event) and not waiter.is_set()
    m.clear()
    assert m.era(("cmd", ("a",), None)) is None and m.transport("http://h/mcp") is None
    m.end_probe("k")
    assert waiter.is_set()
    done = m.begin_probe(("cmd", ("a",), None))
    assert done is None  # no verdict kept any more: the caller probes
    m.remember_era(("cmd", ("a",), None), "2026-07-28")
    m.end_probe(("cmd", ("a",), None))
    kept = m.begin_probe(("cmd", ("a",), None))
    assert kept is not None and kept.is_set()  # a verdict exists: nothing to wait for
