"""The middleware chain (``handle(request, next)``): order against interceptors, retry and trace context,
rewriting, short-circuiting, calling ``next`` twice, errors; against the bundled example server over stdio."""

from __future__ import annotations

import threading
from typing import Any, Dict, List, Tuple

import pytest

import mcpsync
from mcpsync.middleware import Interceptor, RequestInfo
from mcpsync.client.middleware import Middleware, Next, chain
from tests.conftest import server_cmd
from mcpsync.client import ClientOptions


class Log(Middleware):
    def __init__(self, name: str, events: List[Tuple[Any, ...]]) -> None:
        self.name = name
        self.events = events

    def handle(self, request: RequestInfo, next: Next) -> Any:  # noqa: A002
        self.events.append((self.name, "in", request.method, request.attempt, threading.current_thread().name))
        try:
            result = next(request)
        except Exception as exc:
            self.events.append((self.name, "error", request.method, type(exc).__name__))
            raise
        self.events.append((self.name, "out", request.method, request.request_id is not None))
        return result


class Hooks(Interceptor):
    def __init__(self, events: List[Tuple[Any, ...]]) -> None:
        self.events = events

    def on_request(self, info: RequestInfo) -> None:
        self.events.append(("hooks", "in", info.method))

    def on_result(self, info: RequestInfo, result: Dict[str, Any]) -> Dict[str, Any]:
        self.events.append(("hooks", "out", info.method))
        return result


def test_middleware_and_interceptors_nest_in_list_order_on_the_calling_thread() -> None:
    events: List[Tuple[Any, ...]] = []
    with mcpsync.connect(server_cmd(), middleware=[Log("a", events), Hooks(events), Log("b", events)]) as c:
        assert [e[:3] for e in events][:3] == [("a", "in", "server/discover"), ("hooks", "in", "server/discover"),
                                              ("b", "in", "server/discover")]  # the opening request too
        del events[:]
        assert c.call_tool("echo", {"message": "x"}).text == "x"
    me = threading.current_thread().name
    assert [e[:3] for e in events] == [
        ("a", "in", "tools/call"),
        ("hooks", "in", "tools/call"),
        ("b", "in", "tools/call"),
        ("b", "out", "tools/call"),
        ("hooks", "out", "tools/call"),
        ("a", "out", "tools/call"),
    ]
    assert events[0][4] == me and events[-1][3] is True  # the JSON-RPC id is known once next() returned


class Rewrite(Middleware):
    def handle(self, request: RequestInfo, next: Next) -> Any:  # noqa: A002
        if request.tool == "echo" and request.params is not None:
            request.params["arguments"]["message"] = "[t] " + request.params["arguments"]["message"]
        result = next(request)
        return dict(result, content=[{"type": "text", "text": "redacted"}]) if request.tool == "fail" else result


def test_a_middleware_rewrites_the_request_and_the_result_and_the_callers_dict_is_untouched() -> None:
    args = {"message": "hi"}
    with mcpsync.connect(server_cmd(), middleware=[Rewrite()]) as c:
        assert c.call_tool("echo", args).text == "[t] hi"
        assert args == {"message": "hi"}
        assert c.call_tool("fail", {}).text == "redacted"


class Cached(Middleware):
    """Answers repeated tools/list calls itself: ``next`` is not called (nothing is sent)."""

    def __init__(self) -> None:
        self.kept: Dict[str, Any] = {}
        self.sent = 0

    def handle(self, request: RequestInfo, next: Next) -> Any:  # noqa: A002
        if request.method != "tools/list":
            return next(request)
        if "tools" not in self.kept:
            self.sent += 1
            self.kept["tools"] = next(request)
        return self.kept["tools"]


def test_a_middleware_may_answer_without_calling_next() -> None:
    cached = Cached()
    with mcpsync.connect(server_cmd(), options=ClientOptions(cache=False), middleware=[cached]) as c:
        first = [t.name for t in c.list_tools()]
        second = [t.name for t in c.list_tools()]
    assert first == second and "echo" in first and cached.sent == 1


class Twice(Middleware):
    """Calls ``next`` twice with fresh copies: both requests reach the server; the second answer is kept."""

    def __init__(self) -> None:
        self.ids: List[Any] = []

    def handle(self, request: RequestInfo, next: Next) -> Any:  # noqa: A002
        if request.method != "tools/call":
            return next(request)
        first = request.fresh(request.attempt)
        next(first)
        second = request.fresh(request.attempt + 1)
        result = next(second)
        self.ids += [first.request_id, second.request_id]
        return result


def test_a_middleware_may_send_a_request_again() -> None:
    twice = Twice()
    with mcpsync.connect(server_cmd(), middleware=[twice]) as c:
        assert c.call_tool("add", {"a": 1, "b": 2}).structured_content is not None
    assert len(set(twice.ids)) == 2 and None not in twice.ids


