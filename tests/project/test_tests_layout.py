"""The tests mirror the package: no test module directly in tests/, the local servers only in tests/peers/.

See docs/internals/development.md ("The tests mirror the package").
"""

from __future__ import annotations

import pathlib
from typing import Dict, List

TESTS = pathlib.Path(__file__).resolve().parent.parent

#: Python files allowed directly in tests/, each with its reason.
TOP_LEVEL: Dict[str, str] = {
    "__init__.py": "tests/ is a package, so modules import each other as tests.<folder>.<module>",
    "conftest.py": "the fixtures shared by every folder (leak check, example server commands, hypothesis profiles)",
}


def _server_like(path: pathlib.Path) -> bool:
    """A module that is a local server or peer for the tests, by its name."""
    stem = path.stem
    return not stem.startswith("test_") and (stem.endswith("server") or stem.endswith("_server") or "peer" in stem)


def test_no_test_module_sits_directly_in_tests() -> None:
    extra = sorted(p.name for p in TESTS.glob("*.py") if p.name not in TOP_LEVEL)
    assert extra == [], "move these into tests/<package>/ (helpers and servers into tests/peers/): %s" % extra


def test_local_servers_live_in_tests_peers() -> None:
    misplaced: List[str] = []
    for path in TESTS.rglob("*.py"):
        rel = path.relative_to(TESTS)
        if rel.parts[0] in ("peers", "conformance") or "__pycache__" in rel.parts:
            continue  # conformance/ is the harness's own client and runner, run by .ci/conformance
        if _server_like(path) and path.name != "conftest.py":
            misplaced.append(rel.as_posix())
    # tests/integrations/hardserver.py is the example server plus hard-schema tools, used only there
    assert sorted(misplaced) == ["integrations/hardserver.py"], misplaced


def test_every_test_folder_is_a_package() -> None:
    missing = sorted(
        d.relative_to(TESTS).as_posix()
        for d in TESTS.rglob("*")
        if d.is_dir() and any(d.glob("test_*.py")) and not (d / "__init__.py").is_file()
    )
    assert missing == [], "add an __init__.py (test modules of two folders may share a name): %s" % missing
