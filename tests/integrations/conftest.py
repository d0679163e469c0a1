"""Fixtures of the framework integration tests: real MCP servers, and the rule for missing frameworks.

A framework that is not installed skips its tests, except where ``MCPSYNC_FRAMEWORKS_REQUIRED=1``
(``.ci/frameworks`` sets it): there a missing framework fails.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest

import mcpsync

from tests.peers.interop_peers import require_peer
from mcpsync.middleware import ToolPolicy

HARD_SERVER = [sys.executable, str(Path(__file__).with_name("hardserver.py"))]
REQUIRED = os.environ.get("MCPSYNC_FRAMEWORKS_REQUIRED", "") in ("1", "true")


def need(module: str) -> Any:
    """Import ``module`` or skip (fail when frameworks are required). The frameworks' own import-time warnings
    (deprecations, CrewAI's ImportWarning) are not ours: they are silenced for the import."""
    import importlib
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if REQUIRED:
            return importlib.import_module(module)
        return pytest.importorskip(module)


def pytest_collection_modifyitems(items: Any) -> None:
    # The frameworks warn about their own deprecations; the suite turns warnings into errors.
    for item in items:
        if "integrations" in str(item.fspath):
            for kind in ("DeprecationWarning", "PendingDeprecationWarning", "FutureWarning", "UserWarning"):
                item.add_marker(pytest.mark.filterwarnings("ignore::%s" % kind))


@pytest.fixture(autouse=True)
def close_thread_loop() -> Iterator[None]:
    """Frameworks' sync entry points (pydantic-ai ``run_sync``) leave an event loop set on the thread: close it."""
    yield
    import asyncio

    policy = asyncio.get_event_loop_policy()
    loop = getattr(getattr(policy, "_local", None), "_loop", None)
    if loop is not None and not loop.is_running():
        loop.close()
        policy.set_event_loop(None)


def deny_add(request: mcpsync.middleware.ToolApprovalRequest) -> mcpsync.middleware.Approval:
    if request.tool == "add":
        return mcpsync.middleware.Approval.deny("adding is not allowed here")
    return mcpsync.middleware.Approval.approve()


@pytest.fixture
def hard_client() -> Iterator[mcpsync.Client]:
    """The example server plus hard-schema tools; ``add`` is denied by the approval handler; ``crash`` is
    refused by the policy."""
    with mcpsync.connect(
        HARD_SERVER, name="hard", approval_handler=deny_add, middleware=[ToolPolicy(denied=["crash"])]
    ) as client:
        yield client


@pytest.fixture
def two_servers() -> Iterator[mcpsync.Manager]:
    """A Manager over the bundled example server and the npm reference server."""
    everything = require_peer("everything")
    config = {
        "mcpServers": {
            "example": {"command": sys.executable, "args": ["-m", "mcpsync.example_server"]},
            "everything": {"command": everything[0], "args": everything[1:]},
        }
    }
    with mcpsync.Manager(config) as manager:
        yield manager
