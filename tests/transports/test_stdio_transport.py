"""The stdio transport's hard cases, against real subprocess servers."""

from __future__ import annotations

import io
import logging
import os
import signal
import sys
import textwrap
import time

import pytest

import mcpsync
from mcpsync.wire.framing import FrameReader

from tests.conftest import misbehaving_cmd, server_cmd, wait_for
from mcpsync.client import ClientOptions, StdioOptions


def test_banner_and_garbage_are_skipped(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    with mcpsync.connect(misbehaving_cmd("--era", "legacy", "--banner", "--garbage")) as c:
        for i in range(3):
            assert c.call_tool("echo", {"message": str(i)}).text == str(i)
    assert any("non-JSON" in r.getMessage() or "invalid frame" in r.getMessage() for r in caplog.records)


def test_crlf_and_blank_lines() -> None:
    with mcpsync.connect(misbehaving_cmd("--era", "legacy", "--crlf")) as c:
        assert c.call_tool("echo", {"message": "crlf"}).text == "crlf"


def test_content_length_framing_both_ways() -> None:
    with mcpsync.connect(server_cmd("--framing", "content-length"), stdio=StdioOptions(framing="content-length")) as c:
        assert c.call_tool("echo", {"message": "cl"}).text == "cl"
        assert len(c.call_tool("payload", {"size": 100000}).text) == 100000


def test_content_length_autodetected_on_read() -> None:
    # The server answers with Content-Length framing; the reader switches and so do our writes.
    with mcpsync.connect(server_cmd("--era", "legacy", "--framing", "content-length"), protocol="legacy") as c:
        assert c.call_tool("echo", {"message": "auto"}).text == "auto"


def test_server_batches_are_processed() -> None:
    with mcpsync.connect(
        misbehaving_cmd("--era", "legacy", "--send-batch"), roots=["/tmp"], options=ClientOptions(log_level="debug")
    ) as c:
        assert "file:///tmp" in c.call_tool("roots").text


def test_twenty_megabyte_message() -> None:
    with mcpsync.connect(server_cmd(), timeout=120) as c:
        text = c.call_tool("payload", {"size": 20 * 1024 * 1024}).text
        assert len(text) == 20 * 1024 * 1024


def test_oversize_message_fails_only_that_call() -> None:
    with mcpsync.connect(server_cmd(), stdio=StdioOptions(max_message_size=1024 * 1024)) as c:
        with pytest.raises(mcpsync.errors.MessageTooLarge):
            c.call_tool("payload", {"size": 2 * 1024 * 1024})
        assert c.call_tool("echo", {"message": "still fine"}).text == "still fine"


def test_stderr_flood_never_blocks() -> None:
    lines = []
    with mcpsync.connect(
        misbehaving_cmd("--stderr-flood", str(1024 * 1024)), stdio=StdioOptions(on_stderr=lines.append)
    ) as c:
        for i in range(3):
            assert c.call_tool("echo", {"message": str(i)}).text == str(i)
        assert c.stderr_tail
    assert lines


def test_stderr_without_fileno_on_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    with mcpsync.connect(server_cmd(), stdio=StdioOptions(stderr="inherit")) as c:
        assert c.call_tool("echo", {"message": "nb"}).text == "nb"
    with mcpsync.connect(server_cmd(), stdio=StdioOptions(stderr="discard")) as c:
        assert c.call_tool("echo", {"message": "d"}).text == "d"


def test_kill_minus_nine_fails_pending_calls_with_exit_code() -> None:
    c = mcpsync.connect(server_cmd())
    try:
        handles = [c.call_tool_async("slow", {"seconds": 30, "steps": 30}) for _ in range(3)]
        pid = c.transport.pid  # type: ignore[attr-defined]
        os.kill(pid, signal.SIGKILL)
        for h in handles:
            with pytest.raises(mcpsync.errors.ServerExited) as info:
                h.result(timeout=5)
            assert info.value.exit_code == -signal.SIGKILL
        with pytest.raises(mcpsync.errors.ConnectionClosed):
            c.call_tool("echo", {"message": "x"})
    finally:
        c.close()


def test_crash_reports_exit_code_and_stderr() -> None:
    with mcpsync.connect(server_cmd()) as c:
        with pytest.raises(mcpsync.errors.ServerExited) as info:
            c.call_tool("crash", {"code": 3})
        assert info.value.exit_code == 3
        assert info.value.stderr_tail
        assert "exit code 3" in str(info.value)


def _pids_in_group(pgid: int) -> list:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry, "rb") as f:
                rest = f.read().decode().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if rest[0] != "Z" and int(rest[3]) == pgid:
            found.append(int(entry))
    return found


