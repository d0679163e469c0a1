"""Tasks for the example server, in both eras.

Legacy (2025-11-25 experimental tasks, core protocol): the client asks for a task
with ``params.task = {ttl}`` on ``tools/call`` of a tool whose
``execution.taskSupport`` is ``optional`` (``task_work``). The server answers a
``CreateTaskResult`` ``{task: Task}`` where ``Task = {taskId, status,
statusMessage?, createdAt, lastUpdatedAt, ttl, pollInterval}``; it serves
``tasks/get`` (``Task`` fields at the top of the result), ``tasks/result``
(blocks until terminal, then the tool's result with ``_meta``
``io.modelcontextprotocol/related-task``, or its JSON-RPC error), ``tasks/list``
and ``tasks/cancel``, and sends ``notifications/tasks/status`` (``Task`` params)
on each status change. A task that needs input moves to ``input_required`` and
sends ``elicitation/create`` (with the related-task ``_meta``) to the client.

Modern (2026-07-28 extension ``io.modelcontextprotocol/tasks``): when the
request's ``clientCapabilities.extensions`` has the extension, ``tools/call`` of
``task_work`` answers ``{resultType: "task", taskId, status: "working",
createdAt, lastUpdatedAt, ttlMs, pollIntervalMs}`` (flat, as in the extension's
schema; the same Task object is mirrored under ``task`` for clients written
against the nested 2025-11-25 shape). ``tasks/get`` returns the DetailedTask
(``inputRequests`` when ``input_required``, ``result`` when ``completed``,
``error`` when ``failed``) with ``resultType: "complete"``; ``tasks/update``
takes ``inputResponses``; ``tasks/cancel`` acknowledges with an empty result
(cooperative). ``notifications/tasks`` goes to listen streams that asked for the
task id in ``notifications.taskIds``.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Protocol

from . import tools
from .options import Options
from .protocol import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    META_RELATED_TASK,
    METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY,
    TASKS_EXTENSION,
    RpcError,
    now_iso,
)

if TYPE_CHECKING:  # pragma: no cover
    from .session import RequestContext, ServerSession

logger = logging.getLogger("mcpsync.example_server")


class TaskOwner(Protocol):
    """What the task store uses of its server (implemented by :class:`~.core.ExampleServer`)."""

    @property
    def options(self) -> Options: ...

    def task_status_changed(self, task_id: str, params: Dict[str, Any]) -> None: ...

    def _paginate(self, items: List[Dict[str, Any]], params: Dict[str, Any], key: str) -> Dict[str, Any]: ...


TERMINAL = ("completed", "failed", "cancelled")


class Task:
    """One task's state (guarded by ``cond``)."""

    def __init__(self, era: str, ttl_ms: Optional[int], poll_ms: int, session: "ServerSession") -> None:
        self.task_id = secrets.token_hex(12)
        self.era = era
        self.session = session
        self.status = "working"
        self.status_message: Optional[str] = "The operation is now in progress."
        self.created_at = now_iso()
        self.updated_at = self.created_at
        self.created_mono = time.monotonic()
        self.ttl_ms = ttl_ms
        self.poll_ms = poll_ms
        self.result: Optional[Dict[str, Any]] = None
        self.error: Optional[Dict[str, Any]] = None
        self.input_requests: Dict[str, Dict[str, Any]] = {}
        self.answers: Dict[str, Dict[str, Any]] = {}
        self.cancel_event = threading.Event()
        self.cond = threading.Condition()

    def base(self) -> Dict[str, Any]:
        data: Dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.updated_at,
        }
        if self.status_message is not None:
            data["statusMessage"] = self.status_message
        if self.era == "modern":
            data["ttlMs"] = self.ttl_ms
            data["pollIntervalMs"] = self.poll_ms
        else:
            data["ttl"] = self.ttl_ms
            data["pollInterval"] = self.poll_ms
        return data

    def detailed(self) -> Dict[str, Any]:
        """Modern DetailedTask (status-specific fields inlined)."""
        data = self.base()
        if self.status == "input_required":
            data["inputRequests"] = dict(self.input_requests)
        elif self.status == "completed" and self.result is not None:
            data["result"] = self.result
        elif self.status == "failed" and self.error is not None:
            data["error"] = self.error
        return data

    def expired(self) -> bool:
        return self.ttl_ms is not None and (time.monotonic() - self.created_mono) * 1000.0 > self.ttl_ms


