"""A request that cannot be written correctly is refused before a byte is sent; anything else arrives as given.

The HTTP engine of a transport (:func:`mcpsync.transports.http.net.make_net`, as every server gets it) sends to
a raw-socket server that parses the bytes it receives with ``h11`` (:class:`tests.peers.h11server.H11Server`).
hypothesis draws request targets, header names and header values from every character class (controls, space,
DEL, Latin-1, beyond Latin-1): each request is either refused with :class:`mcpsync.errors.MalformedHTTPRequest` (the
server then received no byte, the message names no header value) or arrives exactly as given (a header value's
surrounding blanks are not part of it; the target arrives RFC 3986 normalized as urllib3 writes it: escapes
upper-cased, a character a URI may not hold percent-encoded as UTF-8).
"""

from __future__ import annotations

import string
from typing import Any, Iterator
from urllib.parse import quote

import pytest

pytest.importorskip("h11")
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import mcpsync  # noqa: E402
from mcpsync.transports.http.net import make_net  # noqa: E402
from mcpsync.transports.http.options import HTTPOptions  # noqa: E402

from tests.peers.h11server import H11Server  # noqa: E402

pytestmark = pytest.mark.timeout(300)

TIMEOUT = (10.0, 10.0)
SECRET = "s3kr1t"
_TCHAR = set("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
_RESERVED = {"host", "content-length", "transfer-encoding", "connection", "upgrade", "expect", "te", "trailer"}
# every class of character: C0 controls, space, tab, DEL, printable ASCII, Latin-1, beyond Latin-1
_CHARS = st.characters(max_codepoint=0x17F) | st.sampled_from("\x00\t\n\r \x7f\x80\xff\u2603%%2f%ZZ")


def _token(text: str) -> bool:
    return bool(text) and all(c in _TCHAR for c in text)


def _writable_value(text: str) -> bool:
    return all(c == "\t" or (" " <= c <= "~") or ("\x80" <= c <= "\xff") for c in text)


def _normalized(target: str) -> str:
    """RFC 3986 §6.2.2 (what urllib3 writes): escapes upper-cased, what a URI may not hold percent-encoded."""
    allowed = set(string.ascii_letters + string.digits + "-._~!$&'()*+,;=:@/?")
    out = ""
    i = 0
    while i < len(target):
        if target[i] == "%" and len(target) > i + 2 and all(c in string.hexdigits for c in target[i + 1 : i + 3]):
            out += target[i : i + 3].upper()
            i += 3
            continue
        out += target[i] if target[i] in allowed else quote(target[i], safe="")
        i += 1
    return out


def _writable_url(text: str) -> bool:
    return all(c > " " and c != "\x7f" for c in text)


@pytest.fixture()
def served() -> Iterator[Any]:
    with H11Server() as server:
        net = make_net(server.url + "/mcp", HTTPOptions())
        try:
            yield server, net
        finally:
            net.close()


def _post(net: Any, url: str, headers: Any) -> None:
    response = net.send("POST", url, b"{}", headers, TIMEOUT)
    try:
        assert response.status_code == 200
        assert response.read() == b"{}"
    finally:
        response.close()


@given(
    name=st.text(_CHARS, min_size=1, max_size=12), before=st.text(_CHARS, max_size=8), after=st.text(_CHARS, max_size=8)
)
def test_any_header_is_refused_or_arrives_as_given(served: Any, name: str, before: str, after: str) -> None:
    server, net = served
    if name.lower() in _RESERVED:
        return
    value = before + SECRET + after
    sent_before = len(server.raw)
    count = len(server.requests)
    if not (_token(name) and _writable_value(value)):
        with pytest.raises(mcpsync.errors.MalformedHTTPRequest) as caught:
            _post(net, server.url + "/mcp", {name: value})
        assert SECRET not in str(caught.value)
        assert caught.value.part in ("header name", "header value")
        assert caught.value.header == (name if caught.value.part == "header value" else None)
        assert len(server.raw) == sent_before, "a byte of a refused request was sent"
        return
    _post(net, server.url + "/mcp", {name: value})
    assert server.errors == []
    assert len(server.requests) == count + 1
    _method, _target, got = server.requests[-1]
    mine = [v for k, v in got if k == name.lower().encode("ascii")]
    assert mine == [value.strip(" \t").encode("latin-1")]


@given(
    headers=st.dictionaries(
        st.text(_CHARS, min_size=1, max_size=8) | st.sampled_from(["X-A\nX-B", "X-A", "X-B", "X-A\n"]),
        st.text(_CHARS, max_size=6) | st.sampled_from(["a\tb", "a\nb", ""]),
        min_size=1,
        max_size=4,
    )
)
def test_several_headers_are_refused_or_arrive_as_given(served: Any, headers: Any) -> None:
    """The whole mapping is checked at once (names joined with line breaks, values with tabs): a name holding the
    separator, or any one bad header among good ones, is still refused, naming the first bad one."""
    server, net = served
    headers = {k: v for k, v in headers.items() if k.lower() not in _RESERVED and k.lower() != "content-type"}
    if not headers:
        return
    lowered = [k.lower() for k in headers]
    if len(set(lowered)) != len(lowered):
        return  # two spellings of one name: http.client sends both, h11 folds them
    sent_before = len(server.raw)
    bad = [k for k, v in headers.items() if not (_token(k) and _writable_value(v))]
    if bad:
        first = bad[0]
        with pytest.raises(mcpsync.errors.MalformedHTTPRequest) as caught:
            _post(net, server.url + "/mcp", headers)
        assert caught.value.header == (first if _token(first) else None)
        assert len(server.raw) == sent_before, "a byte of a refused request was sent"
        return
    _post(net, server.url + "/mcp", headers)
    _method, _target, got = server.requests[-1]
    for name, value in headers.items():
        assert [v for k, v in got if k == name.lower().encode("ascii")] == [value.strip(" \t").encode("latin-1")]


@given(path=st.text(_CHARS.filter(lambda c: c != "#"), max_size=24), fragment=st.booleans())
def test_any_request_target_is_refused_or_arrives_as_given(served: Any, path: str, fragment: bool) -> None:
    server, net = served
    url = server.url + "/" + path + ("#frag" if fragment else "")
    sent_before = len(server.raw)
    count = len(server.requests)
    if not _writable_url(path):
        with pytest.raises(mcpsync.errors.MalformedHTTPRequest) as caught:
            _post(net, url, {})
        assert caught.value.part == "target" and caught.value.header is None
        assert len(server.raw) == sent_before, "a byte of a refused request was sent"
        return
    _post(net, url, {})
    assert server.errors == []
    assert len(server.requests) == count + 1
    assert server.requests[-1][1] == _normalized("/" + path).encode("ascii")


@given(method=st.text(_CHARS, min_size=1, max_size=8))
def test_any_method_is_refused_or_arrives_as_given(served: Any, method: str) -> None:
    server, net = served
    sent_before = len(server.raw)
    count = len(server.requests)
    if not _token(method) or method.upper() in ("HEAD", "CONNECT"):
        if _token(method):
            return  # a token, but an answer without a body (HEAD) or a tunnel (CONNECT): not this property
        with pytest.raises(mcpsync.errors.MalformedHTTPRequest) as caught:
            net.send(method, server.url + "/mcp", b"{}", {}, TIMEOUT)
        assert caught.value.part == "method"
        assert len(server.raw) == sent_before
        return
    response = net.send(method, server.url + "/mcp", b"{}", {}, TIMEOUT)
    try:
        assert response.read() == b"{}"
    finally:
        response.close()
    assert len(server.requests) == count + 1 and server.requests[-1][0] == method.encode("ascii")


def test_a_refused_request_leaves_the_connection_usable_and_the_client_typed(served: Any) -> None:
    server, net = served
    with pytest.raises(mcpsync.errors.MalformedHTTPRequest, match="X-Token"):
        _post(net, server.url + "/mcp", {"X-Token": "Bearer " + SECRET + "\r\nInjected: yes"})
    with pytest.raises(mcpsync.errors.MalformedHTTPRequest, match="not a token"):
        _post(net, server.url + "/mcp", {"Bad Name": "v"})
    with pytest.raises(mcpsync.errors.MalformedHTTPRequest, match="space"):
        _post(net, server.url + "/a b?x=1", {})
    assert isinstance(mcpsync.errors.MalformedHTTPRequest("x"), mcpsync.ConfigError)
    _post(net, server.url + "/mcp", {"X-Token": "fine"})


@given(st.dictionaries(st.text(_CHARS, max_size=6), st.text(_CHARS, max_size=12), max_size=6))
def test_the_whole_mapping_check_and_the_per_header_check_agree(headers: Any) -> None:
    """The fast check of a whole mapping (joined strings, printable ASCII without a regular expression) refuses
    exactly what the per-header check refuses, and nothing else (differential)."""
    from mcpsync.errors import MalformedHTTPRequest
    from mcpsync.transports.http.request_check import check_headers, check_mapping

    def verdict(check: Any, arg: Any) -> bool:
        try:
            check(arg)
        except MalformedHTTPRequest:
            return False
        return True

    expected = all(_token(k) and _writable_value(v) for k, v in headers.items())
    assert verdict(check_mapping, headers) == verdict(check_headers, headers.items()) == expected
