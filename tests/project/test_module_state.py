"""No module-level mutable state in mcpsync: state lives in objects that the user creates and closes.

The scan (AST, so it sees modules only imported on demand) finds, in every module of mcpsync:

- a module-level or class-level binding to a mutable container: a ``dict``/``list``/``set`` literal or
  comprehension, or a call to ``dict()``, ``list()``, ``set()``, ``bytearray()``, ``defaultdict``,
  ``OrderedDict``, ``deque``, ``Counter``, ``WeakValueDictionary``, ``WeakKeyDictionary``, ``WeakSet``, a queue,
  ``itertools.count`` or ``threading.local``;
- a module-level lock, condition, semaphore or event (it guards or signals module state), or a module-level
  instance of a class of mcpsync that is not immutable (a frozen dataclass, a NamedTuple or an Enum is);
- any ``global`` statement.

``mcpsync/example_server/`` is left out: it is a demo server program run in a process of its own, not library
code (its module-level tables are its data).

Constants are immutable (tuples, frozensets, ``types.MappingProxyType``). What remains is listed below with its
reason, and the test checks that a listed constant is never mutated anywhere in the package (no item assignment
or deletion, no augmented assignment, no call of a mutating method), and that no entry is stale.
"""

from __future__ import annotations

import ast
import pathlib
import textwrap
from typing import Dict, Iterator, List, Set, Tuple

import mcpsync

PKG = pathlib.Path(mcpsync.__file__).parent

_MUTABLE_CALLS = {
    "dict",
    "list",
    "set",
    "bytearray",
    "defaultdict",
    "OrderedDict",
    "deque",
    "Counter",
    "ChainMap",
    "WeakValueDictionary",
    "WeakKeyDictionary",
    "WeakSet",
    "Queue",
    "SimpleQueue",
    "LifoQueue",
    "PriorityQueue",
    "count",
    "local",
}
_MUTATORS = {
    "append",
    "extend",
    "insert",
    "add",
    "update",
    "setdefault",
    "pop",
    "popitem",
    "clear",
    "remove",
    "discard",
    "sort",
    "reverse",
    "appendleft",
    "extendleft",
    "popleft",
    "__setitem__",
    "__delitem__",
    "difference_update",
    "intersection_update",
    "symmetric_difference_update",
}
_SYNC = {"Lock", "RLock", "Condition", "Semaphore", "BoundedSemaphore", "Event", "Barrier"}
_SKIP_DIRS = ("example_server/",)
_EXEMPT = {"__all__", "__slots__", "_fields_"}  # conventions: export lists, slots, ctypes field layouts

#: Data that the library never mutates but that is a mutable type, with why it is not made immutable.
#: The test fails if any of these is mutated anywhere in the package.
CONSTANTS: Dict[Tuple[str, str], str] = {
    # JSON Schemas handed to the validator as plain dicts (a MappingProxyType is not JSON): never mutated.
    ("manager/config_schema.py", "_STR_MAP"): "JSON Schema fragment",
    ("manager/config_schema.py", "_STR_LIST"): "JSON Schema fragment",
    ("manager/config_schema.py", "_POSITIVE"): "JSON Schema fragment",
    ("manager/config_schema.py", "_HTTP_URL"): "JSON Schema fragment",
    ("manager/config_schema.py", "_OAUTH_OBJECT"): "JSON Schema fragment",
    ("manager/config_schema.py", "_TOOL_TRANSFORMS"): "JSON Schema fragment",
    ("manager/config_schema.py", "_NATIVE_ENTRY"): "JSON Schema",
    ("manager/config_schema.py", "_OPENCODE_LOCAL"): "JSON Schema",
    ("manager/config_schema.py", "_OPENCODE_REMOTE"): "JSON Schema",
    ("manager/config_schema.py", "_OPENCODE_ENTRY"): "JSON Schema",
    ("manager/config_schema.py", "_FOREIGN_ENTRY"): "JSON Schema",
    ("manager/config_schema.py", "_GEMINI_ENTRY"): "JSON Schema",
    ("manager/config_schema.py", "_CARD"): "JSON Schema",
}

