"""docs/reference/ is written once and kept true: the error tree is what .ci/gen_reference.py makes of the
exception classes today, and the environment page names every MCPSYNC_* variable the library reads, and no other."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / ".ci"))

import gen_reference  # noqa: E402


def test_the_error_reference_matches_the_code() -> None:
    # in a fresh interpreter: what else this test run imported must not change the tree
    code = "import sys; sys.path.insert(0, '.ci'); import gen_reference; sys.stdout.write(gen_reference.render())"
    fresh = subprocess.run([sys.executable, "-c", code], cwd=str(ROOT), capture_output=True, check=True).stdout
    page = gen_reference.ERRORS_PAGE.read_bytes().replace(b"\r\n", b"\n")
    assert page == fresh.replace(b"\r\n", b"\n"), "docs/reference/errors.md is stale: run python .ci/gen_reference.py"


def test_the_error_reference_names_every_error() -> None:
    import mcpsync

    page = gen_reference.ERRORS_PAGE.read_text(encoding="utf-8")
    for name in mcpsync.__all__:
        obj = getattr(mcpsync, name)
        if isinstance(obj, type) and issubclass(obj, mcpsync.MCPError):
            assert "`mcpsync.%s`" % name in page, name


def test_the_environment_reference_names_every_variable_the_library_reads() -> None:
    used = set()
    for path in (ROOT / "mcpsync").rglob("*.py"):
        used.update(re.findall(r"\bMCPSYNC_[A-Z_]+\b", path.read_text(encoding="utf-8")))
    page = (ROOT / "docs" / "reference" / "environment.md").read_text(encoding="utf-8")
    documented = set(re.findall(r"^\| `(MCPSYNC_[A-Z_]+)`", page, re.M))
    assert used and documented == used
