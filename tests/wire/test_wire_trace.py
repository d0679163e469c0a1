"""The protocol trace (``mcpsync.wire`` logger, ``mcpsync -vv``): frames in and out, truncated, secrets redacted."""

from __future__ import annotations

import logging
import subprocess
import sys

import mcpsync
from mcpsync.wire import trace
from tests.conftest import server_cmd


def test_describe_redacts_secrets_and_truncates() -> None:
    frame = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "login",
            "arguments": {"password": "hunter2", "api_key": "sk-1", "nested": [{"access_token": "tok"}]},
            "_meta": {"progressToken": 7},
        },
    }
    line = trace.describe(frame)
    assert "hunter2" not in line and "sk-1" not in line and '"tok"' not in line
    assert '"password":"***"' in line and '"progressToken":7' in line  # a progress token is no secret
    long = trace.describe({"x": "y" * 5000}, limit=100)
    assert long.endswith("...(5008 chars)") and len(long) < 130
    assert trace.describe({1, 2}).startswith('"{')  # anything odd still gives a line, never an exception


def test_the_trace_logs_every_frame_when_enabled(caplog) -> None:
    with caplog.at_level(logging.DEBUG, logger="mcpsync.wire"):
        with mcpsync.connect(server_cmd(), name="traced") as client:
            assert client.call_tool("echo", {"message": "hello", "token": "s3cret"}).text == "hello"
    lines = [r.getMessage() for r in caplog.records if r.name == "mcpsync.wire"]
    assert any(line.startswith("[traced] >> ") and '"tools/call"' in line for line in lines)
    assert any(line.startswith("[traced] << ") and '"hello"' in line for line in lines)
    assert not any("s3cret" in line for line in lines)


def test_the_trace_is_off_and_free_by_default(caplog) -> None:
    with caplog.at_level(logging.INFO, logger="mcpsync"):
        with mcpsync.connect(server_cmd(), name="quiet") as client:
            assert "send" not in vars(client.transport)  # send is not wrapped
            client.ping()
    assert not [r for r in caplog.records if r.name == "mcpsync.wire"]


def test_cli_vv_shows_the_trace_and_failures_without_tracebacks(tmp_path) -> None:
    cmd = [sys.executable, "-m", "mcpsync", "-vv", "call", "echo", "-a", "message=hi", "--"] + server_cmd()
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip() == "hi", proc.stderr
    assert "mcpsync.wire: [" in proc.stderr and " >> " in proc.stderr and " << " in proc.stderr
    config = tmp_path / "mcp.json"
    config.write_text('{"mcpServers": {"gone": {"command": "/nonexistent/server"}}}')
    proc = subprocess.run(
        [sys.executable, "-m", "mcpsync", "-vv", "--config", str(config), "status"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 3 and "Traceback" not in proc.stderr, proc.stderr
    assert "(ConnectError: server command '/nonexistent/server' does not exist" in proc.stderr
