"""The core of the client names no extension: no module of ``mcpsync/client/`` outside the extension modules imports
an extension package (``mcpsync.warm``, ``.input``, ``.skills``, ``.apps``, ``.cards``, ``.registry``,
``.integrations``, ``.testing``), neither with an import statement nor through ``importlib`` / ``__import__`` with
a module name in a string. Extensions build on the client's public API instead.

The check reads the source (AST), so it sees imports inside functions and ``TYPE_CHECKING`` blocks too.
"""

from __future__ import annotations

import ast
import pathlib
import re
from typing import Iterator, List, Optional, Set

import mcpsync

CLIENT = pathlib.Path(mcpsync.__file__).parent / "client"
EXTENSIONS = ("warm", "input", "skills", "apps", "cards", "registry", "integrations", "testing")
# The modules of mcpsync/client/ that are themselves (parts of) extensions: none (resumable input and forms, the
# warm cache, skills with their frontmatter and the MCP Apps page live in mcpsync.input, .warm, .skills and .apps).
EXTENSION_MODULES: Set[str] = set()


def _names_extension(module: Optional[str], level: int) -> bool:
    """True when an import of ``module`` (relative ``level`` from mcpsync/client/) names an extension package."""
    if not module:
        return False
    parts = module.split(".")
    if level == 0:
        return len(parts) > 1 and parts[0] == "mcpsync" and parts[1] in EXTENSIONS
    return level >= 2 and parts[0] in EXTENSIONS  # ``from ..warm import ...``


def _offences(path: pathlib.Path) -> Iterator[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node in ast.walk(tree):
        where = "%s:%d" % (path.name, getattr(node, "lineno", 0))
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _names_extension(alias.name, 0):
                    yield "%s imports %s" % (where, alias.name)
        elif isinstance(node, ast.ImportFrom):
            if _names_extension(node.module, node.level):
                yield "%s imports %s%s" % (where, "." * node.level, node.module)
            elif node.level >= 2 and node.module is None:
                for alias in node.names:
                    if alias.name in EXTENSIONS:
                        yield "%s imports ..%s" % (where, alias.name)
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in ("import_module", "__import__", "find_spec"):
                for arg in node.args[:1]:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        if _names_extension(arg.value, 0) or arg.value.lstrip(".").split(".")[0] in EXTENSIONS:
                            yield "%s loads %r" % (where, arg.value)


def core_modules() -> List[pathlib.Path]:
    return sorted(p for p in CLIENT.glob("*.py") if p.name not in EXTENSION_MODULES)


def test_no_core_client_module_names_an_extension_package() -> None:
    found = [offence for path in core_modules() for offence in _offences(path)]
    assert found == []


def test_no_core_client_module_mentions_the_warm_cache_skills_or_app_pages() -> None:
    """Not even by name in a docstring or an error message: the core treats every ``extensions=[...]`` entry alike."""
    words = ("warm", "skill", "app_page", "app_for", "frontmatter")
    found = [
        "%s:%d %s" % (path.name, number, word)
        for path in core_modules()
        for number, line in enumerate(path.read_text(encoding="utf-8").lower().splitlines(), 1)
        for word in words
        if word in line
    ]
    assert found == []


#: What names resumable input (the input deferral): its extension, its functions, its settings and module names.
DEFERRAL_WORDS = re.compile(
    r"defer|inputrequired|inputexpired|inputquestion|pending_input|input_timeout|resume_tool|\bresume\(|"
    r"mcpsync\.input|\binput\.|parked|seen_(file|memory|redis)|seen.?store|render_form|parse_form",
    re.IGNORECASE,
)
#: The one place of the core allowed to name it: the migration table that makes an old spelling
#: (``ClientOptions(defer_input=...)``, ``call_tool(defer_input=...)``) a ConfigError naming the new one.
MIGRATION_TABLE = ("client_options.py", "LEFT_THE_CORE")


def _deferral_mentions(path: pathlib.Path) -> Iterator[str]:
    """Lines of ``path`` naming the input deferral (code, strings, docstrings, comments), outside the migration
    table."""
    text = path.read_text(encoding="utf-8")
    skip: Set[int] = set()
    if path.name == MIGRATION_TABLE[0]:
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == MIGRATION_TABLE[1] for t in targets):
                    skip.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        assert skip, "the migration table %s moved: update this test" % (MIGRATION_TABLE,)
    for number, line in enumerate(text.splitlines(), 1):
        match = DEFERRAL_WORDS.search(line)
        if match and number not in skip:
            yield "%s:%d %r" % (path.name, number, match.group(0))


def test_no_core_client_module_names_the_input_deferral() -> None:
    """Resumable input is an extension (mcpsync.input.DeferInput): no module of mcpsync/client/ builds it, looks it
    up by a module name in a string (``"deferred"``), takes its settings or documents it, outside the migration
    table of the removed spellings."""
    found = [mention for path in core_modules() for mention in _deferral_mentions(path)]
    assert found == []


def test_the_deferral_scan_sees_a_lookup_by_name(tmp_path: pathlib.Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "def build(client):\n"
        "    return _extension('deferred', 'InputDeferral', client, None)\n"  # a module name in a string
        "def call(self, name, defer_input=None):\n"
        "    with self._deferral.scope(defer_input):\n"
        "        return importlib.import_module('%s.input.deferred' % __package__)\n"
        "x = client.pending_input\n"
        "ok = resume_task(client, task_id)\n"
    )
    found = list(_deferral_mentions(bad))
    assert [f.split(" ")[0] for f in found] == ["bad.py:2", "bad.py:3", "bad.py:4", "bad.py:5", "bad.py:6"], found


def test_the_scan_sees_every_kind_of_reference(tmp_path: pathlib.Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import importlib\n"
        "import mcpsync.warm\n"
        "from ..cards import connector\n"
        "from .. import skills\n"
        "from mcpsync.registry.client import x\n"
        "def f():\n"
        "    importlib.import_module('mcpsync.apps.host')\n"
        "    __import__('mcpsync.testing')\n"
        "from .middleware import chain\n"
        "from ..errors import MCPError\n"
    )
    found = list(_offences(bad))
    assert len(found) == 6, found
    assert core_modules() and all(p.name not in EXTENSION_MODULES for p in core_modules())


def _private_uses(path: pathlib.Path) -> Iterator[str]:
    """``client._x``, ``c._x``, ``self.client._x``, ``self._client._x``, ``self._port._x`` in ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            owner = node.value
            if (isinstance(owner, ast.Name) and owner.id in ("client", "c")) or (
                isinstance(owner, ast.Attribute) and owner.attr in ("client", "_client", "_port")
            ):
                yield "%s:%d .%s" % (path.name, node.lineno, node.attr)


def test_feature_parts_use_only_the_public_named_client_host() -> None:
    """modern.py and tasks.py reach their client through ClientHost (public names), never a private member."""
    assert [use for name in ("modern.py", "tasks.py") for use in _private_uses(CLIENT / name)] == []


def test_the_extension_packages_use_only_the_public_api_and_the_port() -> None:
    """The warm cache, skills, MCP Apps pages and resumable input reach their client through its public API and the
    :class:`~mcpsync.client.host.ClientHost` port, never a private member."""
    root = CLIENT.parent
    paths = [root / "warm" / "cache.py", root / "skills" / "skills.py", root / "apps" / "page.py"]
    paths += [root / "input" / name for name in ("deferral.py", "extension.py", "resume.py")]
    assert all(path.exists() for path in paths)
    assert [use for path in paths for use in _private_uses(path)] == []
