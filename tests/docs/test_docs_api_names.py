"""The docs name only what exists.

- Every ``mcpsync.<name>`` / ``mcpsync.<namespace>.<name>`` in README.md and docs/, and every name of a
  ``from mcpsync... import`` line there, resolves (import the longest module prefix, then getattr the rest), and a
  name taken from a package with an ``__all__`` is in it (or is a submodule).
- Every keyword shown in a ``Client(...)``, ``connect(...)``, ``Manager(...)``, ``OAuthManager(...)``,
  ``StdioOptions(...)``, ``HTTPOptions(...)``, ``Callbacks(...)`` or ``ClientOptions(...)`` call (a fenced block or an
  inline code span), or listed in a table headed as keyword arguments of ``Client`` / ``connect``, is one the callee
  takes.
- examples/ and bench/ import only names that exist and pass ``Client`` / ``connect`` only its keywords.

Old spellings are allowed where a page says they are old: the first column of a migration table (headed "Before"
or "Old name"), and a paragraph preceded by ``<!-- old spellings -->``. A few dotted strings are not API names
(file names, logger names): they are listed in ``NOT_API`` with the reason.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import inspect
import pathlib
import re
from typing import Dict, Iterator, List, Optional, Set, Tuple

import pytest

import mcpsync

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
DOTTED = re.compile(r"\bmcpsync(?:\.[A-Za-z_]\w*)+")
FROM_IMPORT = re.compile(r"^\s*from (mcpsync[\w.]*) import \(?([\w, ]+)")
CALLEES = ("Client", "connect", "Manager", "OAuthManager", "StdioOptions", "HTTPOptions", "Callbacks", "ClientOptions")
CALL = re.compile(r"(?<![\w.])(?:mcpsync(?:\.\w+)*\.)?(%s)\(" % "|".join(CALLEES))
OLD_HEADERS = ("before", "old name")
OLD_MARK = "<!-- old spellings -->"

#: Dotted strings in the docs that are not Python names, and why.
NOT_API = {
    "mcpsync.json": "the configuration file's name",
    "mcpsync.git": "the repository's clone URL",
    "mcpsync.server": "the logger of a server's log messages (mcpsync.server.<name>)",
    "mcpsync.apps.view": "the logger of an app view's console messages",
}

KEYWORDS: Set[str] = set(inspect.signature(mcpsync.Client.__init__).parameters) - {"self"}
#: The keywords each documented constructor takes (``connect`` takes ``Client``'s; the option objects their fields).
TAKES: Dict[str, Set[str]] = {
    "Client": KEYWORDS,
    "connect": KEYWORDS,
    "Manager": set(inspect.signature(mcpsync.Manager.__init__).parameters) - {"self"},
    "OAuthManager": set(inspect.signature(mcpsync.OAuthManager.__init__).parameters) - {"self"},
    "StdioOptions": {f.name for f in dataclasses.fields(mcpsync.client.StdioOptions)},
    "HTTPOptions": set(inspect.signature(mcpsync.client.HTTPOptions).parameters),
    "Callbacks": {f.name for f in dataclasses.fields(mcpsync.client.Callbacks)},
    "ClientOptions": {f.name for f in dataclasses.fields(mcpsync.client.ClientOptions)},
}


def _cells(row: str) -> List[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def visible_lines(path: pathlib.Path) -> Iterator[Tuple[int, str]]:
    """(line number, text) of ``path`` with what may name old spellings blanked: the first cell of a migration
    table's rows and a paragraph after the old-spellings mark."""
    lines = path.read_text(encoding="utf-8").splitlines()
    old_table = False
    old_paragraph = False
    for number, line in enumerate(lines, 1):
        if OLD_MARK in line:
            old_paragraph = True
            continue
        if not line.strip():
            old_paragraph = False
            old_table = False
            yield number, line
            continue
        if old_paragraph:
            continue
        if line.lstrip().startswith("|"):
            cells = _cells(line)
            if not old_table and cells and cells[0].lower() in OLD_HEADERS:
                old_table = True
            if old_table and len(cells) > 1:
                yield number, "| " + " | ".join(cells[1:]) + " |"
                continue
        yield number, line


