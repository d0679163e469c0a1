"""Issue 9 defect 10: ``connect_timeout`` bounds the whole open as one deadline, and says so.

Against a real server that never answers, ``open()`` fails with ConnectTimeout (also a RequestTimeout,
ConnectError and TimeoutError) naming ``connect_timeout``; the CLI names ``--connect-timeout``. The
probe's timeout is clipped to what is left of the deadline: checked from the recorded timeouts of the
steps (an injected clock) and from the error chain against the real server. No timing assertions.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from typing import Any, Dict, List, Optional, Tuple

import pytest

import mcpsync
from mcpsync.client.negotiate import Deadline, Negotiator
from mcpsync.errors import RequestTimeout

from tests.conftest import misbehaving_cmd, server_cmd
from mcpsync.client import ClientOptions

SILENT = ("--slow-start", "3600")  # reads nothing, answers nothing


@pytest.mark.parametrize("protocol", ["auto", "legacy", "modern"])
def test_silent_server_fails_with_connect_timeout(protocol: str) -> None:
    c = mcpsync.Client(
        misbehaving_cmd(*SILENT), connect_timeout=0.6, options=ClientOptions(probe_timeout=30.0), protocol=protocol
    )
    with pytest.raises(mcpsync.errors.ConnectTimeout) as info:
        c.open()
    exc = info.value
    assert isinstance(exc, mcpsync.RequestTimeout) and isinstance(exc, mcpsync.errors.ConnectError)
    assert isinstance(exc, TimeoutError)
    assert "connect_timeout=0.6s" in exc.message and "--timeout" not in exc.message
    assert exc.timeout == 0.6
    # the step that ran out of time had a timeout clipped to the deadline, never the 30 s probe_timeout
    step = exc.__cause__
    assert isinstance(step, RequestTimeout)
    assert step.timeout is not None and step.timeout <= 0.6
    assert step.method == ("initialize" if protocol == "legacy" else "server/discover")
    assert c.closed


def test_cli_names_connect_timeout() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "mcpsync", "tools", "--connect-timeout", "0.5", "--timeout", "30", "--"]
        + misbehaving_cmd(*SILENT),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 5, proc.stderr
    assert "--connect-timeout" in proc.stderr and "raise --timeout" not in proc.stderr
    assert "connect_timeout=0.5s" in proc.stderr
    # durations are written sanely: no clock-subtraction noise such as 0.49361825300002s
    assert not re.search(r"\d\.\d{4,}", proc.stderr), proc.stderr


def test_durations_in_messages() -> None:
    from mcpsync.errors import seconds_text

    assert [seconds_text(x) for x in (2.0, 1.9936182530000224, 0.25, 0.0004, 30, 120.4, None)] == [
        "2s",
        "1.99s",
        "0.25s",
        "0.0004s",
        "30s",
        "120s",
        "no limit",
    ]
    assert mcpsync.RequestTimeout(timeout=1.9936182530000224).message == "request timed out after 1.99s"


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class _SilentSession:
    """Records each request's timeout; every request 'waits' its whole timeout on the fake clock."""

    class transport:  # noqa: N801 - the attribute the negotiator reads
        kind = "stdio"

        @staticmethod
        def set_protocol(version: str, era: str) -> None:
            pass

    closed = False

    def __init__(self, clock: _Clock) -> None:
        self.clock = clock
        self.sent: List[Tuple[str, Optional[float]]] = []

    def request(self, method: str, params: Dict[str, Any], timeout: Optional[float] = None) -> Any:
        self.sent.append((method, timeout))
        assert timeout is not None
        self.clock.now += timeout
        raise RequestTimeout("request timed out", timeout=timeout, method=method)


def _negotiator(clock: _Clock, connect_timeout: float, probe_timeout: float) -> Negotiator:
    return Negotiator(
        name="s",
        protocol="auto",
        probe_timeout=probe_timeout,
        connect_timeout=connect_timeout,
        client_info={"name": "t", "version": "0"},
        log_level=None,
        cache_key=("test-deadline", id(clock)),
        capabilities=lambda modern: {},
        envelope=lambda version: {},
        deadline=Deadline(connect_timeout, clock=clock),
    )


def test_probe_is_clipped_to_the_remaining_deadline() -> None:
    clock = _Clock()
    session = _SilentSession(clock)
    with pytest.raises(mcpsync.errors.ConnectTimeout) as info:
        _negotiator(clock, connect_timeout=2.0, probe_timeout=5.0).negotiate(session)  # type: ignore[arg-type]
    assert session.sent == [("server/discover", 2.0)]  # clipped from 5 s; nothing left for initialize
    assert "connect_timeout=2s" in info.value.message


def test_short_probe_then_handshake_gets_the_rest() -> None:
    clock = _Clock()
    session = _SilentSession(clock)
    with pytest.raises(mcpsync.errors.ConnectTimeout):
        _negotiator(clock, connect_timeout=8.0, probe_timeout=5.0).negotiate(session)  # type: ignore[arg-type]
    assert session.sent == [("server/discover", 5.0), ("initialize", 3.0)]


def test_deadline_without_a_bound() -> None:
    d = Deadline(None)
    assert d.remaining() is None and d.clip(5.0) == 5.0 and d.clip(None) is None and not d.expired()
    clock = _Clock()
    d = Deadline(1.0, clock=clock)
    assert d.clip(None) == 1.0 and d.clip(0.25) == 0.25
    clock.now += 2
    assert d.expired() and d.remaining() == 0.0


def test_a_working_server_is_unaffected(era: str) -> None:
    with mcpsync.connect(server_cmd("--era", era), connect_timeout=30, options=ClientOptions(probe_timeout=5)) as c:
        assert c.era == era
        assert json.loads(json.dumps(c.call_tool("echo", {"message": "x"}).text)) == "x"
