"""A Streamable HTTP call's event stream: reading it to its answer, the idle timeout, resume / re-issue.

:class:`EventStreams` is owned by :class:`~mcpsync.transports.http.transport.StreamableHTTPTransport`
(one per transport). It owns:

* the stream threads (``mcpsync-http-stream:<name>``, a pool grown on demand) that read the event
  stream of a non-blocking call (:meth:`EventStreams.submit`); a blocking call's stream is read in the
  calling thread (:meth:`EventStreams.read`);
* the progress-based idle timeout of a blocking call: before every read the socket timeout is set to
  the time left since the call's last ``notifications/progress`` (capped by ``read_timeout``), so
  comments, priming events and unrelated messages never extend it;
* recovery of a stream cut before its answer: the handshake era resumes it with GET +
  ``Last-Event-ID`` (capped backoff, ``retry:`` honoured), 2026-07-28 re-issues the request with a
  new id (the answer is still reported under the original id), at most ``max_stream_retries`` times;
* :meth:`EventStreams.timed_out`: a call fails with ``RequestTimeout`` and is cancelled upstream
  (``notifications/cancelled`` once in the handshake era, remembered in a bounded set so the session's
  own cancel is not sent again; the closed stream in 2026-07-28).

It does not own the calls: the transport keeps the table of calls in flight, and settles them through
the ``deliver`` / ``fail`` callables given here (a frame is delivered in order, the final response once).
What it needs of the rest of the transport comes in through its constructor: the transport's
:class:`~mcpsync.transports.http.endpoint.RemoteEndpoint` (connections, options, drop log, the lock under which
``call.done`` / ``call.cancelled`` are read, ``closing`` event, closed flag), ``exchange`` (re-POST a call),
``send_oneway`` (a cancellation), ``session_headers`` (the handshake era's ``MCP-Protocol-Version`` /
``Mcp-Session-Id`` for a resume GET), ``era``.

Blocking: :meth:`EventStreams.read` blocks the calling thread until the answer arrives, the call is
cancelled or times out (idle bound), or the transport closes; a resume waits at most the backoff
(``max_retry_delay``) plus ``connect_timeout`` / ``read_timeout`` per attempt. Every method is
thread-safe; one call's stream is read by one thread at a time. :func:`read_events` is also used by
the handshake session (the GET stream, the answer to a re-``initialize``).
"""

from __future__ import annotations

import collections
import logging
import random
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional

from ..._dispatch import Dispatcher
from ...errors import ConnectionClosed, MCPError, MessageTooLarge, ProtocolError, RequestTimeout, seconds_text
from ...wire import jsonrpc
from ...wire.sse import EventParser, SSEEvent, iter_response_bytes
from .calls import MODERN_META_VERSION, _abort, _Call, _content_type, _is_read_timeout, _release, _set_read_timeout

if TYPE_CHECKING:
    from .endpoint import RemoteEndpoint

__all__: List[str] = []

logger = logging.getLogger(__name__)

#: how many call ids cancelled upstream by this transport are remembered (oldest forgotten first)
CANCELLED_MEMORY = 1024


def backoff(attempt: int, retry_ms: Optional[int], max_delay: float) -> float:
    """Seconds to wait before reconnect ``attempt`` (1-based): the server's ``retry:`` hint, else
    0.25 s doubling with +-20% jitter; never more than ``max_delay``."""
    if retry_ms is not None:
        return min(max_delay, retry_ms / 1000.0)
    base = min(max_delay, 0.25 * (2.0 ** max(0, attempt - 1)))
    return base * (0.8 + 0.4 * random.random())


class _IdleBound:
    """The idle timeout of an inline call, applied to the socket before every read."""

    __slots__ = ("call", "read_timeout")

    def __init__(self, call: _Call, read_timeout: Optional[float]) -> None:
        self.call = call
        self.read_timeout = read_timeout

    def arm(self, response: Any) -> bool:
        """Set the socket timeout for the next read; True when the idle bound is the one set."""
        left = self.call.idle_left()
        left = 0.001 if left is None or left <= 0.001 else left
        read = self.read_timeout
        if read is not None and read < left:
            _set_read_timeout(response, read)
            return False
        _set_read_timeout(response, left, slack=0.02)  # re-armed for every chunk: a bound <= 2% late is kept
        return True

    def expired(self) -> bool:
        left = self.call.idle_left()
        return left is not None and left <= 0


