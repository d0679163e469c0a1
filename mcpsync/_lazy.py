"""Lazy re-exports for the package ``__init__`` modules (``import mcpsync`` stays cheap).

A package lists ``name -> module`` (built with :func:`table` from ``module -> names`` groups) and binds the
pair :func:`exports` returns as its module-level ``__getattr__`` and ``__dir__`` (PEP 562)::

    __getattr__, __dir__ = exports(__name__, _LAZY, globals())

A package may derive its ``__all__`` from the table (``__all__ = sorted(_LAZY)``) and import each name as
``X as X`` under ``TYPE_CHECKING`` (an explicit re-export for type checkers): each name is then written twice, in
the table and for the type checkers, and the two lists cannot drift from a third.

The loader imports the defining module on first use, caches the value in the package's namespace (so the
next access is a plain attribute) and raises ``AttributeError`` for any other name. Thread-safe: the import
lock serialises first imports; a race at worst stores the same object twice.
"""

from __future__ import annotations

import importlib
from types import MappingProxyType
from typing import Any, Callable, Collection, Dict, Iterable, List, Mapping

__all__ = ["exports", "table"]


def table(groups: Mapping[str, Iterable[str]]) -> Mapping[str, str]:
    """A read-only ``name -> module`` table for :func:`exports` from ``module -> names`` groups.

    A package lists each defining module once (``{"..client.tasks": __all__}`` when one module defines every
    name) instead of repeating it beside every name. A name listed under two modules is a programming error.
    """
    flat: Dict[str, str] = {}
    for module, names in groups.items():
        for name in names:
            if name in flat:
                raise ValueError("lazy name %r listed under %r and %r" % (name, flat[name], module))
            flat[name] = module
    return MappingProxyType(flat)


def exports(
    package: str, table: Mapping[str, str], namespace: Dict[str, Any], submodules: Collection[str] = ()
) -> "tuple[Callable[[str], Any], Callable[[], List[str]]]":
    """``(getattr, dir)`` for the package named ``package`` whose globals are ``namespace``.

    ``table`` maps each public name to the submodule defining it, relative to the package (``"store"``,
    ``".store"`` and ``"client.client"`` all work). ``submodules`` names subpackages that load on first
    attribute access too (``mcpsync.errors`` after a bare ``import mcpsync``).
    """

    def load(name: str) -> Any:
        if name in submodules:
            return importlib.import_module("." + name, package)
        module = table.get(name)
        if module is None:
            raise AttributeError("module %r has no attribute %r" % (package, name))
        value = getattr(importlib.import_module(module if module.startswith(".") else "." + module, package), name)
        namespace[name] = value
        return value

    def names() -> List[str]:
        return sorted(set(namespace) | set(table) | set(submodules) | set(namespace.get("__all__", ())))

    return load, names