def test_grandchild_ignoring_sigterm_is_reaped() -> None:
    c = mcpsync.connect(
        misbehaving_cmd("--spawn-grandchild", "--ignore-sigterm", "--no-exit-on-eof"),
        stdio=StdioOptions(shutdown_timeout=0.5),
    )
    pid = c.transport.pid  # type: ignore[attr-defined]
    assert wait_for(lambda: len(_pids_in_group(pid)) >= 2)
    c.close()
    assert wait_for(lambda: not _pids_in_group(pid))


def test_well_behaved_server_is_not_signalled(tmp_path) -> None:  # type: ignore[no-untyped-def]
    marker = tmp_path / "signalled"
    script = tmp_path / "server.py"
    script.write_text(
        textwrap.dedent(
            """
            import json, signal, sys
            signal.signal(signal.SIGTERM, lambda *a: (open(%r, "w").write("TERM"), sys.exit(1)))
            for line in sys.stdin:
                msg = json.loads(line)
                if msg.get("method") == "initialize":
                    out = {"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": "2025-06-18",
                           "capabilities": {}, "serverInfo": {"name": "eof", "version": "1"}}}
                    sys.stdout.write(json.dumps(out) + "\\n"); sys.stdout.flush()
                elif "id" in msg and "method" in msg:
                    out = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "nope"}}
                    sys.stdout.write(json.dumps(out) + "\\n"); sys.stdout.flush()
            """
            % str(marker)
        )
    )
    # The server exits on EOF; under load that can take longer than the default 2 s grace, after which
    # close() would rightly send SIGTERM. A long grace costs nothing here: close() returns on the exit.
    c = mcpsync.connect([sys.executable, str(script)], stdio=StdioOptions(shutdown_timeout=30))
    assert c.era == "legacy" and c.protocol_version == "2025-06-18"
    c.close()
    assert not marker.exists()


def test_close_is_bounded_when_server_ignores_eof_and_sigterm() -> None:
    c = mcpsync.connect(
        misbehaving_cmd("--ignore-sigterm", "--no-exit-on-eof"), stdio=StdioOptions(shutdown_timeout=0.3)
    )
    proc = c.transport.process  # type: ignore[attr-defined]
    c.close()
    assert proc.poll() == -signal.SIGKILL


def test_frame_reader_linear_and_resync() -> None:
    frames = []
    over = []
    r = FrameReader(frames.append, over.append, max_size=10, framing="auto")
    for piece in [b'{"a":1}\n{"b":', b"2}\r\n\n", b'{"id":7,"too":"long long"}\n', b'{"c":3}\n']:
        r.feed(piece)
    assert frames[0] == b'{"a":1}' and frames[1] == b'{"b":2}\r'
    assert over and b'"id":7' in over[0]
    assert frames[-1] == b'{"c":3}'
    big = []
    r2 = FrameReader(big.append, over.append, max_size=1 << 30, framing="newline")
    chunk = b"x" * 65536
    for _ in range(160):  # 10 MiB in 64 KiB pieces
        r2.feed(chunk)
    r2.feed(b"\n")
    assert len(big[0]) == 160 * 65536


def test_content_length_reader_with_split_headers() -> None:
    frames = []
    r = FrameReader(frames.append, lambda h: None, max_size=1000, framing="auto")
    body = b'{"jsonrpc":"2.0","id":1,"result":{}}'
    data = b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
    for i in range(len(data)):
        r.feed(data[i : i + 1])
    assert frames == [body]


def test_forgetting_close_still_exits(tmp_path) -> None:  # type: ignore[no-untyped-def]
    script = tmp_path / "forget.py"
    script.write_text(
        "import sys, mcpsync\n"
        "c = mcpsync.connect([sys.executable, '-m', 'mcpsync.example_server'])\n"
        "print(c.call_tool('echo', {'message': 'bye'}).text)\n"
    )
    import subprocess

    out = subprocess.run([sys.executable, str(script)], capture_output=True, timeout=60)
    assert out.returncode == 0 and b"bye" in out.stdout


def test_many_clients_closed_in_any_order_from_other_threads() -> None:
    import random
    import threading

    clients = [mcpsync.connect(server_cmd()) for _ in range(5)]
    random.shuffle(clients)
    threads = [threading.Thread(target=c.close) for c in clients]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert all(c.closed for c in clients)
    time.sleep(0)  # the leak fixture checks threads and processes


def test_close_racing_open_leaves_nothing_behind() -> None:
    import threading

    for _ in range(5):
        c = mcpsync.Client(server_cmd())
        t = threading.Thread(target=_try_open, args=(c,))
        t.start()
        c.close()
        t.join(30)
        c.close()
        assert c.closed


def _try_open(c) -> None:  # type: ignore[no-untyped-def]
    try:
        c.open()
    except mcpsync.MCPError:
        pass
