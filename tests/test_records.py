"""mcpsync's lighter ``@dataclass`` (mcpsync/_records.py) behaves as the real one for every record.

Each record class of the package is compared with a real dataclass twin made from the same fields;
and a sample hierarchy is declared twice (records and dataclasses) and compared behaviour by behaviour.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
import subprocess
import sys
import threading
from typing import Any, ClassVar, Dict, List, Optional, Tuple

import pytest

import mcpsync.client.handlers as handlers
import mcpsync.client.negotiate as negotiate
import mcpsync.types as types
from mcpsync._records import dataclass as record
from mcpsync._records import field as rfield
from mcpsync._records import record_fields


def _records() -> List[type]:
    out = []
    for module in (types, handlers, negotiate):
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and "__record_fields__" in value.__dict__
                and value.__module__ == module.__name__
            ):
                out.append(value)
    return out


RECORDS = _records()


def test_the_package_has_records_and_never_imports_dataclasses_for_them() -> None:
    assert len(RECORDS) >= 25
    code = (
        "import sys, mcpsync.types, mcpsync.client.handlers, mcpsync.client.negotiate\n"
        "print('dataclasses' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "False", out.stderr


def _twin(cls: type) -> type:
    """A real dataclass with ``cls``'s fields, settings and order."""
    specs: List[Tuple[str, Any, Any]] = []
    for f in record_fields(cls):
        kw: Dict[str, Any] = {"repr": f.repr, "compare": f.compare}
        if f.default_factory is not rfield().default_factory:
            kw["default_factory"] = f.default_factory
        elif f.default is not rfield().default:
            kw["default"] = f.default
        specs.append((f.name, Any, dataclasses.field(**kw)))
    twin: type = dataclasses.make_dataclass(cls.__name__, specs)
    twin.__qualname__ = cls.__qualname__
    return twin


def _sample(cls: type) -> Dict[str, Any]:
    return {f.name: "v-%s" % f.name for f in record_fields(cls)}


@pytest.mark.parametrize("cls", RECORDS, ids=lambda c: c.__qualname__)
def test_each_record_matches_a_real_dataclass(cls: type) -> None:
    twin = _twin(cls)
    values = _sample(cls)
    a, b = cls(**values), twin(**values)
    assert repr(a) == repr(b)
    assert [f.name for f in dataclasses.fields(cls)] == [f.name for f in dataclasses.fields(twin)]
    assert dataclasses.is_dataclass(a) and dataclasses.is_dataclass(cls)
    assert dataclasses.asdict(a) == dataclasses.asdict(b)
    assert dataclasses.astuple(a) == dataclasses.astuple(b)
    assert a == cls(**values) and not (a != cls(**values))
    assert dataclasses.replace(a, **{next(iter(values)): "changed"}) != a
    assert list(inspect.signature(cls).parameters) == list(inspect.signature(twin).parameters)
    assert cls.__match_args__ == twin.__match_args__  # type: ignore[attr-defined]
    with pytest.raises(TypeError):
        hash(a)
    with pytest.raises(TypeError):
        cls(**values, not_a_field=1)
    required = [
        f.name
        for f in dataclasses.fields(twin)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    if required:
        with pytest.raises(TypeError):
            cls()
    else:
        assert repr(cls()) == repr(twin())
    positional = cls(*values.values())
    assert positional == a
    assert copy.deepcopy(a) == a


@record
class _RBase:
    kind: str
    raw: Dict[str, Any] = rfield(default_factory=dict, repr=False)
    LIMIT: ClassVar[int] = 3


@record
class _RChild(_RBase):
    text: str = ""
    extra: Optional[List[int]] = rfield(default=None, compare=False)


@dataclasses.dataclass
class _DBase:
    kind: str
    raw: Dict[str, Any] = dataclasses.field(default_factory=dict, repr=False)
    LIMIT: ClassVar[int] = 3


@dataclasses.dataclass
class _DChild(_DBase):
    text: str = ""
    extra: Optional[List[int]] = dataclasses.field(default=None, compare=False)


def test_a_hierarchy_behaves_as_its_dataclass_twin() -> None:
    r, d = _RChild("k", text="t", extra=[1]), _DChild("k", text="t", extra=[1])
    assert repr(r).replace("_RChild", "X") == repr(d).replace("_DChild", "X")
    assert r.raw == {} and r.raw is not _RChild("k").raw  # a fresh default per instance
    assert r == _RChild("k", text="t", extra=[2])  # compare=False
    assert r != _RChild("k", text="other")
    assert r != _RBase("k") and _RBase("k") == _RBase("k")
    assert (r == object()) is False
    assert _RChild.LIMIT == 3 and "LIMIT" not in [f.name for f in dataclasses.fields(r)]
    assert not hasattr(_RBase, "raw")  # a default_factory leaves no class attribute, as with dataclasses
    assert _RChild.text == "" and _RChild.extra is None
    assert [f.name for f in dataclasses.fields(r)] == [f.name for f in dataclasses.fields(d)]
    assert dataclasses.asdict(r) == dataclasses.asdict(d)
    assert dataclasses.replace(r, text="u").text == "u"
    assert pickle.loads(pickle.dumps(r)) == r


def test_recursive_repr_does_not_loop() -> None:
    r = _RChild("k")
    r.extra = [r]  # type: ignore[list-item]
    assert "..." in repr(r)


def test_a_non_default_field_after_a_default_is_refused() -> None:
    with pytest.raises(TypeError, match="non-default"):

        @record
        class _Bad:
            a: int = 1
            b: int


def test_first_use_from_many_threads_builds_once() -> None:
    @record
    class Fresh:
        a: int
        b: str = "x"

    stub = Fresh.__dict__["__init__"]
    start = threading.Barrier(8)
    made: List[Any] = []

    def build() -> None:
        start.wait()
        made.append(Fresh(1))

    threads = [threading.Thread(target=build) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(made) == 8 and all(m == Fresh(1) for m in made)
    assert Fresh.__dict__["__init__"] is not stub
