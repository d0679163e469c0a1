"""Every registry call has one overall deadline: a registry that trickles its answer (a byte at a time, so no
single read ever times out) cannot hold ``search()``, ``get()`` or a bundle download past its timeout.

The peer is the local registry (tests/peers/registryserver.py) with ``trickle`` set: it really sends every body a byte
per interval over a real socket; the client gives up when its deadline passes and the registry sees it hang up.
"""

from __future__ import annotations

import hashlib
import threading
from typing import List

import pytest

from mcpsync.registry import RegistryClient, RegistryError, RegistryUnavailable
from mcpsync.registry.deadline import Deadline, read_body
from mcpsync.registry.mcpb import download

from tests.conftest import wait_for
from tests.peers.registryserver import RegistryServer, entry, fixture


@pytest.fixture
def trickling():
    servers = [entry(fixture("npm-everything.json")), entry(fixture("remote-tenant.json"))]
    with RegistryServer(servers) as server:
        server.trickle = 0.05  # a page of ~2 KB takes ~100 s; every single read gets a byte within 0.05 s
        yield server


@pytest.mark.parametrize("call", ["search", "get", "versions"])
def test_a_trickling_registry_cannot_hold_a_call_past_its_timeout(trickling: RegistryServer, call: str) -> None:
    with RegistryClient(trickling.url, cache_dir=False, timeout=1) as client:
        with pytest.raises(RegistryUnavailable, match="took longer than its timeout of 1s") as info:
            if call == "search":
                client.search("acme")
            elif call == "get":
                client.get("io.github.acme/tenant-remote")
            else:
                client.versions("io.github.acme/tenant-remote")
    assert isinstance(info.value, RegistryError)
    assert "the bound for the whole call" in info.value.message
    assert wait_for(trickling.trickle_cut.is_set)  # the client hung up mid-answer: the answer never completed


@pytest.mark.parametrize("call", ["search", "get"])
def test_trickled_headers_cannot_hold_a_call_past_its_timeout(trickling: RegistryServer, call: str) -> None:
    trickling.trickle, trickling.trickle_headers = 0.05, True  # 4 KB of headers: ~200 s, a byte every 0.05 s
    with RegistryClient(trickling.url, cache_dir=False, timeout=1) as client:
        with pytest.raises(RegistryUnavailable, match="took longer than its timeout of 1s"):
            if call == "search":
                client.search("acme")
            else:
                client.get("io.github.acme/tenant-remote")
    assert wait_for(trickling.trickle_cut.is_set)
    assert not [t for t in threading.enumerate() if t.name == "mcpsync-registry-deadline"]


def test_a_bundle_with_trickled_headers_ends_at_its_total_timeout() -> None:
    data = b"z" * 100
    with RegistryServer([]) as server:
        server.files["slow.mcpb"] = data
        server.trickle, server.trickle_headers = 0.05, True
        with pytest.raises(RegistryUnavailable, match="downloading the bundle took longer than its timeout"):
            download(server.url + "/bundles/slow.mcpb", hashlib.sha256(data).hexdigest(), timeout=1,
                     total_timeout=1)
        assert wait_for(server.trickle_cut.is_set)


def test_the_same_registry_answers_when_it_stops_trickling(trickling: RegistryServer) -> None:
    with RegistryClient(trickling.url, cache_dir=False, timeout=1) as client:
        with pytest.raises(RegistryUnavailable):
            client.search("acme")
        trickling.trickle = None
        trickling.trickle_cut.clear()
        assert [e.name for e in client.search("acme")] == ["io.github.acme/tenant-remote"]


def test_a_trickled_bundle_download_ends_at_its_total_timeout(tmp_path) -> None:
    data = b"x" * 4096
    with RegistryServer([]) as server:
        server.files["slow.mcpb"] = data
        server.trickle = 0.05
        with pytest.raises(RegistryUnavailable, match="downloading the bundle took longer than its timeout"):
            download(server.url + "/bundles/slow.mcpb", hashlib.sha256(data).hexdigest(), timeout=1,
                     total_timeout=1)
        assert wait_for(server.trickle_cut.is_set)
        server.trickle = None
        path = download(server.url + "/bundles/slow.mcpb", hashlib.sha256(data).hexdigest(), timeout=5)
        with open(path, "rb") as fh:
            assert fh.read() == data


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class _Stream:
    """A response whose every read returns one byte and advances the clock (no socket, no sleep)."""

    def __init__(self, clock: _Clock, size: int, step: float) -> None:
        self.clock, self.left, self.step = clock, size, step
        self.reads: List[float] = []

    def read1(self, amt: int, decode_content: bool = True) -> bytes:
        self.reads.append(self.clock.now)
        self.clock.now += self.step
        if self.left <= 0:
            return b""
        self.left -= 1
        return b"y"


def test_the_deadline_is_checked_between_reads_and_clips_each_wait() -> None:
    clock = _Clock()
    deadline = Deadline(2.0, "the test call", clock=clock)
    assert deadline.clip(30.0) == 2.0 and deadline.clip(0.5) == 0.5
    stream = _Stream(clock, size=100, step=0.3)
    got = b""
    with pytest.raises(RegistryUnavailable, match="the test call took longer than its timeout of 2s"):
        for chunk in read_body(stream, deadline, 30.0):
            got += chunk
    assert len(stream.reads) == 7 and got == b"y" * 7  # reads at 0, 0.3, ... 1.8; the one at 2.1 never starts
    assert deadline.expired()
    small = Deadline(10.0, clock=clock)
    with pytest.raises(RegistryUnavailable, match="larger than 5 bytes"):
        list(read_body(_Stream(clock, size=100, step=0.0), small, 1.0, max_bytes=5))
