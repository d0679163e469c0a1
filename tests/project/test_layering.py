"""The package's layers (docs/internals/design.md): no import circle inside mcpsync/, no import that runs up the layers.

Imports are read statically from every module: module-level, function-level and ``if TYPE_CHECKING:``
imports all count, because each of them ties the modules together for a reader and a type checker.
"""

from __future__ import annotations

import ast
import pathlib
import sys
from typing import Dict, List, Set

import pytest

import mcpsync

PKG = pathlib.Path(mcpsync.__file__).parent

#: Layer of each top-level module or subpackage of mcpsync, lowest first. A module may import its own
#: layer and the layers below it, never one above.
RANK: Dict[str, int] = {
    "__version__": 0,
    "_type_names": 0,
    "errors": 0,
    "types": 0,
    "_threads": 0,
    "_dispatch": 0,
    "_forks": 0,
    "_files": 0,
    "_trust": 0,
    "_lazy": 0,
    "_pointer": 0,
    "_redis": 0,
    "_structured": 0,
    "_display": 0,
    "wire": 1,
    "httpauth": 1,
    "transports": 2,
    "handles": 3,
    "session": 3,
    "client": 4,
    "auth": 5,
    "input": 5,
    "middleware": 5,
    "skills": 5,
    "tasks": 5,
    "warm": 5,
    "adapters": 6,
    "manager": 6,
    "registry": 6,
    "cards": 6,
    "apps": 6,
    "integrations": 6,
    "cli": 7,
    "testing": 7,
}
#: Extra rules inside the ranking: auth serves the client side from the outside (requests' auth hook,
#: the credential store) and never reaches into the transports, the session or the client.
FORBIDDEN: Dict[str, Set[str]] = {"auth": {"transports", "session", "client"}}
#: The public face: ``mcpsync/__init__.py`` re-exports every layer (lazily), ``__main__`` runs the CLI.
TOP = {"mcpsync", "mcpsync.__main__"}
#: Standard library only, and nothing of mcpsync outside its own package.
STANDALONE = "example_server"


