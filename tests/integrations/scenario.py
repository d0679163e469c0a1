"""The calls every framework's fake model makes against ``hardserver.py``, and what the model must get back.

Each framework test makes its agent loop call these tools (through the framework's own execution path),
collects the text each tool call gave the model, and hands it to :func:`check`.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Tuple

#: The toolkit options every test uses: a small budget and a short call timeout.
OPTIONS: Dict[str, Any] = {"max_result_chars": 1000, "timeout": 2.0}

TREE = {"value": "a", "children": [{"value": "b", "children": [{"value": "c"}]}]}

#: integers and numbers as the model gives them: they must reach the server with the same JSON types
MEASURE: Dict[str, Any] = {"count": 2, "ratio": 3, "scale": 2.5, "points": [1, 2.5], "box": {"w": 4}}

#: (tool name, arguments the model gives)
CALLS: List[Tuple[str, Dict[str, Any]]] = [
    ("echo", {"message": "hi there"}),
    ("fail", {"message": "boom"}),
    ("slow", {"seconds": 60, "steps": 1}),
    ("add", {"a": 1, "b": 2}),
    ("payload", {"size": 5000}),
    ("tree", {"root": TREE}),
    ("either", {"city": "Oslo"}),
    ("noprops", {}),
    ("shapes", {"box": {"w": 2}, "class": "x", "note": None}),
    ("measure", MEASURE),
]


def _args(text: str, tool: str) -> Dict[str, Any]:
    assert text.startswith(tool + " "), text
    return json.loads(text[len(tool) + 1 :])  # type: ignore[no-any-return]


def check(seen: Dict[str, str]) -> None:
    """``seen``: tool name -> the text the model got for that call."""
    assert set(seen) >= {name for name, _ in CALLS}, sorted(seen)
    assert "hi there" in seen["echo"] and "Error" not in seen["echo"]
    assert seen["fail"].startswith("Error") and "boom" in seen["fail"]
    assert seen["slow"].startswith("Error") and "timed out" in seen["slow"]
    assert seen["add"].startswith("Error") and "denied" in seen["add"] and "adding is not allowed" in seen["add"]
    assert "of 5000 characters" in seen["payload"] and "handle result-" in seen["payload"]
    assert "[... truncated: showing " in seen["payload"] and len(seen["payload"]) <= 1000
    assert _args(seen["tree"], "tree") == {"root": TREE}
    assert _args(seen["either"], "either") == {"city": "Oslo"}
    assert _args(seen["noprops"], "noprops") == {}
    shapes = _args(seen["shapes"], "shapes")
    assert shapes["box"]["w"] == 2 and shapes["class"] == "x" and "note" not in shapes  # null dropped
    assert typed(_args(seen["measure"], "measure")) == typed(MEASURE)  # 2 stays 2, never 2.0


def typed(value: Any) -> Any:
    """``value`` with every scalar tagged by its exact type (2 and 2.0 differ)."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value).__name__, value)
