"""The pytest plugin (mcpsync.testing): real pytest runs (pytester, in a subprocess) of test files a server author
would write, against the bundled example server, the official SDK's server, a Streamable HTTP server, and
configuration entries, in both eras."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Dict, List

import pytest

from tests.peers.interop_peers import SDK_SERVER, require_peer

pytest_plugins = ("pytester",)

ROOT = Path(__file__).resolve().parents[2]
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


def test_the_marker_takes_the_flat_deferral_settings(run) -> None:  # type: ignore[no-untyped-def]
    """``defer_input=True`` on the marker (a flat name, as in a configuration entry) gives a client with the
    resumable-input extension: the call raises InputRequired and resumes."""
    result = run(
        """
        import sys
        import pytest
        import mcpsync

        @pytest.mark.mcp_server([sys.executable, "-m", "mcpsync.example_server"], era="modern", defer_input=True,
                                input_timeout=30)
        def test_defers(mcp_client):
            with pytest.raises(mcpsync.input.InputRequired) as info:
                mcp_client.call_tool("elicit", {"message": "Sure?"})
            q = info.value.questions[0]
            result = mcpsync.input.resume_tool(mcp_client, info.value, {q.key: q.decline()})
            assert result.structured_content == {"action": "decline"}
        """
    )
    result.assert_outcomes(passed=1)


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
    from tests.peers.httpserver import MCPTestServer

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


def _need_fastmcp() -> None:
    try:
        import fastmcp  # noqa: F401
    except ImportError:
        if os.environ.get("MCPSYNC_REQUIRE_FASTMCP") == "1":
            pytest.fail("fastmcp is required here (MCPSYNC_REQUIRE_FASTMCP=1) but not installed", pytrace=False)
        pytest.skip("fastmcp is not installed (bash .ci/plugin-peers runs this test with it)")


def test_a_fastmcp_server_in_both_eras(run) -> None:  # type: ignore[no-untyped-def]
    """FastMCP is installed by .ci/plugin-peers (its own virtualenv), which sets MCPSYNC_REQUIRE_FASTMCP=1: there a
    missing fastmcp fails; elsewhere the test is skipped."""
    _need_fastmcp()
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


@pytest.fixture
def run_files(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    """Like ``run``, with several test files (``name=source``)."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))

    def go(files: Dict[str, str], *args: str) -> pytest.RunResult:
        pytester.makepyfile(**files)
        return pytester.runpytest_subprocess(*_plugin_args(), "-p", "no:cacheprovider", "-v", *args, timeout=300)

    return go


SCOPED = """
import sys
import pytest

EXAMPLE = [sys.executable, "-m", "mcpsync.example_server"]

def names(client):
    return {t.name for t in client.list_tools()}
"""


