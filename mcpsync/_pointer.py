"""JSON Pointer (RFC 6901) lookup inside one document, for the local ``$ref``\\s of a JSON Schema.

:func:`resolve_pointer` follows ``#`` or ``#/a/b~1c/0`` through objects and arrays. Pure computation,
thread-safe; only same-document references (a fragment) are followed, never a URL.
"""

from __future__ import annotations

from typing import Any

__all__ = ["resolve_pointer"]


def resolve_pointer(root: Any, ref: str) -> Any:
    """The value ``ref`` (``#`` or ``#/...``) points at in ``root``; None when it points nowhere or is not a
    same-document fragment."""
    if ref == "#":
        return root
    if not ref.startswith("#/"):
        return None
    node: Any = root
    for raw in ref[2:].split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node
