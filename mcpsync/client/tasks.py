"""Tasks: long-running tool calls the server runs in the background.

Two protocol shapes are supported behind one :class:`TaskHandle`:

- the 2026-07-28 extension ``io.modelcontextprotocol/tasks``: the server answers
  ``tools/call`` with ``resultType: "task"`` and ``task: {taskId, status, ttlMs,
  pollIntervalMs}``; the client polls ``tasks/get`` at the advised interval,
  answers ``input_required`` through ``tasks/update`` and cancels with
  ``tasks/cancel`` (cooperative);
- the 2025-11-25 experimental tasks: ``tools/call`` with a ``task`` parameter
  answers ``{task: {taskId, status, pollInterval, ...}}``; the client polls
  ``tasks/get`` and fetches the outcome with ``tasks/result``.

``client.call_tool`` waits for a task transparently. For fire-and-forget use
:meth:`Client.start_task`-style helpers: :func:`start_task` returns a handle
whose ``task_id`` can be stored and :func:`resume_task` picks it up again in a
later process.

A :class:`TaskHandle` is a :class:`~mcpsync.handles.Handle`, like the request handle of
``call_tool_async``: ``result(timeout)``, ``done()``, ``cancel()``, ``add_done_callback(fn)``.

Thread-safety: a TaskHandle may be waited on and polled from several threads; one polls at a time,
the others wait for its answer.
"""

from __future__ import annotations

import logging
import threading
import time
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple, Union

from ..errors import ConfigError, MCPError, ProtocolError, RemoteError, RequestTimeout, TaskFailed
from ..handles import DEFAULT, Handle, Timeout
from ..session import Session
from ..types import CallToolResult
from .host import ClientHost, host_of


__all__ = ["TaskHandle", "resume_task", "start_task", "wait_task_result"]

logger = logging.getLogger(__name__)

#: ``on_status``: called with the handle (on the dispatch thread) whenever the task's status changes.
OnStatus = Callable[["TaskHandle"], object]

TERMINAL = ("completed", "failed", "cancelled")

#: A task whose ``tasks/get`` answers are unreadable this many times in a row ends with the ProtocolError.
UNREADABLE_LIMIT = 5


