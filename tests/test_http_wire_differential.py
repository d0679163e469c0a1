"""mcpsync's hand-written response parser (transports/http/wire.py), fuzzed differentially against the two
libraries it could be replaced by: ``http.client.HTTPResponse`` and ``h11`` (a test-only dependency).

Every generated HTTP/1.1 answer is parsed three times. Property: where wire.py and a reference disagree
(one accepts, the other refuses, or both accept with a different status, header multiset or body), the
generated answer carries a feature listed in :data:`DEVIATIONS` for that reference, in that direction,
with the reason the deviation is deliberate; and wire.py refuses only with a ``BadAnswer``, never another
exception. The same answers are then served by a real local socket server to the real engine
(:class:`~mcpsync.transports.http.engine.DirectNet`): the engine returns what wire.py parsed or raises an
engine error (``ConnectionBroken``), and the next request still gets its answer. Mutated answers (bytes
flipped, dropped, inserted) that both references read alike, wire.py reads alike too.

Runs in seconds; ``MCPSYNC_FUZZ_SCALE=20`` multiplies every example count for a longer campaign.

Headers are compared as the RFC combines them (RFC 9110 5.3): names case-insensitive, the values of one
name joined with ", " in arrival order, an obsolete line folding as one space, equal duplicate
``Content-Length`` values as one (h11 collapses them, RFC 9110 8.6 allows it).
"""

from __future__ import annotations

import http.client
import io
import os
import re
import socket
import threading
from typing import Any, Callable, Dict, FrozenSet, Iterator, List, NamedTuple, Optional, Set, Tuple

import h11
import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from mcpsync.transports.http.engine import DirectNet
from mcpsync.transports.http.netbase import ConnectionBroken, EngineError
from mcpsync.transports.http.wire import BadAnswer, read_head

#: a longer campaign: MCPSYNC_FUZZ_SCALE=20 runs 20 times the examples
_SCALE = max(1, int(os.environ.get("MCPSYNC_FUZZ_SCALE", "1")))

# --------------------------------------------------------------------------- the deliberate deviations

