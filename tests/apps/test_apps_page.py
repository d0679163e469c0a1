"""MCP Apps, part 2: ``app_for(client, tool)`` reads and verifies a ``ui://`` page from a real server, and the page's
CSP and ``allow`` attribute follow the spec's template and never admit an undeclared or hostile origin."""

from __future__ import annotations

import base64
import hashlib
from typing import Any, Dict, List

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcpsync import AppResourceError, Client
from mcpsync.apps import AppResource, app_for
from mcpsync.apps.page import verify_page
from mcpsync.example_server.apps import COUNTER_HTML
from mcpsync.types import Tool

from tests.conftest import server_cmd
from mcpsync.client import ClientOptions

MIME = "text/html;profile=mcp-app"
RESTRICTIVE = (
    "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; media-src 'self' data:; connect-src 'none'; frame-src 'none'; object-src 'none'; "
    "base-uri 'self'"
)
DIRECTIVES = {
    "default-src",
    "script-src",
    "style-src",
    "img-src",
    "media-src",
    "font-src",
    "connect-src",
    "frame-src",
    "object-src",
    "base-uri",
}


def _read(ui: Any = None, **item: Any) -> Dict[str, Any]:
    content: Dict[str, Any] = {"uri": "ui://t/page", "mimeType": MIME, "text": "<!DOCTYPE html><p>hi</p>"}
    content.update(item)
    if ui is not None:
        content["_meta"] = {"ui": ui}
    return {"contents": [content]}


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_app_for_reads_and_verifies_a_real_page(era: str) -> None:
    with Client(server_cmd("--apps"), protocol=era, options=ClientOptions(apps=True)) as client:
        page = app_for(client, "show_counter")
        assert isinstance(page, AppResource)
        assert page.uri == "ui://example/counter" and page.html == COUNTER_HTML and page.tool == "show_counter"
        assert page.sha256 == hashlib.sha256(COUNTER_HTML.encode()).hexdigest()
        assert page.prefers_border is True and page.permissions == ("clipboardWrite",)
        assert page.allow_attribute() == "clipboard-write"
        assert page.csp_header() == RESTRICTIVE  # declared csp with empty lists: nothing is loosened
        # the deprecated flat key links the same page; a listed Tool object works too
        assert app_for(client, "show_legacy_link").sha256 == page.sha256
        tool = client.get_tool("show_counter")
        assert tool is not None and app_for(client, tool, sha256=page.sha256).html == COUNTER_HTML
        with pytest.raises(AppResourceError) as info:
            app_for(client, "show_counter", sha256="0" * 64)
        assert info.value.reason == "digest"
        with pytest.raises(AppResourceError) as info:
            app_for(client, "show_counter", max_bytes=100)
        assert info.value.reason == "size"
        with pytest.raises(AppResourceError) as info:
            app_for(client, "echo")
        assert info.value.reason == "link"
        # a Tool from elsewhere claiming another page is not read from this server
        forged = Tool.from_dict({"name": "show_counter", "_meta": {"ui": {"resourceUri": "ui://example/wrong-mime"}}})
        with pytest.raises(AppResourceError) as info:
            app_for(client, forged)
        assert info.value.reason == "origin"
        # the hostile pages of the same server
        for uri, reason in (
            ("ui://example/wrong-mime", "mime"),
            ("ui://example/not-html", "content"),
            ("ui://example/mismatch", "origin"),
        ):
            with pytest.raises(AppResourceError) as info:
                verify_page(uri, client.read_resource(uri).raw, server=client.name)
            assert info.value.reason == reason, uri
        blob = verify_page("ui://example/counter-blob", client.read_resource("ui://example/counter-blob").raw)
        assert blob.html == COUNTER_HTML and blob.csp_header() == RESTRICTIVE and not blob.csp_declared


