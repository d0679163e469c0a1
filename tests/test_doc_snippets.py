"""Every complete Python snippet in README.md and docs/*.md runs as written, against the example server.

A snippet is a ```python block. A block preceded by ``<!-- snippet: fragment (why) -->`` is a fragment (it uses
names from the surrounding text) and is only compiled; every other block must run to completion in a fresh
interpreter. The peers are swapped for local ones, and nothing else is changed: the reference server's npx command
becomes the bundled example server, an ``https://.../mcp`` URL becomes a local Streamable HTTP test server, and the
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

from tests.httpserver import MCPTestServer

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
FENCE = re.compile(r"^```(\w[\w-]*)?\s*$")
FRAGMENT = re.compile(r"<!--\s*snippet:\s*fragment\b")
NPX = '["npx", "-y", "@modelcontextprotocol/server-everything"]'
URL = re.compile(r'"https://[^"\s]+/mcp"')


def blocks(path: pathlib.Path) -> Iterator[Tuple[int, str, str, bool]]:
    """(line, language, code, is_fragment) for every fenced block of ``path``."""
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
        fragment = any(FRAGMENT.search(lines[k]) for k in range(max(0, start - 2), start))
        yield start + 1, lang, "\n".join(lines[start + 1 : j]) + "\n", fragment
        i = j + 1


def _snippets(lang: str) -> List[Tuple[str, str, bool]]:
    found = []
    for path in DOCS:
        for line, block_lang, code, fragment in blocks(path):
            if block_lang in (lang,) if lang == "python" else block_lang in ("sh", "bash", "console", "shell"):
                found.append(("%s:%d" % (path.relative_to(ROOT), line), code, fragment))
    return found


PYTHON = _snippets("python")
SHELL = _snippets("sh")


def test_the_docs_have_snippets() -> None:
    assert len([s for s in PYTHON if not s[2]]) >= 6
    assert SHELL


@pytest.fixture(scope="module")
def http_server() -> Iterator[MCPTestServer]:
    with MCPTestServer() as server:
        yield server


@pytest.mark.parametrize("where, code, fragment", PYTHON, ids=[s[0] for s in PYTHON])
def test_python_snippet_runs(where: str, code: str, fragment: bool, http_server: MCPTestServer, tmp_path) -> None:
    compile(code, where, "exec")
    if fragment:
        return
    example = '["python", "-m", "mcpsync.example_server"]'
    code = code.replace(NPX, example)
    code = URL.sub('"%s"' % http_server.url, code)
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
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=90
    )
    assert proc.returncode == 0, "%s failed:\n%s\n%s" % (where, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("where, code, fragment", SHELL, ids=[s[0] for s in SHELL])
def test_shell_snippet_quoting_expands_variables(where: str, code: str, fragment: bool) -> None:
    bad = [line for line in code.splitlines() if re.search(r"'[^'\n]*\$[A-Za-z_{][^'\n]*'", line)]
    assert not bad, "%s: a variable inside single quotes is not expanded: %s" % (where, bad)
