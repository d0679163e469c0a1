"""Near-instant reconnects (warm_cache): what a new process reuses, and how a changed server is recovered.

Against the example server behind a real local HTTP server (its request log counts the round trips) and
over stdio, in both eras. "A new process" is a real subprocess where it matters; elsewhere each connection
starts with the per-process memories (era verdicts, transport choices) cleared, as a new process would.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any, List

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mcpsync
from mcpsync.warm.cache import WarmCache

from tests.conftest import server_cmd
from tests.peers.httpserver import MCPTestServer

TTL = 60000


def _warm(client: Any) -> Any:
    """The client's warm cache hooks (one of its core extensions)."""
    from mcpsync.warm.cache import WarmStart

    return next((e for e in client._extensions if isinstance(e, WarmStart)), None)  # noqa: SLF001


def _methods(srv: MCPTestServer, since: int) -> List[str]:
    out = []
    for r in srv.log[since:]:
        what = r.body.get("method") if isinstance(r.body, dict) else ""
        out.append("%s %s" % (r.method, what) if what else r.method)
    return out


def _run(srv: MCPTestServer, cache_dir: Path, **opts: Any) -> List[str]:
    """One connection (a new client learns from the warm cache only, as a new process would): call echo; what
    the server saw."""
    n = len(srv.log)
    with mcpsync.connect(srv.url, extensions=[WarmCache(cache_dir)], **opts) as c:
        assert c.call_tool("echo", {"message": "hi"}).text == "hi"
    return _methods(srv, n)


def test_second_process_makes_one_round_trip_for_a_call(tmp_path: Path) -> None:
    """The issue's target: a second `mcpsync call`-like process against a 2026-07-28 HTTP server sends
    exactly one HTTP request, the tools/call."""
    program = (
        "import sys, mcpsync\n"
        "from mcpsync.warm import WarmCache\n"
        "with mcpsync.connect(sys.argv[1], extensions=[WarmCache(sys.argv[2])]) as c:\n"
        "    sys.stdout.write(c.call_tool('echo', {'message': 'hi'}).text)\n"
    )
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")]))
    with MCPTestServer(era="modern", ttl_ms=TTL) as srv:
        seen = []
        for _ in range(2):
            n = len(srv.log)
            proc = subprocess.run(
                [sys.executable, "-c", program, srv.url, str(tmp_path)],
                capture_output=True,
                text=True,
                timeout=120,
                env=env,
            )
            assert proc.returncode == 0 and proc.stdout == "hi", proc.stderr
            seen.append(_methods(srv, n))
    assert seen[0] == ["POST server/discover", "POST tools/call"]
    assert seen[1] == ["POST tools/call"]


def test_listings_are_kept_for_their_ttl(tmp_path: Path) -> None:
    with MCPTestServer(era="modern", ttl_ms=TTL) as srv:
        for expected in (["POST server/discover", "POST tools/list"], []):
            n = len(srv.log)
            with mcpsync.connect(srv.url, extensions=[WarmCache(tmp_path)]) as c:
                names = {t.name for t in c.list_tools()}
                assert "echo" in names
            assert _methods(srv, n) == expected
        # per-call choice: refresh asks and keeps, bypass asks and keeps nothing
        n = len(srv.log)
        with mcpsync.connect(srv.url, extensions=[WarmCache(tmp_path)]) as c:
            c.list_tools(cache="refresh")
            c.list_tools()
            c.list_tools(cache="bypass")
            with pytest.raises(mcpsync.ConfigError):
                c.list_tools(cache="sometimes")  # type: ignore[arg-type]
        assert _methods(srv, n) == ["POST tools/list", "POST tools/list"]


def test_nothing_is_kept_without_a_ttl(tmp_path: Path) -> None:
    with MCPTestServer(era="modern") as srv:  # ttlMs 0: nothing may be reused but the era verdict
        _run(srv, tmp_path)
        assert _run(srv, tmp_path) == ["POST server/discover", "POST tools/call"]


def test_handshake_era_skips_the_probe(tmp_path: Path) -> None:
    with MCPTestServer(era="legacy", ttl_ms=TTL) as srv:
        first = _run(srv, tmp_path)
        second = _run(srv, tmp_path)
    assert first[0] == "POST server/discover" and "POST initialize" in first
    assert "POST server/discover" not in second and second[0] == "POST initialize"
    assert "POST tools/call" in second


