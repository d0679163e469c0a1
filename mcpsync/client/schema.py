"""JSON Schema validation (jsonschema, imported on first use) and schema helpers.

- Draft 2020-12 is the default dialect when ``$schema`` is absent; an unknown
  dialect falls back to 2020-12 instead of failing.
- A network ``$ref`` is never fetched: the registry refuses every retrieval.
- Compiled validators are cached by the caller (see :class:`ValidatorCache`).
"""

from __future__ import annotations

import json
import threading
import warnings
from typing import Any, Dict, Optional, Type

from ..errors import ConfigError, SchemaValidationError

__all__ = ["ValidatorCache", "compile_schema", "schema_defaults", "validate"]


def _refuse(uri: str) -> Any:
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # an attrs class mypy does not see through


def compile_schema(schema: Any) -> Any:
    """Return a jsonschema validator object for ``schema`` (2020-12 unless ``$schema`` says otherwise)."""
    import jsonschema
    from referencing import Registry

    if schema is True or schema is None:
        schema = {}
    elif schema is False:
        schema = {"not": {}}
    if not isinstance(schema, dict):
        raise ConfigError("a JSON Schema must be an object or a boolean, got %s" % type(schema).__name__)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError:
        cls = jsonschema.Draft202012Validator  # lenient: validate what can be validated
    return cls(schema, registry=Registry(retrieve=_refuse))  # type: ignore[call-arg]


def validate(validator: Any, instance: Any, error_cls: Type[SchemaValidationError], what: str, **context: Any) -> None:
    """Validate ``instance``; raise ``error_cls`` naming the schema path and the instance path."""
    try:
        errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    except Exception as exc:  # noqa: BLE001 - an unresolvable $ref and friends
        raise error_cls("%s: the schema could not be applied: %s" % (what, exc), **context) from None
    if not errors:
        return
    first = errors[0]
    schema_path = "/".join(str(p) for p in first.absolute_schema_path)
    instance_path = "/".join(str(p) for p in first.absolute_path)
    raise error_cls(
        "%s: %s (at schema path %r, instance path %r)" % (what, first.message, schema_path, instance_path or "/"),
        schema_path=schema_path,
        instance_path=instance_path,
        errors=[e.message for e in errors],
        **context,
    )


class ValidatorCache:
    """Compiled validators keyed by the schema's canonical JSON text. Thread-safe."""

    def __init__(self, maxsize: int = 512) -> None:
        self._cache: Dict[str, Any] = {}
        self._lock = threading.Lock()
        self._maxsize = maxsize

    def get(self, schema: Any) -> Any:
        """The validator for ``schema``, compiled at most once."""
        key = json.dumps(schema, sort_keys=True, default=str)
        v = self._cache.get(key)
        if v is None:
            v = compile_schema(schema)
            with self._lock:
                if len(self._cache) >= self._maxsize:
                    self._cache.clear()
                self._cache[key] = v
        return v

    def clear(self) -> None:
        """Forget every compiled validator."""
        with self._lock:
            self._cache.clear()


def schema_defaults(schema: Any) -> Dict[str, Any]:
    """The defaults a flat object schema declares, per property (strings, numbers, enums, booleans...).

    Properties without a ``default`` are left out, except a property whose enum has a
    single value, which takes it.
    """
    out: Dict[str, Any] = {}
    if not isinstance(schema, dict):
        return out
    props = schema.get("properties")
    if not isinstance(props, dict):
        return out
    for name, prop in props.items():
        if not isinstance(prop, dict):
            continue
        if "default" in prop:
            out[name] = prop["default"]
        elif isinstance(prop.get("enum"), list) and len(prop["enum"]) == 1:
            out[name] = prop["enum"][0]
        elif isinstance(prop.get("oneOf"), list) and "default" in prop:
            out[name] = prop["default"]
    return out


def coerce_value(prop: Optional[Dict[str, Any]], value: Any) -> Any:
    """Turn a text answer into the type a primitive property schema asks for (for interactive forms)."""
    if not isinstance(prop, dict) or not isinstance(value, str):
        return value
    t = prop.get("type")
    try:
        if t == "integer":
            return int(value)
        if t == "number":
            return float(value)
        if t == "boolean":
            return value.strip().lower() in ("1", "true", "yes", "y", "on")
    except ValueError:
        return value
    return value
