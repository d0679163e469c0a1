"""HTTP/1.1 answers parsed by mcpsync/transports/http/wire.py: the same as ``http.client`` reads valid ones,
and never anything but a ``BadAnswer`` (or a complete body) for arbitrary bytes."""

from __future__ import annotations

import http.client
import io
from typing import Any, List, Tuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpsync.transports.http.wire import BadAnswer, IncompleteBody, NoAnswer, read_head


class _Trickle(io.RawIOBase):
    """A raw stream that hands out its bytes in the given piece sizes (a socket's reads)."""

    def __init__(self, data: bytes, sizes: List[int]) -> None:
        self._data = data
        self._sizes = sizes or [len(data) or 1]
        self._i = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        if not self._data:
            return 0
        n = min(len(b), self._sizes[self._i % len(self._sizes)], len(self._data))
        self._i += 1
        b[:n] = self._data[:n]
        self._data = self._data[n:]
        return n


def _fp(data: bytes, sizes: List[int] = []) -> io.BufferedReader:  # noqa: B006 - never mutated
    return io.BufferedReader(_Trickle(data, sizes), 64)


def _body(body: Any) -> bytes:
    out = []
    while True:
        chunk = body.read1(7)
        if not chunk:
            return b"".join(out)
        out.append(chunk)


class _Sock:
    def __init__(self, data: bytes) -> None:
        self._data = data

    def makefile(self, mode: str) -> io.BytesIO:
        return io.BytesIO(self._data)


def _stdlib(data: bytes, method: str) -> Tuple[int, List[Tuple[str, str]], bytes]:
    r = http.client.HTTPResponse(_Sock(data), method=method)  # type: ignore[arg-type]
    r.begin()
    return r.status, list(r.getheaders()), r.read()


_names = st.sampled_from(["X-A", "x-b", "Mcp-Session-Id", "Content-Type", "Set-Cookie", "Retry-After", "ETag"])
_values = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), max_size=20)
_statuses = st.sampled_from([200, 201, 202, 204, 301, 400, 401, 404, 405, 500, 503])


@st.composite
def _answers(draw: Any) -> Tuple[bytes, int, List[Tuple[str, str]], bytes, str, List[int]]:
    status = draw(_statuses)
    headers = draw(st.lists(st.tuples(_names, _values), max_size=6))
    body = draw(st.binary(max_size=300)) if status != 204 else b""
    framing = draw(st.sampled_from(["length", "chunked"]))
    method = draw(st.sampled_from(["POST", "GET"]))
    head = [b"HTTP/1.1 %d Reason Here" % status]
    head += [("%s: %s" % kv).encode() for kv in headers]
    if status == 204:
        payload = b""
    elif framing == "length":
        head.append(b"Content-Length: %d" % len(body))
        payload = body
    else:
        head.append(b"Transfer-Encoding: chunked")
        cuts = sorted(set(draw(st.lists(st.integers(0, len(body)), max_size=4))) | {0, len(body)})
        pieces = [body[a:b] for a, b in zip(cuts, cuts[1:]) if b > a]
        payload = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\nTrailer: x\r\n\r\n"
    interim = draw(st.booleans())
    data = (b"HTTP/1.1 100 Continue\r\n\r\n" if interim else b"") + b"\r\n".join(head) + b"\r\n\r\n" + payload
    sizes = draw(st.lists(st.integers(1, 40), max_size=5))
    return data, status, headers, body, method, sizes


@settings(max_examples=300, deadline=None)
@given(_answers())
def test_valid_answers_read_as_http_client_reads_them_in_any_pieces(answer: Any) -> None:
    data, status, _headers, body, method, sizes = answer
    got_status, reason, headers, got_body = read_head(_fp(data, sizes), method)
    want_status, want_headers, want_body = _stdlib(data, method)
    assert got_status == want_status == status
    assert reason == "Reason Here"
    assert headers.items() == want_headers
    for name, _value in want_headers:
        assert headers.get(name.upper()) == dict((k.lower(), v) for k, v in reversed(want_headers))[name.lower()]
    assert _body(got_body) == want_body == (body if status != 204 else b"")
    assert got_body.complete and got_body.reusable


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=400), st.lists(st.integers(1, 50), max_size=4), st.sampled_from(["POST", "HEAD"]))
def test_arbitrary_bytes_give_a_bad_answer_or_a_complete_body(data: bytes, sizes: List[int], method: str) -> None:
    try:
        status, _reason, headers, body = read_head(_fp(data, sizes), method)
        _body(body)
    except BadAnswer:
        return
    assert 100 <= status <= 999 and body.complete
    assert isinstance(headers.items(), list)


@pytest.mark.parametrize(
    "data, error",
    [
        (b"", NoAnswer),
        (b"HTTP/1.1 200 OK\r\n", BadAnswer),
        (b"HTTP/2 200 OK\r\n\r\n", BadAnswer),
        (b"HTTP/1.1 20 OK\r\n\r\n", BadAnswer),
        (b"HTTP/1.1 200OK\r\n\r\n", BadAnswer),
        (b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n", BadAnswer),
        (b"HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", BadAnswer),
        (b"HTTP/1.1 200 OK\r\n folded-first\r\n\r\n", BadAnswer),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello", BadAnswer),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", BadAnswer),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", IncompleteBody),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", BadAnswer),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX", BadAnswer),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel", IncompleteBody),
        (b"HTTP/1.1 200 OK\r\n" + b"X: y\r\n" * 101 + b"\r\n", BadAnswer),
        (b"HTTP/1.1 200 OK\r\nX: " + b"y" * 70000 + b"\r\n\r\n", BadAnswer),
    ],
)
def test_malformed_answers_are_refused(data: bytes, error: type) -> None:
    with pytest.raises(error):
        _status, _reason, _headers, body = read_head(_fp(data), "POST")
        _body(body)


def test_framing_rules_and_connection_reuse() -> None:
    def parse(data: bytes, method: str = "POST") -> Any:
        status, _reason, headers, body = read_head(_fp(data), method)
        return status, headers, _body(body), body

    _, _, text, body = parse(b"HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\nhello")
    assert text == b"hello" and body.reusable
    _, _, text, body = parse(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}")
    assert text == b"{}" and not body.reusable
    _, _, text, body = parse(b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}")
    assert text == b"{}" and not body.reusable
    _, _, text, body = parse(b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\n{}")
    assert body.reusable
    _, _, text, body = parse(b"HTTP/1.1 200 OK\r\n\r\nuntil the end")
    assert text == b"until the end" and not body.reusable
    # Transfer-Encoding wins over Content-Length, and such a connection is never reused
    _, _, text, body = parse(
        b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"
    )
    assert text == b"ok" and not body.reusable
    _, _, text, body = parse(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello", "HEAD")
    assert text == b"" and body.complete
    status, headers, text, _ = parse(
        b"HTTP/1.1 103 Early\r\nLink: x\r\n\r\nHTTP/1.1 304 Not Modified\r\nETag: 1\r\n\r\n"
    )
    assert status == 304 and headers.get("etag") == "1" and "Link" not in headers and text == b""
    _, headers, _, _ = parse(
        b"HTTP/1.1 200 OK\r\nX-Long: a\r\n  b\r\nSet-Cookie: a=1\r\nSet-Cookie: b=2\r\nContent-Length: 0\r\n\r\n"
    )
    assert headers["x-long"] == "a b" and headers.get_all("set-cookie") == ["a=1", "b=2"]
    with pytest.raises(KeyError):
        headers["missing"]
    assert "a=1" not in repr(headers)  # values (cookies, tokens) never shown