def test_module_and_session_scopes_share_one_server(run_files) -> None:  # type: ignore[no-untyped-def]
    """A tool added in one test is there in the next one exactly when the two share the server: the same module
    (module scope), the same run (session scope); never with function scope. A shared server that died is
    replaced for the next test."""
    result = run_files(
        {
            "test_a": SCOPED
            + """
pytestmark = pytest.mark.mcp_server(EXAMPLE, scope="module", era="legacy")

def test_a1(mcp_client):
    mcp_client.call_tool("add_tool", {"name": "mark_a"})

def test_a2(mcp_client):
    assert "mark_a" in names(mcp_client)

def test_a3_crash(mcp_client):
    with pytest.raises(Exception):
        mcp_client.call_tool("crash", {})

def test_a4_replaced(mcp_client):
    assert "mark_a" not in names(mcp_client)  # a new server process
    assert mcp_client.call_tool("echo", {"message": "back"}).text == "back"
""",
            "test_b": SCOPED
            + """
pytestmark = pytest.mark.mcp_server(EXAMPLE, scope="module", era="legacy")

def test_b1(mcp_client):
    assert "mark_a" not in names(mcp_client)  # another module, another server
""",
            "test_c": SCOPED
            + """
pytestmark = pytest.mark.mcp_server(EXAMPLE, scope="session", era=["legacy", "modern"])

def test_c1(mcp_client, mcp_era):
    assert mcp_client.era == mcp_era
    mcp_client.call_tool("add_tool", {"name": "mark_" + mcp_era})
""",
            "test_d": SCOPED
            + """
pytestmark = pytest.mark.mcp_server(EXAMPLE, scope="session", era=["legacy", "modern"])

def test_d1(mcp_client, mcp_era):
    other = "mark_modern" if mcp_era == "legacy" else "mark_legacy"
    assert "mark_" + mcp_era in names(mcp_client) and other not in names(mcp_client)  # test_c's server, per era
""",
            "test_e": SCOPED
            + """
pytestmark = pytest.mark.mcp_server(EXAMPLE, era="legacy")

def test_e1(mcp_client):
    mcp_client.call_tool("add_tool", {"name": "mark_e"})

def test_e2(mcp_client):
    assert "mark_e" not in names(mcp_client)  # function scope: a fresh server
""",
        }
    )
    result.assert_outcomes(passed=11)


def test_the_scope_option_and_a_bad_scope(run_files) -> None:  # type: ignore[no-untyped-def]
    result = run_files(
        {
            "test_opt": SCOPED
            + """
pytestmark = pytest.mark.mcp_server(EXAMPLE, era="legacy")

def test_1(mcp_client):
    mcp_client.call_tool("add_tool", {"name": "mark_o"})

def test_2(mcp_client):
    assert "mark_o" in names(mcp_client)

@pytest.mark.mcp_server(EXAMPLE, scope="galaxy")
def test_bad(mcp_client):
    pass
"""
        },
        "--mcp-scope",
        "session",
    )
    result.assert_outcomes(passed=2, errors=1)
    result.stdout.fnmatch_lines(["*scope must be one of function, module, session*"])