def resolves(dotted: str) -> bool:
    """True when ``dotted`` is an importable module, or an attribute path under one. A module whose optional
    framework is not installed counts when its file defines the attribute."""
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        module_name = ".".join(parts[:i])
        try:
            spec = importlib.util.find_spec(module_name)
        except ImportError:
            spec = None
        if spec is None:
            continue
        try:
            obj: object = importlib.import_module(module_name)
        except ImportError:  # an integration without its framework installed: read its source instead
            rest = parts[i:]
            if not rest:
                return True
            source = pathlib.Path(spec.origin or "").read_text(encoding="utf-8")
            return re.search(r"^(class|def) %s\b|^%s\s*[:=]" % (rest[0], rest[0]), source, re.M) is not None
        for name in parts[i:]:
            public = getattr(obj, "__all__", None)
            if inspect.ismodule(obj) and public is not None and name not in public:
                if not hasattr(obj, "__path__") or importlib.util.find_spec("%s.%s" % (obj.__name__, name)) is None:
                    return False  # there, but not public: a name the docs should not teach
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def dotted_names() -> List[Tuple[str, str]]:
    """(where, dotted name) for every ``mcpsync.a.b`` and every ``from mcpsync.a import b, c`` (as ``mcpsync.a.b``)."""
    found = []
    for path in DOCS:
        for number, line in visible_lines(path):
            where = "%s:%d" % (path.relative_to(ROOT), number)
            imported = FROM_IMPORT.search(line)
            if imported:
                names = re.findall(r"\b(\w+)(?:\s+as\s+\w+)?", imported.group(2))
                found += [(where, "%s.%s" % (imported.group(1), name)) for name in names if name != "as"]
            for match in DOTTED.finditer(line):
                found.append((where, match.group(0)))
    return found


def _call_keywords(text: str, start: int) -> Iterator[str]:
    """The keyword names at the top level of the call whose ``(`` is at ``start - 1``, up to its ``)`` or the end
    of ``text`` (an inline code span may show only part of a call)."""
    depth = 1
    i = start
    while i < len(text) and depth:
        ch = text[i]
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch in "\"'":
            end = text.find(ch, i + 1)
            i = end if end != -1 else len(text)
        elif (
            depth == 1
            and (ch.isalpha() or ch == "_")
            and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_."))
        ):
            m = re.match(r"(\w+)\s*=(?!=)", text[i:])
            if m:
                yield m.group(1)
                i += len(m.group(0))
                continue
        i += 1


def _code_parts(path: pathlib.Path) -> Iterator[Tuple[int, str]]:
    """(line, code) for every fenced block and every inline code span of ``path`` (migration tables' old
    column left out)."""
    block: Optional[List[str]] = None
    block_start = 0
    for number, line in visible_lines(path):
        if line.startswith("```"):
            if block is None:
                block, block_start = [], number
            else:
                yield block_start, "\n".join(block)
                block = None
            continue
        if block is not None:
            block.append(line)
            continue
        for span in re.findall(r"`([^`]+)`", line):
            yield number, span


def call_keywords() -> List[Tuple[str, str]]:
    """(where, "Callee(keyword=)") for every keyword shown in a ``Client`` / ``connect`` / ``Manager`` /
    ``OAuthManager`` call that the callee does not take."""
    found = []
    for path in DOCS:
        where = str(path.relative_to(ROOT))
        for number, code in _code_parts(path):
            for match in CALL.finditer(code):
                for keyword in _call_keywords(code, match.end()):
                    if keyword not in TAKES[match.group(1)]:
                        found.append(("%s:%d" % (where, number), "%s(%s=)" % (match.group(1), keyword)))
    return found


def keyword_tables() -> List[Tuple[str, str]]:
    """The first-column names of tables headed (in their header row or their section's heading) as keyword
    arguments of ``Client`` / ``connect``."""
    found = []
    for path in DOCS:
        in_table = False
        previous = ""
        heading = ""
        for number, line in visible_lines(path):
            if line.startswith("#"):
                heading = line.lower()
            if not line.lstrip().startswith("|"):
                in_table = False
                previous = ""
                continue
            cells = _cells(line)
            if all(set(c) <= set("-: ") for c in cells):  # the separator: the row before it is the header
                header = previous.lower() + " " + heading
                in_table = "keyword" in header and ("`client`" in header or "`connect`" in header)
            elif in_table and cells:
                for name in re.findall(r"`(\w+)`", cells[0]):
                    found.append(("%s:%d" % (path.relative_to(ROOT), number), name))
            previous = line
    return found


def test_the_scanners_find_names() -> None:
    names = dotted_names()
    assert len(names) > 100
    assert any(name == "mcpsync.connect" for _, name in names)
    shown = [(path, code) for path in DOCS for _, code in _code_parts(path) if CALL.search(code) and "=" in code]
    assert len(shown) > 20


@pytest.mark.parametrize("old", ["mcpsync.ServerManager", "mcpsync.ToolTransform", "mcpsync.client.core"])
def test_an_old_name_does_not_resolve(old: str) -> None:
    assert not resolves(old)


