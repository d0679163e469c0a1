"""Arguments as plain JSON: pydantic model instances (duck-typed: pydantic is not imported here) dumped by their
original names, leaving out fields the model did not set and optional ones left at ``None``. Pure, thread-safe."""

from __future__ import annotations

from typing import Any

from ..types import JSON

__all__ = ["to_json_value"]


def _is_model(value: Any) -> bool:
    return hasattr(value, "model_fields_set") and isinstance(getattr(type(value), "model_fields", None), dict)


def to_json_value(value: Any) -> Any:
    """``value`` with every pydantic model (by alias, unset fields left out), tuple and set made plain JSON."""
    if _is_model(value):
        return {k: to_json_value(v) for k, v in _dump(value).items()}
    if isinstance(value, dict):
        return {str(k): to_json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_json_value(v) for v in value]
    return value


def _dump(model: Any) -> JSON:
    out: JSON = {}
    fields = type(model).model_fields
    for fname in model.model_fields_set:
        info = fields.get(fname)
        if info is None:
            continue
        value = getattr(model, fname)
        if value is None and not info.is_required() and info.default is None:
            continue  # an optional argument left at its None default: omitted, as if the model had not given it
        out[info.alias or fname] = value
    return out
