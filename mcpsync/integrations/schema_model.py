"""A tool's JSON Schema as a pydantic argument model, for the frameworks that want one.

:func:`argument_model` builds a ``pydantic.BaseModel`` subclass from an MCP tool's input schema:

* local ``$ref`` (``#/$defs/...``, ``#/definitions/...``, ``#``), recursive ones included (the model refers
  to itself by a forward reference, resolved by ``model_rebuild``);
* ``integer`` becomes an ``int`` and ``number`` an ``int`` or a ``float`` as the model gave it: ``2`` reaches the
  server as ``2``, never ``2.0`` (a whole float such as ``2.0`` for an ``integer`` becomes ``2``; a string, a
  boolean, a fraction for an ``integer``, NaN and the infinities are refused, as JSON Schema refuses them); the
  JSON Schema the framework shows the model keeps ``"type": "integer"`` / ``"number"``;
* ``enum`` and ``const`` become ``Literal[...]``; ``default`` is kept; a property that is not required and has
  no default defaults to ``None`` and is left out of the arguments sent (:func:`dump_arguments`);
* nullables (``type: [..., "null"]``, an ``anyOf`` branch ``{"type": "null"}``) become ``Optional``;
* nested objects with properties become nested models; objects without properties become ``Dict[str, ...]``;
* ``anyOf``/``oneOf`` become ``Union``; a root ``anyOf``/``oneOf``/``allOf`` is merged into the root's properties
  first (:func:`mcpsync.manager.adapters.provider_schema`); a schema without properties gives an empty model;
* property names that are no Python identifiers, start with ``_`` or clash with pydantic's own attributes get
  a safe field name and keep the original name as the alias (the arguments sent use the original names).

pydantic is imported when this module is; every framework that wants a model depends on it. Pure computation,
thread-safe; the models built are immutable classes.
"""

from __future__ import annotations

import keyword
import math
import re
from decimal import Decimal
from types import MappingProxyType
from typing import Annotated, Any, Dict, List, Mapping, Optional, Tuple, Union

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, WithJsonSchema, create_model

from .._pointer import resolve_pointer
from ..types import JSON
from .values import to_json_value

__all__ = ["Integer", "Number", "argument_model", "dump_arguments", "to_json_value"]

_MAX_DEPTH = 24


def _number(value: Any) -> Union[int, float]:
    """JSON Schema ``number``: an int stays an int, a float stays a float; anything else is refused."""
    if isinstance(value, bool):
        raise ValueError("expected a number, got a boolean")
    if isinstance(value, int):
        return int(value)
    if not isinstance(value, (float, Decimal)):
        raise ValueError("expected a number, got %s" % type(value).__name__)
    number = float(value)
    if not math.isfinite(number):
        raise ValueError("expected a finite number, got %r" % number)
    return number


def _integer(value: Any) -> int:
    """JSON Schema ``integer``: an int, or a float with no fraction (``2.0`` is ``2``)."""
    number = _number(value)
    if isinstance(number, float):
        if not number.is_integer():
            raise ValueError("expected a whole number, got %r" % number)
        return int(number)
    return number


#: The argument type of a JSON Schema ``number``: an ``int`` or a ``float``, as the model gave it.
Number = Annotated[Union[int, float], PlainValidator(_number), WithJsonSchema({"type": "number"})]
#: The argument type of a JSON Schema ``integer``.
Integer = Annotated[int, PlainValidator(_integer), WithJsonSchema({"type": "integer"})]
_PRIMITIVES: Mapping[str, Any] = MappingProxyType(
    {"string": str, "integer": Integer, "number": Number, "boolean": bool, "null": type(None)}
)
_RESERVED = set(dir(BaseModel)) | {"model_config", "model_fields", "schema", "json", "dict", "copy", "validate"}


class _ArgsBase(BaseModel):
    model_config = ConfigDict(populate_by_name=True, extra="ignore", arbitrary_types_allowed=True)


