"""Arguments a model might give, for the adapters' hypothesis properties: any JSON object, keys drawn mostly from
the ``shapes`` and ``measure`` tools' own names (so many reach the server) and values of any JSON type."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

KEYS = st.sampled_from(["box", "class", "note", "color", "w", "h", "count", "ratio", "scale", "points"]) | st.text(
    max_size=6
)
SCALARS = st.none() | st.booleans() | st.integers(-(2**40), 2**40) | st.floats(allow_nan=True) | st.text(max_size=8)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
    max_leaves=8,
)


def arguments() -> Any:
    """A strategy of model-given arguments: mostly objects, sometimes not an object at all."""
    return st.dictionaries(KEYS, VALUES, max_size=5) | VALUES
