"""The framework examples run: a LangChain agent (create_agent, a LangGraph graph), a smolagents ToolCallingAgent
and a CrewAI crew, each calling tools of two real MCP servers (the bundled example server and the npm reference
server), in a plain synchronous program and inside Jupyter (a notebook executed by nbclient on an ipykernel, whose
event loop runs).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from tests.peers.interop_peers import require_peer
from .conftest import need

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(autouse=True)
def _everything() -> None:
    require_peer("everything")  # the examples' second server (MCPSYNC_EVERYTHING_BIN)


def load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location("example_" + name, EXAMPLES / ("%s.py" % name))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # pydantic (CrewAI's models) resolves annotations through the module
    spec.loader.exec_module(module)
    return module


def assert_sums(results: Dict[str, str]) -> None:
    by_server = {name.split("_", 1)[0]: text for name, text in results.items() if name != "final_answer"}
    assert "5" in by_server["example"] and "9" in by_server["everything"], results


def run_notebook(cells: List[str]) -> List[str]:
    """Execute ``cells`` in a fresh ipykernel (cwd: examples/); return each cell's text output."""
    need("nbclient")
    nbformat = need("nbformat")
    from nbclient import NotebookClient

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    client = NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(EXAMPLES)}}
    )
    client.execute()
    texts = []
    for cell in notebook.cells:
        texts.append("".join(o.get("text", "") or str(o.get("data", {}).get("text/plain", "")) for o in cell.outputs))
    return texts


CHECK = (
    "by_server = {n.split('_', 1)[0]: t for n, t in results.items() if n != 'final_answer'}\n"
    "assert '5' in by_server['example'] and '9' in by_server['everything'], results\n"
    "print('ok', sorted(results))"
)


def test_langgraph_example_sync_and_in_jupyter() -> None:
    need("langchain")
    assert_sums(load("langgraph_agent").main())
    out = run_notebook(
        [
            "import asyncio, langgraph_agent as ex\nassert asyncio.get_running_loop().is_running()",
            "results = ex.main()\n" + CHECK,  # the sync agent, called on the kernel's loop thread
            "results = await ex.amain()\n" + CHECK,  # ainvoke on the running loop
        ]
    )
    assert out[1].startswith("ok") and out[2].startswith("ok"), out


def test_smolagents_example_sync_and_in_jupyter() -> None:
    need("smolagents")
    assert_sums(load("smolagents_agent").main())
    out = run_notebook(["import smolagents_agent as ex", "results = ex.main()\n" + CHECK])
    assert out[1].startswith("ok"), out


def test_crewai_example_sync_and_in_jupyter() -> None:
    need("crewai")
    assert_sums(load("crewai_crew").main())
    # CrewAI refuses a synchronous kickoff() on a running loop (its own rule): Jupyter awaits kickoff_async()
    out = run_notebook(["import crewai_crew as ex", "results = await ex.amain()\n" + CHECK])
    assert out[1].strip().splitlines()[-1].startswith("ok"), out


def test_examples_are_importable_without_running() -> None:
    for name in ("langgraph_agent", "smolagents_agent", "crewai_crew", "frameworks_common"):
        assert (EXAMPLES / ("%s.py" % name)).exists()
    assert sys.executable