def read_events(
    response: Any,
    on_event: Callable[[SSEEvent], bool],
    remote: "RemoteEndpoint",
    stopped: Optional[Callable[[], bool]] = None,
    idle: Optional[_IdleBound] = None,
) -> str:
    """Read ``response``, an event stream from ``remote``, in the calling thread; ``on_event`` returns True to stop.

    Events are bounded by the remote's ``max_message_size``; a failing ``on_event`` is logged to its drop log.
    Returns how it ended: "done" (``on_event`` said so), "eof", "idle" (``idle`` expired: checked after
    every chunk, and a read timeout set by it), "closed" (the transport was closed, or ``stopped()`` was true,
    when the read failed) or "broken". Blocks until then; an exception raised by ``on_event`` drops that event
    only.
    """
    drops = remote.drops
    parser = EventParser(remote.options.max_message_size)
    by_idle = False
    try:
        if idle is not None:
            by_idle = idle.arm(response)
        for chunk in iter_response_bytes(response):
            for ev in parser.feed(chunk):
                try:
                    stop = on_event(ev)
                except Exception as exc:  # noqa: BLE001 - one bad event never ends the stream
                    drops.drop("event handler error: %s" % type(exc).__name__, str(exc)[:200])
                    continue
                if stop:
                    return "done"
            if idle is not None:
                if idle.expired():
                    return "idle"
                by_idle = idle.arm(response)
        return "eof"
    except Exception as exc:  # noqa: BLE001 - a broken stream is reported as "broken"
        _release(exc)
        if remote.closed or (stopped is not None and stopped()):
            return "closed"
        if idle is not None and by_idle and _is_read_timeout(exc):
            return "idle"
        logger.debug("[%s] event stream broken: %r", remote.name, exc)
        return "broken"
    finally:
        parser.close()


