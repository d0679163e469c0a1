"""Hypothesis suite for configuration parsing (issue 9: hostile input).

Invariants: any JSON value in any supported format (mcpServers, VS Code ``servers`` / ``mcp.servers``,
OpenCode ``mcp``, native), and any bytes in a file, make the parser either return ServerConfigs or raise
:class:`~mcpsync.ConfigError`, never anything else; a valid entry still parses to exactly what it says,
also with junk variables in its strings (an unset ``${VAR}`` fails that one server, not the file), and
the tool lists (``disabledTools``...) reach the ServerConfig.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from mcpsync.errors import ConfigError  # noqa: E402
from mcpsync.manager.config import ServerConfig, load_config, parse_config  # noqa: E402
from tests.conftest import fuzz_examples  # noqa: E402

KEYS = st.sampled_from(
    [
        "command",
        "args",
        "env",
        "environment",
        "cwd",
        "url",
        "serverUrl",
        "headers",
        "type",
        "transport",
        "oauth",
        "bearer_token",
        "enabled",
        "disabled",
        "timeout",
        "connect_timeout",
        "lazy",
        "options",
        "envFile",
        "inherit_env",
        "disabledTools",
        "allowedTools",
        "includeTools",
        "excludeTools",
        "disabled_tools",
        "allowed_tools",
        "clientId",
        "scope",
        # Gemini CLI and Claude Code (issue 19 item 10)
        "httpUrl",
        "trust",
        "authProviderType",
        "extensionName",
        "bearerToken",
        "scopes",
        "mcpServers",
        "allowed",
        "excluded",
    ]
)
SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=12)
    | st.sampled_from(["stdio", "http", "sse", "local", "remote", "${HOME}", "${NOPE}", "$$", "{env:X}", "http://h/"])
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS | st.text(max_size=6), inner, max_size=5),
    max_leaves=20,
)
ENTRY = st.dictionaries(KEYS, JSON, max_size=6)
SERVERS = st.dictionaries(st.text(max_size=8), ENTRY | JSON, max_size=3)
DOCUMENT = st.one_of(
    st.builds(lambda s: {"mcpServers": s}, SERVERS | JSON),
    st.builds(lambda s: {"servers": s}, SERVERS | JSON),
    st.builds(lambda s: {"mcp": {"servers": s}}, SERVERS | JSON),
    st.builds(lambda s, e: {"mcp": s, "experimental": e}, SERVERS | JSON, JSON),
    # Gemini CLI settings.json: its own entry keys and the mcp.allowed / mcp.excluded block
    st.builds(lambda s, m: {"mcpServers": s, "mcp": m}, SERVERS | JSON, st.dictionaries(KEYS, JSON, max_size=3)),
    st.builds(lambda s, t: {"mcpServers": {"g": dict(s, httpUrl=t)}}, ENTRY, JSON),
    # Claude Code ~/.claude.json: user servers and per-project servers ("/" is an ancestor of every directory)
    st.builds(lambda s, p: {"mcpServers": s, "projects": {"/": p}}, SERVERS | JSON, JSON),
    st.builds(lambda s, p: {"projects": {"/": {"mcpServers": p}, "/x": s}}, JSON, SERVERS | JSON),
    SERVERS,
    st.dictionaries(st.text(max_size=8), JSON, max_size=4),
)
ENV = {"HOME": "/home/u", "TOKEN": "t0k"}


def parse_or_config_error(data: Any) -> Dict[str, ServerConfig]:
    try:
        out = parse_config(data, env=ENV)
    except ConfigError:
        return {}
    assert isinstance(out, dict) and all(isinstance(v, ServerConfig) for v in out.values())
    for name, cfg in out.items():
        assert cfg.name == name
        assert cfg.error is None or isinstance(cfg.error, ConfigError)
        if cfg.error is None:
            target, kwargs = cfg.client_arguments()  # a parsed entry always yields client arguments
            assert target and isinstance(kwargs, dict)
        repr(cfg)
    return out


@settings(max_examples=fuzz_examples(3000, 200))
@given(DOCUMENT)
def test_any_document_parses_or_raises_config_error(data: Any) -> None:
    parse_or_config_error(data)


@settings(max_examples=fuzz_examples(1000, 100))
@given(JSON)
def test_any_json_value_parses_or_raises_config_error(data: Any) -> None:
    try:
        parse_or_config_error(data)
    except ConfigError:
        pass
    except (TypeError, AttributeError) as exc:  # the failure this test hunts for
        pytest.fail("parse_config raised %r" % exc)


NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-_", min_size=1, max_size=10)
WORD = st.text(alphabet=st.characters(min_codepoint=0x21, max_codepoint=0x7E, exclude_characters="${}"), min_size=1)
TOOL = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_*?", min_size=1, max_size=8)


@settings(max_examples=fuzz_examples(2000, 150))
@given(
    NAME,
    WORD,
    st.lists(WORD, max_size=4),
    st.dictionaries(st.from_regex(r"[A-Z_][A-Z0-9_]{0,6}", fullmatch=True), WORD, max_size=3),
    st.lists(TOOL, max_size=3),
    st.sampled_from(["mcpServers", "servers", "native"]),
)
def test_a_valid_stdio_entry_parses_to_what_it_says(
    name: str, command: str, args: Any, env: Any, denied: Any, fmt: str
) -> None:
    if fmt == "native":
        entry: Dict[str, Any] = {"command": [command] + args, "env": env, "disabled_tools": denied}
        data: Dict[str, Any] = {name: entry}
    else:
        entry = {"command": command, "args": args, "env": env, "disabledTools": denied}
        data = {fmt: {name: entry}}
    cfg = parse_config(data, env=ENV)[name]
    assert cfg.error is None and cfg.command == [command] + args and cfg.env == env
    assert cfg.disabled_tools == list(dict.fromkeys(denied))
    target, kwargs = cfg.client_arguments()
    assert target == [command] + args
    assert kwargs.get("disabled_tools", []) == cfg.disabled_tools


@settings(max_examples=fuzz_examples(1000, 100))
@given(NAME, st.text(max_size=20), st.sampled_from(["mcpServers", "servers"]))
def test_junk_variables_fail_one_server_not_the_file(name: str, junk: str, fmt: str) -> None:
    data = {fmt: {name: {"command": "run", "args": ["${" + junk + "}"]}, "ok-" + name: {"command": "ok"}}}
    try:
        out = parse_config(data, env=ENV)
    except ConfigError:
        return  # a structurally invalid document (e.g. a key the schema rejects) is a ConfigError too
    assert out["ok-" + name].error is None and out["ok-" + name].command == ["ok"]
    bad = out[name]
    assert bad.error is None or isinstance(bad.error, ConfigError)


@settings(max_examples=fuzz_examples(500, 50))
@given(st.binary(max_size=200) | st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")))
def test_any_file_content_loads_or_raises_config_error(tmp_path_factory: Any, content: bytes) -> None:
    path = Path(tmp_path_factory.mktemp("cfg")) / "mcp.json"
    path.write_bytes(content)
    try:
        out = load_config(path, env=ENV)
    except ConfigError:
        return
    assert all(isinstance(v, ServerConfig) for v in out.values())


def test_a_valid_file_with_comments_and_tool_lists_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "mcp.jsonc"
    body = {"mcpServers": {"a": {"command": "x", "excludeTools": ["rm*"], "includeTools": ["ls", "rm_all"]}}}
    path.write_text("// my servers\n" + json.dumps(body)[:-1] + ",}\n")
    cfg = load_config(path, env=ENV)["a"]
    assert cfg.allowed_tools == ["ls", "rm_all"] and cfg.disabled_tools == ["rm*"]


def test_regressions_found_by_this_suite(tmp_path: Path) -> None:
    for value in (None, 5, 1.5, True):  # not iterable: was a TypeError
        with pytest.raises(ConfigError, match="object of servers"):
            parse_config(value)  # type: ignore[arg-type]
    path = tmp_path / "mcp.json"
    path.write_bytes(b"\x80{}")  # not UTF-8: was a UnicodeDecodeError
    with pytest.raises(ConfigError, match="not UTF-8"):
        load_config(path)
    cfg = parse_config({"mcpServers": {"a": {"command": "x", "disabledTools": ["?", "?"]}}})["a"]
    assert cfg.disabled_tools == ["?"]  # duplicates collapse