def modules(root: pathlib.Path) -> Dict[str, pathlib.Path]:
    """Dotted module name -> file for every module under the package directory ``root``."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = (root.name,) + path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def import_graph(root: pathlib.Path) -> Dict[str, Set[str]]:
    """module -> the modules of the same package it imports (any nesting level, TYPE_CHECKING included).

    Importing a name from a package counts as importing the package's module that defines it when that
    is a submodule (``from . import x``); an import of an ancestor package of the importer is ignored
    (Python has already imported it), and so is the top-level package itself (its re-exports are lazy).
    """
    mods = modules(root)
    pkg = root.name
    graph: Dict[str, Set[str]] = {}
    for name, path in mods.items():
        is_pkg = path.name == "__init__.py"
        targets: Set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                candidates = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base_parts = name.split(".")
                    keep = len(base_parts) - node.level + (1 if is_pkg else 0)
                    base = ".".join(base_parts[:keep] + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                candidates = [base + "." + alias.name for alias in node.names] + [base]
            else:
                continue
            for target in candidates:
                while target and target not in mods:
                    target = target.rpartition(".")[0]
                if target and target != name and target != pkg and not name.startswith(target + "."):
                    targets.add(target)
        graph[name] = targets
    return graph


def circles(graph: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    found: List[List[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def layer_violations(graph: Dict[str, Set[str]]) -> List[str]:
    """Every import that runs up the layers or breaks one of the extra rules; modules with no layer."""
    problems = []
    for module in sorted(graph):
        if module in TOP:
            continue
        layer = _layer(module)
        if layer == STANDALONE:
            for target in sorted(graph[module]):
                if _layer(target) != STANDALONE:
                    problems.append("%s imports %s (example_server is standalone)" % (module, target))
            continue
        if layer not in RANK:
            problems.append(
                "%s has no layer: add it to RANK in tests/project/test_layering.py and docs/internals/design.md"
                % module
            )
            continue
        for target in sorted(graph[module]):
            target_layer = _layer(target)
            if target in TOP:
                problems.append("%s imports the top-level package %s" % (module, target))
            elif target_layer == STANDALONE:
                problems.append("%s imports %s (nothing depends on the example server)" % (module, target))
            elif target_layer not in RANK:
                continue  # reported for the target itself
            elif RANK[target_layer] > RANK[layer]:
                problems.append("%s imports %s: up from %s to %s" % (module, target, layer, target_layer))
            elif target_layer in FORBIDDEN.get(layer, set()):
                problems.append("%s imports %s: %s never imports %s" % (module, target, layer, target_layer))
    return problems


def test_no_import_circle_in_mcpsync() -> None:
    found = circles(import_graph(PKG))
    assert not found, "import circles: " + "; ".join(" <-> ".join(c) for c in found)


def test_imports_never_run_up_the_layers() -> None:
    problems = layer_violations(import_graph(PKG))
    assert not problems, "\n".join(problems)


def test_example_server_uses_only_the_standard_library() -> None:
    stdlib = getattr(sys, "stdlib_module_names", None)
    if stdlib is None:  # Python 3.9: the layer check above still keeps mcpsync out of it
        pytest.skip("sys.stdlib_module_names needs Python >= 3.10")
    foreign = set()
    for path in (PKG / STANDALONE).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            else:
                continue
            foreign.update("%s: %s" % (path.name, n) for n in names if n.split(".")[0] not in stdlib)
    assert not foreign, sorted(foreign)


def _write(root: pathlib.Path, files: Dict[str, str]) -> pathlib.Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_checks_catch_circles_and_upward_imports(tmp_path: pathlib.Path) -> None:
    pkg = _write(
        tmp_path / "mcpsync",
        {
            "__init__.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .client import Client\n",
            "errors.py": "",
            "session.py": "def f():\n    from .client.core import Core\n",  # function-level, runs up
            "wire/__init__.py": "",
            "wire/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import b\n",
            "wire/b.py": "from .a import X\n",  # a <-> b through a TYPE_CHECKING import
            "client/__init__.py": "from .core import Core\n",
            "client/core.py": "from .. import errors\nfrom ..session import S\n",
            "auth/__init__.py": "",
            "auth/flow.py": "import mcpsync.session\n",  # allowed by rank, forbidden by rule
            "example_server/__init__.py": "from ..errors import X\n",
            "surprise.py": "",
        },
    )
    graph = import_graph(pkg)
    assert graph["mcpsync"] == {"mcpsync.client"}
    assert graph["mcpsync.client"] == {"mcpsync.client.core"}
    assert circles(graph) == [["mcpsync.client.core", "mcpsync.session"], ["mcpsync.wire.a", "mcpsync.wire.b"]]
    problems = layer_violations(graph)
    assert any(p.startswith("mcpsync.session imports mcpsync.client.core: up") for p in problems), problems
    assert any(p.startswith("mcpsync.auth.flow imports mcpsync.session: auth never") for p in problems), problems
    assert any(p.startswith("mcpsync.example_server imports mcpsync.errors") for p in problems), problems
    assert any(p.startswith("mcpsync.surprise has no layer") for p in problems), problems
    assert not any(p.startswith(("mcpsync.client.core", "mcpsync.wire")) for p in problems), problems


def test_the_http_stack_is_one_folder_whose_files_name_the_layers() -> None:
    """transports/ holds the transport contract, stdio and its lifeline; everything HTTP is in transports/http/,
    one file per layer of a call's path (docs/internals/design.md, the package docstring of mcpsync.transports.http)."""
    transports = PKG / "transports"
    assert sorted(p.name for p in transports.glob("*.py")) == ["__init__.py", "base.py", "lifeline.py", "stdio.py"]
    http = {p.stem for p in (transports / "http").glob("*.py")}
    layers = {"transport", "handshake", "streams", "calls", "headers", "auth", "net", "pool", "proxy", "request_check"}
    assert layers <= http, layers - http
    doc = (transports / "http" / "__init__.py").read_text(encoding="utf-8")
    assert all((":mod:`.%s`" % name) in doc for name in http - {"__init__"}), "the package docstring names each file"
