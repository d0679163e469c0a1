"""The grouped options of mcpsync.Client: StdioOptions, HTTPOptions, Callbacks, ClientOptions, the middleware= and
extensions= lists; a moved keyword says where it went; flat settings (configuration files, Manager client_options)
map onto the groups and back. Against the bundled example server (a real subprocess)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, Dict, List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcpsync
from mcpsync import ConfigError, Manager
from mcpsync.client import Callbacks, ClientOptions, HTTPOptions, StdioOptions
from mcpsync.client.flat import flat_options, grouped
from mcpsync.manager.config import ServerConfig
from mcpsync.client.options import MOVED_KEYWORDS, keyword_names, remote_arguments
from mcpsync.middleware import Interceptor, Retry, ToolPolicy
from mcpsync.warm import WarmCache

from tests.conftest import fuzz_examples, server_cmd


def test_the_client_takes_at_most_about_twenty_keywords() -> None:
    names = keyword_names(mcpsync.Client)
    assert names is not None and len(names) <= 21, sorted(names or ())  # the target and 20 keywords
    assert {"stdio", "http", "callbacks", "options", "middleware", "extensions"} <= names
    assert not set(MOVED_KEYWORDS) & names


@pytest.mark.parametrize("keyword", sorted(MOVED_KEYWORDS))
def test_a_moved_keyword_is_a_config_error_that_says_where_it_went(keyword: str) -> None:
    target: Any = "http://127.0.0.1:9/mcp" if keyword in HTTP_ONLY else server_cmd()
    for make in (mcpsync.Client, mcpsync.connect):
        with pytest.raises(ConfigError) as info:
            make(target, **{keyword: None})
        message = str(info.value)
        assert message.startswith("%s= moved: pass " % keyword), message
        assert MOVED_KEYWORDS[keyword] in message


HTTP_ONLY = {"transport", "verify", "cert", "proxies", "trust_env", "read_timeout", "pool_maxsize", "get_stream",
             "max_stream_retries", "reconnect", "max_reconnect_attempts", "max_retry_delay"}


def test_the_messages_name_the_exact_new_spelling() -> None:
    with pytest.raises(ConfigError, match=r"^cwd= moved: pass stdio=StdioOptions\(cwd=\.\.\.\) "
                                          r"\(from mcpsync.client import StdioOptions\)$"):
        mcpsync.Client(server_cmd(), cwd="/")  # type: ignore[call-arg]
    with pytest.raises(ConfigError, match=r"^verify= moved: pass http=HTTPOptions\(verify=\.\.\.\)"):
        mcpsync.Client("https://h.example/mcp", verify=False)  # type: ignore[call-arg]
    with pytest.raises(ConfigError, match=r"^on_log= moved: pass callbacks=Callbacks\(on_log=\.\.\.\)"):
        mcpsync.Client(server_cmd(), on_log=print)  # type: ignore[call-arg]
    with pytest.raises(ConfigError, match=r"^lazy= moved: pass options=ClientOptions\(lazy=\.\.\.\)"):
        mcpsync.Client(server_cmd(), lazy=True)  # type: ignore[call-arg]
    with pytest.raises(ConfigError, match=r"engine option is gone"):
        mcpsync.Client("https://h.example/mcp", engine="stdlib")  # type: ignore[call-arg]
    with pytest.raises(ConfigError, match=r"did you mean 'verify' \(now http=HTTPOptions\(verify=\.\.\.\)\)"):
        mcpsync.Client("https://h.example/mcp", verfy=False)  # type: ignore[call-arg]


def test_option_objects_are_checked_when_built_and_frozen() -> None:
    with pytest.raises(ConfigError, match="stderr"):
        StdioOptions(stderr="everywhere")
    with pytest.raises(ConfigError, match="log_level"):
        ClientOptions(log_level="loud")
    with pytest.raises(ConfigError, match="after_fork"):
        ClientOptions(after_fork="ignore")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="on_log"):
        Callbacks(on_log="print")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="transport"):
        HTTPOptions(transport="websocket")  # type: ignore[arg-type]
    with pytest.raises(AttributeError):
        StdioOptions().cwd = "/"  # type: ignore[misc]
    with pytest.raises(ConfigError, match="stdio= takes"):
        mcpsync.Client(server_cmd(), stdio={"cwd": "/"})  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="http= takes"):
        mcpsync.Client("https://h.example/mcp", http={"verify": False})  # type: ignore[arg-type]


def test_options_that_do_not_fit_the_target_are_refused() -> None:
    with pytest.raises(ConfigError, match="stdio= was given for a server URL"):
        mcpsync.Client("https://h.example/mcp", stdio=StdioOptions(cwd="/"))
    with pytest.raises(ConfigError, match="for remote servers given for a stdio server"):
        mcpsync.Client(server_cmd(), http=HTTPOptions(verify=False))


def test_the_client_headers_merge_over_the_http_options_and_credentials_come_once() -> None:
    http = HTTPOptions(headers={"X-A": "1", "X-B": "1"}, verify=False)
    merged = remote_arguments(http, {"X-B": "2"}, None, None)
    assert merged["headers"] == {"X-A": "1", "X-B": "2"} and merged["verify"] is False
    assert remote_arguments(HTTPOptions(bearer_token="t"), None, None, None)["bearer_token"] == "t"
    with pytest.raises(ConfigError, match="credentials given twice"):
        mcpsync.Client("https://h.example/mcp", bearer_token="a", http=HTTPOptions(bearer_token="b"))


def test_the_middleware_list_takes_one_retry_and_one_policy() -> None:
    with pytest.raises(ConfigError, match="two Retry"):
        mcpsync.Client(server_cmd(), middleware=[Retry(), Retry()])
    with pytest.raises(ConfigError, match="two ToolPolicy"):
        mcpsync.Client(server_cmd(), middleware=[ToolPolicy(), ToolPolicy()])
    with pytest.raises(ConfigError, match="middleware entries"):
        mcpsync.Client(server_cmd(), middleware=["log"])  # type: ignore[list-item]
    with pytest.raises(ConfigError, match="middleware must be a list"):
        mcpsync.Client(server_cmd(), middleware=Interceptor())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="two WarmCache"):
        mcpsync.Client(server_cmd(), extensions=[WarmCache(), WarmCache()])


class _Seen(Interceptor):
    def __init__(self, seen: List[str]) -> None:
        self.seen = seen

    def on_request(self, info: Any) -> None:
        self.seen.append(info.method)


def test_the_groups_reach_a_real_server(tmp_path: Path) -> None:
    """cwd and env through StdioOptions, on_log through Callbacks, log_level and validate_input through
    ClientOptions, a policy and an interceptor through middleware=: all on one stdio server."""
    logs: List[Dict[str, Any]] = []
    seen: List[str] = []
    with mcpsync.connect(
        server_cmd(),
        stdio=StdioOptions(cwd=str(tmp_path), env={"MCPSYNC_TEST_MARK": "1"}),
        callbacks=Callbacks(on_log=logs.append),
        options=ClientOptions(log_level="debug", validate_input=True),
        middleware=[ToolPolicy(denied=("add",)), _Seen(seen)],
    ) as client:
        assert client.stdio_options.cwd == str(tmp_path) and client.options.validate_input
        names = [t.name for t in client.list_tools()]
        assert "echo" in names and "add" not in names
        with pytest.raises(mcpsync.errors.ToolDenied):
            client.call_tool("add", {"a": 1, "b": 2})
        with pytest.raises(mcpsync.errors.ToolInputInvalid):
            client.call_tool("echo", {"message": 5})
        assert client.call_tool("echo", {"message": "grouped"}).text == "grouped"
    assert "tools/call" in seen and "tools/list" in seen


def test_flat_http_settings_laid_over_an_http_group_keep_the_rest_of_it() -> None:
    base = HTTPOptions(connect_timeout=5.0, headers={"X-A": "1"}, pool_maxsize=8)
    merged = grouped({"http": base, "read_timeout": 4.0}, remote=True)["http"]
    assert merged == dataclasses.replace(base, read_timeout=4.0)
    assert merged.connect_timeout == 5.0 and merged.pool_maxsize == 8 and base.read_timeout is None


def test_a_configuration_file_keeps_flat_json(tmp_path: Path) -> None:
    config = [ServerConfig("a", command=server_cmd(), cwd=str(tmp_path), env={"K": "v"},
                           options={"validate_input": True, "stderr": "capture", "max_pages": 7})]
    with Manager(config, client_options={"options": ClientOptions(keepalive=None, max_pages=3)}) as mgr:
        client = mgr.client("a")
        assert client.stdio_options.cwd == str(tmp_path) and dict(client.stdio_options.env or {}) == {"K": "v"}
        assert client.options.validate_input and client.options.max_pages == 7  # the server's own win
        assert client.call_tool("echo", {"message": "flat"}).text == "flat"


_FLAT_VALUES: Dict[str, Any] = {
    "cwd": "/srv", "env": {"A": "b"}, "inherit_env": True, "stderr": "discard", "framing": "content-length",
    "shutdown_timeout": 1.0, "stdout_grace": None, "on_log": print, "on_tools_changed": print,
    "on_connection_lost": print, "log_level": "info", "validate_input": True, "keepalive": 5.0, "max_pages": 3,
    "cache": False, "tasks": False, "apps": True, "lazy": True,
    "after_fork": "error", "timeout": 5.0, "name": "n", "trace_context": {"traceparent": "00-1"},
}
_REMOTE_VALUES: Dict[str, Any] = {
    "verify": False, "proxies": {"https": "http://p:1"}, "read_timeout": 4.0, "transport": "sse",
    "get_stream": False, "reconnect": False, "max_retry_delay": 2.0, "headers": {"X": "y"}, "bearer_token": "t",
    "log_level": "info", "apps": True, "on_log": print,
}


@settings(max_examples=fuzz_examples(200, 50), deadline=None)
@given(st.data())
def test_flat_settings_map_onto_the_groups_and_back(data: st.DataObject) -> None:
    remote = data.draw(st.booleans())
    pool = _REMOTE_VALUES if remote else _FLAT_VALUES
    keys = data.draw(st.lists(st.sampled_from(sorted(pool)), unique=True))
    flat = {k: pool[k] for k in keys}
    kwargs = grouped(flat, remote=remote)
    assert not set(kwargs) & set(MOVED_KEYWORDS)
    assert flat_options(kwargs) == flat
    client = mcpsync.Client("http://127.0.0.1:9/mcp" if remote else server_cmd(), **kwargs)
    assert client.connected is False
    client.close()


#: The 64 keyword arguments Client took before the option groups (the migration table maps each).
_BEFORE = (
    "after_fork allowed_tools approval_handler apps auth auto_relisten bearer_token cache cert client_info "
    "connect_timeout cwd defer_input disabled_tools elicitation_handler engine env framing get_stream headers "
    "inherit_env input_timeout interceptors keepalive lazy log_level max_message_size max_pages "
    "max_reconnect_attempts max_retry_delay max_stream_retries max_total_timeout name on_connection_lost on_log "
    "on_notification on_prompts_changed on_resource_updated on_resources_changed on_stderr on_task_status "
    "on_tools_changed pool_maxsize probe_timeout protocol proxies read_timeout reconnect retry roots "
    "sampling_handler shutdown_timeout stderr stdout_grace tasks timeout trace_context tracing transport trust_env "
    "validate_input validate_output verify warm_cache"
).split()


#: keywords gone rather than moved: engine= (a ConfigError saying so), warm_cache= (extensions=[WarmCache()])
_GONE = ("engine", "warm_cache")


def test_every_keyword_of_before_is_kept_moved_or_gone_with_a_reason() -> None:
    names = keyword_names(mcpsync.Client) or frozenset()
    assert len(_BEFORE) == 64
    for keyword in _BEFORE:
        assert keyword in names or keyword in MOVED_KEYWORDS or keyword in _GONE, keyword
    # the warm cache is an extension the client does not know: its keyword is in the docs' migration table
    table = (Path(mcpsync.__file__).parent.parent / "docs" / "reference" / "client-options.md").read_text()
    assert "| `warm_cache=True`" in table


def test_http_options_are_immutable_and_shared_safely() -> None:
    http = HTTPOptions(verify=False, read_timeout=5.0)
    with pytest.raises(AttributeError, match="cannot assign"):
        http.verify = True  # type: ignore[misc]
    assert dataclasses.replace(http, read_timeout=9.0) == HTTPOptions(verify=False, read_timeout=9.0)
    shown = repr(HTTPOptions(headers={"X-Key": "hush-1"}, bearer_token="hush-2"))
    assert "X-Key" in shown and "hush" not in shown
    first = mcpsync.Client("http://127.0.0.1:9/mcp", http=http, headers={"X-A": "1"})
    second = mcpsync.Client("http://127.0.0.1:9/mcp", http=http, headers={"X-A": "2"})
    assert first.http_options is second.http_options and http.headers == {}
    first.close()
    second.close()


def test_manager_defaults_go_to_the_servers_they_fit() -> None:
    """A manager's client_options apply to every server: stdio settings to commands, HTTP settings to URLs."""
    from tests.peers.httpserver import MCPTestServer

    with MCPTestServer(era="modern") as srv:
        config = [ServerConfig("local", command=server_cmd()), ServerConfig("remote", url=srv.url)]
        defaults = {"stdio": StdioOptions(stderr="discard"), "http": HTTPOptions(read_timeout=20.0),
                    "options": ClientOptions(validate_input=True)}
        with Manager(config, client_options=defaults) as mgr:
            local, remote = mgr.client("local"), mgr.client("remote")
            assert local.stdio_options.stderr == "discard" and local.http_options is None
            assert remote.http_options is not None and remote.http_options.read_timeout == 20.0
            assert local.options.validate_input and remote.options.validate_input
            assert local.call_tool("echo", {"message": "l"}).text == "l"
            assert remote.call_tool("echo", {"message": "r"}).text == "r"


@settings(max_examples=fuzz_examples(300, 60), deadline=None)
@given(st.from_regex(r"[a-z_][a-z0-9_]{0,24}", fullmatch=True), st.one_of(st.none(), st.integers(), st.text()))
def test_any_keyword_the_client_does_not_take_is_a_config_error(keyword: str, value: Any) -> None:
    names = keyword_names(mcpsync.Client) or frozenset()
    if keyword in names:
        return
    with pytest.raises(ConfigError) as info:
        mcpsync.Client(server_cmd(), **{keyword: value})
    message = str(info.value)
    assert ("moved: pass" in message or "unknown Client option" in message or "engine" in message), message
