"""Hypothesis suites for the wire and the session (issue 9): hostile input never hurts the client.

* ``jsonrpc.decode`` / ``classify``: arbitrary bytes and JSON values never raise anything but ProtocolError.
* The session's dispatch: arbitrary JSON in every field, ids of every type, batches, nesting, fed to a real
  :class:`~mcpsync.session.Session` never raise, and a pending request still gets exactly its answer.
* End to end over a real pipe: a scripted stdio peer (tests/peers/fuzzpeer.py) writes arbitrary junk lines
  (JSON values, near-JSON-RPC frames, invalid and partial UTF-8, batches) before each answer, with
  newline and with Content-Length framing; every call gets exactly its answer and the connection stays up.
* Content-Length / newline framing (``FrameReader``): arbitrary chunking of a valid stream gives the same
  frames; arbitrary bytes never raise.
* The SSE parser: arbitrary chunking of a valid stream gives the same events; arbitrary bytes never raise.

Profiles (tests/conftest.py): ``dev`` by default; ``ci`` under CI=true (fixed seed, more examples).
"""

from __future__ import annotations

import base64
import json
import os
import sys
from typing import Any, Dict, Iterator, List, Optional

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import mcpsync  # noqa: E402
from mcpsync.errors import ProtocolError  # noqa: E402
from mcpsync.session import Session  # noqa: E402
from mcpsync.transports.base import Transport, TransportSink  # noqa: E402
from mcpsync.wire import jsonrpc  # noqa: E402
from mcpsync.wire.framing import FrameReader, encode_content_length  # noqa: E402
from mcpsync.wire.sse import EventParser  # noqa: E402

from tests.conftest import fuzz_examples  # noqa: E402

PEER = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "peers", "fuzzpeer.py")

# ---------------------------------------------------------------------------- strategies

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=8,
)
#: ids of every JSON type; integers far above anything the client allocates, so junk never answers a call
junk_ids = st.one_of(
    json_values.filter(lambda v: not isinstance(v, (int, str)) or isinstance(v, bool)),
    st.integers(min_value=10**12, max_value=2**70),
    st.text(max_size=8).filter(lambda s: not (s.isascii() and s.isdigit())),
)
methods = st.one_of(
    st.sampled_from(
        [
            "notifications/progress",
            "notifications/cancelled",
            "notifications/message",
            "notifications/resources/updated",
            "notifications/tools/list_changed",
            "notifications/subscriptions/acknowledged",
            "ping",
            "sampling/createMessage",
            "roots/list",
        ]
    ),
    st.text(max_size=12),
    json_values,
)
meta_ids = st.fixed_dictionaries({}, optional={"io.modelcontextprotocol/subscriptionId": junk_ids})
params = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {},
        optional={
            "progressToken": junk_ids,
            "requestId": junk_ids,
            "progress": json_values,
            "uri": json_values,
            "level": json_values,
            "_meta": st.one_of(json_values, meta_ids),
        },
    ),
)
near_frames = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.one_of(st.just("2.0"), json_values),
        "id": junk_ids,
        "method": methods,
        "params": params,
        "result": json_values,
        "error": st.one_of(json_values, st.fixed_dictionaries({"code": json_values, "message": json_values})),
    },
)
frames = st.one_of(near_frames, st.lists(st.one_of(near_frames, json_values), max_size=4), json_values)


def _raw_line() -> Any:
    """One junk line for a newline-framed stream: JSON, near-JSON, invalid or partial UTF-8, no raw newline."""
    as_json = frames.map(lambda f: json.dumps(f).encode("utf-8"))
    cut_json = frames.map(lambda f: json.dumps(f).encode("utf-8")).flatmap(
        lambda b: st.integers(min_value=0, max_value=len(b)).map(lambda n: b[:n])
    )
    utf8_cut = st.text(min_size=1, max_size=8).map(lambda t: ('{"x":"%s' % t).encode("utf-8")[:-1])
    junk = st.binary(max_size=40)
    return st.one_of(as_json, cut_json, utf8_cut, junk).map(lambda b: b.replace(b"\n", b" ").replace(b"\r", b" "))


raw_lines = _raw_line()


