"""Command resolution and cmd.exe arguments under Windows semantics, imposed on this machine.

``resolve_command`` follows the child's PATHEXT without touching ``os.environ``; a ``.cmd``/``.bat`` found for
``npx`` is run through ``cmd.exe`` on Windows, so an argument holding a ``cmd.exe`` metacharacter is refused
before any process starts.
"""

from __future__ import annotations

import os
import subprocess
import threading
from typing import Any, List

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mcpsync
from mcpsync.transports import stdio
from mcpsync.transports.stdio import CMD_METACHARACTERS, StdioTransport, check_batch_arguments, resolve_command


@pytest.fixture()
def nt(monkeypatch: Any) -> None:
    """Windows semantics for the stdio module (os.name == "nt" branch)."""
    monkeypatch.setattr(stdio, "WINDOWS", True)


def _touch(path: Any) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("@echo off\n")
    return str(path)


def test_pathext_order_picks_cmd_bat_or_exe_and_never_touches_os_environ(
    nt: None, tmp_path: Any, monkeypatch: Any
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    _touch(a / "npx.cmd")
    _touch(b / "npx.exe")
    _touch(b / "tool.bat")
    monkeypatch.setenv("PATHEXT", ".HOST")
    path = "%s;%s" % (a, b)
    assert resolve_command("npx", {"PATH": path, "PATHEXT": ".COM;.EXE;.BAT;.CMD"}) == str(a / "npx.cmd")
    assert resolve_command("npx", {"PATH": "%s;%s" % (b, a), "PATHEXT": ".COM;.EXE;.BAT;.CMD"}) == str(b / "npx.exe")
    assert resolve_command("npx", {"PATH": path, "PATHEXT": ".EXE"}) == str(b / "npx.exe")
    assert resolve_command("tool", {"PATH": path, "PATHEXT": ".COM;.EXE;.BAT;.CMD"}) == str(b / "tool.bat")
    assert resolve_command("npx.exe", {"PATH": path, "PATHEXT": ".EXE;.CMD"}) == str(b / "npx.exe")
    with pytest.raises(mcpsync.errors.ConnectError, match="not found on PATH"):
        resolve_command("tool", {"PATH": path, "PATHEXT": ".EXE"})
    assert os.environ["PATHEXT"] == ".HOST"  # the process environment was never changed
    monkeypatch.delenv("PATHEXT")
    assert resolve_command("npx", {"PATH": path}) == str(a / "npx.cmd")  # Windows' default PATHEXT
    assert "PATHEXT" not in os.environ  # and never set when it was unset
    # a path with a directory part: PATHEXT completes it, PATH is not searched
    assert resolve_command(str(b / "tool"), {"PATH": "", "PATHEXT": ".BAT"}) == str(b / "tool.bat")
    with pytest.raises(mcpsync.errors.ConnectError, match="does not exist"):
        resolve_command(str(b / "nothing"), {"PATH": path, "PATHEXT": ".BAT"})


def test_the_current_directory_is_not_searched(nt: None, tmp_path: Any, monkeypatch: Any) -> None:
    _touch(tmp_path / "npx.cmd")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(mcpsync.errors.ConnectError):
        resolve_command("npx", {"PATH": str(tmp_path / "empty"), "PATHEXT": ".CMD"})


def test_resolution_from_threads_sees_each_childs_own_pathext(nt: None, tmp_path: Any, monkeypatch: Any) -> None:
    _touch(tmp_path / "npx.cmd")
    _touch(tmp_path / "npx.exe")
    monkeypatch.delenv("PATHEXT", raising=False)
    seen: List[str] = []
    barrier = threading.Barrier(8)

    def one(ext: str) -> None:
        barrier.wait(30)
        for _ in range(50):
            seen.append(ext + "=" + resolve_command("npx", {"PATH": str(tmp_path), "PATHEXT": ext}))

    threads = [threading.Thread(target=one, args=(".CMD" if i % 2 else ".EXE",)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(seen) == 400
    assert all(s.endswith("npx" + s.split("=")[0].lower()) for s in seen)
    assert "PATHEXT" not in os.environ


@pytest.mark.parametrize(
    "arg", ["a&calc", "x|y", "%PATH%", "!x!", "^", "<in", ">out", '"q"', "a\nb", "a\rb", "f(x)", "(x)"]
)
def test_cmd_metacharacters_bound_for_a_batch_file_are_refused(arg: str) -> None:
    with pytest.raises(mcpsync.ConfigError, match="cmd.exe"):
        check_batch_arguments(r"C:\node\npx.cmd", ["-y", arg])
    with pytest.raises(mcpsync.ConfigError):
        check_batch_arguments(r"C:\tools\run.BAT", [arg])
    check_batch_arguments(r"C:\node\node.exe", ["-y", arg])  # not a batch file: CreateProcess quoting applies


@pytest.mark.parametrize("name", ["npx.cmd.", "npx.CMD ", "run.bat. .", "npx.cmd::$DATA"])
def test_a_batch_file_named_with_what_windows_strips_is_still_a_batch_file(name: str) -> None:
    """Windows drops trailing dots and spaces from a file name (and ``::$DATA`` names the file's own stream):
    ``npx.cmd.`` runs ``npx.cmd`` through cmd.exe, so its arguments get the same refusal."""
    with pytest.raises(mcpsync.ConfigError, match="cmd.exe"):
        check_batch_arguments("C:\\node\\" + name, ["-y", "pkg&calc"])


def test_ordinary_arguments_pass() -> None:
    check_batch_arguments(
        r"C:\node\npx.cmd",
        ["-y", "@modelcontextprotocol/server-everything@2026.8.31", "--port=3000", r"C:\Program Files (x86)\x", "a=b"],
    )


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=20), max_size=5))
def test_what_passes_for_a_batch_file_has_no_metacharacter(args: List[str]) -> None:
    try:
        check_batch_arguments("x.cmd", args)
    except mcpsync.ConfigError:
        assert any(c in a for a in args for c in CMD_METACHARACTERS + "()")
        return
    for a in args:
        assert not any(c in a for c in CMD_METACHARACTERS)
        assert not ("(" in a or ")" in a) or " " in a or "\t" in a


