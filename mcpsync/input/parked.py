"""The handshake era's parked questions of one client: :class:`ParkedInputs`, what
:func:`mcpsync.input.pending_input` returns.

In the handshake era (2024-11-05 to 2025-11-25) the server asks in a request of its own and keeps the tool call
open until it is answered; a deferring client parks the question here, where another thread of the same process
finds it (``get``, iteration) and answers it with :func:`mcpsync.input.resume`. Thread-safe; bounded.
"""

from __future__ import annotations

import itertools
import os
import threading
from typing import Any, Dict, Iterator, List, Optional

from .deferred import InputExpired, InputRequired

__all__ = ["ParkedInputs"]


class _Parked:
    __slots__ = ("ir", "event", "answer", "state", "__weakref__")

    def __init__(self, ir: InputRequired) -> None:
        self.ir = ir
        self.event = threading.Event()
        self.answer: Any = None
        self.state = "waiting"  # waiting -> answered | expired


class ParkedInputs:
    """The handshake era's parked questions of one client, and ``client.pending_input``. Thread-safe.

    ``get(timeout)`` blocks up to ``timeout`` seconds for the next question (``queue.Empty`` when none
    came); iteration yields what is waiting now. At most ``maxsize`` questions wait; a question past that
    is not parked but answered at once as declined by the host (``cancel``), with a warning in the log.
    """

    def __init__(self, server: str, maxsize: int = 64) -> None:
        self._server = server
        self._maxsize = maxsize
        self._cond = threading.Condition(threading.Lock())
        self._waiting: List[_Parked] = []  # parked and not yet handed out by get()
        self._open: Dict[str, _Parked] = {}  # parked and not yet answered or expired
        # live ids are "<server>:<random per client>:<n>": a question parked by another client (or another
        # process) never matches one of ours, even for a server of the same name
        self._id_prefix = "%s:%s" % (server, os.urandom(6).hex())  # secrets.token_hex(6), without loading secrets
        self._ids = itertools.count(1)
        self._closed = False

    def park(self, ir: InputRequired) -> Optional[_Parked]:
        """Park ``ir`` (None when the queue is full or closed: the caller answers ``cancel``)."""
        with self._cond:
            if self._closed or len(self._open) >= self._maxsize:
                return None
            live_id = "%s:%d" % (self._id_prefix, next(self._ids))
            ir.live, ir.live_id = True, live_id
            parked = _Parked(ir)
            self._open[live_id] = parked
            self._waiting.append(parked)
            self._cond.notify_all()
            return parked

    def wait(self, parked: _Parked, timeout: Optional[float]) -> Any:
        """Block up to ``timeout`` seconds for the answer; raises InputExpired when none came."""
        parked.event.wait(timeout)
        with self._cond:
            self._forget(parked)
            if parked.state == "answered":
                return parked.answer
            parked.state = "expired"
        raise InputExpired("no answer within %ss" % timeout, server=self._server, method=parked.ir.method)

    def answer(self, ir: InputRequired, value: Any) -> None:
        """Hand ``value`` to the parked question ``ir`` (InputExpired when it is no longer waiting)."""
        with self._cond:
            parked = self._open.get(ir.live_id or "")
            if parked is None or parked.state != "waiting":
                raise InputExpired(
                    "this input request is no longer waiting (answered, timed out, its call ended, or it belongs"
                    " to another process or client)",
                    server=self._server,
                    method=ir.method,
                )
            parked.state, parked.answer = "answered", value
            self._forget(parked)
        parked.event.set()

    def _forget(self, parked: _Parked) -> None:
        self._open.pop(parked.ir.live_id or "", None)
        if parked in self._waiting:
            self._waiting.remove(parked)

    def get(self, timeout: Optional[float] = None) -> InputRequired:
        """The next parked question, waiting up to ``timeout`` seconds (``queue.Empty`` when none)."""
        import queue

        with self._cond:
            if not self._cond.wait_for(lambda: self._waiting or self._closed, timeout) or not self._waiting:
                raise queue.Empty
            return self._waiting.pop(0).ir

    def __len__(self) -> int:
        with self._cond:
            return len(self._waiting)

    def __iter__(self) -> Iterator[InputRequired]:
        with self._cond:
            items, self._waiting = self._waiting, []
        return iter([p.ir for p in items])

    def close(self) -> None:
        """Expire every parked question (their waits end at once) and refuse new ones."""
        with self._cond:
            self._closed = True
            parked = list(self._open.values())
            self._open.clear()
            self._waiting.clear()
            for p in parked:
                if p.state == "waiting":
                    p.state = "expired"
            self._cond.notify_all()
        for p in parked:
            p.event.set()