def test_retry_and_trace_context_come_before_the_interceptors_each_attempt_afresh() -> None:
    events: List[Tuple[Any, ...]] = []
    seen: List[Any] = []

    class Flaky(Middleware):
        """Inside the retry step: fails the first two attempts as an unreachable server would."""

        def handle(self, request: RequestInfo, next: Next) -> Any:  # noqa: A002
            if request.method == "tools/list" and request.params is not None:
                seen.append(dict(request.params.get("_meta") or {}))
                request.params["_meta"]["mine"] = "x"  # changed in this attempt's own copy only
                if request.attempt < 3:
                    raise mcpsync.errors.ConnectError("unreachable", server=request.server)
            return next(request)

    retry = mcpsync.middleware.Retry(total=2, backoff_factor=0, backoff_jitter=0)
    with mcpsync.connect(
        server_cmd(),
        options=ClientOptions(trace_context={"traceparent": "00-x"}),
        middleware=[retry, Log("log", events), Flaky()],
    ) as c:
        del events[:]
        assert "echo" in [t.name for t in c.list_tools()]
    assert [e[3] for e in events if e[1] == "in"] == [1, 2, 3]
    assert [e[1] for e in events] == ["in", "error", "in", "error", "in", "out"]
    assert len(seen) == 3 and all(m.get("traceparent") == "00-x" and "mine" not in m for m in seen)


def test_an_error_raised_by_a_middleware_reaches_the_outer_ones_and_the_caller_and_nothing_is_sent() -> None:
    events: List[Tuple[Any, ...]] = []

    class Refuse(Middleware):
        def handle(self, request: RequestInfo, next: Next) -> Any:  # noqa: A002
            if request.tool == "echo":
                raise mcpsync.ToolDenied("no", tool="echo", reason="no", by="policy")
            return next(request)

    with mcpsync.connect(server_cmd(), middleware=[Log("outer", events), Refuse()]) as c:
        del events[:]
        with pytest.raises(mcpsync.ToolDenied):
            c.call_tool("echo", {"message": "x"})
    assert [e[:2] for e in events] == [("outer", "in"), ("outer", "error")]


def test_a_non_middleware_is_refused_when_the_client_is_built() -> None:
    with pytest.raises(mcpsync.ConfigError):
        mcpsync.Client(server_cmd(), middleware=[object()])  # type: ignore[list-item]


def test_chain_composes_outermost_first() -> None:
    order: List[str] = []

    class Tag(Middleware):
        def __init__(self, tag: str) -> None:
            self.tag = tag

        def handle(self, request: RequestInfo, next: Next) -> Any:  # noqa: A002
            order.append(self.tag)
            return next(request)

    def send(request: RequestInfo) -> Any:
        order.append("send")
        return {"ok": request.method}

    call = chain([Tag("1"), Tag("2"), Middleware()], send)
    assert call(RequestInfo("s", "ping", None)) == {"ok": "ping"} and order == ["1", "2", "send"]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_policy_then_approval_then_retry_then_middleware_once_per_call(era: str) -> None:
    """The documented order, with real calls to the bundled example server: the tool policy refuses before the
    approval handler is asked; the handler runs once per call (not per retry attempt) and its edited arguments
    are what the retried middleware and the server see; a refused call never reaches the later stages."""
    from mcpsync.middleware import Approval, ToolApprovalRequest, ToolPolicy

    events: List[Tuple[Any, ...]] = []

    def approve(req: ToolApprovalRequest) -> Approval:
        events.append(("approval", req.tool, dict(req.arguments)))
        return Approval.approve({"message": str(req.arguments["message"]).upper()})

    class FlakyOnce(Middleware):
        """Inside retry: the first attempt of each tool call fails as an unreachable server would."""

        def handle(self, request: RequestInfo, next: Next) -> Any:  # noqa: A002
            if request.method != "tools/call":
                return next(request)
            args = dict((request.params or {}).get("arguments") or {})
            events.append(("middleware", request.tool, request.attempt, args))
            if request.attempt == 1:
                raise mcpsync.errors.ConnectError("unreachable", server=request.server)
            return next(request)

    retry = mcpsync.middleware.Retry(total=2, backoff_factor=0, backoff_jitter=0, idempotent_tools=True)
    with mcpsync.connect(
        server_cmd("--era", era),
        middleware=[FlakyOnce(), retry, ToolPolicy(denied=["add"])],
        approval_handler=approve,
    ) as c:
        c.list_tools()
        del events[:]
        assert c.call_tool("echo", {"message": "hi"}).text == "HI"
        with pytest.raises(mcpsync.ToolDenied) as info:
            c.call_tool("add", {"a": 1, "b": 2})
        assert info.value.by == "policy"
    assert events == [
        ("approval", "echo", {"message": "hi"}),  # once, before retry
        ("middleware", "echo", 1, {"message": "HI"}),  # the edited arguments, first attempt
        ("middleware", "echo", 2, {"message": "HI"}),  # retried inside: the handler is not asked again
    ]  # "add": refused by the policy, so neither the handler nor the middleware saw it
