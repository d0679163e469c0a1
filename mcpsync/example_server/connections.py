"""Ready-made :class:`~mcpsync.example_server.core.Connection` implementations for transport fronts."""

from __future__ import annotations

import queue
import time
from typing import Any, Iterator, List, Optional


class QueueConnection:
    """A connection that queues what the server sends, for an HTTP front to stream out.

    Typical modern-era POST handling::

        conn = QueueConnection()
        session = server.new_session(conn)
        session.handle(request_dict, conn)
        for message in conn.until_response(request_dict["id"], timeout=60):
            write_sse_event(message)          # notifications first, the response last
        session.close()
    """

    def __init__(self) -> None:
        self.queue: "queue.Queue[Any]" = queue.Queue()
        self.raw: List[bytes] = []

    def send(self, message: Any) -> None:
        self.queue.put(message)

    def send_raw(self, data: bytes) -> None:
        """Raw bytes (misbehaviour modes); kept in :attr:`raw`, not queued."""
        self.raw.append(data)

    def get(self, timeout: Optional[float] = None) -> Any:
        """The next message (raises :class:`queue.Empty` on timeout)."""
        return self.queue.get(timeout=timeout)

    def until_response(self, request_id: Any, timeout: Optional[float] = None) -> Iterator[Any]:
        """Yield messages until (and including) the response to ``request_id``.

        A batch (list) that contains the response also ends the iteration.
        Raises :class:`queue.Empty` when ``timeout`` elapses first.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            message = self.queue.get(timeout=remaining)
            yield message
            if _answers(message, request_id):
                return


def _answers(message: Any, request_id: Any) -> bool:
    if isinstance(message, list):
        return any(_answers(m, request_id) for m in message)
    return (
        isinstance(message, dict)
        and message.get("id") == request_id
        and "method" not in message
        and ("result" in message or "error" in message)
    )


__all__ = ["QueueConnection"]
