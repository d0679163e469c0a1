"""The flat names of extension settings (mcpsync/manager/flat.py): ``defer_input`` and ``input_timeout`` in
configuration files, ``Manager(client_options=...)`` and the other flat-dict callers become a
:class:`mcpsync.input.DeferInput`, and back; a Manager configured so defers against the bundled example server."""

from __future__ import annotations

import json
import pathlib
import sys
from typing import Any, Dict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcpsync
from mcpsync.input import DeferInput
from mcpsync.input.extension import deferral_of
from mcpsync.manager import Manager
from mcpsync.manager.flat import flat_options, grouped
from tests.conftest import server_cmd

#: flat deferral settings in the form flat_options() writes them (what grouped() reads back to the same object)
_DEFERRAL = st.sampled_from(
    [
        {},
        {"defer_input": True},
        {"defer_input": True, "input_timeout": 9.0},
        {"input_timeout": 9.0},
        {"input_timeout": None},
    ]
)
_CORE = st.sampled_from([{}, {"cwd": "/srv"}, {"log_level": "info", "validate_input": True}, {"on_log": print}])


@settings(max_examples=60, deadline=None)
@given(_DEFERRAL, _CORE, st.booleans())
def test_flat_deferral_settings_map_onto_the_extension_and_back(
    deferral: Dict[str, Any], core: Dict[str, Any], remote: bool
) -> None:
    if remote:
        core = {k: v for k, v in core.items() if k != "cwd"}  # a stdio setting: refused for a URL
    flat = dict(core, **deferral)
    kwargs = grouped(flat, remote=remote)
    assert "defer_input" not in kwargs and "input_timeout" not in kwargs
    found = [e for e in kwargs.get("extensions", ()) if isinstance(e, DeferInput)]
    assert len(found) == (1 if deferral else 0)
    if deferral:
        assert found[0].every_call is bool(deferral.get("defer_input"))
        assert found[0].timeout == deferral.get("input_timeout", 300.0)
    assert flat_options(kwargs) == flat
    mcpsync.Client("http://127.0.0.1:9/mcp" if remote else server_cmd(), **kwargs).close()  # the client takes them


def test_the_flat_name_wins_over_an_extension_entry() -> None:
    given_entry = {"extensions": [DeferInput(timeout=5.0)]}
    assert "extensions" not in grouped(dict(given_entry, defer_input=False), remote=False)
    (entry,) = grouped(dict(given_entry, input_timeout=7.0, defer_input=True), remote=False)["extensions"]
    assert entry == DeferInput(timeout=7.0)
    with pytest.raises(mcpsync.ConfigError, match="DeferInput"):
        grouped({"defer_input": True, "input_timeout": -1}, remote=False)


def test_a_configuration_file_with_defer_input_defers(tmp_path: pathlib.Path) -> None:
    """A server's ``options`` in a configuration file: the calls to it raise InputRequired, resumed by the manager."""
    path = tmp_path / "mcp.json"
    modern = server_cmd("--era", "modern")
    path.write_text(
        json.dumps(
            {
                "shop": {"command": modern, "options": {"defer_input": True, "input_timeout": 60}},
                "plain": {"command": modern},
            }
        )
    )
    with Manager.from_file(path) as mgr:
        assert deferral_of(mgr.client("shop")).every_call and deferral_of(mgr.client("shop")).timeout == 60.0
        assert not deferral_of(mgr.client("plain")).every_call  # Manager.call_tool(defer_input=True) still works
        with pytest.raises(mcpsync.input.InputRequired) as info:
            mgr.call_tool("shop_elicit", {"message": "Sure?"})
        ir = info.value
        assert ir.server == "shop" and ir.tool_name == "elicit"
        result = mgr.resume(ir, {ir.questions[0].key: ir.questions[0].accept({"name": "Ada", "age": 36})})
        assert result.structured_content == {"action": "accept", "content": {"name": "Ada", "age": 36}}
        # defer_input=False on the call: the handlers answer (there is none: the server is told so)
        with pytest.raises(mcpsync.errors.MissingClientCapability):
            mgr.call_tool("plain_elicit", {}, defer_input=False)


def test_manager_client_options_defer_for_every_server_but_one_that_says_no() -> None:
    cmd = [sys.executable, "-m", "mcpsync.example_server", "--era", "legacy"]
    config = {"a": {"command": cmd}, "b": {"command": cmd, "options": {"defer_input": False}}}
    with Manager(config, client_options={"defer_input": True, "input_timeout": 0.2}) as mgr:
        a, b = deferral_of(mgr.client("a")), deferral_of(mgr.client("b"))
        assert (a.every_call, a.timeout) == (True, 0.2)
        assert not b.every_call
        # handshake era: a's question is parked, nobody answers it within 0.2 s, the server gets "cancel"
        assert mgr.call_tool("a_elicit", {}).structured_content == {"action": "cancel"}
        # b does not defer and has no handler: the tool reports the missing capability
        assert mgr.call_tool("b_elicit", {}).is_error
