"""MCP Apps: a server cannot inject anything through the CSP it declares. Origins are matched as whole strings
(``"https://a.example\\n"`` is not an origin), ``csp_header()`` refuses any control character whatever built the
``AppResource``, and through :class:`AppWebHost` on a real HTTP server the sandbox proxy's
``Content-Security-Policy`` arrives as one intact header (a hostile stdio server declares the CSP)."""

from __future__ import annotations

import json
import socket
import sys
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpsync import AppResourceError, Client
from mcpsync.apps import AppResource
from mcpsync.apps import AppWebHost
from mcpsync.apps.page import clean_domains, is_plain_origin, verify_page

from tests.conftest import fuzz_examples
from tests.browser.test_apps_browser import Site
from mcpsync.client import ClientOptions

HOSTILE = str(Path(__file__).resolve().parents[1] / "peers" / "hostile_app_server.py")
KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
KEYWORDS = {"'none'", "'self'", "'unsafe-inline'", "data:"}
MIME = "text/html;profile=mcp-app"
CONTROLS = [chr(c) for c in range(0x20)] + ["\x7f", "\x85", "\u2028", "\u2029"]
NASTY_SUFFIXES = ["\n", "\r\n", "\r", "\x00", "\nSet-Cookie: a=1", "\r\nX-Evil: 1", " ", ";", "\t", "\x0b", "\x0c"]


def _assert_clean(header: str) -> None:
    assert all(0x20 <= ord(ch) <= 0x7E for ch in header), repr(header)
    for directive in header.split("; "):
        name, *sources = directive.split(" ")
        assert name.endswith("-src") or name == "base-uri", directive
        for source in sources:
            assert source in KEYWORDS or is_plain_origin(source), (directive, source)


origins = st.sampled_from(["https://a.example", "https://*.b.example", "wss://c.example:8443", "http://d.example/"])
hostile_entries = st.one_of(
    st.text(max_size=40),
    st.builds(lambda o, s: o + s, origins, st.sampled_from(NASTY_SUFFIXES)),
    st.builds(lambda s, o: s + o, st.sampled_from(NASTY_SUFFIXES), origins),
    st.builds(lambda o, c, t: o + c + t, origins, st.sampled_from(CONTROLS), st.text(max_size=10)),
    origins,
    st.integers(),
    st.none(),
)
hostile_csp = st.dictionaries(st.sampled_from(KEYS), st.lists(hostile_entries, max_size=6), max_size=4)


@settings(max_examples=fuzz_examples(300))
@given(csp=hostile_csp)
def test_a_declared_csp_never_carries_a_control_character(csp: Dict[str, List[Any]]) -> None:
    result = {"contents": [{"uri": "ui://x/p", "mimeType": MIME, "text": "<p>x</p>", "_meta": {"ui": {"csp": csp}}}]}
    page = verify_page("ui://x/p", result)
    _assert_clean(page.csp_header())
    for key, values in page.csp.items():
        assert all(is_plain_origin(v) for v in values), (key, values)
    for values in csp.values():  # what was kept is exactly the whole-string origins (deduplicated)
        kept, _ = clean_domains(values)
        expected = [v.rstrip("/") for v in values if isinstance(v, str) and is_plain_origin(v)]
        assert list(kept) == list(dict.fromkeys(expected))


@settings(max_examples=fuzz_examples(300))
@given(csp=st.dictionaries(st.sampled_from(KEYS), st.lists(hostile_entries.filter(lambda v: isinstance(v, str)))))
def test_csp_header_refuses_control_characters_whatever_built_the_resource(csp: Dict[str, List[str]]) -> None:
    page = AppResource(uri="ui://x/p", html="<p>x</p>", csp={k: tuple(v) for k, v in csp.items()})
    _assert_clean(page.csp_header())


@pytest.mark.parametrize("value", ["https://a.example\n", "https://a.example\r\n", "https://a.example/\n"])
def test_a_trailing_newline_is_not_an_origin(value: str) -> None:
    assert not is_plain_origin(value)
    assert clean_domains([value]) == ((), (repr(value),))


