"""Composition, not mixins: every base class of a class in mcpsync is a real thing on its own.

A class of mcpsync may inherit from:

- anything defined outside mcpsync (the standard library, ``typing``, a framework's base class that an
  integration must subclass);
- an exception class (the error hierarchy);
- a ``typing.Protocol``;
- a class of mcpsync that stands on its own: its name does not end in ``Methods`` or ``Mixin``; it declares no
  attribute of its host (a bare class-level annotation it never assigns); it stubs no host method (a method whose
  body only raises ``NotImplementedError``: an ``abc.ABC`` states its contract with ``@abstractmethod`` instead);
  and it reads no attribute of ``self`` that neither it nor its own bases define (a mixin works on its host's
  state). A class that passes works when instantiated by itself (or is an ABC whose contract is explicit).

The check reads the source (AST), so it needs no optional dependency and sees every module, including the ones
only imported on demand.
"""

from __future__ import annotations

import ast
import pathlib
import textwrap
from typing import Dict, Iterator, List, Optional, Set, Tuple

import mcpsync

PKG = pathlib.Path(mcpsync.__file__).parent
TESTS = pathlib.Path(__file__).parent.parent

# Known offenders that belong to work in progress elsewhere; each entry names the class and its base.
# Remove an entry when its rewrite lands (the test fails on stale entries, so the list cannot rot).
KNOWN: Dict[Tuple[str, str], str] = {}

_BASE_EXCEPTIONS = {"BaseException", "Exception", "Warning"}


class _Module:
    def __init__(self, path: pathlib.Path, tree: ast.Module) -> None:
        self.path = path
        self.tree = tree
        self.classes: Dict[str, ast.ClassDef] = {}
        self.internal_names: Set[str] = set()  # names imported from mcpsync
        self.external_names: Set[str] = set()  # names imported from elsewhere
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                self.classes.setdefault(node.name, node)
            elif isinstance(node, ast.ImportFrom):
                internal = node.level > 0 or (node.module or "").split(".")[0] == "mcpsync"
                for alias in node.names:
                    (self.internal_names if internal else self.external_names).add(alias.asname or alias.name)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    name = alias.asname or alias.name.split(".")[0]
                    internal = alias.name.split(".")[0] == "mcpsync"
                    (self.internal_names if internal else self.external_names).add(name)


def _modules(root: pathlib.Path) -> List[_Module]:
    return [_Module(p, ast.parse(p.read_text(encoding="utf-8"))) for p in sorted(root.rglob("*.py"))]


def _base_name(expr: ast.expr) -> Tuple[Optional[str], Optional[str]]:
    """(root name, class name) of a base expression: ``X`` -> (X, X), ``m.X`` -> (m, X), ``G[T]`` -> of ``G``."""
    if isinstance(expr, ast.Subscript):
        return _base_name(expr.value)
    if isinstance(expr, ast.Name):
        return expr.id, expr.id
    if isinstance(expr, ast.Attribute):
        root: ast.expr = expr
        while isinstance(root, ast.Attribute):
            root = root.value
        return (root.id if isinstance(root, ast.Name) else None), expr.attr
    return None, None


def _decorator_names(cls: ast.ClassDef) -> Set[str]:
    out = set()
    for d in cls.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        out.add(_base_name(target)[1] or "")
    return out


def _is_stub(fn: ast.FunctionDef) -> bool:
    """A method whose body (after its docstring) only raises NotImplementedError and is not abstract."""
    if any(_base_name(d)[1] == "abstractmethod" for d in fn.decorator_list):
        return False
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Raise) or body[0].exc is None:
        return False
    exc = body[0].exc.func if isinstance(body[0].exc, ast.Call) else body[0].exc
    return _base_name(exc)[1] == "NotImplementedError"


