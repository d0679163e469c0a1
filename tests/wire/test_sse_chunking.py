"""The event-stream parser gives the same events however the bytes are cut into chunks.

A line split across chunks takes the large-line path (its ``data`` value joined straight from the
pieces, copied once); a line that arrives whole takes the plain path. Both must agree, for any
fields, line endings and cut points, and a large ``data`` line must come out intact.
"""

from __future__ import annotations

from typing import List, Optional, Tuple

from hypothesis import given, settings
from hypothesis import strategies as st

from mcpsync.wire.sse import EventParser, SSEEvent

_value = st.binary(max_size=40).map(lambda b: b.replace(b"\r", b"").replace(b"\n", b""))
_name = st.sampled_from([b"data", b"event", b"id", b"retry", b"dat", b"x", b""])
_sep = st.sampled_from([b":", b": ", b":  ", b""])
_eol = st.sampled_from([b"\n", b"\r\n", b"\r"])
_line = st.one_of(
    st.tuples(_name, _sep, _value, _eol).map(lambda t: t[0] + t[1] + t[2] + t[3]),
    _eol,  # a blank line dispatches
    st.tuples(_value, _eol).map(lambda t: b":" + t[0] + t[1]),  # a comment
)


def _events(
    chunks: List[bytes], max_size: Optional[int] = None
) -> List[Tuple[str, bytes, Optional[str], Optional[int], bool]]:
    parser = EventParser(max_size)
    out: List[SSEEvent] = []
    for chunk in chunks:
        out.extend(parser.feed(chunk))
    parser.close()
    return [(e.event, e.data, e.id, e.retry, e.oversized) for e in out]


def _cut(stream: bytes, cuts: List[int]) -> List[bytes]:
    points = sorted({c % (len(stream) + 1) for c in cuts})
    chunks, prev = [], 0
    for p in points + [len(stream)]:
        chunks.append(stream[prev:p])
        prev = p
    return chunks


@settings(max_examples=300, deadline=None)
@given(st.lists(_line, max_size=30), st.lists(st.integers(min_value=0, max_value=10_000), max_size=12))
def test_chunking_never_changes_the_events(lines: List[bytes], cuts: List[int]) -> None:
    stream = b"".join(lines) + b"\n\n"
    assert _events(_cut(stream, cuts)) == _events([stream])
    assert _events([bytes([b]) for b in stream]) == _events([stream])


@settings(max_examples=100, deadline=None)
@given(st.lists(_line, max_size=20), st.lists(st.integers(min_value=0, max_value=10_000), max_size=12))
def test_chunking_with_a_size_limit(lines: List[bytes], cuts: List[int]) -> None:
    stream = b"".join(lines) + b"\n\n"
    assert _events(_cut(stream, cuts), max_size=16) == _events([stream], max_size=16)


def test_a_large_data_line_in_many_pieces_comes_out_whole() -> None:
    payload = b'{"jsonrpc":"2.0","id":1,"result":{"text":"' + b"x" * 3_000_000 + b'"}}'
    stream = b"id: 7\nevent: message\ndata: " + payload + b"\r\n\r\n"
    chunks = [stream[i : i + 65536] for i in range(0, len(stream), 65536)]
    assert _events(chunks) == [("message", payload, "7", None, False)]
    # a value with no space after the colon, cut right after the colon
    stream = b"data:" + payload + b"\n\n"
    assert _events([stream[:5], stream[5:100], stream[100:]]) == [("message", payload, None, None, False)]
