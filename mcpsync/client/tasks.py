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

Thread-safety: a TaskHandle may be polled from several threads; each call blocks
only its caller.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Callable, Dict, Literal, Optional, Union, overload

from ..errors import ConfigError, ProtocolError, RemoteError, RequestTimeout, TaskFailed
from ..types import CallToolResult
from .host import ClientHost, host_of


__all__ = ["TaskHandle", "resume_task", "start_task", "wait_task_result"]

logger = logging.getLogger(__name__)

#: ``on_status``: called with the handle (on the dispatch thread) whenever the task's status changes.
OnStatus = Callable[["TaskHandle"], object]

TERMINAL = ("completed", "failed", "cancelled")


class TaskHandle:
    """A server-side task: poll, wait, cancel, resume by ``task_id``.

    Attributes:
        task_id: the server's id for the task (persist it to resume later).
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
        self._lock = threading.Lock()

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

    def _update(self, task: Dict[str, Any]) -> None:
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

    @property
    def done(self) -> bool:
        """True once the task reached a terminal state."""
        return self.status in TERMINAL

    def poll(self, *, timeout: Optional[float] = None) -> str:
        """One ``tasks/get``; answers ``input_required`` through the client's handlers. Returns the status."""
        from ..session import DEFAULT

        raw = self.client.call("tasks/get", {"taskId": self.task_id}, timeout=DEFAULT if timeout is None else timeout)
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
        return self.status

    @overload
    def wait(self, timeout: Optional[float] = None, *, raw: Literal[False] = False) -> CallToolResult: ...

    @overload
    def wait(self, timeout: Optional[float] = None, *, raw: Literal[True]) -> Dict[str, Any]: ...

    def wait(self, timeout: Optional[float] = None, *, raw: bool = False) -> Union[CallToolResult, Dict[str, Any]]:
        """Poll at the advised interval until the task ends; return its result.

        Args:
            timeout: overall bound in seconds (None: no bound).
            raw: return the result dict instead of a CallToolResult.

        Raises:
            TaskFailed: the task failed or was cancelled.
            RequestTimeout: ``timeout`` passed first (the task keeps running; resume later).
        """
        deadline = time.monotonic() + timeout if timeout is not None else None
        while not self.done:
            if deadline is not None and time.monotonic() + self.poll_interval > deadline:
                raise RequestTimeout(
                    "task %s still %s after %ss" % (self.task_id, self.status, timeout),
                    timeout=timeout,
                    server=self.client.name,
                    method="tasks/get",
                )
            time.sleep(self.poll_interval)
            self.poll()
            if self.status == "input_required" and self.style == "experimental":
                # 2025-11-25: the server delivers its queued input requests (elicitation, sampling) while
                # tasks/result is pending; the client's handlers answer them, then the result arrives.
                remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
                self._fetch_result(remaining)
                break
        result = self.result_raw()
        if raw:
            return result
        return CallToolResult.from_dict(result)

    def _fetch_result(self, timeout: Optional[float]) -> None:
        try:
            res = self.client.call("tasks/result", {"taskId": self.task_id}, timeout=timeout)
        except RemoteError as exc:
            self.status = "failed"
            self.status_message = exc.message
            raise TaskFailed(
                "task %s failed: %s" % (self.task_id, exc.message), task=self.last, server=self.client.name
            ) from exc
        self._result = res if isinstance(res, dict) else {}
        self.status = "completed"

    def result_raw(self) -> Dict[str, Any]:
        """The final result dict of a finished task (fetches ``tasks/result`` when needed)."""
        if self.status in ("failed", "cancelled"):
            raise TaskFailed(
                "task %s %s%s"
                % (self.task_id, self.status, ": %s" % self.status_message if self.status_message else ""),
                task=self.last,
                server=self.client.name,
                method=self.method,
            )
        if self._result is None:
            if self.style == "experimental" or "result" not in self.last:
                res = self.client.call("tasks/result", {"taskId": self.task_id}, timeout=None)
            else:
                res = self.last["result"]
            self._result = res if isinstance(res, dict) else {}
        return self._result

    def cancel(self) -> str:
        """Ask the server to cancel (cooperative); returns the status it reports."""
        raw = self.client.call("tasks/cancel", {"taskId": self.task_id})
        if isinstance(raw, dict):
            given = raw.get("task")
            self._update(given if isinstance(given, dict) else raw)
        return self.status

    def __repr__(self) -> str:
        return "<TaskHandle %s %s (%s)>" % (self.task_id, self.status, self.style)


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
    return handle.wait(timeout=total, raw=True)