# ---------------------------------------------------------------------------- pure parsers


@settings(max_examples=fuzz_examples(3000))
@given(st.binary(max_size=200))
def test_decode_raises_only_protocol_error(data: bytes) -> None:
    try:
        value = jsonrpc.decode(data)
    except ProtocolError:
        return
    assert isinstance(value, (dict, list))


@settings(max_examples=fuzz_examples(1500))
@given(frames)
def test_classify_and_truncate_never_raise(frame: Any) -> None:
    for message in jsonrpc.iter_messages(frame):
        kind, problem = jsonrpc.classify(message)
        assert problem is not None or kind in (jsonrpc.REQUEST, jsonrpc.NOTIFICATION, jsonrpc.RESPONSE, jsonrpc.ERROR)
    assert isinstance(jsonrpc.truncate(frame), str)


def test_decode_survives_deep_nesting() -> None:
    with pytest.raises(ProtocolError):
        jsonrpc.decode(b"[" * 200000)


# ---------------------------------------------------------------------------- session dispatch (in process)


class _Loopback(Transport):
    kind = "memory"

    def __init__(self) -> None:
        self.sink: Optional[TransportSink] = None
        self.sent: List[Any] = []

    def start(self, sink: TransportSink) -> None:
        self.sink = sink

    def send(self, message: Dict[str, Any]) -> None:
        self.sent.append(message)

    def close(self, timeout: Optional[float] = None) -> None:
        pass


@pytest.fixture
def loop_session() -> Iterator[Any]:
    t = _Loopback()
    s = Session(t, name="fuzz", notification_handler=lambda m, p: None, request_handler=lambda m, p, c: {})
    s.start()
    yield s, t
    s.close()


@settings(max_examples=fuzz_examples(1000))
@given(st.lists(frames, max_size=6), json_values)
def test_session_dispatch_survives_anything(loop_session: Any, junk: List[Any], answer: Any) -> None:
    s, t = loop_session
    handle = s.request_async("tools/call", {"name": "x"}, progress=lambda e: None)
    assert t.sink is not None
    for frame in junk:
        t.sink.on_message(frame)  # never raises
    assert not handle.done()
    t.sink.on_message({"jsonrpc": "2.0", "id": handle.request_id, "result": {"answer": answer}})
    assert handle.result(timeout=10) == {"answer": answer}
    assert not s.closed


# ---------------------------------------------------------------------------- end to end over a real pipe


@pytest.fixture(params=["newline", "content-length"])
def peer(request: pytest.FixtureRequest) -> Iterator[Any]:
    cmd = [sys.executable, PEER] + (["--content-length"] if request.param == "content-length" else [])
    with mcpsync.connect(cmd, protocol="legacy", timeout=30) as c:
        yield c, request.param


def _frame_for(mode: str, line: bytes) -> bytes:
    return encode_content_length(line) if mode == "content-length" else line + b"\n"


@settings(max_examples=fuzz_examples(300, 40))
@given(st.lists(raw_lines, max_size=6), st.text(max_size=16))
def test_stdio_junk_before_every_answer(peer: Any, junk: List[bytes], token: str) -> None:
    c, mode = peer
    raw = [base64.b64encode(_frame_for(mode, line)).decode() for line in junk]
    assert c.request("script", {"raw": raw, "echo": token}) == {"echo": token}
    assert c.connected


# ---------------------------------------------------------------------------- framing


def _split(data: bytes, cuts: List[int]) -> List[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts}) if data else []
    out, prev = [], 0
    for p in points + [len(data)]:
        out.append(data[prev:p])
        prev = p
    return out


def _read(mode: str, chunks: List[bytes], max_size: int = 1 << 20) -> List[Any]:
    got: List[Any] = []
    reader = FrameReader(got.append, lambda head: got.append(("oversize", head[:8])), max_size, mode)
    for chunk in chunks:
        reader.feed(chunk)
    return got


bodies = st.lists(st.binary(max_size=60).map(lambda b: b.replace(b"\n", b" ").replace(b"\r", b" ")), max_size=6)