class TaskHandle(Handle[CallToolResult]):
    """A server-side task, as a :class:`~mcpsync.handles.Handle`: ``result()``, ``done()``, ``cancel()``,
    ``add_done_callback()`` as for a request, plus what only a task has: :meth:`poll`, :attr:`status`, and
    :attr:`task_id` to resume it from another process (:func:`resume_task`).

    Thread-safe: any number of threads may call :meth:`result` at once; one of them polls at the server's
    advised interval and the others wait for it, so the server sees one ``tasks/get`` per interval and an
    ``input_required`` round is answered once. The outcome is fetched once and shared.

    Attributes:
        task_id: the server's id for the task (persist it to resume later); also :attr:`id`.
        status: the last status seen (working, input_required, completed, failed, cancelled).
        status_message: the server's last status text, if any.
        poll_interval: seconds between polls the server advised (default 1 s).
        style: "extension" (2026-07-28) or "experimental" (2025-11-25).
    """

    def __init__(
        self,
        client: Any,
        task_id: str,
        *,
        style: str,
        method: str = "tools/call",
        status: str = "working",
        poll_interval: Optional[float] = None,
        on_status: Optional[OnStatus] = None,
    ) -> None:
        #: the client, as the narrow :class:`~mcpsync.client.host.ClientHost` the handle uses
        self.client: ClientHost = host_of(client)
        self.task_id = task_id
        self.style = style
        self.method = method
        self.status = status
        self.status_message: Optional[str] = None
        self.poll_interval = poll_interval if poll_interval and poll_interval > 0 else 1.0
        self.on_status = on_status
        self.last: Dict[str, Any] = {}
        self._result: Optional[Dict[str, Any]] = None
        self._cond = threading.Condition(threading.Lock())
        self._polling = False  # one thread at a time talks to the server for this handle (under _cond)
        self._outcome: Optional[Tuple[Optional[Dict[str, Any]], Optional[BaseException]]] = None
        self._callbacks: List[Callable[["TaskHandle"], object]] = []
        self._watching = False
        self._typed: Optional[CallToolResult] = None
        self._unreadable = 0  # tasks/get answers in a row that were not a task (under the poller role)

    @classmethod
    def from_result(cls, client: Any, result: Dict[str, Any], *, method: str = "tools/call") -> "TaskHandle":
        """Build from a ``resultType: task`` (or CreateTaskResult) answer."""
        task = result.get("task")
        if not isinstance(task, dict):
            task = result  # the extension's flat shape: taskId and status at the top
        if not isinstance(task.get("taskId"), str):
            raise ProtocolError("task answer without task.taskId", server=client.name, method=method)
        style = "extension" if result.get("resultType") == "task" else "experimental"
        handle = cls(client, task["taskId"], style=style, method=method)
        handle._update(task)
        return handle

    @property
    def id(self) -> str:
        """The task's id (:attr:`task_id`)."""
        return self.task_id

    def _update(self, task: Dict[str, Any]) -> None:
        if self.status in TERMINAL:  # a task never leaves a terminal status: a late answer to an older poll (sent
            return  # before another thread's tasks/cancel was accepted) must not make it look running again
        self.last = task
        status = task.get("status")
        if isinstance(status, str):
            changed = status != self.status
            self.status = status
            if changed and self.on_status is not None:
                self.client.session.dispatch(self.on_status, self)
        msg = task.get("statusMessage")
        self.status_message = msg if isinstance(msg, str) else self.status_message
        interval = task.get("pollIntervalMs", task.get("pollInterval"))
        if isinstance(interval, (int, float)) and not isinstance(interval, bool) and interval > 0:
            self.poll_interval = max(0.01, interval / 1000.0)

    # ------------------------------------------------------------------ the outcome, settled once

    def done(self) -> bool:
        """True once this handle has seen the task end (by :meth:`result`, :meth:`poll`, :meth:`cancel` or the
        background poll of :meth:`add_done_callback`). Never blocks and does no I/O: call :meth:`poll` to ask
        the server."""
        return self._outcome is not None

    def cancelled(self) -> bool:
        """True when the task ended in the ``cancelled`` state."""
        return self._outcome is not None and self.status == "cancelled"

    def _settle(self, result: Optional[Dict[str, Any]], error: Optional[BaseException]) -> None:
        session = self._session()  # looked up before the lock: a client's session property may block
        with self._cond:  # dispatched under the lock (that never blocks): later callbacks queue behind these
            if self._outcome is not None:
                return
            self._outcome = (result, error)
            callbacks, self._callbacks = self._callbacks, []
            self._cond.notify_all()
            for fn in callbacks:
                self._dispatch(session, fn)

    def _session(self) -> Optional[Session]:
        try:
            return self.client.session
        except MCPError:  # the client is closed: no user code runs after close()
            return None

    def _dispatch(self, session: Optional[Session], fn: Callable[["TaskHandle"], object]) -> None:
        if session is None or not session.dispatch(fn, self):
            logger.debug("task %s: a done-callback was not dispatched (client closed or backlog full)", self.task_id)

    def _conclude(self, timeout: Optional[float]) -> None:
        """The status is terminal (or the 2025-11-25 input_required): fetch the outcome and settle it."""
        if self.status in ("failed", "cancelled"):
            self._settle(
                None,
                TaskFailed(
                    "task %s %s%s"
                    % (self.task_id, self.status, ": %s" % self.status_message if self.status_message else ""),
                    task=self.last,
                    server=self.client.name,
                    method=self.method,
                ),
            )
            return
        if self._result is None:
            if self.style == "experimental" or "result" not in self.last or self.status != "completed":
                try:
                    res = self.client.call("tasks/result", {"taskId": self.task_id}, timeout=timeout)
                except RemoteError as exc:
                    self.status = "failed"
                    self.status_message = exc.message
                    self._settle(
                        None,
                        TaskFailed(
                            "task %s failed: %s" % (self.task_id, exc.message),
                            task=self.last,
                            server=self.client.name,
                            method=self.method,
                        ),
                    )
                    return
                self.status = "completed"
            else:
                res = self.last["result"]
            self._result = res if isinstance(res, dict) else {}
        self._settle(self._result, None)

    # ------------------------------------------------------------------ talking to the server, one thread at a time

    def _claim(self, deadline: Optional[float]) -> bool:
        """Become the one thread that polls; False when the outcome is known. Raises RequestTimeout at
        ``deadline`` (the task goes on)."""
        with self._cond:
            while True:
                if self._outcome is not None:
                    return False
                if not self._polling:
                    self._polling = True
                    return True
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise self._timed_out(deadline)
                self._cond.wait(remaining)

    def _release(self) -> None:
        with self._cond:
            self._polling = False
            self._cond.notify_all()

    def _timed_out(self, deadline: Optional[float]) -> RequestTimeout:
        return RequestTimeout(
            "task %s still %s when the wait ended (the task goes on)" % (self.task_id, self.status),
            server=self.client.name,
            method="tasks/get",
        )

    def _poll_once(self, timeout: Timeout) -> None:
        try:
            raw = self.client.call("tasks/get", {"taskId": self.task_id}, timeout=timeout)
        except RemoteError as exc:  # the server no longer answers for the task (unknown, expired): it is over
            self._settle(None, exc)
            raise
        if not isinstance(raw, dict):
            raise ProtocolError("tasks/get returned a non-object", server=self.client.name, method="tasks/get")
        given = raw.get("task")
        task = given if isinstance(given, dict) else raw
        self._update(task)
        if "result" in raw and isinstance(raw["result"], dict):
            self._result = raw["result"]
        if self.status == "input_required" and self.style == "extension":
            requests = raw.get("inputRequests") or task.get("inputRequests")
            if isinstance(requests, dict) and requests:
                params: Dict[str, Any] = {
                    "taskId": self.task_id,
                    "inputResponses": self.client.fulfil_input_requests(requests, "tasks/update"),
                }
                state = raw.get("requestState", task.get("requestState"))
                if state is not None:
                    params["requestState"] = state
                self.client.call("tasks/update", params)
                self.status = "working"

    def poll(self, *, timeout: Optional[float] = None) -> str:
        """One ``tasks/get`` (waits for another thread's poll in progress first); answers ``input_required``
        through the client's handlers; settles the outcome when the task ended. Returns the status.

        Blocks for the request (``timeout``: its idle timeout; None: the client's).
        """
        if not self._claim(None):
            return self.status
        try:
            self._poll_once(DEFAULT if timeout is None else timeout)
            if self.status in TERMINAL:
                self._conclude(None)
        finally:
            self._release()
        return self.status

    def result(self, timeout: Timeout = DEFAULT) -> CallToolResult:
        """Poll at the advised interval until the task ends; return its result.

        Args:
            timeout: overall bound in seconds for this wait (None or DEFAULT: no bound; each poll has the
                client's request timeouts).

        Raises:
            TaskFailed: the task failed or was cancelled.
            RequestTimeout: ``timeout`` passed first (the task keeps running: wait again, or resume later).
        """
        raw = self.result_raw(timeout)
        with self._cond:  # one CallToolResult for every waiter
            if self._typed is None:
                self._typed = CallToolResult.from_dict(raw)
            return self._typed

    def result_raw(self, timeout: Timeout = DEFAULT) -> Dict[str, Any]:
        """:meth:`result` as the result dict."""
        bound = None if timeout is DEFAULT else timeout
        deadline = None if bound is None else time.monotonic() + bound
        while self._claim(deadline):
            try:
                self._step(deadline)
            finally:
                self._release()
        return self._outcome_value()

    def _outcome_value(self) -> Dict[str, Any]:
        outcome = self._outcome
        assert outcome is not None
        result, error = outcome
        if error is not None:
            raise error
        return result if result is not None else {}

    def _pause(self, seconds: float) -> bool:
        with self._cond:  # a cancel() that settles the outcome ends this wait early
            return self._cond.wait_for(lambda: self._outcome is not None, seconds)

    def _step(self, deadline: Optional[float], pause: Optional[Callable[[float], bool]] = None) -> None:
        """As the polling thread: conclude a finished task, or wait one interval and poll once.

        ``pause(seconds)`` waits between polls (True: stop early); the background poll passes the
        session's end."""
        if self.status in TERMINAL:
            self._conclude(None if deadline is None else max(0.0, deadline - time.monotonic()))
            return
        wait = self.poll_interval if deadline is None else min(self.poll_interval, deadline - time.monotonic())
        if (pause or self._pause)(max(0.0, wait)) or self._outcome is not None:
            return
        if deadline is not None and time.monotonic() >= deadline:
            raise self._timed_out(deadline)  # waited up to the bound: no last poll that could outlast it
        try:
            self._poll_once(DEFAULT)
        except ProtocolError as exc:  # an unreadable answer: skipped (logged, rate-limited), polled again
            self._unreadable += 1
            if self._unreadable >= UNREADABLE_LIMIT:
                self._settle(None, exc)  # the server cannot tell us: the handle ends with the error
                return
            self.client.session.drops.drop("unreadable tasks/get answer", "task %s: %s" % (self.task_id, exc))
            return
        self._unreadable = 0
        if self.status in TERMINAL:
            self._conclude(None if deadline is None else max(0.0, deadline - time.monotonic()))
        elif self.status == "input_required" and self.style == "experimental":
            # 2025-11-25: the server delivers its queued input requests (elicitation, sampling) while
            # tasks/result is pending; the client's handlers answer them, then the result arrives.
            self._conclude(None if deadline is None else max(0.0, deadline - time.monotonic()))

    def cancel(self) -> bool:
        """Ask the server to cancel the task (``tasks/cancel``; cooperative: the server may finish it anyway).

        Returns False when this handle already saw the task end, or the server refuses because it has ended;
        True when the request was accepted (:attr:`status` then holds the status it reported). Blocks for the
        request.
        """
        if self._outcome is not None:
            return False
        try:
            raw = self.client.call("tasks/cancel", {"taskId": self.task_id})
        except RemoteError:
            if self._outcome is not None or self.poll() in TERMINAL:
                return False  # it ended before this cancellation (or by another thread's): its outcome stands
            raise
        if isinstance(raw, dict):
            given = raw.get("task")
            self._update(given if isinstance(given, dict) else raw)
        if self.status == "cancelled":
            self._conclude(None)
        return True

    def add_done_callback(self, fn: Callable[["TaskHandle"], object]) -> None:
        """Call ``fn(handle)`` once when the task ends, on the client's dispatch thread, in the order the callbacks
        were added.

        Until then the handle polls the task in the background on the thread ``mcpsync-task:<task_id>``
        (one per handle, whatever the number of callbacks; it stops when the task ends or the connection
        does, and ``Client.close()`` joins it). Added after the end, ``fn`` is dispatched at once. Does not block.
        """
        session = self._session()
        with self._cond:
            ended = self._outcome is not None
            if ended:
                self._dispatch(session, fn)  # behind the callbacks the end dispatched
            else:
                self._callbacks.append(fn)
            start = not ended and not self._watching
            if start:
                self._watching = True
        if start and (session is None or not session.watch("mcpsync-task:%s" % self.task_id, self._watch)):
            with self._cond:
                self._watching = False

    def _watch(self) -> None:
        """The background poll of :meth:`add_done_callback` (on its own thread, joined by close)."""
        session = self.client.session
        try:
            while not session.wait_ended(0):
                try:
                    claimed = self._claim(time.monotonic() + 0.5)  # bounded: the connection's end is noticed
                except RequestTimeout:
                    continue  # another thread polls for us
                if not claimed:
                    return  # the outcome is known: the callbacks were dispatched
                try:
                    self._step(None, session.wait_ended)
                except RequestTimeout as exc:  # one slow poll: the next one may be answered
                    logger.debug("task %s: a background poll timed out: %s", self.task_id, exc)
                finally:
                    self._release()
        except MCPError as exc:  # the connection ended (a refused task ended the handle already)
            logger.debug("task %s: background poll stopped: %s", self.task_id, exc)
        finally:
            with self._cond:
                self._watching = False

    def __repr__(self) -> str:
        return "<TaskHandle %s %s (%s)>" % (self.task_id, self.status, self.style)

    if not TYPE_CHECKING:  # renamed members: a clear error instead of a bare AttributeError

        def __getattr__(self, name: str) -> Any:
            moved = _RENAMED.get(name)
            if moved is not None:
                raise AttributeError("TaskHandle.%s was renamed: use %s" % (name, moved))
            raise AttributeError("%r object has no attribute %r" % (type(self).__name__, name))