#: (reference, feature) -> (direction, reason). direction: "stricter" (wire.py refuses what the reference
#: accepts), "lenient" (wire.py accepts what the reference refuses), "differs" (any disagreement: both
#: accept differently, or one refuses).
DEVIATIONS: Dict[Tuple[str, str], Tuple[str, str]] = {
    # --- against http.client (lenient where a desynchronised connection is a risk)
    ("stdlib", "cl-conflict"): (
        "stricter",
        "conflicting Content-Length values are an unrecoverable framing error (RFC 9112 6.3 item 5); "
        "http.client silently uses the first one: the classic response-splitting / smuggling vector",
    ),
    ("stdlib", "cl-bad"): (
        "stricter",
        "a Content-Length that is not 1*DIGIT (negative, '+5', '0x5', words) is invalid (RFC 9112 6.3 "
        "item 5); http.client reads such a body to the connection's end, or int()s signs and underscores",
    ),
    ("stdlib", "cl-list"): (
        "differs",
        "a Content-Length listing one value several times ('5, 5') is that length (RFC 9110 8.6; h11 reads "
        "it so); http.client cannot int() it and reads the body to the connection's end, trailing bytes too",
    ),
    ("stdlib", "te-not-chunked"): (
        "stricter",
        "a transfer coding other than one 'chunked' (gzip, identity, chunked twice) is not decoded by "
        "either parser: http.client hands the still-coded (or still-chunked) bytes on as the body, "
        "wire.py refuses the answer (as h11 does) rather than deliver bytes that are not the content",
    ),
    ("stdlib", "interim-not-100"): (
        "differs",
        "every 1xx but 101 is an interim answer (RFC 9110 15.2: 102, 103 Early Hints are followed by the "
        "final answer); http.client skips only 100 and returns a 103 as if it were the answer",
    ),
    ("stdlib", "odd-status-line"): (
        "stricter",
        "the status line is HTTP/1.x SP 3DIGIT [SP reason] (RFC 9112 4): a leading space, two spaces or a tab "
        "before the code is refused, as h11 does; http.client strips the line and splits it on any whitespace",
    ),
    ("stdlib", "many-headers"): (
        "lenient",
        "both refuse more than 100 headers, but wire.py counts fields and http.client lines (an obsolete "
        "folded continuation line counts as a header there)",
    ),
    ("stdlib", "truncated"): (
        "stricter",
        "an answer the connection cut short is refused: a head without its blank line, a Content-Length body "
        "or a chunked body missing bytes (RFC 9112 8: an incomplete message); http.client takes the end of "
        "the connection as the end of the head",
    ),
    ("stdlib", "trailer-eof"): (
        "stricter",
        "a chunked body whose trailer section never ends (EOF after the last chunk) is truncated "
        "(RFC 9112 8); http.client treats EOF as the end of the trailer",
    ),
    ("stdlib", "chunk-size-space"): (
        "differs",
        "http.client int()s the chunk-size line, so ' 5 ', '+5', '0x5' or '5_0' are accepted sizes; wire.py "
        "accepts optional whitespace around the hex digits (BWS before chunk-ext, RFC 9112 7.1.1) only",
    ),
    ("stdlib", "chunk-size-junk"): (
        "stricter",
        "a chunk size that is not 1*HEXDIG is refused (RFC 9112 7.1); http.client int(x, 16)s it "
        "(accepting '0x5', '+5', '5_0')",
    ),
    ("stdlib", "te-whitespace"): (
        "differs",
        "whitespace around a field value is not part of it (OWS, RFC 9110 5.5): ' chunked ' is chunked; "
        "http.client compares the raw value and then reads to the connection's end, or trusts a "
        "Content-Length beside it: the TE.CL desynchronisation that request smuggling exploits",
    ),
    ("stdlib", "chunk-data-no-crlf"): (
        "stricter",
        "chunk data must be followed by exactly CRLF (RFC 9112 7.1); http.client discards whatever two "
        "bytes follow, so a peer's framing error shifts every later chunk (h11 fixed the same leniency as "
        "CVE-2025-43859)",
    ),
    ("stdlib", "no-body-status-with-te"): (
        "differs",
        "1xx, 204 and 304 answers have no body whatever their headers say (RFC 9112 6.3 item 1); http.client "
        "reads a chunked body after a 204 or 304 with Transfer-Encoding (and fails when none follows)",
    ),
    ("stdlib", "bad-header-line"): (
        "stricter",
        "a field line without a colon, with whitespace before the colon or a name that is not a token "
        "is refused (RFC 9112 5.1: whitespace before the colon MUST be rejected, a smuggling vector); "
        "http.client's email parser drops or keeps such lines",
    ),
    ("stdlib", "cl-huge"): (
        "stricter",
        "a Content-Length over 18 digits is refused before the body (as h11 does past 20): no body is an "
        "exabyte, and int() of a 5,000-digit value raises ValueError; http.client raises OverflowError or "
        "ValueError, or on a HEAD answer accepts it",
    ),
    ("h11", "cl-huge"): (
        "stricter",
        "(the same) wire.py's limit is 18 digits, h11's 20",
    ),
    # --- against h11 (which is stricter than the RFC requires a client to be)
    ("h11", "long-line"): (
        "stricter",
        "a line of the head over 64 KiB is refused, http.client's limit (memory stays bounded against a "
        "hostile server); h11 bounds the whole head instead (16 KiB by default, raised here to compare)",
    ),
    ("h11", "many-headers"): (
        "stricter",
        "more than 100 header lines are refused, http.client's limit (a bounded head against a hostile "
        "server); h11 bounds the head's size only",
    ),
    ("h11", "obs-fold"): (
        "differs",
        "an obsolete line folding is replaced by one space, the whitespace around it dropped (RFC 9112 5.2 "
        "allows one or more SP), as http.client reads it; h11 keeps the whitespace before the fold",
    ),
    ("h11", "bare-lf"): (
        "lenient",
        "a bare LF ends a line of the head and of a chunk-size line (RFC 9112 2.2: a recipient MAY "
        "recognise a single LF as a line terminator), as http.client and browsers do; h11 refuses a "
        "bare LF in chunk-size lines. The CRLF after chunk data is still required exactly",
    ),
    ("h11", "chunk-size-space"): (
        "lenient",
        "whitespace around the chunk size (BWS before a chunk extension, RFC 9112 7.1.1) is accepted, "
        "as http.client does; h11 refuses it",
    ),
    ("h11", "status-101"): (
        "differs",
        "a 101 to a request that asked for no upgrade is returned to the engine as the answer (which "
        "then fails the call on its status); h11 refuses it as a protocol error",
    ),
    ("h11", "ctl-in-value"): (
        "lenient",
        "control characters in a header value are kept as received (as http.client does): the value is "
        "opaque to the transport, and a CR or LF cannot occur inside one line; h11 refuses them",
    ),
    ("h11", "space-in-reason"): (
        "lenient",
        "the reason phrase is free text the client ignores (RFC 9112 4); h11 refuses control characters in it",
    ),
}

# --------------------------------------------------------------------------- the generated answers


class Case(NamedTuple):
    data: bytes
    method: str
    features: FrozenSet[str]
    sizes: Tuple[int, ...]  # the pieces a socket's reads hand out

    def __repr__(self) -> str:  # a 64 KiB header value shown as its length
        data = re.sub(rb"(.)\1{63,}", lambda m: m.group(1) + b"<x%d>" % len(m.group(0)), self.data)
        return "Case(%r, %r, %s, %r)" % (data, self.method, sorted(self.features), self.sizes)