class EventStreams:
    """Reads calls' event streams to their answers; recovers cut streams; fails calls that time out.

    Args (keyword-only, all given by the transport that owns it):
        remote: the transport's :class:`~mcpsync.transports.http.endpoint.RemoteEndpoint`: the endpoint, the
            server's display name, the HTTP options and connections, the drop log, the transport's lock (``call.done``
            and ``call.cancelled`` are read under it), the ``closing`` event, the closed flag and the backoff cap.
        era: the negotiated era ("legacy", "modern" or None).
        deliver: hand a frame read from a call's stream to the sink; True when it held the call's answer.
        fail: fail a call (once) with an error.
        exchange: POST a call again (a re-issue); returns its event stream still open, or None when settled.
        send_oneway: POST a notification (``notifications/cancelled``); raises on failure.
        session_headers: the handshake-era headers of a resume GET (version, session id).
        ids: the transport's counter for ids it makes up.
        max_stream_retries: how often a cut stream is resumed or re-issued (the backoff cap is ``remote``'s).
    """

    def __init__(
        self,
        *,
        remote: "RemoteEndpoint",
        era: Callable[[], Optional[str]],
        deliver: Callable[[_Call, Any], bool],
        fail: Callable[[_Call, BaseException], None],
        exchange: Callable[[_Call], Any],
        send_oneway: Callable[[Dict[str, Any]], None],
        session_headers: Callable[[], Dict[str, str]],
        ids: Iterator[int],
        max_stream_retries: int,
    ) -> None:
        self._remote = remote
        self._era = era
        self._deliver = deliver
        self._fail = fail
        self._exchange = exchange
        self._send_oneway = send_oneway
        self._session_headers = session_headers
        self._ids = ids
        self._max_stream_retries = max_stream_retries
        self._cancelled_upstream: "collections.OrderedDict[Any, None]" = collections.OrderedDict()
        self._threads = Dispatcher("mcpsync-http-stream:%s" % remote.name, max_workers=1024)

    # ------------------------------------------------------------------ reading a call's stream

    def submit(self, call: _Call, response: Any) -> bool:
        """Read ``call``'s stream on a stream thread; False (nothing started) when the transport closed."""
        return self._threads.submit(self.read, call, response)

    def stop(self, timeout: float) -> None:
        """Stop the stream threads (their streams were aborted first); waits at most ``timeout`` seconds."""
        self._threads.stop(timeout)

    def read(self, call: _Call, response: Any) -> None:
        """Read ``call``'s event stream to its answer in this thread; resume or re-issue when cut."""
        while response is not None:
            call.response = response
            how = self.read_events(call, response, self._call_event_handler(call))
            if how == "done":
                self._finish_stream(response)
                return
            response.close()
            if how == "closed" or call.done or call.cancelled or self._remote.closed:
                return
            if how == "idle":
                self.timed_out(call, call.timeout, "no progress")
                return
            response = self._recover(call)

    def read_events(self, call: Optional[_Call], response: Any, on_event: Callable[[SSEEvent], bool]) -> str:
        """:func:`read_events` for ``call``'s stream (or a stream of no call): an inline call keeps its idle bound."""
        idle = None
        if call is not None and call.inline and call.timeout is not None:
            idle = _IdleBound(call, self._remote.options.read_timeout)
        return read_events(response, on_event, self._remote, (lambda: call.cancelled) if call else None, idle)

    def _call_event_handler(self, call: _Call) -> Callable[[SSEEvent], bool]:
        def on_event(ev: SSEEvent) -> bool:
            if ev.id is not None:
                call.last_event_id = ev.id
            if ev.retry is not None:
                call.retry_ms = ev.retry
            if ev.oversized:
                self._fail(
                    call,
                    MessageTooLarge(
                        "an event exceeded the maximum message size (%d)" % self._remote.options.max_message_size
                    ),
                )
                return True
            if not ev.data or ev.event != "message":
                return False
            try:
                frame = jsonrpc.decode(ev.data)
            except ProtocolError as exc:
                self._remote.drops.drop("undecodable event", str(exc)[:200])
                return False
            return self._deliver(call, frame) or call.done

        return on_event

    def _finish_stream(self, response: Any) -> None:
        """After the final answer: drain briefly so the connection returns to the pool, else drop it."""
        try:
            _set_read_timeout(response, 1.0)
            for _ in iter_response_bytes(response, 65536):
                pass
            response.release_conn()
        except Exception:  # noqa: BLE001 - the server kept the stream open: just close it
            pass
        finally:
            response.close()

    # ------------------------------------------------------------------ timeouts and cancels

    def timed_out(self, call: _Call, seconds: Optional[float], what: str) -> None:
        """Fail ``call`` with RequestTimeout and cancel it upstream (unless it is already settled)."""
        with self._remote.lock:
            settled = call.done or call.cancelled
        if settled or self._remote.closed:
            return
        self._fail(call, RequestTimeout("%s within %s" % (what, seconds_text(seconds)), timeout=seconds))
        _abort(call.response)
        self.cancel_upstream(call, "timeout: %s within %s" % (what, seconds_text(seconds)))

    def cancelled_upstream(self, wire_id: Any) -> bool:
        """True when this transport already sent ``notifications/cancelled`` for ``wire_id`` (a hashable id)."""
        with self._remote.lock:
            return wire_id in self._cancelled_upstream

    def cancel_upstream(self, call: _Call, reason: str) -> None:
        """Tell a handshake-era server the call is abandoned (2026-07-28: the closed stream says it).

        ``initialize`` is never cancelled (the spec forbids it). Each call is cancelled once: a
        ``notifications/cancelled`` from the session for a call this transport already cancelled is dropped.
        Blocks for one POST (bounded by the transport's timeouts); never raises an MCPError.
        """
        if self._is_modern(call) or self._remote.closed or call.method == "initialize":
            return
        with self._remote.lock:
            if call.wire_id in self._cancelled_upstream:
                return
            self._cancelled_upstream[call.wire_id] = None
            while len(self._cancelled_upstream) > CANCELLED_MEMORY:
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
            logger.debug("[%s] could not send the cancellation: %s", self._remote.name, exc)

    # ------------------------------------------------------------------ recovery

    def _recover(self, call: _Call) -> Any:
        """The stream of ``call`` ended before its answer: resume (handshake era) or re-issue (2026-07-28)."""
        if self._is_modern(call):
            if call.method == "subscriptions/listen" or call.reissues >= self._max_stream_retries:
                self._fail(call, ConnectionClosed("the event stream ended before the response"))
                return None
            call.reissues += 1
            if call.reissues > 1 and self._remote.closing.wait(self._backoff(call.reissues - 1, None)):
                return None
            new_id = "mcpsync-%s-retry-%d" % (call.orig_id, next(self._ids))
            msg = dict(call.message)
            msg["id"] = new_id
            call.message = msg
            call.wire_id = new_id
            logger.debug(
                "[%s] re-issuing %s id=%r as %r after a broken stream",
                self._remote.name,
                call.method,
                call.orig_id,
                new_id,
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
        return self._era() == "modern"

    def _backoff(self, attempt: int, retry_ms: Optional[int]) -> float:
        return backoff(attempt, retry_ms, self._remote.max_retry_delay)

    def _resume(self, call: _Call) -> Any:
        """GET with ``Last-Event-ID`` until an event stream answers (or give up); returns it open."""
        attempts = 0
        while attempts < self._max_stream_retries:
            attempts += 1
            if self._remote.closing.wait(self._backoff(attempts, call.retry_ms)):
                return None
            if call.done or call.cancelled:
                return None
            headers = {"Accept": "text/event-stream", "Last-Event-ID": call.last_event_id or ""}
            headers.update(self._session_headers())
            try:
                response = self._remote.net.get(
                    self._remote.url, headers, (self._remote.options.connect_timeout, self._remote.options.read_timeout)
                )
            except Exception as exc:  # noqa: BLE001
                _release(exc)
                if self._remote.closed or call.cancelled:
                    return None
                logger.debug("[%s] resuming the stream of id=%r failed: %r", self._remote.name, call.orig_id, exc)
                continue
            if 200 <= response.status_code < 300 and _content_type(response) == "text/event-stream":
                logger.debug(
                    "[%s] resumed the stream of id=%r after event %r",
                    self._remote.name,
                    call.orig_id,
                    call.last_event_id,
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