#: TaskHandle members renamed when it became a :class:`~mcpsync.handles.Handle`.
_RENAMED = MappingProxyType({"wait": "result(timeout) (result_raw(timeout) for the dict)"})


def start_task(
    client: Any,
    name: str,
    arguments: Optional[Dict[str, Any]] = None,
    *,
    ttl_ms: Optional[int] = None,
    on_status: Optional[OnStatus] = None,
) -> Union[TaskHandle, CallToolResult]:
    """Start ``name`` as a task and return a :class:`TaskHandle` at once.

    When the server runs the tool synchronously instead, the finished
    CallToolResult is returned. The client's tool policy and approval handler apply
    (:class:`~mcpsync.ToolDenied`, nothing sent).
    """
    arguments = host_of(client).authorize_tool(name, arguments or {})
    return start_authorized_task(client, name, arguments, ttl_ms=ttl_ms, on_status=on_status)


def start_authorized_task(
    client: Any,
    name: str,
    arguments: Dict[str, Any],
    *,
    ttl_ms: Optional[int] = None,
    on_status: Any = None,
) -> Union[TaskHandle, CallToolResult]:
    """:func:`start_task` for arguments the tool policy and approval handler already passed."""
    client = host_of(client)
    params: Dict[str, Any] = {"name": name, "arguments": arguments}
    if client.era != "modern":
        params["task"] = {"ttl": ttl_ms} if ttl_ms else {}
    raw = client.request_once("tools/call", params)  # interceptors and tracing apply
    if isinstance(raw, dict) and (raw.get("resultType") == "task" or ("task" in raw and "content" not in raw)):
        handle = TaskHandle.from_result(client, raw)
        handle.on_status = on_status
        return handle
    if client.era == "modern":
        raw = client.complete("tools/call", params, raw)
    return CallToolResult.from_dict(raw if isinstance(raw, dict) else {})


def resume_task(
    client: Any, task_id: str, *, style: Optional[str] = None, on_status: Optional[OnStatus] = None
) -> TaskHandle:
    """A handle for a task started earlier (possibly by another process); polls once."""
    if not isinstance(task_id, str) or not task_id:
        raise ConfigError("task_id must be a non-empty string")
    handle = TaskHandle(
        client, task_id, style=style or ("extension" if client.era == "modern" else "experimental"), on_status=on_status
    )
    handle.poll()
    return handle


def wait_task_result(client: Any, method: str, result: Dict[str, Any], total: Optional[float]) -> Dict[str, Any]:
    """Poll a task-augmented answer (``resultType: task``) to its end and return the final result dict."""
    handle = TaskHandle.from_result(client, result, method=method)
    handle.on_status = handle.client.on_task_status
    return handle.result_raw(total)