def test_verify_page_checks() -> None:
    with pytest.raises(AppResourceError) as info:
        verify_page("https://t/page", _read())
    assert info.value.reason == "scheme"
    for bad in ({"mimeType": "text/html"}, {"mimeType": MIME + " "}, {"mimeType": None}):
        with pytest.raises(AppResourceError) as info:
            verify_page("ui://t/page", _read(**bad))
        assert info.value.reason == "mime"
    with pytest.raises(AppResourceError):
        verify_page("ui://t/page", _read(text=None))
    with pytest.raises(AppResourceError):
        verify_page("ui://t/page", _read(text=None, blob=base64.b64encode(b"\xff\xfe").decode()))
    with pytest.raises(AppResourceError):
        verify_page("ui://t/page", {"contents": "nope"})
    page = verify_page("ui://t/page", _read(text=None, blob=base64.b64encode("<p>é</p>".encode()).decode()))
    assert page.html == "<p>é</p>"


def test_csp_from_declared_domains_is_exact() -> None:
    page = verify_page(
        "ui://t/page",
        _read(
            {
                "csp": {
                    "connectDomains": ["https://api.example.com", "wss://rt.example.com:8443"],
                    "resourceDomains": ["https://cdn.example.com/", "https://*.cloudflare.com"],
                    "frameDomains": ["https://www.youtube.com"],
                    "baseUriDomains": ["https://cdn.example.com"],
                },
                "permissions": {"camera": {}, "geolocation": {}, "bogus": {}, "microphone": True},
                "domain": "abc123.apps.example.com",
                "prefersBorder": False,
            }
        ),
    )
    res = "https://cdn.example.com https://*.cloudflare.com"
    assert page.csp_header() == (
        "default-src 'none'; script-src 'self' 'unsafe-inline' %s; style-src 'self' 'unsafe-inline' %s; "
        "img-src 'self' data: %s; media-src 'self' data: %s; font-src 'self' %s; "
        "connect-src https://api.example.com wss://rt.example.com:8443; frame-src https://www.youtube.com; "
        "object-src 'none'; base-uri https://cdn.example.com" % (res, res, res, res, res)
    )
    assert page.allow_attribute() == "camera; geolocation"
    assert page.domain == "abc123.apps.example.com" and page.prefers_border is False


def test_hostile_domains_are_dropped() -> None:
    hostile = [
        "https://x.com; script-src *",
        "*",
        "'unsafe-eval'",
        "https://x.com/path",
        "data:",
        "https://x.com https://y.com",
        "javascript:alert(1)",
        7,
        None,
        "https://ok.example.com",
    ]
    page = verify_page("ui://t/page", _read({"csp": {"connectDomains": hostile}, "domain": "evil.com; x"}))
    assert "connect-src https://ok.example.com;" in page.csp_header()
    assert "script-src 'self' 'unsafe-inline';" in page.csp_header()
    assert len(page.rejected_domains) == len(hostile) - 1 and page.domain is None
    page = verify_page("ui://t/page", _read({"csp": {"resourceDomains": "https://x.com"}}))
    assert page.csp_header() == RESTRICTIVE


@given(
    st.dictionaries(
        st.sampled_from(["connectDomains", "resourceDomains", "frameDomains", "baseUriDomains", "other"]),
        st.lists(st.one_of(st.text(max_size=40), st.integers(), st.none(), st.from_regex(r"https://[a-z]{1,8}\.com"))),
    ),
    st.one_of(st.none(), st.text(max_size=30)),
)
def test_csp_never_carries_an_injected_or_undeclared_source(csp: Dict[str, List[Any]], domain: Any) -> None:
    page = verify_page("ui://t/page", _read({"csp": csp, "domain": domain}))
    declared = {v.rstrip("/") for values in csp.values() for v in values if isinstance(v, str)}
    for directive in page.csp_header().split("; "):
        name, *sources = directive.split(" ")
        assert name in DIRECTIVES
        for source in sources:
            assert source in ("'self'", "'unsafe-inline'", "'none'", "data:") or source in declared
            assert ";" not in source and "'" not in source.strip("'")