def test_stdio_modern_skips_discover(tmp_path: Path) -> None:
    cmd = server_cmd("--era", "modern", "--ttl-ms", str(TTL))
    for _ in range(2):
        with mcpsync.connect(cmd, extensions=[WarmCache(tmp_path)]) as c:
            assert c.era == "modern" and c.call_tool("echo", {"message": "x"}).text == "x"
            assert c.server_capabilities.get("tools") is not None
    entry = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert entry["era"] == "modern" and entry["discover"]["capabilities"]


def test_a_server_that_changed_version_is_refreshed_on_its_first_answer(tmp_path: Path) -> None:
    with MCPTestServer(era="modern", ttl_ms=TTL) as srv:
        with mcpsync.connect(srv.url, extensions=[WarmCache(tmp_path)]) as c:
            c.list_tools()
        path = next(tmp_path.glob("*.json"))
        entry = json.loads(path.read_text())
        entry["discover"]["serverInfo"]["version"] = "0.0.1-old"
        path.write_text(json.dumps(entry))
        n = len(srv.log)
        with mcpsync.connect(srv.url, extensions=[WarmCache(tmp_path)]) as c:
            assert c.server_info.version == "0.0.1-old"  # what the cache said
            assert c.call_tool("echo", {"message": "hi"}).text == "hi"
            assert c.server_info.version != "0.0.1-old"  # corrected from the first answer
            c.list_tools()  # the kept listing went with the old version
        assert _methods(srv, n) == ["POST tools/call", "POST server/discover", "POST tools/list"]
        assert json.loads(path.read_text())["discover"]["serverInfo"]["version"] == c.server_info.version


def test_a_server_that_changed_era_is_renegotiated_and_the_call_runs_once(tmp_path: Path) -> None:
    with MCPTestServer(era="modern", ttl_ms=TTL) as modern:
        _run(modern, tmp_path)
        kept = json.loads(next(tmp_path.glob("*.json")).read_text())
    with MCPTestServer(era="legacy", ttl_ms=TTL) as legacy:
        # the same identity now answers in the handshake era only (as a redeployed server would)
        client = mcpsync.Client(legacy.url, extensions=[WarmCache(tmp_path)])
        assert _warm(client) is not None  # noqa: SLF001
        key = WarmCache.key(_warm(client).identity())  # noqa: SLF001
        # the test server's new port is a new identity: the entry is rebound as the same server's would be
        (tmp_path / ("%s.json" % key)).write_text(json.dumps(dict(kept, server=key)))
        n = len(legacy.log)
        with client:
            assert client.call_tool("echo", {"message": "once"}).text == "once"
            assert client.era == "legacy"
        seen = _methods(legacy, n)
        assert seen[0] == "POST tools/call"  # refused: no session
        assert "POST initialize" in seen and seen.count("POST tools/call") == 2
    entry = json.loads((tmp_path / ("%s.json" % key)).read_text())
    assert entry["era"] == "legacy"


def test_credentials_tell_entries_apart_and_never_reach_the_file(tmp_path: Path) -> None:
    secret = "s3cr3t-token-value-XYZ"
    with MCPTestServer(era="modern", ttl_ms=TTL) as srv:
        _run(srv, tmp_path, bearer_token=secret, headers={"X-Api-Key": "key-value-ABC"})
        _run(srv, tmp_path, bearer_token="another-token")
    files = sorted(tmp_path.glob("*.json"))
    assert len(files) == 2  # one per auth context
    for f in files:
        text = f.read_text()
        assert secret not in text and "key-value-ABC" not in text and "another-token" not in text
        assert stat.S_IMODE(f.stat().st_mode) == 0o600
    assert stat.S_IMODE(tmp_path.stat().st_mode) in (0o700, 0o755)  # tmp_path itself is pytest's


