"""Typed structured results: ``CallToolResult.data`` unwrapping and ``CallToolResult.parse(Model)``.

:func:`parse_into` turns a JSON value into ``model``:

* a pydantic model class (anything with ``model_validate``): ``model.model_validate(value)``;
* a dataclass: built field by field from a JSON object, recursively through the field types (nested
  dataclasses, ``List[...]``, ``Dict[str, ...]``, ``Optional[...]``); unknown keys are ignored, missing
  fields take their defaults;
* any other type (``int``, ``List[int]``, a ``TypedDict``...): ``pydantic.TypeAdapter(model)`` when pydantic
  is installed, else the value itself when it already is an instance of ``model``.

Failures raise :class:`~mcpsync.errors.ToolOutputInvalid`. Pure computation, thread-safe; pydantic is imported only
when a non-dataclass, non-pydantic type needs it.
"""

from __future__ import annotations

import dataclasses
import typing
from typing import Any, Dict, Optional

from .errors import ToolOutputInvalid

__all__ = ["WRAP_KEY", "parse_into", "unwrap"]

#: The outputSchema key FastMCP servers set when they wrapped a non-object result as ``{"result": value}``.
WRAP_KEY = "x-fastmcp-wrap-result"


def unwrap(structured: Any, output_schema: Optional[Dict[str, Any]]) -> Any:
    """``structured`` without the ``{"result": ...}`` wrapper when ``output_schema`` says it was wrapped."""
    if isinstance(output_schema, dict) and output_schema.get(WRAP_KEY) and isinstance(structured, dict):
        if set(structured) == {"result"}:
            return structured["result"]
    return structured


def _fail(model: Any, why: str) -> ToolOutputInvalid:
    return ToolOutputInvalid(
        "cannot parse the structured result into %s: %s" % (getattr(model, "__name__", model), why)
    )


def _build(tp: Any, value: Any, depth: int) -> Any:
    if depth > 64:
        raise _fail(tp, "nested too deeply")
    if tp is Any or tp is object:
        return value
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is typing.Union or type(tp).__name__ == "UnionType":
        if value is None and type(None) in args:
            return None
        errors = []
        for arm in args:
            if arm is type(None):
                continue
            try:
                return _build(arm, value, depth + 1)
            except ToolOutputInvalid as exc:
                errors.append(str(exc))
        raise _fail(tp, "; ".join(errors) or "no arm matched")
    if origin in (list, tuple, set, frozenset) and isinstance(value, list):
        item = args[0] if args else Any
        items = [_build(item, v, depth + 1) for v in value]
        return items if origin is list else origin(items)
    if origin is dict and isinstance(value, dict):
        vt = args[1] if len(args) == 2 else Any
        return {k: _build(vt, v, depth + 1) for k, v in value.items()}
    if origin is typing.Literal:
        if value in args:
            return value
        raise _fail(tp, "%r is not one of %r" % (value, args))
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise _fail(tp, "expected an object, got %s" % type(value).__name__)
        try:
            hints = typing.get_type_hints(tp)
        except Exception:  # noqa: BLE001 - unresolvable annotations: take the values as they are
            hints = {}
        kwargs = {}
        for f in dataclasses.fields(tp):
            if f.init and f.name in value:
                kwargs[f.name] = _build(hints.get(f.name, Any), value[f.name], depth + 1)
        try:
            return tp(**kwargs)
        except TypeError as exc:
            raise _fail(tp, str(exc)) from None
    if hasattr(tp, "model_validate"):
        try:
            return tp.model_validate(value)
        except ValueError as exc:
            raise _fail(tp, str(exc)) from None
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(tp, type) and origin is None and isinstance(value, tp):
        return value
    try:
        from pydantic import TypeAdapter
    except ImportError:
        raise _fail(tp, "%r is not a %s (install pydantic for other types)" % (value, tp)) from None
    try:
        return TypeAdapter(tp).validate_python(value)
    except ValueError as exc:
        raise _fail(tp, str(exc)) from None


def parse_into(model: Any, value: Any) -> Any:
    """``value`` as an instance of ``model`` (see the module docstring).

    Raises :class:`~mcpsync.errors.ToolOutputInvalid` when it does not fit.
    """
    return _build(model, value, 0)