#: Mutable state that is process-wide by nature, with the reason. Keep this list short.
PROCESS_WIDE: Dict[Tuple[str, str], str] = {
    # os.register_at_fork is itself process-wide: the hooks to run in a forked child (bound methods held weakly),
    # and the current pid (kept by the hook so that a fork check is an attribute read, not a system call).
    ("_forks.py", "_hooks"): "fork hooks (os.register_at_fork is process-global)",
    ("_forks.py", "_hooks_lock"): "guards _hooks",
    ("_forks.py", "global _pid"): "the current pid, updated in a forked child",
    ("_forks.py", "global _hooks_lock"): "replaced in a forked child",
    # Interpreter exit and fork are process events: the open clients (weakly held) are closed at exit and
    # abandoned in a forked child.
    ("client/registry.py", "_OPEN"): "open clients, for atexit and fork",
    # One watchdog process per host process kills its stdio servers when the host dies (see lifeline.py).
    ("transports/lifeline.py", "LIFELINE"): "one lifeline per host process",
    # A loopback port is a machine resource: OAuth logins of any number of managers on one port share its server.
    ("auth/callback.py", "_SERVERS"): "loopback callback servers by (host, port)",
    ("auth/callback.py", "_SERVERS_LOCK"): "guards _SERVERS",
    # A file lock (fcntl/msvcrt) does not exclude threads of one process: stores on one path share a thread lock.
    ("auth/store.py", "_PATH_LOCKS"): "in-process lock per credential file path",
    ("auth/store.py", "_PATH_LOCKS_GUARD"): "guards _PATH_LOCKS",
}


def _top_level(body: List[ast.stmt]) -> Iterator[ast.stmt]:
    """Statements run at import time (module level, inside if/try/with, not inside def or class)."""
    for s in body:
        yield s
        for block in ("body", "orelse", "finalbody"):
            if isinstance(s, (ast.If, ast.Try, ast.With, ast.For, ast.While)):
                yield from _top_level(getattr(s, block, []))
        for h in getattr(s, "handlers", []):
            yield from _top_level(h.body)


def _is_mutable(value: ast.expr) -> bool:
    if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.DictComp, ast.ListComp, ast.SetComp)):
        return True
    if isinstance(value, ast.Call):
        f = value.func
        name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
        return name in _MUTABLE_CALLS
    return False


def _bindings(body: List[ast.stmt]) -> Iterator[Tuple[str, ast.expr]]:
    for s in body:
        if isinstance(s, ast.Assign):
            for t in s.targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        yield n.id, s.value
        elif isinstance(s, ast.AnnAssign) and s.value is not None and isinstance(s.target, ast.Name):
            yield s.target.id, s.value


def _mutable_classes(trees: List[ast.Module]) -> Set[str]:
    """The names of the package's classes whose instances can change (not frozen dataclasses, NamedTuples, Enums)."""
    out = set()
    for tree in trees:
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)):
            frozen = any(
                isinstance(d, ast.Call)
                and any(k.arg == "frozen" and isinstance(k.value, ast.Constant) and k.value.value for k in d.keywords)
                for d in cls.decorator_list
            )
            bases = {ast.unparse(b).split(".")[-1].split("[")[0] for b in cls.bases}
            if not frozen and not bases & {"NamedTuple", "Enum", "IntEnum", "Protocol"}:
                out.add(cls.name)
    return out


def _called(value: ast.expr) -> str:
    if not isinstance(value, ast.Call):
        return ""
    f = value.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


def scan(root: pathlib.Path) -> Dict[Tuple[str, str], int]:
    """``{(module path relative to root, name or "global NAME" or "Class.NAME"): line}`` of mutable state."""
    found: Dict[Tuple[str, str], int] = {}
    paths = [p for p in sorted(root.rglob("*.py")) if not p.relative_to(root).as_posix().startswith(_SKIP_DIRS)]
    trees = {p: ast.parse(p.read_text(encoding="utf-8")) for p in paths}
    stateful = _mutable_classes(list(trees.values())) | _SYNC
    for path, tree in trees.items():
        rel = path.relative_to(root).as_posix()
        top = list(_top_level(tree.body))
        for name, value in _bindings(top):
            if name not in _EXEMPT and (_is_mutable(value) or _called(value) in stateful):
                found[(rel, name)] = value.lineno
        for cls in (s for s in top if isinstance(s, ast.ClassDef)):
            for name, value in _bindings(cls.body):
                if name not in _EXEMPT and _is_mutable(value):
                    found[(rel, "%s.%s" % (cls.name, name))] = value.lineno
        for node in ast.walk(tree):
            if isinstance(node, ast.Global):
                for name in node.names:
                    found[(rel, "global " + name)] = node.lineno
    return found