_NAMES = ["Content-Type", "content-type", "X-Trace", "x-trace", "Mcp-Session-Id", "Set-Cookie", "ETag", "Vary", "Date"]
_VALUE_CHARS = st.characters(min_codepoint=0x21, max_codepoint=0x7E)
_OBS_TEXT = st.characters(min_codepoint=0x80, max_codepoint=0xFF)
_ODD_STATUS_LINES = [
    b"HTTP/1.1  200 OK",
    b"HTTP/1.1 200\tOK",
    b"http/1.1 200 OK",
    b"HTTP/1.2 200 OK",
    b"HTTP/2 200 OK",
    b"HTTP/1.1 2000 OK",
    b"HTTP/1.1 20 OK",
    b" HTTP/1.1 200 OK",
    b"HTTP/1.1 -20 OK",
    b"HTTP/1.1 099 Low",
    b"ICY 200 OK",
    b"HTTP/1.1",
]
_REASONS = [b"OK", b"", b"Reason Here", b"odd  spacing ", b"caf\xe9", b"with: colon", b"HTTP/1.1 200 OK", b"tab\there"]


@st.composite
def _value(draw: Any, features: Set[str]) -> bytes:
    kind = draw(st.sampled_from(["plain", "plain", "plain", "spaces", "obs-text", "long", "fold", "ctl", "empty"]))
    if kind == "plain":
        return draw(st.text(_VALUE_CHARS, min_size=1, max_size=30)).encode()
    if kind == "spaces":
        inner = draw(st.text(_VALUE_CHARS, min_size=1, max_size=8)).encode()
        return (
            draw(st.sampled_from([b" ", b"\t", b"  "]))
            + inner
            + b" a b "
            + inner
            + draw(st.sampled_from([b"", b" ", b"\t "]))
        )
    if kind == "obs-text":
        return draw(st.text(_OBS_TEXT, min_size=1, max_size=10)).encode("latin-1")
    if kind == "long":
        return b"v" * draw(st.sampled_from([1000, 8000, 20000, 65520]))
    if kind == "fold":
        features.add("obs-fold")
        a, b = (draw(st.text(_VALUE_CHARS, min_size=1, max_size=8)).encode() for _ in range(2))
        return a + b"\r\n" + draw(st.sampled_from([b" ", b"\t", b"   "])) + b
    if kind == "ctl":
        features.add("ctl-in-value")
        return b"a" + bytes([draw(st.sampled_from([0, 1, 8, 0x1F, 0x7F]))]) + b"b"
    return b""


@st.composite
def _chunked(draw: Any, body: bytes, features: Set[str]) -> bytes:
    cuts = sorted(set(draw(st.lists(st.integers(0, len(body)), max_size=5))) | {0, len(body)})
    pieces = [body[a:b] for a, b in zip(cuts, cuts[1:]) if b > a]
    out = []
    for piece in pieces:
        size = b"%x" % len(piece)
        style = draw(st.sampled_from(["plain", "plain", "upper", "zeros", "ext", "ext-q", "space", "junk", "lf"]))
        if style == "upper":
            size = size.upper()
        elif style == "zeros":
            size = b"000" + size
        elif style == "ext":
            size += b";name=value"
        elif style == "ext-q":
            size += b';a="quoted;value";b'
        elif style == "space":
            size = b" " + size + b" "
            features.add("chunk-size-space")
        elif style == "junk":
            size = draw(st.sampled_from([b"0x", b"+", b"zz", b"-"])) + size
            features.add("chunk-size-junk")
        eol = b"\r\n"
        if style == "lf":
            eol = b"\n"
            features.add("bare-lf")
        after = b"\r\n"
        if draw(st.integers(0, 9)) == 0:
            after = draw(st.sampled_from([b"", b"\n", b"XX", b"\r"]))
            features.add("chunk-data-no-crlf")
        out.append(size + eol + piece + after)
    last = draw(st.sampled_from([b"0\r\n", b"0;end=1\r\n", b"00\r\n"]))
    trailers = draw(st.sampled_from([b"", b"Trailer-A: 1\r\n", b"X-Checksum: abc\r\nX-Other: d\r\n"]))
    end = b"\r\n"
    if draw(st.integers(0, 9)) == 0:
        end = b""
        features.add("trailer-eof")
    return b"".join(out) + last + trailers + end