def _class_name(text: str) -> str:
    words = re.split(r"[^0-9A-Za-z]+", text)
    name = "".join(w[:1].upper() + w[1:] for w in words if w) or "Args"
    return name if name[0].isalpha() else "M" + name


def _field_name(prop: str, taken: set) -> str:  # type: ignore[type-arg]
    name = re.sub(r"\W", "_", prop)
    if not name or name[0].isdigit() or name.startswith("_") or keyword.iskeyword(name) or name in _RESERVED:
        name = "f_" + name.lstrip("_")
    base, n = name, 2
    while name in taken:
        name, n = "%s_%d" % (base, n), n + 1
    taken.add(name)
    return name


def _literal_ok(values: List[Any]) -> bool:
    return bool(values) and all(v is None or isinstance(v, (str, int, bool, float)) for v in values)


class _Builder:
    def __init__(self, root: JSON, name: str) -> None:
        self.root = root
        self.name = name
        self.namespace: Dict[str, Any] = {}
        self.by_ref: Dict[str, str] = {}  # ref -> model class name (also while it is being built)
        self.used: set = set()  # type: ignore[type-arg]

    def unique(self, hint: str) -> str:
        base = _class_name(hint)
        name, n = base, 2
        while name in self.used:
            name, n = "%s%d" % (base, n), n + 1
        self.used.add(name)
        return name

    def type_of(self, schema: Any, hint: str, depth: int) -> Any:
        if not isinstance(schema, dict) or depth > _MAX_DEPTH:
            return Any
        ref = schema.get("$ref")
        if isinstance(ref, str):
            target = resolve_pointer(self.root, ref)
            if not isinstance(target, dict):
                return Any
            if ref in self.by_ref:
                return self.by_ref[ref]  # a forward reference by name: resolved by model_rebuild
            if _is_object_with_props(target):
                model_name = self.unique(ref.rsplit("/", 1)[-1] if ref != "#" else self.name)
                self.by_ref[ref] = model_name
                self.namespace[model_name] = self.model(target, model_name, depth + 1)
                return model_name
            return self.type_of(target, hint, depth + 1)
        if "const" in schema and _literal_ok([schema["const"]]):
            from typing import Literal

            return Literal[schema["const"]]
        enum = schema.get("enum")
        if isinstance(enum, list) and _literal_ok(enum):
            from typing import Literal

            values = tuple(v for v in enum if v is not None)
            lit: Any = Literal[values] if values else type(None)
            return Optional[lit] if None in enum and values else lit
        for kw in ("anyOf", "oneOf"):
            branches = schema.get(kw)
            if isinstance(branches, list) and branches:
                types = [self.type_of(b, "%s_%d" % (hint, i), depth + 1) for i, b in enumerate(branches)]
                return _union(types)
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and all_of:
            merged: JSON = {}
            for sub in all_of:
                if isinstance(sub, dict) and isinstance(sub.get("$ref"), str):
                    sub = resolve_pointer(self.root, sub["$ref"]) or {}
                if isinstance(sub, dict):
                    for k, v in sub.items():
                        if k == "properties" and isinstance(v, dict):
                            merged.setdefault("properties", {}).update(v)
                        elif k == "required" and isinstance(v, list):
                            merged.setdefault("required", []).extend(v)
                        else:
                            merged.setdefault(k, v)
            rest = {k: v for k, v in schema.items() if k != "allOf"}
            merged.update({k: v for k, v in rest.items() if k not in ("properties", "required")})
            return self.type_of(merged, hint, depth + 1)
        declared = schema.get("type")
        kinds = [declared] if isinstance(declared, str) else [t for t in declared or [] if isinstance(t, str)]
        if not kinds:
            if isinstance(schema.get("properties"), dict):
                kinds = ["object"]
            else:
                return Any
        types = [self.single(schema, kind, hint, depth) for kind in kinds]
        return _union(types)

    def single(self, schema: JSON, kind: str, hint: str, depth: int) -> Any:
        if kind in _PRIMITIVES:
            return _PRIMITIVES[kind]
        if kind == "array":
            items = schema.get("items")
            return List[self.type_of(items, hint + "_item", depth + 1) if isinstance(items, dict) else Any]  # type: ignore[misc]
        if kind == "object":
            if _is_object_with_props(schema):
                model_name = self.unique(hint)
                self.namespace[model_name] = self.model(schema, model_name, depth + 1)
                return model_name
            extra = schema.get("additionalProperties")
            value = self.type_of(extra, hint + "_value", depth + 1) if isinstance(extra, dict) else Any
            return Dict[str, value]  # type: ignore[valid-type]
        return Any

    def model(self, schema: JSON, model_name: str, depth: int) -> Any:
        props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
        required = set(r for r in schema.get("required") or [] if isinstance(r, str))
        fields: Dict[str, Tuple[Any, Any]] = {}
        taken: set = set()  # type: ignore[type-arg]
        for prop, sub in (props or {}).items():
            if not isinstance(prop, str):
                continue
            sub = sub if isinstance(sub, dict) else {}
            annotation = self.type_of(sub, "%s_%s" % (model_name, prop), depth + 1)
            kwargs: Dict[str, Any] = {}
            description = sub.get("description") or sub.get("title")
            if isinstance(description, str):
                kwargs["description"] = description
            fname = _field_name(prop, taken)
            if fname != prop:
                kwargs["alias"] = prop
            if prop in required:
                info = Field(**kwargs)
            elif "default" in sub:
                info = Field(default=sub["default"], **kwargs)
            else:
                annotation = Optional[annotation] if not isinstance(annotation, str) else Optional[annotation]
                info = Field(default=None, **kwargs)
            fields[fname] = (annotation, info)
        doc = schema.get("description")
        model = create_model(model_name, __base__=_ArgsBase, **fields)  # type: ignore[call-overload]
        if isinstance(doc, str):
            model.__doc__ = doc
        return model