def mutations(root: pathlib.Path, names: Set[str]) -> List[str]:
    """Where any of ``names`` (as a bare name or an attribute ``x.NAME``) is mutated in the package."""

    def named(e: ast.expr) -> str:
        if isinstance(e, ast.Name):
            return e.id
        if isinstance(e, ast.Attribute):
            return e.attr
        return ""

    out = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            hit = ""
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
                targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Subscript) and named(t.value) in names:
                        hit = named(t.value)
                    if isinstance(node, ast.AugAssign) and named(t) in names:
                        hit = named(t)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                if node.func.attr in _MUTATORS and named(node.func.value) in names:
                    hit = named(node.func.value)
            if hit:
                out.append("%s:%d mutates %s" % (path.relative_to(root).as_posix(), getattr(node, "lineno", 0), hit))
    return out


def test_no_module_level_mutable_state() -> None:
    found = scan(PKG)
    allowed = set(CONSTANTS) | set(PROCESS_WIDE)
    unexpected = sorted(
        "%s:%d %s" % (rel, line, name) for (rel, name), line in found.items() if (rel, name) not in allowed
    )
    assert not unexpected, "module-level mutable state (make it immutable or move it into an object):\n" + "\n".join(
        unexpected
    )
    stale = sorted(allowed - set(found))
    assert not stale, "no longer found; remove from the allow-lists: %s" % stale


def test_the_allowed_constants_are_never_mutated() -> None:
    assert not mutations(PKG, {name for _, name in CONSTANTS})


def _write(tmp_path: pathlib.Path, text: str) -> pathlib.Path:
    root = tmp_path / "pkg"
    root.mkdir()
    (root / "m.py").write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def test_the_scan_catches_each_kind(tmp_path: pathlib.Path) -> None:
    root = _write(
        tmp_path,
        """
        import collections, dataclasses, itertools, threading, types, weakref
        __all__ = ["f"]
        A = {}
        B: list = []
        C = set()
        D = collections.defaultdict(list)
        E = weakref.WeakValueDictionary()
        F = itertools.count()
        G = {k: 1 for k in "ab"}
        H = (1, 2)
        I = frozenset({"x"})
        J = types.MappingProxyType({"a": 1})
        K = threading.local()
        M = threading.Lock()
        class Box:
            def __init__(self) -> None:
                self.items = []
        N = Box()
        if True:
            L = {"nested": 1}
        class Thing:
            registry = {}
            fine = ()
        @dataclasses.dataclass(frozen=True)
        class Point:
            x: int
        O = Point(1)
        def f():
            global F
            A["x"] = 1
            B.append(2)
            J["a"] = 2
        """,
    )
    found = {name for _, name in scan(root)}
    assert found == {"A", "B", "C", "D", "E", "F", "G", "K", "L", "M", "N", "Thing.registry", "global F"}, found
    assert [m.split(" ", 1)[1] for m in mutations(root, {"A", "B", "H"})] == ["mutates A", "mutates B"]


def test_a_managers_fork_hook_is_held_weakly() -> None:
    """The manager's after-fork reset is its own method, registered weakly: no module keeps managers alive."""
    import gc
    import weakref

    from mcpsync import _forks
    from mcpsync.manager import Manager

    def managers() -> int:
        return sum(isinstance(getattr(e(), "__self__", None), Manager) for e in _forks._hooks)  # noqa: SLF001

    m = Manager(None)
    ref = weakref.ref(m)
    with_m = managers()
    assert with_m >= 1
    del m
    gc.collect()
    assert ref() is None and managers() == with_m - 1
    m2 = Manager(None)  # registering prunes the dead entries
    try:
        assert all(e() is not None for e in _forks._hooks)  # noqa: SLF001
    finally:
        m2.close()
