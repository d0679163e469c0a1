"""The transport contract: start, send, close; frames go up to a sink.

A transport moves JSON-RPC messages between the session engine and one server.
It owns its threads (a reader per connection) and reports everything it
receives to a :class:`TransportSink`, from its own thread. It never runs user
code and never interprets results.
"""

from __future__ import annotations

import abc
from typing import Any, Dict, Optional

__all__ = ["Transport", "TransportSink"]


class TransportSink(abc.ABC):
    """What a transport reports to (the session engine implements this).

    Every method is called from a transport thread (or from the thread that
    called :meth:`Transport.send`) and must return quickly without blocking.
    """

    @abc.abstractmethod
    def on_message(self, message: Any) -> None:
        """One decoded frame: a message dict, or a list for a batch."""

    @abc.abstractmethod
    def on_request_error(self, request_id: Any, exc: BaseException) -> None:
        """The request ``request_id`` failed in transit (HTTP status, broken stream); only that call fails."""

    @abc.abstractmethod
    def on_close(self, exc: Optional[BaseException]) -> None:
        """The connection is over. ``exc`` says why (None: closed by us). Called at most once."""


class Transport(abc.ABC):
    """A connection to one MCP server.

    Implementations must make :meth:`send` safe to call from many threads at
    once, and :meth:`close` idempotent, bounded in time and callable from any
    thread (including a transport or dispatch thread).

    Attributes:
        name: the server's display name, used in thread names, logs and errors.
        send_blocks_for_response: True when :meth:`send` of a request may block
            until the server answers (HTTP POST); the session then sends
            non-blocking requests from a helper thread.
        kind: a short transport label ("stdio", "http", "sse", "memory").
    """

    name: str = "server"
    kind: str = "transport"
    send_blocks_for_response: bool = False

    @abc.abstractmethod
    def start(self, sink: TransportSink) -> None:
        """Connect (spawn the process, open the stream) and start delivering frames to ``sink``.

        Blocks until connected or the transport's connect timeout passes.
        Raises :class:`~mcpsync.errors.ConnectError` on failure.
        """

    @abc.abstractmethod
    def send(self, message: Dict[str, Any]) -> None:
        """Send one message. Thread-safe.

        Raises :class:`~mcpsync.errors.ConnectionClosed` when the connection is gone.
        """

    def cancel_request(self, request_id: Any) -> bool:
        """Abort an in-flight request at the transport level (modern HTTP closes its stream).

        Returns True when the transport handled the cancellation itself, so the
        session must not send ``notifications/cancelled``; the default is False.
        """
        return False

    def after_fork_in_child(self) -> None:  # noqa: B027 - optional hook
        """In a child forked after :meth:`start`: release the child's copies of descriptors, without I/O.

        Must not send anything, signal the server or take a lock another thread may have held at
        fork time: the connection still belongs to the parent. The default does nothing (the copies
        are released when the child exits).
        """

    def set_protocol(self, version: str, era: str) -> None:  # noqa: B027 - optional hook
        """Tell the transport the negotiated protocol version and era ("legacy" or "modern")."""

    def set_request_headers(self, request_id: Any, headers: Optional[Dict[str, str]]) -> None:
        """Extra HTTP headers for the request with JSON-RPC id ``request_id`` (None forgets them).

        HTTP transports send them with that request's POST (protocol headers win); other transports
        ignore them. Used by interceptors (``info.headers``).
        """
        table: Dict[Any, Dict[str, str]] = self.__dict__.setdefault("_request_headers", {})
        if headers:
            table[request_id] = dict(headers)
        else:
            table.pop(request_id, None)

    def request_headers(self, message: Any) -> Optional[Dict[str, str]]:
        """The extra headers set for ``message`` (a request dict) with :meth:`set_request_headers`."""
        table: Optional[Dict[Any, Dict[str, str]]] = self.__dict__.get("_request_headers")
        if not table or not isinstance(message, dict):
            return None
        try:
            return table.get(message.get("id"))
        except TypeError:  # an unhashable id
            return None

    def session_headers(self) -> Dict[str, str]:
        """Transport-level session state worth showing to the user (HTTP session id); default empty."""
        return {}

    @abc.abstractmethod
    def close(self, timeout: Optional[float] = None) -> None:
        """Close the connection; idempotent; returns within about ``timeout`` seconds."""

    def describe(self) -> str:
        """A one-line human description (the command line, the URL)."""
        return self.kind

    def __enter__(self) -> "Transport":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