@pytest.fixture
def site() -> Iterator[Site]:
    s = Site()
    yield s
    s.close()


def _raw_get(host_header: str, port: int, path: str) -> bytes:
    """One GET over a plain socket: the bytes the server sent, headers unparsed."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        request = "GET %s HTTP/1.0\r\nHost: %s\r\nConnection: close\r\n\r\n" % (path, host_header)
        sock.sendall(request.encode("ascii"))
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks)


def test_the_sandbox_proxy_header_is_intact_on_a_real_http_server(site: Site) -> None:
    declared = {
        "connectDomains": ["https://a.example\n", "https://ok.example", "https://b.example\r\nSet-Cookie: pwned=1"],
        "resourceDomains": ["https://cdn.example\n", "https://cdn.example\r\nX-Evil: 1"],
        "frameDomains": ["https://f.example\x00"],
        "baseUriDomains": ["https://base.example\n"],
    }
    with Client([sys.executable, HOSTILE, json.dumps(declared)], options=ClientOptions(apps=True)) as client:
        session = site.host.open(client, "show")
        assert session.page.csp == {
            "connectDomains": ("https://ok.example",),
            "resourceDomains": (),
            "frameDomains": (),
            "baseUriDomains": (),
        }
        port = site.server.server_port
        raw = _raw_get("localhost:%d" % port, port, session.path + "sandbox")
        head, _, body = raw.partition(b"\r\n\r\n")
        lines = head.split(b"\r\n")
        assert lines[0].startswith(b"HTTP/1.0 200"), lines[0]
        assert b"\n" not in head.replace(b"\r\n", b"") and b"\r" not in head.replace(b"\r\n", b"")
        names = [line.split(b":", 1)[0].lower() for line in lines[1:]]
        assert names.count(b"content-security-policy") == 1
        assert b"set-cookie" not in names and b"x-evil" not in names
        csp = next(line for line in lines[1:] if line.lower().startswith(b"content-security-policy:"))
        value = csp.split(b":", 1)[1].strip().decode("ascii")
        assert value == session.page.csp_header()
        assert value.endswith("object-src 'none'; base-uri 'self'")  # nothing was split off the end
        assert "connect-src https://ok.example;" in value
        _assert_clean(value)
        assert b"hostile" not in body  # the proxy page, not the View's HTML (that goes by postMessage)


class _Forged(AppResource):
    """A page class of the host's own whose policy holds a CR/LF: the web host still never sends it."""

    def csp_header(self) -> str:
        return "default-src 'none'\r\nSet-Cookie: pwned=1"


def test_the_web_host_refuses_to_send_a_header_with_a_control_character(site: Site) -> None:
    with Client([sys.executable, HOSTILE, "{}"], options=ClientOptions(apps=True)) as client:
        session = site.host.open(client, "show")
        session.page = _Forged(uri=session.page.uri, html=session.page.html)
        port = site.server.server_port
        raw = _raw_get("localhost:%d" % port, port, session.path + "sandbox")
        head = raw.partition(b"\r\n\r\n")[0]
        assert head.startswith(b"HTTP/1.0 500") and b"set-cookie" not in head.lower(), head


@pytest.mark.parametrize(
    "origin",
    ["http://localhost:8000\r\nX: 1", "http://local\x0bhost:8000", "http://localhost:8000/path", "http://a b:1"],
)
def test_host_origins_with_control_characters_are_refused(origin: str) -> None:
    with pytest.raises(ValueError):
        AppWebHost("http://127.0.0.1:8000", origin)


def test_the_last_line_of_defence_raises_a_typed_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpsync.apps import page as app_page

    page = AppResource(uri="ui://x/p", html="x", csp={"connectDomains": ("https://ok.example\n",)})
    assert page.csp_header().split("; ")[5] == "connect-src 'none'"  # the filter drops it
    monkeypatch.setattr(app_page, "is_plain_origin", lambda value: True)  # a filter bug, simulated
    with pytest.raises(AppResourceError) as info:
        page.csp_header()
    assert info.value.reason == "csp"
