"""Server-controlled text never drives the user's terminal: the real ``mcpsync`` CLI under a pseudo-terminal
(so ``isatty()`` is true) against tests/peers/escapeserver.py, whose every string carries escape sequences."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import List, Tuple

import pytest

pty = pytest.importorskip("pty")

from tests.peers.escapeserver import EVIL  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SERVER = ["--", sys.executable, str(ROOT / "tests" / "peers" / "escapeserver.py")]
RAW = [b"\x1b", b"\x07", "\u009b".encode(), "\u202e".encode()]


def in_pty(*argv: str, cwd: Path) -> Tuple[int, str]:
    """Run ``mcpsync ARGV`` with stdout and stderr on a pseudo-terminal; (exit code, what the terminal got)."""
    master, slave = pty.openpty()
    env = dict(os.environ, PYTHONPATH=str(ROOT), COLUMNS="200")
    proc = subprocess.Popen(
        [sys.executable, "-m", "mcpsync", *argv],
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
        cwd=str(cwd),
        env=env,
    )
    os.close(slave)
    chunks: List[bytes] = []
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every writer closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        code = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return code, b"".join(chunks).decode("utf-8", "replace")


def assert_inert(text: str) -> None:
    """Nothing in ``text`` acts on a terminal: no ESC, BEL, CSI, bidi override, and no CR but the pty's CRLF."""
    raw = text.encode("utf-8")
    for byte in RAW:
        assert byte not in raw, text
    assert "\r" not in text.replace("\r\n", "\n"), text


def test_listings_results_logs_and_errors_are_escaped_on_a_terminal(tmp_path: Path) -> None:
    code, text = in_pty("info", *SERVER, cwd=tmp_path)
    assert code == 0, text
    assert_inert(text)
    assert "evil\\x1b[2J\\x1b]0;pwned\\x07\\rX\\x9b31m\\u202e" in text
    code, text = in_pty("tools", *SERVER, cwd=tmp_path)
    assert code == 0 and "tool\\x1b[2J" in text and "echoes\\x1b[2J" in text, text
    assert_inert(text)
    code, text = in_pty("-v", "call", "echo", *SERVER, cwd=tmp_path)
    assert code == 0 and "result\\x1b[2J" in text and "log\\x1b[2J" in text, text
    assert_inert(text)
    code, text = in_pty("call", "fail", *SERVER, cwd=tmp_path)
    assert code == 1 and "failed\\x1b[2J" in text, text
    assert_inert(text)
    code, text = in_pty("call", "boom", *SERVER, cwd=tmp_path)
    assert code == 4 and "no method\\x1b[2J" in text, text
    assert_inert(text)
    code, text = in_pty("resources", *SERVER, cwd=tmp_path)
    assert code == 0 and "file\\x1b[2J" in text, text
    assert_inert(text)
    code, text = in_pty("read", "evil://file", *SERVER, cwd=tmp_path)
    assert code == 0 and "contents\\x1b[2J" in text, text
    assert_inert(text)


def test_json_and_output_files_keep_what_the_server_sent(tmp_path: Path) -> None:
    code, text = in_pty("--json", "call", "echo", *SERVER, cwd=tmp_path)
    assert code == 0, text
    doc = json.loads(text.replace("\r\n", "\n"))
    assert doc["content"][0]["text"] == "result" + EVIL  # JSON escapes C0 itself; the value is the server's
    target = tmp_path / "out.txt"
    code, text = in_pty("read", "evil://file", "-o", str(target), *SERVER, cwd=tmp_path)
    assert code == 0, text
    assert target.read_bytes() == ("contents" + EVIL).encode("utf-8")


def test_a_pipe_gets_the_text_as_sent(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-m", "mcpsync", "call", "echo", *SERVER],
        capture_output=True,
        cwd=str(tmp_path),
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.decode("utf-8") == "result" + EVIL + "\n"


def test_escape_controls_keeps_newlines_tabs_and_text() -> None:
    from mcpsync.cli.output import escape_controls

    assert escape_controls("a\tb\nc é 日本 🙂") == "a\tb\nc é 日本 🙂"
    assert escape_controls("\x00\x1b\x7f\x85\x9f\u2066\u202a") == "\\x00\\x1b\\x7f\\x85\\x9f\\u2066\\u202a"
