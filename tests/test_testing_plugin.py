"""The pytest plugin (mcpsync.testing): real pytest runs (pytester, in a subprocess) of test files a server author
would write, against the bundled example server, the official SDK's server, a Streamable HTTP server, and
configuration entries, in both eras."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import List

import pytest

from tests.interop_peers import SDK_SERVER, require_peer

pytest_plugins = ("pytester",)

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = [sys.executable, "-m", "mcpsync.example_server"]


def _plugin_args() -> List[str]:
    """``-p mcpsync.testing.plugin`` unless the installed distribution registers the entry point already."""
    from importlib.metadata import entry_points

    try:
        group = entry_points(group="pytest11")  # type: ignore[call-arg]
        found = [e for e in group if e.value == "mcpsync.testing.plugin"]
    except TypeError:  # Python 3.9: entry_points() takes no group
        found = [e for e in entry_points().get("pytest11", []) if e.value == "mcpsync.testing.plugin"]
    return [] if found else ["-p", "mcpsync.testing.plugin"]


@pytest.fixture
def run(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))

    def go(source: str, *args: str) -> pytest.RunResult:
        pytester.makepyfile(test_server=source)
        return pytester.runpytest_subprocess(*_plugin_args(), "-p", "no:cacheprovider", "-v", *args, timeout=300)

    return go


def test_the_example_server_in_both_eras(run) -> None:  # type: ignore[no-untyped-def]
    result = run(
        """
        import sys
        import pytest
        from mcpsync import RemoteError
        from mcpsync.testing import assert_result, assert_tool_error, raises_mcp_error

        pytestmark = pytest.mark.mcp_server([sys.executable, "-m", "mcpsync.example_server"], era=["legacy", "modern"])

        def test_echo(mcp_client, mcp_era):
            assert mcp_client.era == mcp_era
            assert_result(mcp_client.call_tool("echo", {"message": "hi"}), text="hi")
            assert_result(mcp_client.call_tool("add", {"a": 1, "b": 2}), contains="3", structured={"sum": 3})

        def test_tool_error(mcp_client):
            assert_tool_error(mcp_client.call_tool("fail", {"message": "nope"}), contains="nope")

        def test_protocol_error(mcp_client):
            with raises_mcp_error(RemoteError, match="no_such") as caught:
                mcp_client.call_tool("no_such", {})
            assert caught[0].method == "tools/call"

        def test_helpers_fail_readably(mcp_client):
            with pytest.raises(AssertionError, match="reported an error"):
                assert_result(mcp_client.call_tool("fail", {}))
            with pytest.raises(AssertionError, match="expected 'bye'"):
                assert_result(mcp_client.call_tool("echo", {"message": "hi"}), text="bye")
            with pytest.raises(AssertionError, match="nothing was raised"):
                with raises_mcp_error():
                    pass
        """
    )
    result.assert_outcomes(passed=8)
    result.stdout.fnmatch_lines(["*test_echo?legacy? PASSED*", "*test_echo?modern? PASSED*"])


def test_server_stderr_is_attached_to_a_failure(run) -> None:  # type: ignore[no-untyped-def]
    result = run(
        """
        import sys
        import pytest

        @pytest.mark.mcp_server([sys.executable, "-m", "mcpsync.example_server"], era="legacy")
        def test_fails(mcp_client, mcp_stderr):
            mcp_client.call_tool("stderr_flood", {"bytes": 64})
            assert False, "on purpose"

        @pytest.mark.mcp_server([sys.executable, "-m", "mcpsync.example_server"])
        def test_passes(mcp_client):
            mcp_client.call_tool("stderr_flood", {"bytes": 64})

        DIES = "import sys; sys.stderr.write('no config here\\n'); sys.exit(3)"

        @pytest.mark.mcp_server([sys.executable, "-c", DIES])
        def test_server_dies_at_start(mcp_client):
            pass
        """
    )
    result.assert_outcomes(passed=1, failed=1, errors=1)
    text = result.stdout.str()
    assert text.count("mcp server stderr") == 2, text  # the failed test and the failed setup, not the pass
    result.stdout.fnmatch_lines(["*- mcp server stderr -*", "mcpsync-example stderr flood xxx*"])
    assert "no config here" in text.split("test_server_dies_at_start", 1)[1]


def test_configuration_entries_a_file_and_the_command_line_option(  # type: ignore[no-untyped-def]
    run, tmp_path: Path
) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "ex": {"command": EXAMPLE[0], "args": EXAMPLE[1:], "env": {"GREETING": "x"}},
                    "other": {"command": "nothing"},
                }
            }
        )
    )
    result = run(
        """
        import sys
        import pytest
        from mcpsync.testing import assert_result

        ENTRY = {"command": sys.executable, "args": ["-m", "mcpsync.example_server"]}

        @pytest.mark.mcp_server(ENTRY, era=["legacy", "modern"])
        def test_entry(mcp_client):
            assert_result(mcp_client.call_tool("echo", {"message": "entry"}), text="entry")

        @pytest.mark.mcp_server(config=%r, name="ex")
        def test_config_file(mcp_client):
            assert_result(mcp_client.call_tool("echo", {"message": "file"}), text="file")

        def test_option(mcp_client):
            assert_result(mcp_client.call_tool("echo", {"message": "option"}), text="option")
        """
        % str(config),
        "--mcp-server",
        "%s -m mcpsync.example_server" % sys.executable,
    )
    result.assert_outcomes(passed=4)


def test_a_url_in_both_eras(run) -> None:  # type: ignore[no-untyped-def]
    from tests.httpserver import MCPTestServer

    with MCPTestServer() as srv:
        result = run(
            """
            import pytest
            from mcpsync.testing import assert_result

            @pytest.mark.mcp_server(%r, era=["legacy", "modern"], timeout=30)
            def test_remote(mcp_client, mcp_era):
                assert mcp_client.transport_kind and mcp_client.era == mcp_era
                assert_result(mcp_client.call_tool("echo", {"message": "remote"}), text="remote")
            """
            % srv.url
        )
    result.assert_outcomes(passed=2)


def test_the_official_sdk_server_in_both_eras(run) -> None:  # type: ignore[no-untyped-def]
    require_peer("sdk")
    result = run(
        """
        import sys
        import pytest
        from mcpsync.testing import assert_result, assert_tool_error

        @pytest.mark.mcp_server([sys.executable, %r], era=["legacy", "modern"])
        def test_sdk(mcp_client, mcp_era):
            assert mcp_client.era == mcp_era
            assert_result(mcp_client.call_tool("add", {"a": 2, "b": 3}), text="5")
            assert_tool_error(mcp_client.call_tool("fail", {"reason": "why"}), contains="fail")
        """
        % str(SDK_SERVER)
    )
    result.assert_outcomes(passed=2)


FASTMCP_SERVER = ROOT / "tests" / "peers" / "fastmcp_server.py"


def test_a_fastmcp_server_in_both_eras(run) -> None:  # type: ignore[no-untyped-def]
    """FastMCP is installed by .ci/plugin-peers (its own virtualenv), which sets MCPSYNC_REQUIRE_FASTMCP=1: there a
    missing fastmcp fails; elsewhere the test is skipped."""
    try:
        import fastmcp  # noqa: F401
    except ImportError:
        if os.environ.get("MCPSYNC_REQUIRE_FASTMCP") == "1":
            pytest.fail("fastmcp is required here (MCPSYNC_REQUIRE_FASTMCP=1) but not installed", pytrace=False)
        pytest.skip("fastmcp is not installed (bash .ci/plugin-peers runs this test with it)")
    result = run(
        """
        import sys
        import pytest
        from mcpsync.testing import assert_result, assert_tool_error

        @pytest.mark.mcp_server([sys.executable, %r], era=["legacy", "modern"])
        def test_fastmcp(mcp_client, mcp_era):
            assert mcp_client.era == mcp_era
            assert_result(mcp_client.call_tool("add", {"a": 2, "b": 3}), text="5")
            assert_tool_error(mcp_client.call_tool("fail", {"reason": "why"}), contains="fail")
        """
        % str(FASTMCP_SERVER)
    )
    result.assert_outcomes(passed=2)


def test_no_server_is_a_usage_error(run) -> None:  # type: ignore[no-untyped-def]
    result = run(
        """
        def test_nothing(mcp_client):
            pass
        """
    )
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*mcp_client needs a server*"])


def test_the_entry_point_is_declared_and_import_mcpsync_does_not_load_the_plugin() -> None:
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert '[project.entry-points.pytest11]\nmcpsync = "mcpsync.testing.plugin"' in text
    import subprocess

    code = "import sys, mcpsync; assert 'mcpsync.testing' not in sys.modules and 'pytest' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60, env=dict(os.environ, PYTHONPATH=str(ROOT)))
