"""``@dataclass`` for mcpsync's own result and request types, at a fraction of the import cost.

``import dataclasses`` imports ``inspect`` (with ``ast`` and ``dis``), and every ``@dataclass`` compiles its
``__init__``, ``__repr__`` and ``__eq__`` when the class is defined: together about 15 ms of a cold start
that the rest of a one-call script spends in well under that. Here a class gets the same methods, generated
on their **first use** (one small compile per class and method actually used) and nothing is imported.

Type checkers see the real :func:`dataclasses.dataclass` (the modules import it under ``TYPE_CHECKING``),
so constructors stay precisely typed. At run time a record behaves as the dataclass would for the features
mcpsync uses (positional and keyword fields in definition order, base-class fields first, ``default`` and
``default_factory``, ``repr=False``, ``compare=False``, ``ClassVar`` skipped, ``__eq__`` comparing field
tuples of the same class, ``__hash__ = None``, ``__match_args__``), and it stays a dataclass to the
``dataclasses`` module: ``dataclasses.fields()``, ``asdict()``, ``astuple()``, ``replace()`` and
``is_dataclass()`` work, through a ``__dataclass_fields__`` built (importing ``dataclasses``) the first time
something asks for it. ``tests/test_records.py`` checks every record against a real dataclass twin.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict, List, Optional, Tuple, TypeVar

__all__ = ["MISSING", "dataclass", "field", "record_fields"]

_C = TypeVar("_C", bound=type)


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()
_build_lock = threading.Lock()


class Field:
    """One field's settings (what :func:`field` takes), and its name and annotation once the class is made."""

    __slots__ = ("name", "type", "default", "default_factory", "repr", "compare")

    def __init__(self, default: Any = MISSING, default_factory: Any = MISSING, repr: bool = True, compare: bool = True):  # noqa: A002
        if default is not MISSING and default_factory is not MISSING:
            raise ValueError("cannot specify both default and default_factory")
        self.name = ""
        self.type: Any = None
        self.default = default
        self.default_factory = default_factory
        self.repr = repr
        self.compare = compare


def field(
    *,
    default: Any = MISSING,
    default_factory: Any = MISSING,
    repr: bool = True,  # noqa: A002 - the dataclasses name
    compare: bool = True,
) -> Any:
    """As :func:`dataclasses.field` (the arguments mcpsync uses)."""
    return Field(default, default_factory, repr, compare)


def record_fields(cls: type) -> Tuple[Field, ...]:
    """The fields of a record class, base classes' first."""
    found: Tuple[Field, ...] = cls.__dict__.get("__record_fields__", ()) or getattr(cls, "__record_fields__", ())
    return found


def dataclass(cls: Optional[_C] = None) -> Any:
    """As a plain ``@dataclass`` (no arguments): ``__init__``, ``__repr__``, ``__eq__``, made on first use."""

    def wrap(cls: _C) -> _C:
        return _process(cls)

    return wrap if cls is None else wrap(cls)


def _process(cls: _C) -> _C:
    fields: Dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        for f in base.__dict__.get("__record_fields__", ()):
            fields[f.name] = f
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():
        text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", repr(annotation))
        if text.startswith(("ClassVar", "typing.ClassVar")):
            continue
        value = cls.__dict__.get(name, MISSING)
        f = value if isinstance(value, Field) else Field(default=value)
        f.name = name
        f.type = annotation
        if isinstance(value, Field):
            if f.default is MISSING:
                delattr(cls, name)
            else:
                setattr(cls, name, f.default)
        fields.pop(name, None)
        fields[name] = f
    seen_default = False
    for f in fields.values():
        has_default = f.default is not MISSING or f.default_factory is not MISSING
        if seen_default and not has_default:
            raise TypeError("non-default argument %r follows default argument" % f.name)
        seen_default = seen_default or has_default
    ordered = tuple(fields.values())
    setattr(cls, "__record_fields__", ordered)  # noqa: B010
    setattr(cls, "__match_args__", tuple(f.name for f in ordered))  # noqa: B010
    for name, maker in (("__init__", _init_source), ("__repr__", _repr_source), ("__eq__", _eq_source)):
        if name not in cls.__dict__:
            setattr(cls, name, _compiled_on_first_use(cls, name, maker))
    if "__hash__" not in cls.__dict__:
        setattr(cls, "__hash__", None)  # noqa: B010 - as a dataclass with eq=True: unhashable
    setattr(cls, "__dataclass_fields__", _DataclassFields())  # noqa: B010
    return cls