class TaskStore:
    """All tasks of one :class:`ExampleServer`."""

    def __init__(self, server: TaskOwner) -> None:
        self.server = server
        self.lock = threading.Lock()
        self.tasks: Dict[str, Task] = {}

    # ------------------------------------------------------------------ creation

    def create_legacy(self, ctx: "RequestContext", args: Dict[str, Any], meta: Dict[str, Any]) -> Dict[str, Any]:
        ttl = meta.get("ttl")
        ttl_ms = (
            int(ttl)
            if isinstance(ttl, (int, float)) and not isinstance(ttl, bool) and ttl > 0
            else self.server.options.task_ttl_ms
        )
        task = self._create("legacy", ttl_ms, ctx)
        return {"task": task.base()}

    def create_modern(self, ctx: "RequestContext", args: Dict[str, Any]) -> Dict[str, Any]:
        if args.get("ask") and not isinstance(ctx.client_caps.get("elicitation"), dict):
            raise RpcError(
                MISSING_CLIENT_CAPABILITY,
                "Missing required client capability: elicitation",
                {"requiredCapabilities": {"elicitation": {}}},
            )
        task = self._create("modern", self.server.options.task_ttl_ms, ctx, args)
        data = task.base()
        result: Dict[str, Any] = dict(data)
        result["resultType"] = "task"
        result["task"] = data
        return result

    def _create(self, era: str, ttl_ms: int, ctx: "RequestContext", args: Optional[Dict[str, Any]] = None) -> Task:
        task = Task(era, ttl_ms, int(self.server.options.task_poll_interval_ms), ctx.session)
        with self.lock:
            self.tasks[task.task_id] = task
        arguments = ctx.params.get("arguments") or {}
        thread = threading.Thread(
            target=self._run, args=(task, ctx, arguments), daemon=True, name="example-task-%s" % task.task_id[:8]
        )
        thread.start()
        return task

    # ------------------------------------------------------------------ execution

    def _run(self, task: Task, ctx: "RequestContext", args: Dict[str, Any]) -> None:
        def ask(input_request: Dict[str, Any]) -> Dict[str, Any]:
            return self._ask(task, ctx, input_request)

        try:
            result = tools.run_task_body(task, args, ask)
        except tools.TASK_CANCELLED:
            self._finish(task, "cancelled", message="The task was cancelled.")
            return
        except RpcError as exc:
            self._finish(task, "failed", error=exc.to_dict(), message="Tool execution failed: %s" % exc.message)
            return
        except Exception:
            logger.exception("task %s crashed", task.task_id)
            self._finish(
                task, "failed", error={"code": INTERNAL_ERROR, "message": "Internal error"}, message="Internal error"
            )
            return
        if task.era == "legacy" and result.get("isError"):
            self._finish(task, "failed", result=result, message="The tool reported an error.")
        else:
            self._finish(task, "completed", result=result, message="The operation completed.")

    def _ask(self, task: Task, ctx: "RequestContext", input_request: Dict[str, Any]) -> Dict[str, Any]:
        key = "task_input_%d" % (len(task.input_requests) + len(task.answers) + 1)
        if task.era == "legacy":
            self._set_status(task, "input_required", "Waiting for the client's answer.")
            params = dict(input_request.get("params") or {})
            if task.session.protocol_version != "2025-11-25":
                params.pop("mode", None)
            params["_meta"] = {META_RELATED_TASK: {"taskId": task.task_id}}
            try:
                answer = task.session.request(input_request["method"], params, cancel=task.cancel_event)
            except RpcError:
                if task.cancel_event.is_set():
                    raise tools.TASK_CANCELLED() from None
                raise
            self._set_status(task, "working", "The operation is now in progress.")
            return answer
        with task.cond:
            task.input_requests[key] = input_request
        self._set_status(task, "input_required", "Waiting for input (answer with tasks/update).")
        with task.cond:
            while key not in task.answers:
                if task.cancel_event.is_set():
                    raise tools.TASK_CANCELLED()
                task.cond.wait(0.05)
            answer = task.answers[key]
        self._set_status(task, "working", "The operation is now in progress.")
        return answer

    def _set_status(self, task: Task, status: str, message: Optional[str]) -> None:
        with task.cond:
            if task.status in TERMINAL:
                return
            task.status = status
            task.status_message = message
            task.updated_at = now_iso()
            task.cond.notify_all()
        self._notify(task)

    def _finish(
        self,
        task: Task,
        status: str,
        *,
        result: Optional[Dict[str, Any]] = None,
        error: Optional[Dict[str, Any]] = None,
        message: Optional[str] = None,
    ) -> None:
        with task.cond:
            if task.status in TERMINAL:
                return
            task.status = status
            task.result = result
            task.error = error
            task.status_message = message
            task.input_requests = {}
            task.updated_at = now_iso()
            task.cond.notify_all()
        self._notify(task)

    def _notify(self, task: Task) -> None:
        if task.era == "legacy":
            if not task.session.closed:
                task.session.notify("notifications/tasks/status", task.base())
        else:
            with task.cond:
                params = task.detailed()
            self.server.task_status_changed(task.task_id, params)

    def cancel_all(self) -> None:
        with self.lock:
            all_tasks = list(self.tasks.values())
        for task in all_tasks:
            task.cancel_event.set()

    # ------------------------------------------------------------------ lookups

    def _lookup(self, ctx: "RequestContext", era: str) -> Task:
        if not self.server.options.tasks or (era == "legacy" and ctx.version != "2025-11-25"):
            raise RpcError(METHOD_NOT_FOUND, "Method not found: %s" % ctx.msg.get("method"))
        task_id = ctx.params.get("taskId")
        with self.lock:
            task = self.tasks.get(task_id) if isinstance(task_id, str) else None
            if task is not None and task.status in TERMINAL and task.expired():
                del self.tasks[task.task_id]
                raise RpcError(INVALID_PARAMS, "Failed to retrieve task: Task has expired")
        if task is None or task.era != era or (era == "legacy" and task.session is not ctx.session):
            raise RpcError(INVALID_PARAMS, "Failed to retrieve task: Task not found")
        return task

    # ------------------------------------------------------------------ legacy methods

    def legacy_get(self, ctx: "RequestContext") -> Dict[str, Any]:
        task = self._lookup(ctx, "legacy")
        with task.cond:
            return task.base()

    def legacy_result(self, ctx: "RequestContext") -> Dict[str, Any]:
        task = self._lookup(ctx, "legacy")
        with task.cond:
            while task.status not in TERMINAL:
                if ctx.cancelled.is_set():
                    raise RpcError(INTERNAL_ERROR, "cancelled")
                task.cond.wait(0.05)
            status, result, error = task.status, task.result, task.error
        if status == "cancelled":
            raise RpcError(INVALID_PARAMS, "Task %s was cancelled" % task.task_id)
        if result is None:
            err = error or {"code": INTERNAL_ERROR, "message": "Internal error"}
            raise RpcError(int(err.get("code", INTERNAL_ERROR)), str(err.get("message")), err.get("data"))
        out = dict(result)
        out["_meta"] = {META_RELATED_TASK: {"taskId": task.task_id}}
        return out

    def legacy_list(self, ctx: "RequestContext") -> Dict[str, Any]:
        if not self.server.options.tasks or ctx.version != "2025-11-25":
            raise RpcError(METHOD_NOT_FOUND, "Method not found: tasks/list")
        with self.lock:
            mine = [t for t in self.tasks.values() if t.era == "legacy" and t.session is ctx.session]
        items = []
        for task in mine:
            with task.cond:
                items.append(task.base())
        return self.server._paginate(items, ctx.params, "tasks")

    def legacy_cancel(self, ctx: "RequestContext") -> Dict[str, Any]:
        task = self._lookup(ctx, "legacy")
        with task.cond:
            if task.status in TERMINAL:
                raise RpcError(INVALID_PARAMS, "Cannot cancel task: already in terminal status '%s'" % task.status)
        task.cancel_event.set()
        self._finish(task, "cancelled", message="The task was cancelled by request.")
        with task.cond:
            return task.base()

    # ------------------------------------------------------------------ modern methods

    def _require_extension(self, ctx: "RequestContext") -> None:
        if not self.server.options.tasks:
            raise RpcError(METHOD_NOT_FOUND, "Method not found: %s" % ctx.msg.get("method"))
        if not isinstance((ctx.client_caps.get("extensions") or {}).get(TASKS_EXTENSION), dict):
            raise RpcError(
                MISSING_CLIENT_CAPABILITY,
                "Missing required client capability",
                {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
            )

    def modern_get(self, ctx: "RequestContext") -> Dict[str, Any]:
        self._require_extension(ctx)
        task = self._lookup(ctx, "modern")
        with task.cond:
            return task.detailed()

    def modern_update(self, ctx: "RequestContext") -> Dict[str, Any]:
        self._require_extension(ctx)
        task = self._lookup(ctx, "modern")
        responses = ctx.params.get("inputResponses")
        if not isinstance(responses, dict):
            raise RpcError(INVALID_PARAMS, "tasks/update: inputResponses must be an object")
        with task.cond:
            for key, value in responses.items():
                if key in task.input_requests and isinstance(value, dict):  # ignore unknown / answered keys
                    del task.input_requests[key]
                    task.answers[key] = value
            task.cond.notify_all()
        return {}

    def modern_cancel(self, ctx: "RequestContext") -> Dict[str, Any]:
        self._require_extension(ctx)
        task = self._lookup(ctx, "modern")
        task.cancel_event.set()
        return {}


__all__: List[str] = ["Task", "TaskStore"]
