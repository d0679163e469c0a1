"""Hypothesis over a real HTTP answer stream: arbitrary malformed events before the answer never hurt the call.

Part of the HTTP fault matrix (tests/transports/test_http_faults.py, docs/internals/reliability.md).
"""

from __future__ import annotations

from typing import List

import pytest

from tests.conftest import fuzz_examples
from tests.peers.faultserver import FaultServer
from tests.transports.test_http_faults import bounded, closed_cleanly, connect, usable

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


_AUTHORITY_BITS = st.sampled_from(
    [
        "127.0.0.1",
        "127.0.0.1:2",
        ":2",
        ":3",
        "@",
        "\\",
        "/",
        "//",
        "evil.example",
        "[::1]",
        "%40",
        "%5C",
        "user:pw@",
        "#",
        "?",
        ";",
        " ",
        "\t",
        "\x00",
        "\u3002",
    ]
)
_ENDPOINTS = st.one_of(
    st.text(max_size=60),
    st.lists(st.one_of(_AUTHORITY_BITS, st.text(max_size=6)), max_size=10).map("".join),
    st.lists(st.one_of(_AUTHORITY_BITS, st.text(max_size=6)), max_size=10).map(lambda p: "http://" + "".join(p)),
)


@settings(max_examples=fuzz_examples(3000, 300))
@given(data=_ENDPOINTS)
def test_fuzz_sse_endpoint_never_leaves_the_stream_origin(data: str) -> None:
    """Whatever the endpoint event says, endpoint_url never raises, and a URL it accepts is on the stream's
    origin as the standard library (what the engine connects with) and urllib3 read it, without userinfo."""
    from urllib.parse import urlsplit

    from urllib3.util import parse_url

    from mcpsync.transports.http.legacy_sse import endpoint_url

    url, why = endpoint_url("http://127.0.0.1:2/p/sse", data)
    if url is None:
        assert why
        return
    u3, std = parse_url(url), urlsplit(url)  # urllib3's reading too: what a proxy or another client would see
    assert (u3.scheme, u3.host, u3.port, u3.auth) == ("http", "127.0.0.1", 2, None)
    assert (std.hostname, std.port, std.username) == ("127.0.0.1", 2, None)
    assert "\\" not in url and "@" not in std.netloc
