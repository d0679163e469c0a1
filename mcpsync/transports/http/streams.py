"""The event-stream half of the Streamable HTTP transport: reading a call's stream, idle timeouts, recovery.

A mixin of :class:`~mcpsync.transports.http.transport.StreamableHTTPTransport`; it uses that class's attributes.

* :meth:`EventStreamMixin._stream_loop` reads one call's event stream to its answer (in the calling
  thread for a blocking call, else on a stream thread), then resumes it (handshake era: GET +
  ``Last-Event-ID``) or re-issues the request (2026-07-28) when it is cut.
* A blocking call's idle timeout is kept here, counted from its last ``notifications/progress``:
  comments, priming events and unrelated messages never extend it.
* :meth:`EventStreamMixin._timed_out` fails a call with ``RequestTimeout`` and cancels it upstream
  (``notifications/cancelled`` once in the handshake era; the closed stream in 2026-07-28).
"""

from __future__ import annotations

import collections
import logging
import random
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional

from ...errors import ConnectionClosed, MCPError, MessageTooLarge, ProtocolError, RequestTimeout, seconds_text
from ...wire import jsonrpc
from ...wire.sse import EventParser, SSEEvent, iter_response_bytes
from .calls import (
    MODERN_META_VERSION,
    _abort,
    _Call,
    _content_type,
    _is_read_timeout,
    _release,
    _set_read_timeout,
)
from .remote import RemoteState

__all__: List[str] = []

logger = logging.getLogger("mcpsync.transports.http.transport")