@st.composite
def answers(draw: Any) -> Case:
    """An answer a real or a hostile server might send, and the features that make it odd."""
    features: Set[str] = set()
    method = draw(st.sampled_from(["POST", "POST", "GET", "DELETE", "HEAD"]))
    lf = draw(st.integers(0, 9)) == 0
    if lf:
        features.add("bare-lf")
    eol = b"\n" if lf else b"\r\n"
    data = b""
    for _ in range(draw(st.integers(0, 2))):  # interim answers
        code = draw(st.sampled_from([100, 100, 102, 103]))
        if code != 100:
            features.add("interim-not-100")
        data += b"HTTP/1.1 %d Interim%s" % (code, eol)
        if code == 103:
            data += b"Link: </style.css>; rel=preload" + eol
        data += eol
    status = draw(st.sampled_from([200, 200, 200, 201, 202, 204, 299, 304, 400, 401, 404, 413, 500, 503, 599, 101]))
    if status == 101:
        features.add("status-101")
    version = draw(st.sampled_from([b"HTTP/1.1", b"HTTP/1.1", b"HTTP/1.0"]))
    reason = draw(st.sampled_from(_REASONS))
    if b"\t" in reason:
        features.add("space-in-reason")
    line = version + b" %d" % status + (b" " + reason if reason or draw(st.booleans()) else b"")
    if draw(st.integers(0, 14)) == 0:
        line = draw(st.sampled_from(_ODD_STATUS_LINES))
        features.add("odd-status-line")
    head = [line]
    for _ in range(draw(st.integers(0, 6))):
        head.append(
            draw(st.sampled_from(_NAMES)).encode()
            + b":"
            + draw(st.sampled_from([b" ", b"", b"  ", b"\t"]))
            + draw(_value(features))
        )
    if draw(st.integers(0, 14)) == 0:
        bad = [b"No-Colon-Here", b"Bad Name: x", b"X-Space : y", b"X\x01: y", b": empty-name", b" folded-first"]
        at = 1 if draw(st.booleans()) else len(head)
        line = draw(st.sampled_from(bad))
        head.insert(at, line)
        # a line starting with whitespace continues the header before it (obs-fold); first, it is malformed
        features.add("obs-fold" if line.startswith(b" ") and at > 1 else "bad-header-line")
    body = draw(st.sampled_from([b"", b"{}", b'{"jsonrpc":"2.0","id":1,"result":{}}'])) + draw(st.binary(max_size=200))
    no_body = method == "HEAD" or status in (204, 304) or 100 <= status < 200
    framing = draw(st.sampled_from(["length", "length", "chunked", "chunked", "close"]))
    payload = body
    if framing == "length":
        kind = draw(
            st.sampled_from(["ok", "ok", "ok", "dup", "list", "conflict", "negative", "huge", "bad", "short", "long"])
        )
        n = len(body)
        if kind == "ok":
            head.append(b"Content-Length: %d" % n)
        elif kind == "dup":
            head += [b"Content-Length: %d" % n, b"content-length: %d" % n]
        elif kind == "list":
            head.append(b"Content-Length: %d, %d" % (n, n))
            features.add("cl-list")
        elif kind == "conflict":
            head += [b"Content-Length: %d" % n, b"Content-Length: %d" % (n + 1)]
            features.add("cl-conflict")
        elif kind == "negative":
            head.append(b"Content-Length: -%d" % (n + 1))
            features.add("cl-bad")
        elif kind == "huge":
            head.append(b"Content-Length: " + draw(st.sampled_from([b"%d" % (1 << 40), b"1" + b"0" * 30, b"9" * 5000])))
            features.update(("cl-huge", "truncated"))
        elif kind == "bad":
            head.append(
                b"Content-Length: " + draw(st.sampled_from([b"+%d" % n, b"0x%x" % n, b"%d_0" % n, b"abc", b""]))
            )
            features.add("cl-bad")
        elif kind == "short":  # more bytes than announced: the rest is the next answer's (junk) bytes
            head.append(b"Content-Length: %d" % (n // 2))
            features.add("extra-bytes")
        else:
            head.append(b"Content-Length: %d" % (n + 5))
            features.add("truncated")
    elif framing == "chunked":
        te = draw(
            st.sampled_from(
                [b"chunked", b"chunked", b"Chunked", b" chunked ", b"gzip, chunked", b"identity", b"chunked, chunked"]
            )
        )
        if te.strip().lower() != b"chunked":
            features.add("te-not-chunked")
        if te != te.strip():
            features.add("te-whitespace")
        head.append(b"Transfer-Encoding: " + te)
        if draw(st.integers(0, 5)) == 0:
            head.append(b"Content-Length: %d" % len(body))
            features.add("te-and-cl")
        payload = draw(_chunked(body, features))
        if no_body and method != "HEAD":
            features.add("no-body-status-with-te")
        if draw(st.integers(0, 7)) == 0:
            cut = draw(st.integers(0, max(0, len(payload) - 1)))
            payload = payload[:cut]
            features.add("truncated")
    else:
        features.add("close-delimited")
    if draw(st.integers(0, 7)) == 0:
        payload += draw(st.binary(min_size=1, max_size=20))
        features.add("extra-bytes")
    if draw(st.integers(0, 29)) == 0:  # over 100 header lines
        head[1:1] = [b"X-Many-%d: v" % i for i in range(draw(st.sampled_from([95, 101, 150])))]
        features.add("many-headers")
    if draw(st.integers(0, 29)) == 0:  # no head at all: a body (or an event) alone
        data = draw(st.sampled_from([b"", b"{}", b'{"jsonrpc":"2.0","id":1,"result":{}}', b"data: {}\n\n", b"\r\n"]))
        data += payload
        features.add("head-less")
        return Case(data, method, frozenset(features), ())
    data += eol.join(head) + eol + eol + payload
    if draw(st.integers(0, 11)) == 0:  # the connection ends anywhere
        data = data[: draw(st.integers(0, len(data)))]
        features.add("truncated")
    if any(len(line) > 65534 for line in head):
        features.add("long-line")
    if lf and b"\r\n" in data:
        features.add("bare-lf")
    sizes = tuple(draw(st.lists(st.integers(1, 64), max_size=4)))
    return Case(data, method, frozenset(features), sizes)


# --------------------------------------------------------------------------- the three parsers

Outcome = Tuple[Any, ...]  # ("ok", status, headers, body) or ("refused", what)


def _norm(items: Any) -> List[Tuple[str, str]]:
    combined: Dict[str, List[str]] = {}
    for name, value in items:
        name = name.decode("latin-1") if isinstance(name, bytes) else name
        value = value.decode("latin-1") if isinstance(value, bytes) else value
        value = re.sub(r"[ \t]*\r?\n[ \t]+", " ", value).strip(" \t")
        combined.setdefault(name.lower(), []).append(value)
    out = []
    for name, values in combined.items():
        value = ", ".join(values)
        if name == "content-length" and len({v.strip() for v in value.split(",")}) == 1:
            value = value.split(",")[0].strip()
        if name == "transfer-encoding":
            value = value.lower()
        out.append((name, value))
    return sorted(out)


class _Trickle(io.RawIOBase):
    """A raw stream handing out its bytes in the given piece sizes, as a socket's reads do."""

    def __init__(self, data: bytes, sizes: Tuple[int, ...]) -> None:
        self._data = data
        self._sizes = sizes or (len(data) or 1,)
        self._i = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        n = min(len(b), self._sizes[self._i % len(self._sizes)], len(self._data))
        self._i += 1
        b[:n] = self._data[:n]
        self._data = self._data[n:]
        return n


def parse_wire(fp: Any, method: str) -> Outcome:
    """wire.py as engine.py drives it: ``read_head`` on a buffered reader, then ``Body.read1`` to the end."""
    try:
        status, _reason, headers, body = read_head(fp, method)
        parts = []
        while True:
            chunk = body.read1(8192)
            if not chunk:
                break
            parts.append(chunk)
    except BadAnswer as exc:
        return ("refused", type(exc).__name__)
    assert body.complete
    return ("ok", status, _norm(headers.items()), b"".join(parts))


class _FakeSock:
    def __init__(self, data: bytes, sizes: Tuple[int, ...]) -> None:
        self._fp = io.BufferedReader(_Trickle(data, sizes))

    def makefile(self, mode: str) -> Any:
        return self._fp


def parse_stdlib(data: bytes, method: str, sizes: Tuple[int, ...] = ()) -> Outcome:
    resp = http.client.HTTPResponse(_FakeSock(data, sizes), method=method)  # type: ignore[arg-type]
    try:
        resp.begin()
        parts = []  # in pieces: read() of a 1 TB Content-Length would allocate it first
        while True:
            chunk = resp.read(65536)
            if not chunk:
                break
            parts.append(chunk)
    except (http.client.HTTPException, ValueError, OverflowError) as exc:
        return ("refused", type(exc).__name__)
    return ("ok", resp.status, _norm(resp.getheaders()), b"".join(parts))


def parse_h11(data: bytes, method: str, sizes: Tuple[int, ...] = ()) -> Outcome:
    conn = h11.Connection(h11.CLIENT, max_incomplete_event_size=1 << 22)
    request_headers = [("Host", "mcp.example")] + ([("Content-Length", "0")] if method in ("POST", "DELETE") else [])
    conn.send(h11.Request(method=method, target="/mcp", headers=request_headers))
    conn.send(h11.EndOfMessage())
    step = sizes[0] if sizes else len(data) or 1
    for i in range(0, len(data), step):
        conn.receive_data(data[i : i + step])
    conn.receive_data(b"")
    response: Any = None
    parts = []
    try:
        while True:
            event = conn.next_event()
            if isinstance(event, h11.Response):
                response = event
            elif isinstance(event, h11.Data):
                parts.append(bytes(event.data))
            elif isinstance(event, h11.EndOfMessage):
                break
            elif isinstance(event, h11.InformationalResponse):
                continue
            else:  # NEED_DATA after EOF, ConnectionClosed, PAUSED (101): no complete answer
                return ("refused", repr(event))
    except h11.RemoteProtocolError:
        return ("refused", "RemoteProtocolError")
    return ("ok", response.status_code, _norm(response.headers.raw_items()), b"".join(parts))


def _short(outcome: Outcome) -> str:
    text = repr(outcome)
    return text if len(text) < 400 else text[:200] + "..." + text[-200:]


def _explained(ref: str, mine: Outcome, theirs: Outcome, features: FrozenSet[str]) -> Optional[str]:
    if mine[0] == "refused" and theirs[0] == "refused":
        return "both refuse"
    direction = "stricter" if mine[0] == "refused" else "lenient" if theirs[0] == "refused" else "differs"
    for feature in sorted(features):
        allowed = DEVIATIONS.get((ref, feature))
        if allowed is not None and allowed[0] in (direction, "differs"):
            return feature
    return None


def check_case(case: Case, fp: Any = None, record: Callable[[str], None] = lambda _label: None) -> Outcome:
    """The property, for one answer; returns wire.py's outcome."""
    if fp is None:
        fp = io.BufferedReader(_Trickle(case.data, case.sizes), 64)
    try:
        mine = parse_wire(fp, case.method)
    except BadAnswer:  # pragma: no cover - parse_wire catches it
        raise
    except Exception as exc:  # every refusal is a BadAnswer
        raise AssertionError("wire.py raised %r, not a BadAnswer" % exc) from exc
    for ref, theirs in (
        ("stdlib", parse_stdlib(case.data, case.method, case.sizes)),
        ("h11", parse_h11(case.data, case.method, case.sizes)),
    ):
        if mine == theirs:
            continue
        why = _explained(ref, mine, theirs, case.features)
        if why is not None:
            record("%s refuses too" % ref if why == "both refuse" else "deviation from %s: %s" % (ref, why))
        assert why is not None, "wire.py %s vs %s %s for %r" % (_short(mine), ref, _short(theirs), case)
    return mine


# --------------------------------------------------------------------------- parser level


def _case(data: bytes, method: str = "POST", *features: str) -> Case:
    return Case(data, method, frozenset(features), ())


@settings(
    max_examples=600 * _SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(answers())
def test_wire_agrees_with_http_client_and_h11_but_for_documented_deviations(case: Case) -> None:
    event("wire.py: %s" % check_case(case, record=event)[0])


@settings(max_examples=400 * _SCALE, deadline=None)
@given(answers(), st.data())
def test_junk_bytes_are_a_bad_answer_never_another_exception(case: Case, data: Any) -> None:
    """Mutated answers (bytes flipped, dropped, inserted): wire.py refuses with BadAnswer or reads a
    complete answer, and where http.client and h11 both read the same answer, wire.py reads that answer."""
    raw = bytearray(case.data)
    for _ in range(data.draw(st.integers(1, 4))):
        op = data.draw(st.sampled_from(["flip", "drop", "insert"]))
        at = data.draw(st.integers(0, max(0, len(raw) - 1)))
        byte = data.draw(st.sampled_from([0, 9, 10, 13, 32, 58, 59, 48, 0x7F, 0xFF]))
        if op == "flip" and raw:
            raw[at] = byte
        elif op == "drop" and raw:
            del raw[at]
        else:
            raw.insert(at, byte)
    mutated = bytes(raw)
    try:
        mine = parse_wire(io.BufferedReader(_Trickle(mutated, case.sizes), 64), case.method)
    except Exception as exc:  # noqa: BLE001 - the property: nothing but BadAnswer (caught inside)
        raise AssertionError("wire.py raised %r for %r" % (exc, mutated[:200])) from exc
    assert mine[0] in ("ok", "refused")
    theirs = parse_stdlib(mutated, case.method, case.sizes)
    if theirs[0] == "ok" and theirs == parse_h11(mutated, case.method, case.sizes):
        # both references read the same answer: so does wire.py (no deviation is shared by both)
        assert mine == theirs, "wire.py %s vs both %s for %r" % (
            _short(mine),
            _short(theirs),
            case._replace(data=mutated),
        )


# Found by this fuzzing (each was a bug in wire.py, fixed with the test that found it):
_FOUND = [
    # a transfer coding wire.py did not decode: the still-gzipped chunks were handed on as the content
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", "te-not-chunked"),
    # 'chunked' applied twice (RFC 9112 6.1 forbids it): unchunked once and passed on as the content
    (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        "te-not-chunked",
    ),
    # 'identity' is no transfer coding any more: the body was read to the end of the connection
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\nContent-Length: 2\r\n\r\n{}", "te-not-chunked"),
    # a 5,000-digit Content-Length: int() raised ValueError (not a BadAnswer) past Python's digit limit
    (b"HTTP/1.1 200 OK\r\nContent-Length: " + b"9" * 5000 + b"\r\n\r\n{}", "cl-huge"),
    # chunk data ended by a bare LF instead of CRLF: accepted (a desync risk; both references refuse it)
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\n0\r\n\r\n", "chunk-data-no-crlf"),
    # conflicting Content-Length values on a HEAD answer: accepted, since no body was read
    (b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nContent-Length: 1\r\n\r\n", "cl-conflict"),
]


@pytest.mark.parametrize("method", ["POST", "HEAD"])
@pytest.mark.parametrize("data, feature", _FOUND)
def test_regressions_found_by_the_fuzzer_are_refused(data: bytes, feature: str, method: str) -> None:
    if method == "HEAD" and feature == "chunk-data-no-crlf":
        return  # no body is read after a HEAD: only the framing headers are checked
    mine = check_case(_case(data, method, feature))
    assert mine == ("refused", "BadAnswer")
    assert parse_h11(data, method)[0] == "refused"


def test_a_higher_minor_version_reads_as_http_1_1() -> None:
    """Found by this fuzzing: both references read an HTTP/1.2 answer (RFC 9112 2.3), wire.py refused it."""
    data = b"HTTP/1.2 200 OK\r\nContent-Length: 2\r\n\r\n{}"
    assert check_case(_case(data)) == parse_h11(data, "POST") == ("ok", 200, [("content-length", "2")], b"{}")
    _status, _reason, _headers, body = read_head(io.BufferedReader(io.BytesIO(data)), "POST")
    assert body.read1(10) == b"{}" and body.reusable


def test_no_connection_reuse_after_a_101() -> None:
    """Found writing the engine-level test: after a 101 the connection was put back in the pool, though it
    then speaks another protocol."""
    _status, _reason, _headers, body = read_head(io.BufferedReader(io.BytesIO(b"HTTP/1.1 101 Upgrade\r\n\r\n")), "POST")
    assert body.complete and not body.reusable


@example(_case(_FOUND[0][0], "POST", "te-not-chunked"))
@example(_case(_FOUND[1][0], "POST", "te-not-chunked"))
@example(_case(_FOUND[2][0], "GET", "te-not-chunked"))
@example(_case(_FOUND[3][0], "POST", "cl-huge"))
@example(_case(_FOUND[4][0], "GET", "chunk-data-no-crlf"))
@example(_case(_FOUND[5][0], "HEAD", "cl-conflict"))
@example(_case(b"HTTP/1.2 200 OK\r\nContent-Length: 2\r\n\r\n{}", "POST"))
@example(_case(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n", "POST", "status-101"))
@example(_case(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}x", "POST", "cl-conflict"))
@example(
    _case(
        b"HTTP/1.1 103 Early\r\nLink: x\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}",
        "POST",
        "interim-not-100",
    )
)
@example(_case(b"HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n", "GET", "no-body-status-with-te"))
@settings(
    max_examples=50 * _SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(answers())
def test_known_deviations_stay_what_the_allow_list_says(case: Case) -> None:
    check_case(case)


_JSON = b'{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}'
_SSE = b'event: message\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n'
TYPICAL = [
    b"HTTP/1.1 200 OK\r\ndate: Tue, 24 Nov 2026 20:00:00 GMT\r\nserver: uvicorn\r\ncontent-type: application/json\r\n"
    b"mcp-session-id: 3f1c0b6e8a2d4f7e9b1a5c6d7e8f9a0b\r\ncontent-length: %d\r\n\r\n%s" % (len(_JSON), _JSON),
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache, no-transform\r\n"
    b"connection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n%x;ext=1\r\n%s\r\n0\r\nX-T: 1\r\n\r\n"
    % (len(_SSE), _SSE),
    b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n",
    b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + _JSON,
]


@pytest.mark.parametrize("data", TYPICAL)
def test_every_split_of_a_typical_answer_reads_the_same(data: bytes) -> None:
    """The answer cut in two at every byte boundary (and trickled a byte at a time): the same result."""
    whole = check_case(_case(data))
    assert whole[0] == "ok"
    for cut in range(1, len(data)):
        assert parse_wire(io.BufferedReader(_Trickle(data, (cut, len(data))), 64), "POST") == whole
    assert parse_wire(io.BufferedReader(_Trickle(data, (1,)), 64), "POST") == whole


@settings(
    max_examples=60 * _SCALE, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(answers())
def test_through_a_real_socketpair_as_the_engine_reads(case: Case) -> None:
    """The bytes written to a real socket in the generated pieces, read through ``sock.makefile("rb")``."""
    left, right = socket.socketpair()
    try:
        right.settimeout(30)

        def write() -> None:
            try:
                view = memoryview(case.data)
                step = case.sizes[0] if case.sizes else len(view) or 1
                for i in range(0, len(view), step):
                    left.sendall(view[i : i + step])
                left.shutdown(socket.SHUT_WR)
            except OSError:
                pass  # the reader stopped early (a refused head) and closed its end

        writer = threading.Thread(target=write, name="test-wire-writer", daemon=True)
        writer.start()
        fp = right.makefile("rb")
        try:
            check_case(case, fp)
        finally:
            fp.close()
            right.close()
            writer.join(30)
            assert not writer.is_alive()
    finally:
        left.close()
        right.close()


# --------------------------------------------------------------------------- engine level


_GOOD_BODY = b'{"jsonrpc":"2.0","id":2,"result":{}}'
_GOOD = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
    len(_GOOD_BODY),
    _GOOD_BODY,
)


class AnswerServer:
    """A real local socket server: each request gets the next scripted answer's bytes; after an answer
    wire.py does not read as complete and reusable the server closes the connection (its end is the body's
    end for a close-delimited body, and a truncated answer must end somewhere)."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = "http://127.0.0.1:%d/mcp" % self.sock.getsockname()[1]
        self.lock = threading.Lock()
        self.script: List[Tuple[bytes, bool]] = []
        self.served = 0
        self.conns: List[socket.socket] = []
        self.threads: List[threading.Thread] = []
        self.thread = threading.Thread(target=self._accept, name="test-answer-server", daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.conns.append(conn)
            t = threading.Thread(target=self._serve, args=(conn,), name="test-answer-conn", daemon=True)
            with self.lock:
                self.threads.append(t)
            t.start()

    def _serve(self, conn: socket.socket) -> None:
        buf = b""
        try:
            while True:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                head, _, buf = buf.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                while len(buf) < length:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                buf = buf[length:]
                with self.lock:
                    answer, keep = self.script.pop(0) if self.script else (_GOOD, True)
                    self.served += 1
                conn.sendall(answer)
                if not keep:
                    conn.shutdown(socket.SHUT_WR)
                    return
        except OSError:
            return
        finally:
            conn.close()

    def stop(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)  # wakes the thread blocked in accept() (close() does not)
        except OSError:
            pass
        self.sock.close()
        with self.lock:
            conns, threads = list(self.conns), list(self.threads)
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for t in threads:
            t.join(30)
            assert not t.is_alive()
        self.thread.join(30)
        assert not self.thread.is_alive()


@pytest.fixture(scope="module")
def answer_server() -> Iterator[AnswerServer]:
    server = AnswerServer()
    try:
        yield server
    finally:
        server.stop()


def _engine_call(net: DirectNet, url: str, method: str) -> Outcome:
    body = b'{"jsonrpc":"2.0","id":1,"method":"ping"}' if method in ("POST",) else None
    try:
        resp = net.send(method, url, body, {"Content-Type": "application/json"}, (30.0, 30.0))
        got = resp.read()
        resp.close()
    except EngineError as exc:
        return ("refused", type(exc).__name__)
    return ("ok", resp.status_code, _norm(resp.headers.items()), got)


@settings(
    max_examples=80 * _SCALE,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)
@given(answers())
@example(_case(_FOUND[0][0], "POST", "te-not-chunked"))
@example(_case(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}x", "POST", "cl-conflict"))
def test_the_engine_returns_what_wire_reads_and_the_next_call_works(answer_server: AnswerServer, case: Case) -> None:
    """The generated bytes from a real server to the real engine: the answer wire.py reads (status,
    headers, body) or an engine error (ConnectionBroken), and the next request, on a fresh connection
    when that one is gone, gets its answer."""
    method = case.method
    expected = check_case(case._replace(sizes=()))
    try:  # the server keeps the connection open after an answer the engine may reuse it after
        _s, _r, _h, body = read_head(io.BufferedReader(io.BytesIO(case.data)), method)
        while body.read1(65536):
            pass
        keep = body.reusable
    except BadAnswer:
        keep = False
    with answer_server.lock:
        answer_server.script[:] = [(case.data, keep)]
    net = DirectNet(answer_server.url, {"User-Agent": "fuzzwire"}, name="fuzz")
    try:
        got = _engine_call(net, answer_server.url, method)
        if expected[0] == "ok":
            assert got == expected
        else:
            assert got == ("refused", ConnectionBroken.__name__)
        again = _engine_call(net, answer_server.url, "POST")
        good = [("Content-Type", "application/json"), ("Content-Length", str(len(_GOOD_BODY)))]
        assert again == ("ok", 200, _norm(good), _GOOD_BODY)
    finally:
        net.close()
        with answer_server.lock:
            answer_server.script[:] = []


def test_h11_is_only_a_test_dependency() -> None:
    """The library never imports h11 (it is in the `test` extra only)."""
    import mcpsync

    root = os.path.dirname(os.path.abspath(mcpsync.__file__))
    for folder, _dirs, files in os.walk(root):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(folder, name), encoding="utf-8") as f:
                    text = f.read()
                assert not re.search(r"^\s*(import|from)\s+h11\b", text, re.M), name