def _is_object_with_props(schema: JSON) -> bool:
    props = schema.get("properties")
    kind = schema.get("type")
    return (
        isinstance(props, dict)
        and bool(props)
        and (kind in (None, "object") or (isinstance(kind, list) and "object" in kind))
    )


def _union(types: List[Any]) -> Any:
    if any(t is Number for t in types):  # ["integer", "number"]: Number keeps ints as they are, and 2.0 as 2.0
        types = [t for t in types if t is not Integer]
    unique: List[Any] = []
    for t in types:
        if not any(t is u or t == u for u in unique):
            unique.append(t)
    if not unique:
        return Any
    if len(unique) == 1:
        return unique[0]
    if Any in unique:
        return Any
    return Union[tuple(unique)]


def argument_model(schema: Any, name: str = "Arguments") -> Any:
    """A pydantic model class for the object schema ``schema`` (see the module docstring). Never raises for a
    malformed schema: what cannot be typed becomes ``Any``."""
    from ..manager.adapters import object_schema, _merge_top_level_combinators

    root = object_schema(schema)
    flat = _merge_top_level_combinators(root)
    builder = _Builder(root, name)
    model_name = builder.unique(name)
    builder.by_ref["#"] = model_name
    model = builder.model(flat, model_name, 0)
    builder.namespace[model_name] = model
    for candidate in list(builder.namespace.values()):
        try:
            candidate.model_rebuild(_types_namespace=builder.namespace, force=True)
        except Exception:  # noqa: BLE001 - an untypeable corner must not break the tool
            continue
    return model


def dump_arguments(model_cls: Any, values: Dict[str, Any]) -> JSON:
    """Validate ``values`` (keyed by field name or original name) with ``model_cls`` and return the arguments
    to send, keyed by the original names; raises ``pydantic.ValidationError``."""
    return to_json_value(model_cls.model_validate(values))  # type: ignore[no-any-return]