def _compiled_on_first_use(
    cls: type, name: str, maker: Callable[[type], Tuple[str, Dict[str, Any]]]
) -> Callable[..., Any]:
    """A method that compiles the real one on its first call, puts it on ``cls`` and calls it."""

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        real = cls.__dict__[name]
        if real is method:
            with _build_lock:
                real = cls.__dict__[name]
                if real is method:
                    source, namespace = maker(cls)
                    exec(source, namespace)  # noqa: S102 - our own generated source, as dataclasses does
                    real = namespace[name]
                    real.__qualname__ = "%s.%s" % (cls.__qualname__, name)
                    setattr(cls, name, real)
        return real(self, *args, **kwargs)

    method.__name__ = name
    method.__qualname__ = "%s.%s" % (cls.__qualname__, name)
    return method


def _init_source(cls: type) -> Tuple[str, Dict[str, Any]]:
    namespace: Dict[str, Any] = {"_HAS_FACTORY": _HAS_FACTORY}
    params: List[str] = []
    body: List[str] = []
    for f in record_fields(cls):
        if f.default_factory is not MISSING:
            namespace["_factory_" + f.name] = f.default_factory
            params.append("%s=_HAS_FACTORY" % f.name)
            body.append("    self.%s = _factory_%s() if %s is _HAS_FACTORY else %s" % (f.name, f.name, f.name, f.name))
            continue
        if f.default is not MISSING:
            namespace["_default_" + f.name] = f.default
            params.append("%s=_default_%s" % (f.name, f.name))
        else:
            params.append(f.name)
        body.append("    self.%s = %s" % (f.name, f.name))
    if "__post_init__" in dir(cls):
        body.append("    self.__post_init__()")
    source = "def __init__(self%s):\n%s\n" % ("".join(", " + p for p in params), "\n".join(body) or "    pass")
    return source, namespace


def _repr_source(cls: type) -> Tuple[str, Dict[str, Any]]:
    parts = ["%s=%%r" % f.name for f in record_fields(cls) if f.repr]
    values = "".join("self.%s, " % f.name for f in record_fields(cls) if f.repr)
    source = (
        "def __repr__(self):\n"
        "    key = (id(self), _get_ident())\n"
        "    if key in _running:\n"
        "        return '...'\n"
        "    _running.add(key)\n"
        "    try:\n"
        "        return type(self).__qualname__ + (%r %% (%s))\n"
        "    finally:\n"
        "        _running.discard(key)\n" % ("(" + ", ".join(parts) + ")", values)
    )
    return source, {"_running": set(), "_get_ident": threading.get_ident}


def _eq_source(cls: type) -> Tuple[str, Dict[str, Any]]:
    names = [f.name for f in record_fields(cls) if f.compare]
    mine = "(%s)" % "".join("self.%s, " % n for n in names)
    theirs = "(%s)" % "".join("other.%s, " % n for n in names)
    source = (
        "def __eq__(self, other):\n"
        "    if other.__class__ is self.__class__:\n"
        "        return %s == %s\n"
        "    return NotImplemented\n" % (mine, theirs)
    )
    return source, {}


class _HasFactory:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


_HAS_FACTORY = _HasFactory()


class _DataclassFields:
    """``__dataclass_fields__``, built on first access: real ``dataclasses.Field`` objects, so the
    ``dataclasses`` module's functions (``fields``, ``asdict``, ``replace``...) accept a record."""

    def __get__(self, obj: Any, owner: type) -> Dict[str, Any]:
        built: Optional[Dict[str, Any]] = owner.__dict__.get("__dataclass_fields_built__")
        if built is None:
            import dataclasses

            built = {}
            for f in record_fields(owner):
                real: Any = dataclasses.field(
                    default=dataclasses.MISSING if f.default is MISSING else f.default,
                    default_factory=dataclasses.MISSING if f.default_factory is MISSING else f.default_factory,
                    repr=f.repr,
                    compare=f.compare,
                )
                real.name = f.name
                real.type = f.type
                real._field_type = getattr(dataclasses, "_FIELD")  # noqa: B009 - what @dataclass sets, private
                built[f.name] = real
            setattr(owner, "__dataclass_fields_built__", built)  # noqa: B010
        return built