@settings(max_examples=fuzz_examples(3000))
@given(bodies, st.lists(st.integers(min_value=0, max_value=10**6), max_size=8))
def test_content_length_chunking_gives_the_same_frames(items: List[bytes], cuts: List[int]) -> None:
    data = b"".join(encode_content_length(b) for b in items)
    assert _read("content-length", _split(data, cuts)) == _read("content-length", [data]) == items


@settings(max_examples=fuzz_examples(3000))
@given(
    bodies.map(lambda bs: [b for b in bs if b.strip()]), st.lists(st.integers(min_value=0, max_value=10**6), max_size=8)
)
def test_newline_chunking_gives_the_same_frames(items: List[bytes], cuts: List[int]) -> None:
    data = b"".join(b + b"\n" for b in items)
    assert _read("newline", _split(data, cuts)) == _read("newline", [data]) == items


@settings(max_examples=fuzz_examples(2000))
@given(
    st.binary(max_size=300),
    st.sampled_from(["auto", "newline", "content-length"]),
    st.lists(st.integers(0, 400), max_size=6),
)
def test_framing_never_raises_on_arbitrary_bytes(data: bytes, mode: str, cuts: List[int]) -> None:
    _read(mode, _split(data, cuts), max_size=64)


# ---------------------------------------------------------------------------- SSE


field_text = st.text(alphabet=st.characters(blacklist_characters="\r\n\x00", blacklist_categories=["Cs"]), max_size=12)
sse_events = st.lists(
    st.fixed_dictionaries(
        {"data": st.lists(field_text, max_size=3)},
        optional={
            "event": field_text.filter(bool),
            "id": field_text,
            "retry": st.integers(0, 10**6),
            "comment": field_text,
        },
    ),
    max_size=5,
)


def _serialize(events: List[Dict[str, Any]], eol: bytes) -> bytes:
    out = b""
    for ev in events:
        if "comment" in ev:
            out += b":" + ev["comment"].encode() + eol
        if "event" in ev:
            out += b"event: " + ev["event"].encode() + eol
        if "id" in ev:
            out += b"id: " + ev["id"].encode() + eol
        if "retry" in ev:
            out += b"retry: %d" % ev["retry"] + eol
        for line in ev["data"]:
            out += b"data: " + line.encode() + eol
        out += eol
    return out


def _parse(chunks: List[bytes]) -> List[Any]:
    parser = EventParser(max_event_size=1 << 20)
    events = []
    for chunk in chunks:
        events += parser.feed(chunk)
    events += parser.close()
    return [(e.event, e.data, e.id, e.retry, e.oversized) for e in events]


@settings(max_examples=fuzz_examples(3000))
@given(
    sse_events, st.sampled_from([b"\n", b"\r\n", b"\r"]), st.booleans(), st.lists(st.integers(0, 10**6), max_size=10)
)
def test_sse_chunking_gives_the_same_events(
    events: List[Dict[str, Any]], eol: bytes, bom: bool, cuts: List[int]
) -> None:
    data = (b"\xef\xbb\xbf" if bom else b"") + _serialize(events, eol)
    whole = _parse([data])
    assert _parse(_split(data, cuts)) == whole
    assert _parse([bytes([b]) for b in data]) == whole
    dispatched = [e for e in events if e["data"] or "event" in e or "id" in e or "retry" in e]
    assert [d for _, d, _, _, _ in whole if d] == [
        "\n".join(e["data"]).encode() for e in dispatched if e["data"] and "\n".join(e["data"])
    ]


@settings(max_examples=fuzz_examples(2000))
@given(st.binary(max_size=400), st.lists(st.integers(0, 500), max_size=8))
def test_sse_parser_never_raises_on_arbitrary_bytes(data: bytes, cuts: List[int]) -> None:
    parser = EventParser(max_event_size=64)
    for chunk in _split(data, cuts):
        for ev in parser.feed(chunk):
            assert isinstance(ev.data, bytes)
    parser.close()


def test_sse_bom_split_across_chunks_is_stripped() -> None:
    """Found by the chunking property: a BOM cut after its first byte was kept and broke the first line."""
    data = b"\xef\xbb\xbfdata: x\n\n"
    assert _parse([data[:1], data[1:]]) == _parse([data]) == [("message", b"x", None, None, False)]
