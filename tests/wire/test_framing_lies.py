"""Issue 18 defect 6a: a stdio ``Content-Length`` that lies never wedges the reader.

A real stdio peer (tests/peers/fuzzpeer.py, Content-Length framing) writes a header declaring 10**17
bytes (or more than it sends) and then answers normally: the reader resynchronises at the next
header and every later call is answered, in both protocol eras, through the blocking and the async
call. The hypothesis property drives the FrameReader with lying headers between valid frames, cut at
arbitrary points.
"""

from __future__ import annotations

import base64
import json
import os
import sys
from typing import Any, Iterator, List, Sequence, Tuple

import pytest

import mcpsync

from tests.conftest import fuzz_examples

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from mcpsync.wire.framing import FrameReader, encode_content_length  # noqa: E402

PEER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "peers", "fuzzpeer.py")


@pytest.fixture(params=["legacy", "modern"])
def cl_peer(request: pytest.FixtureRequest) -> Iterator[mcpsync.Client]:
    with mcpsync.connect([sys.executable, PEER, "--content-length"], protocol=request.param, timeout=30) as c:
        assert c.protocol_version == ("2026-07-28" if request.param == "modern" else "2025-11-25")
        yield c


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _script(c: mcpsync.Client, how: str, raw: Sequence[bytes], echo: str) -> str:
    """The peer writes ``raw`` as is, then answers with ``echo``: a ``tools/call``, blocking or async."""
    args = {"raw": [_b64(r) for r in raw], "echo": echo}
    if how == "blocking":
        return c.call_tool("script", args).text
    return c.call_tool_async("script", args).result(30).text


HOW = pytest.mark.parametrize("how", ["blocking", "async"])


@pytest.mark.parametrize(
    "lie",
    [
        # 10**17: far over max_message_size (skipped up to the next frame)
        b"Content-Length: 100000000000000000\r\n\r\n",
        b"Content-Length: 5000\r\n\r\n",  # under the limit, but more than is sent
        b"content-length:999999999999999999\n\n",  # 18 digits, lower case, bare newlines
    ],
)
@HOW
def test_a_lying_content_length_does_not_wedge_the_reader(cl_peer: mcpsync.Client, lie: bytes, how: str) -> None:
    c = cl_peer
    junk = lie + b'{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}'
    assert _script(c, how, [junk], "after the lie") == "after the lie"
    for n in range(3):  # the connection stays usable
        assert _script(c, how, [], str(n)) == str(n)
    assert c.request("script", {"raw": [], "echo": "raw"})["echo"] == "raw"  # a request of its own too
    assert c.connected


@HOW
def test_a_lie_that_swallows_a_whole_frame_recovers_it(cl_peer: mcpsync.Client, how: str) -> None:
    """A short lying length followed by a complete notification frame: the notification still arrives."""
    c = cl_peer
    note = json.dumps({"jsonrpc": "2.0", "method": "notifications/custom", "params": {"k": 1}}).encode()
    junk = b"Content-Length: 4000\r\n\r\nxx" + encode_content_length(note)
    assert _script(c, how, [junk], "e") == "e"
    got = c.notifications.get(timeout=30)
    assert got.method == "notifications/custom" and got.params == {"k": 1}


# ---------------------------------------------------------------------------- the property

_JUNK = st.binary(max_size=40).map(lambda b: b.replace(b"\n", b" ").replace(b"\r", b" ").replace(b"{", b"("))
_LIE = st.one_of(st.integers(0, 200), st.integers(0, 10**6), st.integers(10**6, 10**18 - 1))


def _split(data: bytes, cuts: List[int]) -> List[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts}) if data else []
    out, prev = [], 0
    for p in points + [len(data)]:
        out.append(data[prev:p])
        prev = p
    return out


@settings(max_examples=fuzz_examples(3000))
@given(
    st.lists(st.tuples(st.booleans(), _LIE, _JUNK), min_size=1, max_size=8),
    st.lists(st.integers(min_value=0, max_value=10**6), max_size=10),
)
def test_fuzz_lying_headers_never_wedge_and_valid_frames_arrive(
    items: List[Tuple[bool, int, bytes]], cuts: List[int]
) -> None:
    """Valid frames with lying headers (any length, 0..10**18) before some of them: every valid frame is
    delivered, in order, nothing raises, and the buffer never holds more than the limit allows."""
    max_size = 1 << 20
    stream = b""
    valid: List[bytes] = []
    for i, (lie_first, length, junk) in enumerate(items):
        if lie_first and b"content-length" not in junk.lower():
            stream += b"Content-Length: %d\r\n\r\n%s" % (length, junk)
        body = json.dumps({"n": i}).encode()
        valid.append(body)
        stream += encode_content_length(body)
    stream += encode_content_length(b'{"n":"end"}')  # a final honest frame flushes whatever a lie left pending
    got: List[Any] = []
    reader = FrameReader(got.append, lambda head: None, max_size, "content-length")
    for chunk in _split(stream, cuts):
        reader.feed(chunk)
        assert len(reader._buf) <= max_size + 8192 + len(chunk)
    frames = [g.strip() for g in got if isinstance(g, bytes)]
    delivered = [f for f in frames if f.startswith(b'{"n": ')]
    assert delivered == valid


@pytest.mark.parametrize("pattern", [b"\n\r\n", b"\n\n", b"1\n\n", b"length: 7\r\n\r\n"])
def test_an_honest_body_full_of_blank_lines_is_delivered_whole(pattern: bytes) -> None:
    """Blank lines inside an honest body (hostile or pretty-printed) are checked in linear time and never cut it
    (no complete ``Content-Length`` header in it); the frame after it arrives too."""
    body = pattern * (3_000_000 // len(pattern))
    data = encode_content_length(body) + encode_content_length(b"{}")
    got: List[bytes] = []
    reader = FrameReader(got.append, lambda head: None, 64 << 20, "content-length")
    for i in range(0, len(data), 1 << 16):
        reader.feed(data[i : i + (1 << 16)])
    assert len(got) == 2 and got[0] == body and got[1] == b"{}"
