"""A client's settings as one flat dict, the extensions' flat names included.

:mod:`mcpsync.client.flat` maps the flat names of the client's own option objects (``cwd``, ``verify``,
``on_log``...); it knows no extension. Configuration files, ``Manager(client_options=...)``, card connections, the
pytest plugin and ``MCPAdapter(client_options=...)`` (and the command line, which maps its options here) also take
the flat names of the resumable-input extension, which this layer (above the client) maps:

* ``defer_input: true`` -> ``extensions=[mcpsync.input.DeferInput()]`` (every call defers);
* ``input_timeout: 60`` -> ``DeferInput(timeout=60)``; given without ``defer_input``, the client gets
  ``DeferInput(timeout=60, every_call=False)`` (calls defer inside ``mcpsync.input.deferring(client)``);
* ``defer_input: false`` drops a ``DeferInput`` given in ``extensions`` (the flat name wins, as everywhere).

Pure functions; thread-safe.
"""

from __future__ import annotations

from typing import Any, Dict, List, Mapping

from ..client import flat as _client_flat

__all__ = ["EXTENSION_FIELDS", "flat_options", "grouped"]

#: The flat names of extension settings this module maps (resumable input: :class:`mcpsync.input.DeferInput`).
EXTENSION_FIELDS = ("defer_input", "input_timeout")
_DEFAULT_TIMEOUT = 300.0  # DeferInput's


def flat_options(kwargs: Mapping[str, Any]) -> Dict[str, Any]:
    """:func:`mcpsync.client.flat.flat_options`, with a :class:`~mcpsync.input.DeferInput` in ``extensions``
    spread into ``defer_input`` / ``input_timeout`` (flat names already in ``kwargs`` win)."""
    spread: Dict[str, Any] = {}
    entries = kwargs.get("extensions")
    if entries is not None and not isinstance(entries, (str, bytes)):
        from ..input.extension import DeferInput

        rest: List[Any] = []
        for entry in entries:
            if isinstance(entry, DeferInput):
                spread = _flat_deferral(entry)
            else:
                rest.append(entry)
        kwargs = {k: v for k, v in kwargs.items() if k != "extensions"}
        if rest:
            kwargs["extensions"] = rest
    out = _client_flat.flat_options(kwargs)
    for key, value in spread.items():
        out.setdefault(key, value)
    return out


def _flat_deferral(entry: Any) -> Dict[str, Any]:
    """A DeferInput as flat names, so that :func:`grouped` makes the same one again: ``defer_input: true`` for
    every call (with ``input_timeout`` when not the default), else ``input_timeout`` alone."""
    if not entry.every_call:
        return {"input_timeout": entry.timeout}
    out: Dict[str, Any] = {"defer_input": True}
    if entry.timeout != _DEFAULT_TIMEOUT:
        out["input_timeout"] = entry.timeout
    return out


def grouped(kwargs: Mapping[str, Any], *, remote: bool) -> Dict[str, Any]:
    """:func:`mcpsync.client.flat.grouped` (flat names into the client's option objects), with ``defer_input`` /
    ``input_timeout`` made into a :class:`~mcpsync.input.DeferInput` in ``extensions`` (see the module
    documentation). Raises ConfigError as that function does, and for a bad ``input_timeout``."""
    out = _client_flat.grouped({k: v for k, v in kwargs.items() if k not in EXTENSION_FIELDS}, remote=remote)
    if not any(key in kwargs for key in EXTENSION_FIELDS):
        return out
    from ..input.extension import DeferInput

    extensions = [e for e in out.get("extensions") or () if not isinstance(e, DeferInput)]
    every_call = bool(kwargs.get("defer_input"))
    if every_call or "input_timeout" in kwargs:
        extensions.append(DeferInput(kwargs.get("input_timeout", _DEFAULT_TIMEOUT), every_call=every_call))
    if extensions:
        out["extensions"] = extensions
    else:
        out.pop("extensions", None)
    return out
