"""Generate docs/reference/errors.md from the exception classes and their docstrings. Run from the repository root:
``python .ci/gen_reference.py`` (tests/docs/test_docs_reference.py fails, naming this command, when the page is stale).
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from pathlib import Path
from typing import List, Type

ROOT = Path(__file__).resolve().parent.parent
ERRORS_PAGE = ROOT / "docs" / "reference" / "errors.md"

#: the public packages whose exceptions the page lists (each is imported to find its MCPError subclasses)
PACKAGES = ("mcpsync", "mcpsync.errors", "mcpsync.auth", "mcpsync.cards", "mcpsync.registry", "mcpsync.apps")

HEADER = """# Errors

Every exception mcpsync raises is an `MCPError`, so `except mcpsync.MCPError` catches them all; catch a subclass to
handle one kind of failure. The tree below is generated from the classes' docstrings by `.ci/gen_reference.py`
(a test keeps it in step with the code). Each class is named where you import it from.
"""


def where(cls: Type[BaseException]) -> str:
    """The shortest public path a user imports ``cls`` from."""
    for package in PACKAGES:
        module = importlib.import_module(package)
        if getattr(module, cls.__name__, None) is cls:
            return "%s.%s" % (package, cls.__name__)
    return "%s.%s" % (cls.__module__, cls.__name__)


def summary(cls: Type[BaseException]) -> str:
    doc = inspect.getdoc(cls) or ""
    if cls.__doc__ is None or doc == inspect.getdoc(cls.__base__):
        return ""
    first = " ".join(doc.split("\n\n", 1)[0].split())
    first = re.sub(r":[a-z]+:`~?([\w.]+?\.)?(\w+)`", r"`\2`", first)  # :class:`~mcpsync.X` -> `X`
    return first.replace("``", "`").replace("|", "\\|")


def render() -> str:
    for package in PACKAGES:  # every public name is loaded (lazy exports too), so every subclass is known
        module = importlib.import_module(package)
        for name in getattr(module, "__all__", ()):
            getattr(module, name)
    root = importlib.import_module("mcpsync.errors").MCPError
    lines: List[str] = [HEADER]

    def walk(cls: Type[BaseException], depth: int) -> None:
        text = summary(cls)
        lines.append("%s- `%s`%s" % ("  " * depth, where(cls), ": " + text if text else ""))
        children = [c for c in cls.__subclasses__() if c.__module__.startswith("mcpsync")]
        for child in sorted(children, key=lambda c: c.__name__):
            walk(child, depth + 1)

    walk(root, 0)
    return "\n".join(lines) + "\n"


def main() -> int:
    ERRORS_PAGE.parent.mkdir(parents=True, exist_ok=True)
    ERRORS_PAGE.write_text(render(), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
