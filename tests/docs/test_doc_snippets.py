"""Every Python snippet in README.md and docs/ runs as written, against the example server and other local peers.

A snippet is a ```python block; it must run to completion in a fresh interpreter. A block that uses names from the
surrounding text is preceded by ``<!-- snippet: setup NAME (why) -->``: the hidden set-up
``tests/docs/doc_snippet_setups.py`` ``SETUPS[NAME]`` defines those names before it and checks its effect after it.
A block preceded by ``<!-- snippet: fragment (why) -->`` would only be compiled: that is allowed only for the blocks
listed in ``COMPILED_ONLY`` below, which is empty (every block runs) and stays so unless a block needs a peer no
test here can stand in for. A set-up may feed the block's stdin (a person typing at a prompt), name a module it
needs (an agent framework: skipped without it, failing with ``MCPSYNC_FRAMEWORKS_REQUIRED=1`` as in the
frameworks stage), or run it in the pywebview interpreter of tests/browser/test_apps_desktop.py (offscreen Qt).

The peers are swapped for local ones, and nothing else is changed: the reference server's npx command becomes
the bundled example server, an ``https://.../mcp`` URL becomes a local Streamable HTTP test server, and the
configuration that ``Manager.from_file()`` finds is one naming the example server (``$MCPSYNC_CONFIG``). Shell
blocks are checked for quoting that would not expand a variable (``'... $TOKEN'``).
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
from typing import Iterator, List, Tuple

import pytest

from tests.docs.doc_snippet_setups import SETUPS
from tests.peers.httpserver import MCPTestServer

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
FENCE = re.compile(r"^```(\w[\w-]*)?\s*$")
MARK = re.compile(r"<!--\s*snippet:\s*(fragment|setup\s+([\w-]+))")
NPX = '["npx", "-y", "@modelcontextprotocol/server-everything"]'
URL = re.compile(r'"https://[^"\s]+/mcp"')

#: Blocks that are only compiled, each for a reason no local peer covers (see the block's own comment): none.
COMPILED_ONLY: List[str] = []


def blocks(path: pathlib.Path) -> Iterator[Tuple[int, str, str, str]]:
    """(line, language, code, mark) for every fenced block of ``path``; mark is "", "fragment" or a set-up name."""
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start, lang = i, (m.group(1) or "")
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        marks = [MARK.search(lines[k]) for k in range(max(0, start - 2), start)]
        found = [m.group(2) or m.group(1) for m in marks if m]
        yield start + 1, lang, "\n".join(lines[start + 1 : j]) + "\n", found[-1] if found else ""
        i = j + 1


def _snippets(lang: str) -> List[Tuple[str, str, str]]:
    found = []
    for path in DOCS:
        for line, block_lang, code, fragment in blocks(path):
            if block_lang in (lang,) if lang == "python" else block_lang in ("sh", "bash", "console", "shell"):
                found.append(("%s:%d" % (path.relative_to(ROOT), line), code, fragment))
    return found


PYTHON = _snippets("python")
SHELL = _snippets("sh")


def test_the_docs_have_snippets() -> None:
    assert len([s for s in PYTHON if s[2] != "fragment"]) >= 20
    assert SHELL


def test_only_the_listed_blocks_are_compiled_only() -> None:
    compiled_only = sorted(re.sub(r":\d+$", "", where) for where, _, mark in PYTHON if mark == "fragment")
    assert compiled_only == sorted(COMPILED_ONLY), "a docs snippet must run: give it a set-up (doc_snippet_setups.py)"


def test_every_setup_named_in_the_docs_exists_and_is_used() -> None:
    named = {mark for _, _, mark in PYTHON if mark not in ("", "fragment")}
    assert named == set(SETUPS)


@pytest.fixture(scope="module")
def http_server() -> Iterator[MCPTestServer]:
    with MCPTestServer() as server:
        yield server


@pytest.mark.parametrize("where, code, mark", PYTHON, ids=[s[0] + ("-" + s[2] if s[2] else "") for s in PYTHON])
def test_python_snippet_runs(where: str, code: str, mark: str, http_server: MCPTestServer, tmp_path) -> None:
    compile(code, where, "exec")
    if mark == "fragment":
        return
    example = '["python", "-m", "mcpsync.example_server"]'
    setup = SETUPS.get(mark)
    if setup and setup.requires and os.environ.get("MCPSYNC_FRAMEWORKS_REQUIRED", "") not in ("1", "true"):
        pytest.importorskip(
            setup.requires, reason="%s needs %s (the frameworks stage installs it)" % (where, setup.requires)
        )
    for literal, expression in setup.replace.items() if setup else ():
        assert literal in code, "%s: set-up %s replaces %s, which the block no longer has" % (where, mark, literal)
        code = code.replace(literal, expression)
    code = code.replace(NPX, example)
    code = URL.sub('"%s"' % http_server.url, code)
    if setup:
        parts = [(setup.before, "setup " + mark), (code, where), (setup.after, "after " + mark)]
        code = "SNIPPET = %r\n" % code + "\n".join("exec(compile(%r, %r, 'exec'))" % part for part in parts)
    config = tmp_path / "mcp.json"
    config.write_text('{"mcpServers": {"example": {"command": "python", "args": ["-m", "mcpsync.example_server"]}}}')
    env = dict(os.environ)
    env.update(
        PATH=os.path.dirname(sys.executable) + os.pathsep + env.get("PATH", ""),
        MCPSYNC_CONFIG=str(config),
        HOME=str(tmp_path),
        MCPSYNC_DATA_DIR=str(tmp_path / "data"),
        PYTHONPATH=str(ROOT) + os.pathsep + env.get("PYTHONPATH", ""),
    )
    python = sys.executable
    if setup and setup.desktop:
        from tests.browser.test_apps_desktop import _python as desktop_python  # skips (fails under CI) without one

        python = desktop_python()
        env.update(QT_QPA_PLATFORM="offscreen", QTWEBENGINE_DISABLE_SANDBOX="1", PYWEBVIEW_GUI="qt")
        env["PATH"] = os.path.dirname(python) + os.pathsep + env["PATH"]
    proc = subprocess.run(
        [python, "-c", code],
        cwd=str(tmp_path),
        env=env,
        input=setup.stdin if setup else "",
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert proc.returncode == 0, "%s failed:\n%s\n%s" % (where, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("where, code, mark", SHELL, ids=[s[0] for s in SHELL])
def test_shell_snippet_quoting_expands_variables(where: str, code: str, mark: str) -> None:
    bad = [line for line in code.splitlines() if re.search(r"'[^'\n]*\$[A-Za-z_{][^'\n]*'", line)]
    assert not bad, "%s: a variable inside single quotes is not expanded: %s" % (where, bad)