class EventStreamMixin(RemoteState):
    """Event streams of calls: reading, the progress-based idle timeout, resume / re-issue, timeouts."""

    # state and methods of StreamableHTTPTransport this half uses (declared for type checkers)
    _calls: Dict[Any, _Call]
    _era: Optional[str]
    _version: Optional[str]
    _max_stream_retries: int
    _ids: Iterator[int]
    _cancelled_upstream: "collections.OrderedDict[Any, None]"

    if TYPE_CHECKING:

        def _fail(self, call: _Call, exc: BaseException) -> None: ...

        def _deliver(self, call: Optional[_Call], frame: Any) -> bool: ...

        def _exchange(self, call: _Call) -> Any: ...

        def _send_oneway(self, message: Dict[str, Any]) -> None: ...

        def _current_session_id(self) -> Optional[str]: ...

    def _timed_out(self, call: _Call, seconds: Optional[float], what: str) -> None:
        """Fail ``call`` with RequestTimeout and cancel it upstream (unless it is already settled)."""
        with self._lock:
            settled = call.done or call.cancelled
        if settled or self._closed:
            return
        self._fail(call, RequestTimeout("%s within %s" % (what, seconds_text(seconds)), timeout=seconds))
        _abort(call.response)
        self._cancel_upstream(call, "timeout: %s within %s" % (what, seconds_text(seconds)))

    def _read_events(self, call: Optional[_Call], response: Any, on_event: Callable[[SSEEvent], bool]) -> str:
        """Read ``response`` as an event stream; ``on_event`` returns True to stop. Returns how it ended.

        An inline call (read in the calling thread) keeps its idle timeout here: before every read the
        socket timeout is set to the time left since the call's last progress notification (capped by
        ``read_timeout``), and after every chunk the idle clock is checked, so comments, priming events
        and unrelated messages never extend the call ("idle" is returned when it expired).
        """
        parser = EventParser(self.options.max_message_size)
        idle = call is not None and call.inline and call.timeout is not None
        by_idle = False
        try:
            if idle:
                by_idle = self._arm_idle(call, response)  # type: ignore[arg-type]
            for chunk in iter_response_bytes(response):
                for ev in parser.feed(chunk):
                    try:
                        stop = on_event(ev)
                    except Exception as exc:  # noqa: BLE001 - one bad event never ends the stream
                        self._drops.drop("event handler error: %s" % type(exc).__name__, str(exc)[:200])
                        continue
                    if stop:
                        return "done"
                if idle:
                    left = call.idle_left()  # type: ignore[union-attr]
                    if left is not None and left <= 0:
                        return "idle"
                    by_idle = self._arm_idle(call, response)  # type: ignore[arg-type]
            return "eof"
        except Exception as exc:  # noqa: BLE001 - a broken stream is reported as "broken"
            _release(exc)
            if self._closed or (call is not None and call.cancelled):
                return "closed"
            if idle and by_idle and _is_read_timeout(exc):
                return "idle"
            logger.debug("[%s] event stream broken: %r", self.name, exc)
            return "broken"
        finally:
            parser.close()

    def _arm_idle(self, call: _Call, response: Any) -> bool:
        """Set the socket timeout for the next read of an inline call; True when the idle bound is the one set."""
        left = call.idle_left()
        left = 0.001 if left is None or left <= 0.001 else left
        read = self.options.read_timeout
        if read is not None and read < left:
            _set_read_timeout(response, read)
            return False
        _set_read_timeout(response, left, slack=0.02)  # re-armed for every chunk: a bound <= 2% late is kept
        return True

    def _call_event_handler(self, call: _Call) -> Callable[[SSEEvent], bool]:
        def on_event(ev: SSEEvent) -> bool:
            if ev.id is not None:
                call.last_event_id = ev.id
            if ev.retry is not None:
                call.retry_ms = ev.retry
            if ev.oversized:
                self._fail(
                    call,
                    MessageTooLarge("an event exceeded the maximum message size (%d)" % self.options.max_message_size),
                )
                return True
            if not ev.data or ev.event != "message":
                return False
            try:
                frame = jsonrpc.decode(ev.data)
            except ProtocolError as exc:
                self._drops.drop("undecodable event", str(exc)[:200])
                return False
            return self._deliver(call, frame) or call.done

        return on_event

    def _finish_stream(self, response: Any) -> None:
        """After the final answer: drain briefly so the connection returns to the pool, else drop it."""
        try:
            _set_read_timeout(response, 1.0)
            for _ in iter_response_bytes(response, 65536):
                pass
            response.raw.release_conn()
        except Exception:  # noqa: BLE001 - the server kept the stream open: just close it
            pass
        finally:
            response.close()

    def _stream_loop(self, call: _Call, response: Any) -> None:
        """Stream thread: read ``call``'s event stream to its answer; resume or re-issue when cut."""
        while response is not None:
            call.response = response
            how = self._read_events(call, response, self._call_event_handler(call))
            if how == "done":
                self._finish_stream(response)
                return
            response.close()
            if how == "closed" or call.done or call.cancelled or self._closed:
                return
            if how == "idle":
                self._timed_out(call, call.timeout, "no progress")
                return
            response = self._recover(call)

    def _cancel_upstream(self, call: _Call, reason: str) -> None:
        """Tell a handshake-era server the call is abandoned (2026-07-28: the closed stream says it).

        ``initialize`` is never cancelled (the spec forbids it). Each call is cancelled once: a
        ``notifications/cancelled`` from the session for a call this transport already cancelled is dropped.
        """
        if self._is_modern(call) or self._closed or call.method == "initialize":
            return
        with self._lock:
            if call.wire_id in self._cancelled_upstream:
                return
            self._cancelled_upstream[call.wire_id] = None
            while len(self._cancelled_upstream) > 1024:
                self._cancelled_upstream.popitem(last=False)
        try:
            self._send_oneway(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": call.wire_id, "reason": reason},
                }
            )
        except MCPError as exc:
            logger.debug("[%s] could not send the cancellation: %s", self.name, exc)

    def _recover(self, call: _Call) -> Any:
        """The stream of ``call`` ended before its answer: resume (handshake era) or re-issue (2026-07-28)."""
        if self._is_modern(call):
            if call.method == "subscriptions/listen" or call.reissues >= self._max_stream_retries:
                self._fail(call, ConnectionClosed("the event stream ended before the response"))
                return None
            call.reissues += 1
            if call.reissues > 1 and self._closing.wait(self._backoff(call.reissues - 1, None)):
                return None
            new_id = "mcpsync-%s-retry-%d" % (call.orig_id, next(self._ids))
            msg = dict(call.message)
            msg["id"] = new_id
            call.message = msg
            call.wire_id = new_id
            logger.debug(
                "[%s] re-issuing %s id=%r as %r after a broken stream", self.name, call.method, call.orig_id, new_id
            )
            return self._exchange(call)
        if call.last_event_id is None:
            self._fail(
                call, ConnectionClosed("the event stream ended before the response (no event id to resume from)")
            )
            return None
        return self._resume(call)

    def _is_modern(self, call: _Call) -> bool:
        params = call.message.get("params")
        if isinstance(params, dict) and isinstance(params.get("_meta"), dict):
            if MODERN_META_VERSION in params["_meta"]:
                return True
        return self._era == "modern"

    def _backoff(self, attempt: int, retry_ms: Optional[int]) -> float:
        if retry_ms is not None:
            return min(self._max_retry_delay, retry_ms / 1000.0)
        base = min(self._max_retry_delay, 0.25 * (2.0 ** max(0, attempt - 1)))
        return base * (0.8 + 0.4 * random.random())

    def _resume(self, call: _Call) -> Any:
        """GET with ``Last-Event-ID`` until an event stream answers (or give up); returns it open."""
        attempts = 0
        while attempts < self._max_stream_retries:
            attempts += 1
            if self._closing.wait(self._backoff(attempts, call.retry_ms)):
                return None
            if call.done or call.cancelled:
                return None
            headers = {"Accept": "text/event-stream", "Last-Event-ID": call.last_event_id or ""}
            if self._version:
                headers["MCP-Protocol-Version"] = self._version
            sid = self._current_session_id()
            if sid:
                headers["Mcp-Session-Id"] = sid
            try:
                response = self._net.get(self.url, headers, (self.options.connect_timeout, self.options.read_timeout))
            except Exception as exc:  # noqa: BLE001
                _release(exc)
                if self._closed or call.cancelled:
                    return None
                logger.debug("[%s] resuming the stream of id=%r failed: %r", self.name, call.orig_id, exc)
                continue
            if 200 <= response.status_code < 300 and _content_type(response) == "text/event-stream":
                logger.debug(
                    "[%s] resumed the stream of id=%r after event %r", self.name, call.orig_id, call.last_event_id
                )
                return response
            try:
                if response.status_code >= 500:
                    continue
                self._fail(
                    call,
                    ConnectionClosed(
                        "the event stream ended before the response and resuming it failed (HTTP %d)"
                        % response.status_code
                    ),
                )
                return None
            finally:
                response.close()
        self._fail(call, ConnectionClosed("the event stream was cut %d times before the response" % (attempts + 1)))
        return None
