"""Issue 19 item 9: remote options are typed keyword-only parameters (tests/project/test_typing.py checks what mypy
says) and, at run time, an unknown option is a ConfigError that names the nearest option. Options of one
remote transport only (``get_stream``: Streamable HTTP; ``reconnect``: legacy SSE) go to their own kind
when the client falls back, and are refused for the other kind."""

from __future__ import annotations

import keyword
from typing import Any, Dict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcpsync
from mcpsync import ConfigError, Manager

from tests.conftest import fuzz_examples, server_cmd
from tests.peers.httpserver import MCPTestServer
from mcpsync.client import HTTPOptions


@pytest.mark.parametrize(
    "typo, meant",
    [
        ("timout", "timeout"),
        ("bearer", "bearer_token"),
        ("header", "headers"),
        ("bearer_tokn", "bearer_token"),
        ("verfy", "verify"),
        ("connect_timout", "connect_timeout"),
        ("lazzy", "lazy"),
    ],
)
def test_an_unknown_option_suggests_the_nearest(typo: str, meant: str) -> None:
    options: Dict[str, Any] = {typo: 1}
    for make in (mcpsync.Client, mcpsync.connect):
        with pytest.raises(ConfigError) as info:
            make("http://127.0.0.1:9/mcp", **options)
        message = str(info.value)
        assert "unknown Client option %r" % typo in message and "did you mean" in message
        assert repr(meant) in message.split("did you mean", 1)[1], message


def test_an_option_nothing_resembles_gets_no_suggestion() -> None:
    with pytest.raises(ConfigError) as info:
        mcpsync.Client(server_cmd(), zzzqqq=1)  # type: ignore[call-arg]
    assert "unknown Client option 'zzzqqq'" in str(info.value) and "did you mean" not in str(info.value)


def test_remote_options_for_a_stdio_server_are_refused() -> None:
    with pytest.raises(ConfigError, match="remote servers given for a stdio server: bearer_token, headers"):
        mcpsync.Client(server_cmd(), headers={"X": "y"}, bearer_token="t")


def test_a_typo_in_a_configuration_files_options_fails_that_server_with_the_suggestion() -> None:
    with Manager({"ex": {"command": server_cmd(), "options": {"stderrr": "capture"}}}) as mgr:
        status = mgr.status("ex")
        assert status.status == "failed"
        assert "unknown Client option 'stderrr'; did you mean 'stderr'" in (status.reason or ""), status


def test_transport_specific_options_follow_the_fallback() -> None:
    """``get_stream`` is a Streamable HTTP option: it must not break the fallback to legacy SSE, and
    ``reconnect`` (SSE) must not break Streamable HTTP."""
    with MCPTestServer(era="legacy") as srv:
        with mcpsync.connect(srv.sse_url(), http=HTTPOptions(get_stream=False, reconnect=False), timeout=30) as c:
            assert c.transport_kind == "sse"
            assert c.call_tool("echo", {"message": "sse"}).text == "sse"
        sse_gets = len(srv.records("GET"))
        with mcpsync.connect(srv.url, http=HTTPOptions(get_stream=False, reconnect=False), timeout=30) as c:
            assert c.transport_kind == "http"
            assert c.call_tool("echo", {"message": "http"}).text == "http"
            assert len(srv.records("GET")) == sse_gets  # get_stream=False reached the Streamable HTTP transport


def test_an_option_of_the_other_transport_is_refused_when_one_is_forced() -> None:
    with pytest.raises(ConfigError, match="reconnect apply to the legacy SSE transport only"):
        mcpsync.connect("http://127.0.0.1:9/mcp", http=HTTPOptions(transport="http", reconnect=False))
    with pytest.raises(ConfigError, match="get_stream apply to the Streamable HTTP transport only"):
        mcpsync.connect("http://127.0.0.1:9/sse", http=HTTPOptions(transport="sse", get_stream=False))


@settings(max_examples=fuzz_examples(300, 60), deadline=None)
@given(st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,30}", fullmatch=True))
def test_any_unknown_keyword_is_a_config_error_never_a_type_error(name: str) -> None:
    """Options from a dict (a configuration file's ``options``, ``connect(**settings)``): whatever the key,
    an unknown one is a ConfigError naming it; a known one is never refused by name."""
    from mcpsync.client.options import keyword_names

    known = keyword_names(mcpsync.Client) or frozenset()
    if name in known or keyword.iskeyword(name):
        return
    with pytest.raises(ConfigError) as info:
        mcpsync.Client("http://127.0.0.1:9/mcp", **{name: 1})
    assert repr(name) in str(info.value)


def test_http_fields_name_every_transport_setting_of_http_options() -> None:
    """One list of the HTTP settings serves the moved-keyword messages and the flat spelling alike, and it is
    exactly what HTTPOptions hands the transports (each set to a non-default value here, so none is left out)."""
    from mcpsync.client.flat import HTTP_FIELDS as flat_fields
    from mcpsync.client.options import HTTP_FIELDS, MOVED_KEYWORDS

    assert flat_fields is HTTP_FIELDS
    every = HTTPOptions(
        verify=False, cert="c.pem", proxies={"https": "http://p:1"}, trust_env=False, read_timeout=5,
        pool_maxsize=3, max_message_size=1024, transport="http", get_stream=False, max_stream_retries=1,
        max_retry_delay=2.0,
    )  # fmt: skip
    sse = HTTPOptions(transport="sse", reconnect=False, max_reconnect_attempts=2)
    assert set(every.client_arguments()) | set(sse.client_arguments()) == set(HTTP_FIELDS)
    assert all("HTTPOptions(%s=" % name in MOVED_KEYWORDS[name] for name in HTTP_FIELDS)