def test_the_transport_refuses_before_starting_anything(nt: None, tmp_path: Any, monkeypatch: Any) -> None:
    _touch(tmp_path / "npx.cmd")
    started: List[Any] = []
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: started.append(a))
    t = StdioTransport(["npx", "-y", "pkg&calc"], env={"PATH": str(tmp_path), "PATHEXT": ".EXE;.CMD"}, name="evil")
    with pytest.raises(mcpsync.ConfigError, match="cmd.exe") as info:
        t.start(object())  # type: ignore[arg-type]
    assert info.value.server == "evil"
    assert started == []


EXTS = [".COM", ".EXE", ".BAT", ".CMD"]


@settings(max_examples=150, deadline=None)
@given(
    command=st.sampled_from(["npx", "uvx", "node", "npx.cmd", "tool.EXE", "x.y"]),
    files=st.lists(
        st.tuples(
            st.integers(0, 2),
            st.sampled_from(["npx", "uvx", "node", "tool", "x.y", "npx.cmd"]),
            st.sampled_from(["", ".com", ".exe", ".bat", ".cmd"]),
        ),
        max_size=8,
    ),
    order=st.permutations(EXTS),
    n_ext=st.integers(1, 4),
)
def test_windows_resolution_picks_the_first_directory_then_the_first_pathext_candidate(
    command: str, files: List[Any], order: List[str], n_ext: int
) -> None:
    import tempfile

    pathext = order[:n_ext]
    with tempfile.TemporaryDirectory() as tmp:
        dirs = [os.path.join(tmp, "d%d" % i) for i in range(3)]
        for d in dirs:
            os.mkdir(d)
        for i, name, ext in files:
            open(os.path.join(dirs[i], name + ext), "w").close()
        found = stdio.find_executable(command, ";".join(dirs), ";".join(pathext))
        has_ext = any(command.lower().endswith(e.lower()) for e in pathext)
        names = ([command] if has_ext else []) + [command + e.lower() for e in pathext]
        expected = None
        for d in dirs:  # the spec: the first directory holding any candidate, in PATHEXT order within it
            hits = [os.path.join(d, n) for n in names if os.path.isfile(os.path.join(d, n))]
            if hits:
                expected = hits[0]
                break
        assert found == expected


def test_a_registry_entry_installed_then_opened_by_a_manager_is_refused_before_cmd_exe_runs(
    nt: None, tmp_path: Any, monkeypatch: Any
) -> None:
    """The path registry arguments take: ``install`` writes the entry's ``npx`` command with its arguments into
    the configuration; a Manager opening it resolves ``npx`` to ``npx.cmd`` and refuses the argument that
    cmd.exe would interpret; no process is started."""
    from mcpsync import Manager
    from mcpsync.registry import install

    from tests.peers.registryserver import fixture

    monkeypatch.setenv("MCPSYNC_AUTH_FILE", str(tmp_path / "store" / "mcp-auth.json"))
    monkeypatch.setenv("MCPSYNC_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("MCPSYNC_CACHE_DIR", str(tmp_path / "cache"))
    doc = fixture("npm-everything.json")
    doc["packages"][0]["packageArguments"][0]["value"] = "stdio&calc"
    cfg = tmp_path / "mcp.json"
    with monkeypatch.context() as posix:  # written on another machine (or before this check existed)
        posix.setattr(stdio, "WINDOWS", False)
        install(doc, config=cfg, which=lambda program: "/usr/bin/" + program if program == "npx" else None, yes=True)
    _touch(tmp_path / "bin" / "npx.cmd")
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.setenv("PATHEXT", ".COM;.EXE;.BAT;.CMD")
    started: List[Any] = []
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: started.append(a))
    with Manager(str(cfg)) as mgr:
        (status,) = mgr.status().values()
    assert status.status == "failed"
    assert isinstance(status.error, mcpsync.ConfigError) and "cmd.exe" in str(status.error)
    assert "stdio&calc" in str(status.error)
    assert started == []


def test_install_refuses_such_an_entry_on_windows_and_writes_nothing(nt: None, tmp_path: Any, monkeypatch: Any) -> None:
    """On Windows ``install`` itself refuses the entry (it could never start) before anything is installed."""
    from mcpsync.registry import install

    from tests.peers.registryserver import fixture

    monkeypatch.setenv("MCPSYNC_AUTH_FILE", str(tmp_path / "store" / "mcp-auth.json"))
    monkeypatch.setenv("MCPSYNC_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("MCPSYNC_CACHE_DIR", str(tmp_path / "cache"))
    doc = fixture("npm-everything.json")
    doc["packages"][0]["packageArguments"][0]["value"] = "stdio&calc"
    cfg = tmp_path / "mcp.json"
    ran: List[Any] = []
    with pytest.raises(mcpsync.ConfigError, match="cmd.exe"):
        install(doc, config=cfg, which=lambda p: "C:\\node\\npx.CMD" if p == "npx" else None, yes=True,
                runner=ran.append)
    assert not cfg.exists() and ran == []
    doc["packages"][0]["packageArguments"][0]["value"] = "stdio"  # a clean entry installs as before
    install(doc, config=cfg, which=lambda p: "C:\\node\\npx.CMD" if p == "npx" else None, yes=True)
    assert cfg.exists()