def _assigned_on_self(cls: ast.ClassDef) -> Set[str]:
    out = set()
    for node in ast.walk(cls):
        targets: List[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
            targets = [node.target]
        for t in targets:
            for sub in ast.walk(t):
                if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and sub.value.id == "self":
                    out.add(sub.attr)
    return out


def _read_on_self(cls: ast.ClassDef) -> Set[str]:
    return {
        n.attr
        for n in ast.walk(cls)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == "self"
        if not (n.attr.startswith("__") and n.attr.endswith("__"))
    }


def host_attributes(cls: ast.ClassDef) -> List[str]:
    """Bare class-level annotations (``x: T`` with no value) that the class itself never assigns."""
    if _decorator_names(cls) & {"dataclass"}:
        return []  # a dataclass's fields are set by its generated __init__
    assigned = _assigned_on_self(cls)
    return [
        s.target.id
        for s in cls.body
        if isinstance(s, ast.AnnAssign) and s.value is None and isinstance(s.target, ast.Name)
        if s.target.id not in assigned
    ]


def stubs(cls: ast.ClassDef) -> List[str]:
    """Methods that only raise NotImplementedError (not abstract) and that the class itself calls on ``self``:
    it relies on its host to provide them. (An optional hook the class never calls itself, such as an extension
    point whose caller checks first, is not a stub of a host method.)"""
    called = {
        n.func.attr
        for n in ast.walk(cls)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
        if isinstance(n.func.value, ast.Name) and n.func.value.id == "self"
    }
    return [s.name for s in cls.body if isinstance(s, ast.FunctionDef) and _is_stub(s) and s.name in called]


class _Index:
    def __init__(self, package: List[_Module], tests: List[_Module]) -> None:
        self.package = package
        self.by_name: Dict[str, List[ast.ClassDef]] = {}
        for m in package:
            for name, cls in m.classes.items():
                self.by_name.setdefault(name, []).append(cls)

    def defined(self, cls: ast.ClassDef, seen: Set[str]) -> Optional[Set[str]]:
        """Every attribute ``cls`` and its mcpsync bases define (None: a base from outside mcpsync, unknowable)."""
        out = _assigned_on_self(cls)
        for s in cls.body:
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(s.name)
            elif isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name):
                out.add(s.target.id)
            elif isinstance(s, ast.Assign):
                out |= {n.id for t in s.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
        for b in cls.bases:
            name = _base_name(b)[1] or ""
            if name in ("object", "ABC", "Protocol", "Generic"):
                continue
            if name not in self.by_name or name in seen:
                return None
            for parent in self.by_name[name]:
                more = self.defined(parent, seen | {name})
                if more is None:
                    return None
                out |= more
        return out

    def _kinds(self, cls: ast.ClassDef, seen: Set[str]) -> Set[str]:
        """What ``cls`` derives from, by the names that matter: exception, Protocol, ABC."""
        out: Set[str] = set()
        for b in cls.bases:
            name = _base_name(b)[1] or ""
            if name in _BASE_EXCEPTIONS or name.endswith(("Error", "Exception")):
                out.add("exception")
            elif name in ("Protocol", "ABC"):
                out.add(name)
            if name in self.by_name and name not in seen:
                for parent in self.by_name[name]:
                    out |= self._kinds(parent, seen | {name})
        return out

    def problems(self, base: ast.ClassDef) -> List[str]:
        """Why ``base`` (a class of mcpsync used as a base) is not a real class on its own; empty when it is."""
        kinds = self._kinds(base, {base.name})
        if "exception" in kinds or "Protocol" in kinds:
            return []
        out = []
        if base.name.endswith(("Methods", "Mixin")):
            out.append("named like a mixin")
        if host_attributes(base):
            out.append("declares host attributes it never sets: %s" % ", ".join(host_attributes(base)))
        if stubs(base):
            out.append("stubs methods its host provides: %s" % ", ".join(stubs(base)))
        known = self.defined(base, {base.name})
        if known is not None:
            borrowed = sorted(_read_on_self(base) - known)
            if borrowed:
                out.append("reads attributes of its host: %s" % ", ".join(borrowed))
        return out


def offenders(package: List[_Module], tests: List[_Module]) -> Dict[Tuple[str, str], List[str]]:
    index = _Index(package, tests)
    out: Dict[Tuple[str, str], List[str]] = {}
    for m in package:
        for node in ast.walk(m.tree):
            if not isinstance(node, ast.ClassDef):
                continue
            for b in node.bases:
                root, name = _base_name(b)
                if root is None or name is None:
                    continue
                internal = root in m.internal_names or (root == name and root in m.classes)
                if not internal or root in m.external_names or name not in index.by_name:
                    continue
                why = [w for cls in index.by_name[name] for w in index.problems(cls)]
                if name.endswith(("Methods", "Mixin")) and not why:
                    why = ["named like a mixin"]
                if why:
                    out[(node.name, name)] = why
    return out


def _iter_bases(modules: List[_Module]) -> Iterator[Tuple[str, str]]:
    for m in modules:
        for node in ast.walk(m.tree):
            if isinstance(node, ast.ClassDef):
                for b in node.bases:
                    yield node.name, ast.unparse(b)


def test_no_class_in_mcpsync_inherits_from_a_mixin() -> None:
    found = offenders(_modules(PKG), _modules(TESTS))
    unexpected = {k: v for k, v in found.items() if k not in KNOWN}
    assert not unexpected, "\n".join("%s(%s): %s" % (c, b, "; ".join(w)) for (c, b), w in sorted(unexpected.items()))
    stale = sorted(set(KNOWN) - set(found))
    assert not stale, "these are fixed now; remove them from KNOWN: %s" % stale


def test_the_manager_has_no_base_class() -> None:
    from mcpsync.manager import Manager

    assert Manager.__mro__ == (Manager, object)


def _check(tmp_path: pathlib.Path, files: Dict[str, str]) -> Dict[Tuple[str, str], List[str]]:
    pkg = tmp_path / "pkg"
    for rel, text in files.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(textwrap.dedent(text), encoding="utf-8")
    return offenders(_modules(pkg), [])


def test_the_check_catches_mixins_and_allows_real_bases(tmp_path: pathlib.Path) -> None:
    found = _check(
        tmp_path,
        {
            "parts.py": """
                import abc
                from typing import Protocol

                class ToolStuff:  # a mixin in disguise: declares its host's attribute and stubs its method
                    _lock: object
                    def run(self) -> None:
                        with self._lock:
                            self._go()
                    def _go(self) -> None:
                        raise NotImplementedError

                class ListingMethods:
                    def names(self) -> list:
                        return []

                class Stubby:
                    def run(self) -> None:
                        self.go()
                    def go(self) -> None:
                        raise NotImplementedError("provided by the host")

                class Hooks:  # an optional hook its caller checks for first: not a host method
                    def takes(self) -> bool:
                        return False
                    def handle(self) -> None:
                        raise NotImplementedError

                class Contract(abc.ABC):
                    @abc.abstractmethod
                    def send(self) -> None:
                        raise NotImplementedError

                class Sink(Protocol):
                    def put(self, x: int) -> None: ...

                class Failure(Exception):
                    pass

                class Plain:
                    def __init__(self) -> None:
                        self.x = 1
                    def twice(self) -> int:
                        return 2 * self.x

                class Borrower:  # works on its host's state, declares nothing
                    def total(self) -> int:
                        return sum(self._items)

                def make() -> Plain:
                    return Plain()
            """,
            "host.py": """
                import threading
                from .parts import ToolStuff, ListingMethods, Stubby, Contract, Sink, Failure, Plain, Borrower, Hooks

                class Host(ToolStuff, ListingMethods):
                    def __init__(self) -> None:
                        self._lock = threading.Lock()

                class Other(Stubby):
                    pass

                class Impl(Contract):
                    def send(self) -> None:
                        pass

                class Sunk(Sink):
                    def put(self, x: int) -> None:
                        pass

                class Worse(Failure):
                    pass

                class Child(Plain):
                    pass

                class Worker(threading.Thread):
                    pass

                class Handler(Hooks):
                    def takes(self) -> bool:
                        return True

                class Bag(Borrower):
                    def __init__(self) -> None:
                        self._items = [1, 2]
            """,
        },
    )
    assert set(found) == {("Host", "ToolStuff"), ("Host", "ListingMethods"), ("Other", "Stubby"), ("Bag", "Borrower")}
    assert found[("Bag", "Borrower")] == ["reads attributes of its host: _items"]
    assert any("host attributes it never sets: _lock" in w for w in found[("Host", "ToolStuff")])
    assert any("stubs" in w for w in found[("Host", "ToolStuff")])
    assert any("mixin" in w for w in found[("Host", "ListingMethods")])
    assert any("stubs" in w for w in found[("Other", "Stubby")])
