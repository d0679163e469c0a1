"""Hypothesis over a real HTTP answer stream: arbitrary malformed events before the answer never hurt the call.

Part of the HTTP fault matrix (tests/test_http_faults.py, docs/reliability.md).
"""

from __future__ import annotations

from typing import List

import pytest

from .conftest import fuzz_examples
from .faultserver import FaultServer
from .test_http_faults import bounded, closed_cleanly, connect, usable

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

pytestmark = pytest.mark.timeout(600)


_VALUES = st.one_of(
    st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"").replace(b"\r", b"")),
    st.text(max_size=40).map(lambda t: t.replace("\n", "").replace("\r", "").encode("utf-8", "surrogatepass")),
    st.sampled_from(
        [
            b"{",
            b"[]",
            b"null",
            b'{"jsonrpc":"2.0"}',
            b'{"jsonrpc":"2.0","id":[],"result":{}}',
            b'{"jsonrpc":"2.0","id":99999,"error":{"code":1,"message":"stray"}}',
            b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":{},"progress":1}}',
            b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[1]}}',
            b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":7,"data":null}}',
            b"message",
            b"999999999999999999999",
        ]
    ),
)
_FIELDS = st.sampled_from([b"data", b"data", b"id", b"event", b"retry", b"", b"x-unknown"])
_BLOCKS = st.lists(st.tuples(_FIELDS, _VALUES), min_size=1, max_size=4).map(
    lambda lines: b"".join(f + b": " + v + b"\n" for f, v in lines) + b"\n"
)


def test_fuzz_junk_events_never_hurt_the_call(era: str) -> None:
    """Arbitrary malformed events before a real answer, on a real server: the call still gets exactly
    its answer, and the connection stays usable."""
    with FaultServer(era=era) as s:
        with connect(s, timeout=15) as c:

            @settings(max_examples=fuzz_examples(150, 20))
            @given(events=st.lists(_BLOCKS, max_size=6), word=st.text(min_size=1, max_size=12))
            def prop(events: List[bytes], word: str) -> None:
                s.clear()
                s.inject("junk_events", rpc="tools/call", events=events, comments=1)
                assert bounded(lambda: c.call_tool("echo", {"message": word})).text == word

            prop()
            s.clear()
            usable(c)
            closed_cleanly(c, s)