def test_the_default_directory_is_private(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPSYNC_CACHE_DIR", str(tmp_path / "cache"))  # the parent of every cache: warm/ here
    with MCPTestServer(era="modern", ttl_ms=TTL) as srv:
        with mcpsync.connect(srv.url, extensions=[WarmCache()]) as c:
            c.list_tools()
    warm = tmp_path / "cache" / "warm"
    assert stat.S_IMODE(warm.stat().st_mode) == 0o700
    assert not [p for p in warm.iterdir() if p.name.endswith(".tmp")]


def test_list_changed_drops_the_kept_pages(tmp_path: Path) -> None:
    cmd = server_cmd("--era", "modern", "--ttl-ms", str(TTL))
    with mcpsync.connect(cmd, extensions=[WarmCache(tmp_path)]) as c:
        c.list_tools()
        assert _warm(c) is not None and _warm(c).link is not None  # noqa: SLF001
        assert _warm(c).link.pages()  # noqa: SLF001
        c._on_notification("notifications/tools/list_changed", {})  # noqa: SLF001 - as the reader delivers it
        assert not _warm(c).link.pages()  # noqa: SLF001


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    junk=st.one_of(
        st.binary(max_size=200),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
            lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=12), kids, max_size=5),
            max_leaves=25,
        ).map(lambda v: json.dumps(v).encode()),
        st.fixed_dictionaries(
            {
                "v": st.just(1),
                "savedAt": st.floats(0, 4e9),
                "era": st.sampled_from(["modern", "legacy", "x"]),
                "protocolVersion": st.sampled_from(["2026-07-28", "2025-11-25", "junk"]),
            },
            optional={
                "discover": st.dictionaries(
                    st.sampled_from(["capabilities", "expiresAt", "serverInfo"]),
                    st.none() | st.integers() | st.dictionaries(st.text(max_size=5), st.none()),
                ),
                "lists": st.dictionaries(
                    st.text(max_size=20),
                    st.none()
                    | st.integers()
                    | st.fixed_dictionaries(
                        {"result": st.dictionaries(st.text(max_size=5), st.none()), "expiresAt": st.floats(0, 4e9)}
                    ),
                ),
                "transport": st.sampled_from(["http", "sse", 3, None]),
            },
        ).map(lambda v: json.dumps(v).encode()),
    )
)
def test_a_damaged_cache_file_never_breaks_a_connection(junk: bytes, tmp_path_factory: Any) -> None:
    """Whatever the file holds, the client connects and answers correctly (at worst it negotiates afresh)."""
    cache_dir = tmp_path_factory.mktemp("warm")
    cmd = server_cmd("--era", "modern", "--ttl-ms", str(TTL))
    client = mcpsync.Client(cmd, extensions=[WarmCache(cache_dir)])
    assert _warm(client) is not None  # noqa: SLF001
    (cache_dir / ("%s.json" % WarmCache.key(_warm(client).identity()))).write_bytes(junk)  # noqa: SLF001
    logging.getLogger("mcpsync").setLevel(logging.CRITICAL)
    try:
        with client:
            assert client.call_tool("echo", {"message": "ok"}).text == "ok"
            assert "echo" in {t.name for t in client.list_tools()}
    finally:
        logging.getLogger("mcpsync").setLevel(logging.NOTSET)


def test_warm_cache_option_values(tmp_path: Path) -> None:
    assert WarmCache.coerce(None) is None and WarmCache.coerce(False) is None
    assert WarmCache.coerce(str(tmp_path)).directory == tmp_path
    cache = WarmCache(tmp_path, max_age=5)
    assert WarmCache.coerce(cache) is cache
    with pytest.raises(mcpsync.ConfigError):
        mcpsync.Client(server_cmd(), extensions=[42])  # type: ignore[list-item]
    with pytest.raises(mcpsync.ConfigError, match=r"unknown Client option 'warm_cache'.*extensions=\[\.\.\.\]"):
        mcpsync.Client(server_cmd(), warm_cache=True)  # type: ignore[call-arg]
    cache.clear()


def test_the_cli_reuses_by_default_and_no_cache_turns_it_off(tmp_path: Path) -> None:
    env = dict(
        os.environ,
        MCPSYNC_CACHE_DIR=str(tmp_path),
        PYTHONPATH=os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")]),
    )

    def cli(srv: MCPTestServer, *extra: str) -> List[str]:
        n = len(srv.log)
        cmd = [sys.executable, "-m", "mcpsync", "--url", srv.url, *extra, "call", "echo", "--args", '{"message": "hi"}']
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
        assert proc.returncode == 0 and "hi" in proc.stdout, proc.stderr
        return _methods(srv, n)

    with MCPTestServer(era="modern", ttl_ms=TTL) as srv:
        assert cli(srv) == ["POST server/discover", "POST tools/call"]
        assert cli(srv) == ["POST tools/call"]  # a second `mcpsync call`: one round trip
        assert cli(srv, "--no-cache") == ["POST server/discover", "POST tools/call"]


def test_manager_option(tmp_path: Path) -> None:
    from mcpsync.manager import Manager

    cmd = server_cmd("--era", "modern", "--ttl-ms", str(TTL))
    for _ in range(2):
        with Manager({"a": {"command": cmd}}, client_options={"warm_cache": tmp_path}) as mgr:
            assert mgr.call_tool("a_echo", {"message": "m"}).text == "m"
    entry = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert entry["era"] == "modern" and "tools/list|" in entry["lists"]
    other = tmp_path / "objects"
    with Manager({"a": {"command": cmd}}, client_options={"extensions": [WarmCache(other)]}) as mgr:
        assert mgr.call_tool("a_echo", {"message": "m"}).text == "m"  # the new spelling: one cache, every server
    assert len(list(other.glob("*.json"))) == 1


