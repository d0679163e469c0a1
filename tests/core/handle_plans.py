"""Drive one :class:`mcpsync.handles.Handle` from several threads in a planned order, then check its contract.

A plan is a list of operations (``result``, ``exception``, ``cancel``, ``callback``, ``done``, plus any extra the
caller names, such as a task handle's ``poll``); each plan runs on a thread of its own. The check: one outcome
object for every waiter, and every callback run exactly once (what ``cancel()`` returned is in ``cancels``).
"""

from __future__ import annotations

import threading
from typing import Any, Callable, Dict, List, Optional

import mcpsync

from tests.conftest import WAIT_BOUND

__all__ = ["Interleaving"]


class Interleaving:
    """What the threads of one run saw. ``extra`` maps an operation name to what it calls; ``on_callback`` runs
    inside every done-callback (to check the thread it runs on)."""

    def __init__(
        self,
        handle: Any,
        extra: Optional[Dict[str, Callable[[], object]]] = None,
        on_callback: Optional[Callable[[], None]] = None,
    ) -> None:
        self.handle = handle
        self.extra = dict(extra or {})
        self.on_callback = on_callback
        self.lock = threading.Lock()
        self.outcomes: List[Any] = []
        self.cancels: List[bool] = []
        self.added: List[int] = []
        self.ran: List[int] = []
        self.problems: List[BaseException] = []

    def _step(self, op: str, token: int) -> None:
        handle = self.handle
        if op == "result":
            try:
                got: Any = handle.result(WAIT_BOUND)
            except mcpsync.MCPError as exc:
                got = exc
            with self.lock:
                self.outcomes.append(got)
        elif op == "exception":
            error = handle.exception(WAIT_BOUND)
            with self.lock:
                self.outcomes.append(error if error is not None else handle.result(0))
        elif op == "cancel":
            ok = handle.cancel()
            with self.lock:
                self.cancels.append(bool(ok))
        elif op == "callback":

            def record(h: Any, token: int = token) -> None:
                if self.on_callback is not None:
                    self.on_callback()
                with self.lock:
                    self.ran.append(token)

            with self.lock:
                self.added.append(token)
            handle.add_done_callback(record)
        elif op in self.extra:
            self.extra[op]()
        else:
            handle.done()

    def _run(self, plan: List[str], who: int) -> None:
        for step, op in enumerate(plan):
            try:
                self._step(op, who * 100 + step)
            except BaseException as exc:  # noqa: BLE001 - reported by run()
                self.problems.append(exc)

    def run(self, plans: List[List[str]]) -> Any:
        """Run every plan on its own thread, then check the contract; returns the handle's one outcome (its
        value or its error)."""
        threads = [threading.Thread(target=self._run, args=(plan, i)) for i, plan in enumerate(plans)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(WAIT_BOUND)
        assert self.problems == []
        final = self.handle.exception(WAIT_BOUND)
        outcome = final if final is not None else self.handle.result(0)
        assert all(o is outcome for o in self.outcomes)
        last = threading.Event()
        self.handle.add_done_callback(lambda h: last.set())  # callbacks run in the order added: this one last
        assert last.wait(WAIT_BOUND)
        assert sorted(self.ran) == sorted(self.added)
        return outcome
