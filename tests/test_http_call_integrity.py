"""Issue 18: one HTTP path that never loses, crosses or doubles a call (defects 1, 2, 3 and 7).

Every test runs against a real local server that misbehaves on purpose (:mod:`tests.faultserver`), under both
HTTP engines (``engine="stdlib"`` and ``engine="requests"``), in both protocol eras and through the blocking
and the async call paths where the fault concerns them. docs/reliability.md names these tests.
"""

from __future__ import annotations

from typing import Any, Iterator, List

import pytest

import mcpsync
from mcpsync.transports import remote as _remote

from .faultserver import TaskRouter

pytestmark = pytest.mark.timeout(180)

BOUND = 30.0


@pytest.fixture(autouse=True)
def _forget_transports() -> Iterator[None]:
    _remote.forget()
    yield
    _remote.forget()


@pytest.fixture(params=["stdlib", "requests"])
def engine(request: pytest.FixtureRequest) -> str:
    """The HTTP engine every request of the test goes through."""
    return str(request.param)


HOW = pytest.mark.parametrize("how", ["blocking", "async"])


# ---------------------------------------------------------------------------- defect 7: Mcp-Name on task requests


@HOW
def test_task_requests_carry_the_task_id_in_mcp_name(engine: str, how: str) -> None:
    """A load balancer that routes tasks/get, tasks/update and tasks/cancel on ``Mcp-Name`` alone reaches the
    backend holding each task: tasks created on both backends complete, take input and are cancelled."""
    with TaskRouter(task_poll_interval_ms=20) as router:
        with mcpsync.connect(
            router.url,
            transport="http",
            protocol="modern",
            engine=engine,
            timeout=BOUND,
            elicitation_handler=lambda r: r.accept(),
        ) as c:
            done = mcpsync.start_task(c, "task_work", {"seconds": 0.2})
            slow = mcpsync.start_task(c, "task_work", {"seconds": 60})
            assert isinstance(done, mcpsync.TaskHandle) and isinstance(slow, mcpsync.TaskHandle)
            assert "task done" in done.wait(timeout=BOUND).text
            slow.cancel()
            if how == "blocking":
                asked = c.call_tool("task_work", {"seconds": 0.1, "ask": True})
            else:
                asked = c.call_tool_async("task_work", {"seconds": 0.1, "ask": True}).result(BOUND)
            assert "accept" in asked.text
        assert not router.refused, router.refused
        assert {m for m, _, _ in router.routed} == set(TaskRouter.TASK_METHODS)
        assert {index for _, _, index in router.routed} == {0, 1}  # tasks lived on both backends
        for _method, header, index in router.routed:
            assert router.owner_of[header] == index