# --------------------------------------------------------------------------- files the cache must not trust

PLANTED = {"name": "planted", "description": "written into the cache file", "inputSchema": {"type": "object"}}


def _plant(path: Path) -> None:
    """Add a tool to every kept tools/list page of the file, keeping its mode and owner."""
    entry = json.loads(path.read_text())
    pages = [v for k, v in entry["lists"].items() if k.startswith("tools/list|")]
    assert pages
    for page in pages:
        page["result"]["tools"].append(PLANTED)
    path.write_text(json.dumps(entry))


def _listed(srv: MCPTestServer, cache_dir: Path) -> Any:
    """A new connection lists the tools: (names, what the server saw)."""
    n = len(srv.log)
    with mcpsync.connect(srv.url, extensions=[WarmCache(cache_dir)]) as c:
        names = {t.name for t in c.list_tools()}
        if "planted" not in names:
            with pytest.raises(mcpsync.MCPError):  # unknown to the server, and nothing else answers it
                c.call_tool("planted", {})
    return names, _methods(srv, n)


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX owners and modes (not checked on Windows)")
@pytest.mark.parametrize("change", ["group-writable", "world-writable", "another-owner"])
def test_a_cache_file_someone_else_could_write_is_not_trusted(
    change: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    if change == "another-owner" and os.geteuid() != 0:
        pytest.skip("giving a file to another user needs root")
    with MCPTestServer(era="modern", ttl_ms=TTL) as srv:
        _listed(srv, tmp_path)
        (path,) = tmp_path.glob("*.json")
        _plant(path)
        # the user's own private file is used as is (this is what makes the planted tool dangerous)
        names, seen = _listed(srv, tmp_path)
        assert "planted" in names and seen == []
        if change == "group-writable":
            path.chmod(0o620)
        elif change == "world-writable":
            path.chmod(0o602)
        else:
            os.chown(path, 65534, 65534)
        caplog.set_level(logging.WARNING, logger="mcpsync")
        names, seen = _listed(srv, tmp_path)
        assert "planted" not in names and "echo" in names
        assert seen[:2] == ["POST server/discover", "POST tools/list"]  # negotiated and listed afresh
        assert any("ignoring the warm cache file" in r.getMessage() for r in caplog.records)
    # the next save replaced it with a private file of this user, without the planted tool
    st_ = path.stat()
    assert stat.S_IMODE(st_.st_mode) == 0o600 and st_.st_uid == os.geteuid()
    assert "planted" not in path.read_text()


def test_another_servers_entry_copied_in_is_not_used(tmp_path: Path) -> None:
    with MCPTestServer(era="modern", ttl_ms=TTL) as a, MCPTestServer(era="modern", ttl_ms=TTL) as b:
        _listed(a, tmp_path)
        (a_file,) = tmp_path.glob("*.json")
        _plant(a_file)
        client_b = mcpsync.Client(b.url, extensions=[WarmCache(tmp_path)])
        assert _warm(client_b) is not None  # noqa: SLF001
        b_file = tmp_path / ("%s.json" % WarmCache.key(_warm(client_b).identity()))  # noqa: SLF001
        b_file.write_bytes(a_file.read_bytes())
        b_file.chmod(0o600)
        names, seen = _listed(b, tmp_path)
        assert "planted" not in names and seen[:2] == ["POST server/discover", "POST tools/list"]
        # A's own entry is still A's
        names, seen = _listed(a, tmp_path)
        assert "planted" in names and seen == []
    assert "planted" not in b_file.read_text()


def test_the_trust_rule_is_ssh_s_and_skipped_on_windows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mcpsync._trust import untrusted_reason

    path = tmp_path / "f.json"
    path.write_text("{}")
    path.chmod(0o644)
    if sys.platform != "win32":
        assert untrusted_reason(path.stat()) is None
        path.chmod(0o664)
        assert "group" in (untrusted_reason(path.stat()) or "")
        path.chmod(0o646)
        assert "others" in (untrusted_reason(path.stat()) or "")
        assert "regular" in (untrusted_reason(tmp_path.stat()) or "")
    # Windows has no POSIX owners and modes: the check is skipped there (docs/guides/http.md says so)
    monkeypatch.setattr(sys, "platform", "win32")
    assert untrusted_reason(path.stat()) is None
