"""Interop over HTTP: server-everything (SSE and Streamable HTTP) and the official Python SDK's server
(Streamable HTTP in both eras, JSON answers, legacy SSE).

The peers are found by tests/peers/interop_peers.py (``MCPSYNC_EVERYTHING_BIN``, ``.ci/node``, PATH; the ``mcp``
package). A missing peer skips with the reason, except under ``CI=true`` where it fails.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from typing import Iterator, List, Tuple

import pytest

import mcpsync

from tests.peers.authserver import free_port
from tests.peers.interop_peers import PEERS, require_peer
from mcpsync.client import HTTPOptions

pytestmark = pytest.mark.interop

MB = 1024 * 1024


def _free_port() -> int:
    """A port for a peer that must be told its port: chosen below the ephemeral range (authserver.free_port),
    so the kernel does not hand it to some other process's outgoing connection or port-0 bind (on a shared
    CI machine) between our check and the peer's bind; _wait_listening would then find the wrong listener."""
    return free_port()


def _wait_listening(port: int, proc: "subprocess.Popen[bytes]", timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("the peer exited with code %s before listening" % proc.returncode)
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the peer did not listen on port %d within %ss" % (port, timeout))


def _spawn(cmd: List[str], port: int, log_path: str, env: "dict[str, str] | None" = None) -> "subprocess.Popen[bytes]":
    log = open(log_path, "wb")
    try:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, env=env)
    finally:
        log.close()
    try:
        _wait_listening(port, proc)
    except BaseException:
        _stop(proc)
        with open(log_path, "rb") as f:
            tail = f.read()[-2000:].decode("utf-8", "replace")
        pytest.fail("peer did not start: %s\n%s" % (cmd, tail))
    return proc


def _stop(proc: "subprocess.Popen[bytes]") -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


# ---------------------------------------------------------------------------- server-everything


@pytest.fixture(params=["sse", "streamableHttp"], scope="module")
def everything(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tuple[str, str]]:
    command = require_peer("everything")
    mode = str(request.param)
    port = _free_port()
    env = dict(os.environ, PORT=str(port))
    log = str(tmp_path_factory.mktemp("everything") / ("%s.log" % mode))
    proc = _spawn([command[0], mode], port, log, env)
    try:
        path = "/sse" if mode == "sse" else "/mcp"
        yield mode, "http://127.0.0.1:%d%s" % (port, path)
    finally:
        _stop(proc)


def test_everything_over_http(everything: Tuple[str, str]) -> None:
    mode, url = everything
    with mcpsync.connect(url, timeout=60, connect_timeout=60) as c:
        assert c.transport_kind == ("sse" if mode == "sse" else "http")
        names = {t.name for t in c.list_tools()}
        assert "echo" in names
        assert "hello" in c.call_tool("echo", {"message": "hello"}).text
        if "get-sum" in names:
            assert "5" in c.call_tool("get-sum", {"a": 2, "b": 3}).text
        assert c.list_prompts() is not None
        resources = c.list_resources()
        if resources:
            assert c.read_resource(resources[0].uri).contents


def test_everything_auto_detects_sse(everything: Tuple[str, str]) -> None:
    mode, url = everything
    if mode != "sse":
        pytest.skip("fallback only matters for the SSE server")
    with mcpsync.connect(url, http=HTTPOptions(transport="auto"), timeout=60, connect_timeout=60) as c:
        assert c.transport_kind == "sse"
        assert c.memory.transport(url) == "sse"


def test_everything_progress(everything: Tuple[str, str]) -> None:
    mode, url = everything
    with mcpsync.connect(url, timeout=60, connect_timeout=60) as c:
        names = {t.name for t in c.list_tools()}
        tool = next((n for n in ("trigger-long-running-operation", "longRunningOperation") if n in names), None)
        if tool is None:
            pytest.skip("this server-everything has no long-running tool")
        seen: List[float] = []
        r = c.call_tool(tool, {"duration": 1, "steps": 3}, progress=lambda e: seen.append(e.progress))
        assert not r.is_error
        assert seen


# ---------------------------------------------------------------------------- the official Python SDK


@pytest.fixture(params=["streamable-http", "streamable-http-json", "sse"], scope="module")
def sdk(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tuple[str, str]]:
    require_peer("sdk")
    mode = str(request.param)
    port = _free_port()
    cmd = [sys.executable, str(PEERS / "sdk_http_server.py"), "sse" if mode == "sse" else "streamable-http", str(port)]
    if mode.endswith("json"):
        cmd.append("--json")
    log = str(tmp_path_factory.mktemp("sdk") / ("%s.log" % mode))
    proc = _spawn(cmd, port, log)
    try:
        yield mode, "http://127.0.0.1:%d%s" % (port, "/sse" if mode == "sse" else "/mcp")
    finally:
        _stop(proc)


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_sdk_over_http(sdk: Tuple[str, str], protocol: str) -> None:
    mode, url = sdk
    with mcpsync.connect(url, protocol=protocol, timeout=60, connect_timeout=60) as c:
        if mode == "sse":
            # The SDK answers server/discover even on its 2024-11-05 SSE transport, so "auto" may end modern.
            assert c.transport_kind == "sse"
            assert c.era == "legacy" or protocol == "auto"
        else:
            assert c.transport_kind == "http"
            assert c.era == ("modern" if protocol == "auto" else "legacy")
        assert {"add", "shout", "count_up", "big"} <= {t.name for t in c.list_tools()}
        assert c.call_tool("add", {"a": 2, "b": 3}).text == "5"
        seen: List[float] = []
        assert c.call_tool("count_up", {"steps": 3}, progress=lambda e: seen.append(e.progress)).text == "counted to 3"
        assert c.call_tool("fail", {"reason": "x"}).is_error
        assert c.read_resource("config://app").contents


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
def test_sdk_ten_megabyte_result(sdk: Tuple[str, str], protocol: str) -> None:
    """The official SDK's own client caps one event at 1 MiB; mcpsync takes up to 64 MiB."""
    mode, url = sdk
    with mcpsync.connect(url, protocol=protocol, timeout=120, connect_timeout=60) as c:
        assert len(c.call_tool("big", {"size": 10 * MB}).text) == 10 * MB


def test_sdk_server_requests_over_http(sdk: Tuple[str, str]) -> None:
    mode, url = sdk
    if mode.endswith("json"):
        pytest.skip("with JSON answers the SDK server has no back-channel for server requests")
    with mcpsync.connect(
        url,
        protocol="legacy",
        timeout=60,
        connect_timeout=60,
        sampling_handler=lambda r: r.reply("pong"),
    ) as c:
        assert "pong" in c.call_tool("think", {}).text
