"""Every Python block of docs/guides/production.md runs as written, against the bundled example server."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path
from typing import List

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "guides" / "production.md"


def blocks() -> List[str]:
    return re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)


def test_the_page_has_examples() -> None:
    assert len(blocks()) >= 6


@pytest.mark.parametrize("index", range(len(blocks())))
def test_each_example_runs(index: int) -> None:
    code = blocks()[index]
    if "opentelemetry" in code:
        pytest.importorskip("opentelemetry.sdk.trace", reason="opentelemetry-sdk (test extra) is not installed")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "%s[block %d]" % (DOC.name, index), "exec"), {"__name__": "docs_example"})
    printed = out.getvalue()
    if "ToolDenied" in code and "except mcpsync.ToolDenied" in code:
        assert printed, "the example printed nothing"
    if "[acme]" in code:
        assert "[acme] my ********" in printed
    if "tools/call echo" in code:
        assert "tools/call echo" in printed and "handle-request" in printed
