"""The public API: a small top level, every other name in a namespace with a tested ``__all__``, and a migration
table (docs/reference/migration-0.2.md) for every name that left the top level.

As httpx's ``test_exported_members``: each ``__all__`` is sorted, every name in it resolves, and the namespace
offers no public name outside it (submodules and typing helpers aside).
"""

from __future__ import annotations

import importlib
import pathlib
import subprocess
import sys
import types

import pytest

import mcpsync

from tests.tools import migrate_public_names as migrate

ROOT = pathlib.Path(mcpsync.__file__).parent.parent

NAMESPACES = [
    "mcpsync",
    "mcpsync.adapters",
    "mcpsync.apps",
    "mcpsync.auth",
    "mcpsync.client",
    "mcpsync.errors",
    "mcpsync.handles",
    "mcpsync.input",
    "mcpsync.integrations",
    "mcpsync.manager",
    "mcpsync.middleware",
    "mcpsync.registry",
    "mcpsync.session",
    "mcpsync.skills",
    "mcpsync.tasks",
    "mcpsync.transports",
    "mcpsync.types",
    "mcpsync.warm",
]
#: Public-looking names a module may hold besides its ``__all__``: typing helpers and the lazy loader.
HELPERS = {"TYPE_CHECKING", "Any", "List", "MappingProxyType", "annotations", "exports", "logger"}
#: Helpers a module shares with the library's other modules (not part of the API).
INTERNAL = {"mcpsync.errors": {"seconds_text"}}


def test_the_top_level_is_small() -> None:
    assert len(mcpsync.__all__) <= 45, len(mcpsync.__all__)
    for name in ("Client", "connect", "Manager", "OAuthManager", "Auth", "MCPError", "CallToolResult"):
        assert name in mcpsync.__all__


@pytest.mark.parametrize("package", NAMESPACES)
def test_all_is_sorted_resolves_and_is_complete(package: str) -> None:
    module = importlib.import_module(package)
    exported = list(module.__all__)
    assert exported == sorted(exported), "sort %s.__all__" % package
    assert len(set(exported)) == len(exported)
    for name in exported:
        assert getattr(module, name) is not None, "%s.%s" % (package, name)
    public = set()
    for name in dir(module):
        if name.startswith("_") or name in HELPERS or name in INTERNAL.get(package, ()):
            continue
        value = getattr(module, name)
        if isinstance(value, types.ModuleType):
            continue
        if not hasattr(module, "__path__") and getattr(value, "__module__", package) != package:
            continue  # a plain module's own imports (typing names, dataclasses helpers...)
        public.add(name)
    stray = sorted(public - set(exported) - {"__version__"})
    assert not stray, "not in %s.__all__: %s" % (package, stray)


def test_the_namespaces_are_reachable_after_a_bare_import() -> None:
    code = (
        "import sys, mcpsync\n"
        "before = sorted(m for m in sys.modules if m.startswith('mcpsync.'))\n"
        "assert mcpsync.input.InputRequired.__name__ == 'InputRequired'\n"
        "assert mcpsync.middleware.Retry and mcpsync.errors.ConnectError and mcpsync.adapters.to_openai_tools\n"
        "print(before)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "mcpsync.input" not in out.stdout and "mcpsync.client" not in out.stdout


def test_every_moved_name_has_a_new_home() -> None:
    now = set(mcpsync.__all__)
    gone = set(migrate.OLD_ALL) - now
    assert gone == set(migrate.MOVES), sorted(gone ^ set(migrate.MOVES))
    for old, target in migrate.MOVES.items():
        module, _, name = target.rpartition(".")
        assert hasattr(importlib.import_module(module), name), "%s -> %s" % (old, target)
        assert name in importlib.import_module(module).__all__, "%s -> %s" % (old, target)


def test_the_migration_table_lists_every_moved_name() -> None:
    table = (ROOT / "docs" / "reference" / "migration-0.2.md").read_text().partition("## Rewriting a code base")[2]
    rows = {}
    for line in table.splitlines():
        cells = [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0].startswith("mcpsync."):
            rows[cells[0][len("mcpsync.") :]] = cells[1]
    assert rows == dict(migrate.MOVES)


def test_the_rewriter_moves_imports_and_attributes() -> None:
    before = (
        "from mcpsync import Client, InputRequired, Retry as R  # noqa: F401\n"
        "x = mcpsync.ConnectError, mcpsync.Client, mcpsync.ServerManager\n"
        'tag = "mcpsync.InputRequired"\n'
    )
    after = migrate.rewrite(before)
    assert after == (
        "from mcpsync import Client\n"
        "from mcpsync.input import InputRequired\n"
        "from mcpsync.middleware import Retry as R  # noqa: F401\n"
        "x = mcpsync.errors.ConnectError, mcpsync.Client, mcpsync.Manager\n"
        'tag = "mcpsync.InputRequired"\n'
    )
    assert migrate.rewrite(after) == after


def test_no_user_facing_file_uses_a_moved_name() -> None:
    stragglers = []
    for path in migrate.files(ROOT):
        rel = path.relative_to(ROOT).as_posix()
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if migrate.rewrite(text) != text:
            stragglers.append(rel)
    assert not stragglers, "run: python tests/tools/migrate_public_names.py (%s)" % stragglers