def test_the_keyword_scanner_reads_nested_calls() -> None:
    code = 'Client(cmd, timeout=5, http=HTTPOptions(verify=False), headers={"a": "b=c"}) '
    assert list(_call_keywords(code, code.index("(") + 1)) == ["timeout", "http", "headers"]


def test_every_dotted_name_in_the_docs_resolves() -> None:
    bad = ["%s: %s" % (where, name) for where, name in dotted_names() if name not in NOT_API and not resolves(name)]
    assert not bad, "names the API no longer has:\n" + "\n".join(bad)


def test_every_client_keyword_in_the_docs_exists() -> None:
    bad = ["%s: %s" % (where, kw) for where, kw in call_keywords()]
    bad += ["%s: %s=" % (where, kw) for where, kw in keyword_tables() if kw not in KEYWORDS]
    assert not bad, "keywords their callee does not take:\n" + "\n".join(bad)


def test_the_not_api_list_is_still_used() -> None:
    text = "\n".join(path.read_text(encoding="utf-8") for path in DOCS)
    for name in NOT_API:
        assert name in text, name


SCRIPTS = sorted((ROOT / "examples").glob("*.py")) + sorted((ROOT / "bench").glob("*.py"))


def script_names() -> List[Tuple[str, str]]:
    """(file:line, dotted name) for every ``from mcpsync... import X`` and ``mcpsync.a.b`` in examples/ and bench/."""
    found = []
    for path in SCRIPTS:
        where = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "mcpsync":
                found += [("%s:%d" % (where, node.lineno), "%s.%s" % (node.module, a.name)) for a in node.names]
            elif isinstance(node, ast.Attribute):
                parts, value = [node.attr], node.value
                while isinstance(value, ast.Attribute):
                    parts.append(value.attr)
                    value = value.value
                if isinstance(value, ast.Name) and value.id == "mcpsync":
                    found.append(("%s:%d" % (where, node.lineno), ".".join(["mcpsync"] + parts[::-1])))
    return found


def script_keywords() -> List[Tuple[str, str]]:
    """(file:line, keyword) of every ``Client(...)`` / ``connect(...)`` call in examples/ and bench/ (a
    ``**options`` spread is not followed)."""
    found = []
    for path in SCRIPTS:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        ours = {  # the local names of mcpsync's Client / connect (another library's Client is not checked)
            a.asname or a.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "mcpsync"
            for a in node.names
            if a.name in ("Client", "connect")
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Attribute):
                    value = func.value
                    while isinstance(value, ast.Attribute):
                        value = value.value
                    mine = func.attr in ("Client", "connect") and isinstance(value, ast.Name) and value.id == "mcpsync"
                else:
                    mine = isinstance(func, ast.Name) and func.id in ours
                if mine:
                    where = "%s:%d" % (path.relative_to(ROOT), node.lineno)
                    found += [(where, k.arg) for k in node.keywords if k.arg is not None]
    return found


def test_the_examples_and_benchmarks_name_only_what_exists() -> None:
    names = script_names()
    assert len(names) > 20
    bad = ["%s: %s" % (where, name) for where, name in names if not resolves(name)]
    assert not bad, "names the API no longer has:\n" + "\n".join(bad)


def test_the_examples_and_benchmarks_pass_only_client_keywords() -> None:
    found = script_keywords()
    assert found
    bad = ["%s: %s=" % (where, kw) for where, kw in found if kw not in KEYWORDS]
    assert not bad, "keywords Client/connect do not take:\n" + "\n".join(bad)


METHOD_CALL = re.compile(r"(?<![\w.])client\.(\w+)\(")


def test_every_client_method_call_in_the_docs_exists_and_takes_its_keywords() -> None:
    """``client.<method>(..., kw=...)`` in the docs: the method exists on ``Client`` and takes ``kw``."""
    bad = []
    seen = 0
    for path in DOCS:
        for number, code in _code_parts(path):
            for match in METHOD_CALL.finditer(code):
                where = "%s:%d" % (path.relative_to(ROOT), number)
                method = getattr(mcpsync.Client, match.group(1), None)
                if method is None:
                    bad.append("%s: client.%s() does not exist" % (where, match.group(1)))
                    continue
                seen += 1
                params = inspect.signature(method).parameters
                takes_any = any(p.kind == p.VAR_KEYWORD and name != "removed" for name, p in params.items())
                for keyword in _call_keywords(code, match.end()):
                    known = keyword in params and params[keyword].kind != params[keyword].VAR_KEYWORD
                    if not known and not takes_any:
                        bad.append("%s: client.%s(%s=)" % (where, match.group(1), keyword))
    assert seen > 20
    assert not bad, "client methods or keywords that do not exist:\n" + "\n".join(bad)