def test_a_failure_in_a_shared_server_reports_its_own_stderr_lines(run) -> None:  # type: ignore[no-untyped-def]
    result = run(
        """
        import sys
        import threading
        import pytest

        READ = threading.Event()  # the shared server keeps running: its report has the lines read so far
        SERVER = [sys.executable, "-m", "mcpsync.example_server"]
        pytestmark = pytest.mark.mcp_server(SERVER, scope="module", on_stderr=lambda line: READ.set())

        def test_fails(mcp_client, mcp_stderr):
            mcp_client.call_tool("stderr_flood", {"bytes": 240})  # two whole lines
            assert READ.wait(30)
            assert False, "on purpose"

        def test_still_served(mcp_client):
            assert mcp_client.call_tool("echo", {"message": "x"}).text == "x"
        """
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*- mcp server stderr -*", "mcpsync-example stderr flood xxx*"])


def test_an_sdk_server_object_in_process_in_both_eras(run) -> None:  # type: ignore[no-untyped-def]
    """The official SDK's server object, served in the test process (no subprocess), in both eras and scopes;
    what an SDK server does differently (an unknown tool and an exception are isError results, the exception's
    text hidden) is what docs/guides/testing.md says."""
    require_peer("sdk")
    result = run(
        """
        import importlib.util
        import multiprocessing
        import threading

        import pytest
        from mcpsync.testing import assert_result, assert_tool_error

        spec = importlib.util.spec_from_file_location("sdk_peer", %r)
        peer = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(peer)

        pytestmark = pytest.mark.mcp_server(peer.server, era=["legacy", "modern"])

        def test_sdk(mcp_client, mcp_era):
            assert mcp_client.era == mcp_era and mcp_client.name == "mcpsync-interop-sdk"
            assert_result(mcp_client.call_tool("add", {"a": 2, "b": 3}), text="5")
            failed = assert_tool_error(mcp_client.call_tool("fail", {"reason": "why"}), contains="fail")
            assert "why" not in failed.text  # the SDK hides the exception's text
            assert_tool_error(mcp_client.call_tool("no_such_tool", {}), contains="no_such_tool")

        @pytest.mark.mcp_server(peer.server, era=["legacy", "modern"], scope="session")
        def test_shared(mcp_client):
            assert_result(mcp_client.call_tool("shout", {"text": "hi"}), text="HI")

        def test_in_this_process(mcp_client):
            assert mcp_client.transport_kind != "stdio" and not multiprocessing.active_children()
            assert "mcpsync-inprocess-server" in [t.name for t in threading.enumerate()]
        """
        % str(SDK_SERVER)
    )
    result.assert_outcomes(passed=6)


def test_a_fastmcp_server_object_in_process_in_both_eras(run) -> None:  # type: ignore[no-untyped-def]
    _need_fastmcp()
    result = run(
        """
        import importlib.util

        import pytest
        from mcpsync.testing import assert_result, assert_tool_error

        spec = importlib.util.spec_from_file_location("fastmcp_peer", %r)
        peer = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(peer)

        @pytest.mark.mcp_server(peer.mcp, era=["legacy", "modern"])
        def test_fastmcp(mcp_client, mcp_era):
            assert mcp_client.era == mcp_era
            assert_result(mcp_client.call_tool("add", {"a": 2, "b": 3}), text="5")
            assert_tool_error(mcp_client.call_tool("fail", {"reason": "why"}), contains="fail")

        @pytest.mark.mcp_server(peer.mcp, scope="module")
        def test_module_scope(mcp_client):
            assert_result(mcp_client.call_tool("add", {"a": 1, "b": 1}), text="2")
        """
        % str(FASTMCP_SERVER)
    )
    result.assert_outcomes(passed=3)


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


def test_in_process_server_outside_pytest_leaves_nothing_behind() -> None:
    """InProcessServer on its own: both eras answer, close() stops the serving thread and frees the port, a
    second close is a no-op, and what is no server object is refused with a ConfigError."""
    require_peer("sdk")
    import importlib.util
    import socket
    import threading

    import mcpsync
    from mcpsync.errors import ConfigError
    from mcpsync.testing.inprocess import InProcessServer

    spec = importlib.util.spec_from_file_location("sdk_peer_inprocess", SDK_SERVER)
    assert spec is not None and spec.loader is not None
    peer = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(peer)
    server = InProcessServer(peer.server)
    with server as url:
        for era in ("legacy", "modern"):
            with mcpsync.Client(url, protocol=era) as client:
                assert client.call_tool("add", {"a": 2, "b": 3}).text == "5"
        assert server.url == url  # started once
    port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
    assert "mcpsync-inprocess-server" not in [t.name for t in threading.enumerate()]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", port))  # the port is free again
    server.close()
    with pytest.raises(ConfigError, match="FastMCP or an official-SDK server"):
        InProcessServer(object())


class _BrokenAtStartup:
    """Looks like an SDK server object; its app's lifespan startup fails."""

    def streamable_http_app(self, streamable_http_path: str = "/mcp") -> object:
        async def app(scope: dict, receive: object, send: object) -> None:  # type: ignore[type-arg]
            if scope["type"] == "lifespan":
                await receive()  # type: ignore[operator]
                await send({"type": "lifespan.startup.failed", "message": "no database"})  # type: ignore[operator]

        return app


def test_a_server_object_that_cannot_start_is_a_connect_error_and_leaves_no_thread() -> None:
    pytest.importorskip("uvicorn")
    import threading

    from mcpsync.errors import ConnectError
    from mcpsync.testing.inprocess import InProcessServer

    with pytest.raises(ConnectError, match="did not start"):
        InProcessServer(_BrokenAtStartup(), stop_timeout=5).start()
    assert "mcpsync-inprocess-server" not in [t.name for t in threading.enumerate()]
