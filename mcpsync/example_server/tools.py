"""Tool definitions and implementations of the example server.

Every tool is a function ``fn(ctx, args) -> dict`` that returns a
``CallToolResult`` dict (or, in the modern era, an ``input_required`` result)
or raises :class:`~mcpsync.example_server.protocol.RpcError`. ``ctx`` is the
:class:`~mcpsync.example_server.core.ToolContext` of the call.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

from .protocol import (
    INVALID_PARAMS,
    LOG_LEVELS,
    MISSING_CLIENT_CAPABILITY,
    RpcError,
    decode_state,
    encode_state,
    text_content,
)

ToolFn = Callable[[Any, Dict[str, Any]], Dict[str, Any]]


def _schema(props: Dict[str, Any], required: Optional[List[str]] = None) -> Dict[str, Any]:
    schema: Dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return schema


def _tool(
    name: str,
    title: str,
    description: str,
    input_schema: Dict[str, Any],
    *,
    output_schema: Optional[Dict[str, Any]] = None,
    annotations: Optional[Dict[str, Any]] = None,
    execution: Optional[Dict[str, Any]] = None,
) -> Dict[str, Any]:
    """One ``tools/list`` entry (the optional members only when given)."""
    entry: Dict[str, Any] = {"name": name, "title": title, "description": description, "inputSchema": input_schema}
    for key, value in (("outputSchema", output_schema), ("annotations", annotations), ("execution", execution)):
        if value is not None:
            entry[key] = value
    return entry


ELICIT_SCHEMA: Dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Name", "description": "Your name", "default": "Ada"},
        "age": {"type": "integer", "title": "Age", "minimum": 0, "maximum": 150},
        "score": {"type": "number", "title": "Score", "minimum": 0, "maximum": 1},
        "subscribe": {"type": "boolean", "title": "Subscribe", "default": False},
        "color": {"type": "string", "title": "Colour", "enum": ["red", "green", "blue"], "default": "green"},
    },
    "required": ["name", "age"],
}

#: Static tool definitions (the ``tools/list`` entries), in listing order.
TOOL_DEFS: List[Dict[str, Any]] = [
    _tool("echo", "Echo", "Returns the message unchanged.",
          _schema({"message": {"type": "string"}}, ["message"]),
          annotations={"readOnlyHint": True, "idempotentHint": True, "openWorldHint": False}),
    _tool("add", "Add", "Adds two numbers; returns text and structuredContent {sum}.",
          _schema({"a": {"type": "number"}, "b": {"type": "number"}}, ["a", "b"]),
          output_schema=_schema({"sum": {"type": "number"}}, ["sum"]),
          annotations={"readOnlyHint": True}),
    _tool("slow", "Slow", "Sleeps `seconds`, sending `steps` progress notifications.",
          _schema({"seconds": {"type": "number", "default": 1}, "steps": {"type": "integer", "default": 5}})),
    _tool("fail", "Fail", "Returns a tool error (isError true) with the message.",
          _schema({"message": {"type": "string", "default": "it failed"}})),
    _tool("bad_output", "Bad output", "Returns structuredContent violating its outputSchema.",
          _schema({}), output_schema=_schema({"count": {"type": "integer"}}, ["count"])),
    _tool("sample", "Sample", "Asks the client's model (sampling) and returns the text.",
          _schema({"prompt": {"type": "string"}}, ["prompt"])),
    _tool("elicit", "Elicit", "Asks the user for a form (elicitation, form mode).",
          _schema({"message": {"type": "string", "default": "Please fill in the form"}})),
    _tool("elicit_url", "Elicit URL", "Asks the user to visit a URL (URL-mode elicitation).",
          _schema({"message": {"type": "string", "default": "Please approve the request"}})),
    _tool("roots", "Roots", "Lists the client's roots (roots/list).", _schema({})),
    _tool("payload", "Payload", "Returns a text block of exactly `size` characters.",
          _schema({"size": {"type": "integer", "minimum": 0}}, ["size"])),
    _tool("log", "Log", "Sends notifications/message at `level`.",
          _schema({"level": {"type": "string", "enum": list(LOG_LEVELS)}, "message": {"type": "string"}},
                  ["level", "message"])),
    _tool("add_tool", "Add tool", "Adds a tool at run time (tools list_changed).",
          _schema({"name": {"type": "string"}}, ["name"])),
    _tool("add_prompt", "Add prompt", "Adds a prompt at run time (prompts list_changed).",
          _schema({"name": {"type": "string"}}, ["name"])),
    _tool("add_resource", "Add resource", "Adds a text resource at run time (resources list_changed).",
          _schema({"uri": {"type": "string"}, "text": {"type": "string"}}, ["uri"])),
    _tool("touch", "Touch", "Marks a resource updated (notifications/resources/updated).",
          _schema({"uri": {"type": "string"}}, ["uri"])),
    _tool("end_listens", "End listens", "Gracefully ends every subscriptions/listen stream (modern era).", _schema({})),
    _tool("pid", "PID", "Returns the server's process id.", _schema({})),
    _tool("crash", "Crash", "Exits the process at once with `code`.",
          _schema({"code": {"type": "integer", "default": 3}})),
    _tool("stderr_flood", "stderr flood", "Writes `bytes` bytes to stderr, then returns.",
          _schema({"bytes": {"type": "integer", "minimum": 0}}, ["bytes"])),
    _tool("task_work", "Task work",
          "A long job run as a task when the client supports tasks; `ask` adds an elicitation mid-way.",
          _schema({"seconds": {"type": "number", "default": 1}, "ask": {"type": "boolean", "default": False},
                   "fail": {"type": "boolean", "default": False}}),
          execution={"taskSupport": "optional"}),
]

_TYPE_CHECKS: Dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "integer": lambda v: (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer()),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
}


def validate_arguments(schema: Dict[str, Any], args: Dict[str, Any]) -> Optional[str]:
    """A tiny validator (required + primitive types + enum). Returns an error text or None."""
    for name in schema.get("required", []):
        if name not in args:
            return "missing required argument %r" % name
    for name, value in args.items():
        prop = schema.get("properties", {}).get(name)
        if not isinstance(prop, dict):
            continue
        check = _TYPE_CHECKS.get(prop.get("type", ""))
        if check is not None and not check(value):
            return "argument %r must be of type %s" % (name, prop["type"])
        if "enum" in prop and value not in prop["enum"]:
            return "argument %r must be one of %s" % (name, ", ".join(map(str, prop["enum"])))
    return None


def tool_result(text: str, *, structured: Any = None, is_error: bool = False) -> Dict[str, Any]:
    """Build a CallToolResult."""
    result: Dict[str, Any] = {"content": text_content(text)}
    if structured is not None:
        result["structuredContent"] = structured
    if is_error:
        result["isError"] = True
    return result


def _arg(args: Dict[str, Any], name: str, default: Any) -> Any:
    value = args.get(name, default)
    return default if value is None else value


# ----------------------------------------------------------------------------- simple tools


def t_echo(ctx: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    return tool_result(str(args["message"]))


def t_add(ctx: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    total = args["a"] + args["b"]
    return tool_result(str(total), structured={"sum": total})


def t_slow(ctx: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    seconds = float(_arg(args, "seconds", 1.0))
    steps = max(1, int(_arg(args, "steps", 5)))
    interval = max(0.0, seconds) / steps
    for i in range(1, steps + 1):
        if ctx.cancelled.wait(interval):
            return tool_result("cancelled at step %d" % (i - 1), is_error=True)
        ctx.progress(i, steps, "step %d of %d" % (i, steps))
    return tool_result("done")


def t_fail(ctx: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    return tool_result(str(_arg(args, "message", "it failed")), is_error=True)


def t_bad_output(ctx: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    return tool_result("count is not an integer", structured={"count": "not a number"})


def t_payload(ctx: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    size = int(args["size"])
    if size < 0:
        raise RpcError(INVALID_PARAMS, "size must be >= 0")
    pattern = "0123456789abcdefghijklmnopqrstuvwxyz"
    reps, rest = divmod(size, len(pattern))
    return tool_result(pattern * reps + pattern[:rest])


def t_log(ctx: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    sent = ctx.log(str(args["level"]), str(args["message"]))
    return tool_result("logged" if sent else "suppressed by log level")


def t_add_tool(ctx: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    ctx.server.add_tool(str(args["name"]))
    return tool_result("added tool %s" % args["name"])


def t_add_prompt(ctx: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    ctx.server.add_prompt(str(args["name"]))
    return tool_result("added prompt %s" % args["name"])


def t_add_resource(ctx: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    ctx.server.add_resource(str(args["uri"]), str(_arg(args, "text", "dynamic resource")))
    return tool_result("added resource %s" % args["uri"])


def t_touch(ctx: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    count = ctx.server.resource_updated(str(args["uri"]))
    return tool_result("touched %s (%d subscriber(s) notified)" % (args["uri"], count))


def t_end_listens(ctx: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    count = ctx.server.end_listens()
    return tool_result("ended %d listen stream(s)" % count)


def t_pid(ctx: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    return tool_result(str(os.getpid()))


def t_crash(ctx: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    code = int(_arg(args, "code", 3))
    try:
        sys.stderr.write("mcpsync-example: crashing on request with exit code %d\n" % code)
        sys.stderr.flush()
    finally:
        os._exit(code)
    return {}  # pragma: no cover


def t_stderr_flood(ctx: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    write_stderr_bytes(int(args["bytes"]))
    return tool_result("wrote %d bytes to stderr" % int(args["bytes"]))


def write_stderr_bytes(count: int) -> None:
    """Write ``count`` bytes of printable lines to the process's stderr."""
    line = b"mcpsync-example stderr flood " + b"x" * 90 + b"\n"
    fd = 2
    try:
        stream = sys.stderr.buffer
        stream.flush()
    except (AttributeError, ValueError, OSError):
        stream = None
    remaining = max(0, count)
    while remaining > 0:
        chunk = (line * (1 + min(remaining, 65536) // len(line)))[: min(remaining, 65536)]
        try:
            if stream is not None:
                stream.write(chunk)
            else:
                os.write(fd, chunk)
        except (OSError, ValueError):
            return
        remaining -= len(chunk)
    try:
        if stream is not None:
            stream.flush()
    except (OSError, ValueError):
        pass


# ----------------------------------------------------------------------------- client-input tools


def _need(ctx: Any, capability: str, sub: Optional[str] = None) -> None:
    """Check a client capability; modern -> -32021, legacy -> tool error via RpcError marker."""
    caps = ctx.client_caps
    ok = isinstance(caps.get(capability), dict)
    if ok and sub is not None:
        ok = isinstance(caps[capability].get(sub), dict)
    if ok:
        return
    required: Dict[str, Any] = {capability: ({sub: {}} if sub else {})}
    if ctx.era == "modern":
        raise RpcError(
            MISSING_CLIENT_CAPABILITY,
            "Missing required client capability: %s" % capability,
            {"requiredCapabilities": required},
        )
    raise _ToolError("the client did not declare the %s capability" % (capability + ("." + sub if sub else "")))


class _ToolError(Exception):
    """Internal: turns into a CallToolResult with isError."""


def sampling_params(prompt: str) -> Dict[str, Any]:
    return {
        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
        "systemPrompt": "You are a helpful assistant.",
        "maxTokens": 100,
    }


def elicit_params(ctx: Any, message: str) -> Dict[str, Any]:
    params: Dict[str, Any] = {"message": message, "requestedSchema": ELICIT_SCHEMA}
    if ctx.era == "modern" or ctx.version == "2025-11-25":
        params["mode"] = "form"
    return params


def elicit_url_params(ctx: Any, message: str, elicitation_id: str) -> Dict[str, Any]:
    params: Dict[str, Any] = {
        "mode": "url",
        "message": message,
        "url": "https://example.com/approve?request=%s" % elicitation_id,
    }
    if ctx.era == "legacy":
        params["elicitationId"] = elicitation_id
    return params


def _sample_text(result: Dict[str, Any]) -> str:
    content = result.get("content")
    if isinstance(content, list):  # sampling with tools may return an array
        content = content[0] if content else {}
    if isinstance(content, dict) and content.get("type") == "text":
        return str(content.get("text", ""))
    return "(non-text sampling result)"


def _elicit_result(result: Dict[str, Any]) -> Dict[str, Any]:
    action = result.get("action")
    structured: Dict[str, Any] = {"action": action}
    if "content" in result:
        structured["content"] = result["content"]
    text = "action: %s" % action
    if "content" in result:
        import json as _json

        text += "; content: " + _json.dumps(result["content"], sort_keys=True)
    return tool_result(text, structured=structured)


def _roots_text(result: Dict[str, Any]) -> Dict[str, Any]:
    roots = result.get("roots") or []
    uris = [str(r.get("uri")) for r in roots if isinstance(r, dict)]
    return tool_result("\n".join(uris) if uris else "(no roots)", structured={"roots": uris})


#: kind -> (capability, sub-capability, method)
_INPUT_KINDS: Dict[str, Tuple[str, Optional[str], str]] = {
    "sample": ("sampling", None, "sampling/createMessage"),
    "elicit": ("elicitation", None, "elicitation/create"),
    "elicit_url": ("elicitation", "url", "elicitation/create"),
    "roots": ("roots", None, "roots/list"),
}


def _input_request(ctx: Any, kind: str, args: Dict[str, Any], key: str) -> Dict[str, Any]:
    method = _INPUT_KINDS[kind][2]
    if kind == "sample":
        return {"method": method, "params": sampling_params(str(args.get("prompt", "")))}
    if kind == "elicit":
        return {"method": method, "params": elicit_params(ctx, str(_arg(args, "message", "Please fill in the form")))}
    if kind == "elicit_url":
        return {
            "method": method,
            "params": elicit_url_params(ctx, str(_arg(args, "message", "Please approve the request")), key),
        }
    return {"method": method}


def _finish(kind: str, result: Dict[str, Any]) -> Dict[str, Any]:
    if kind == "sample":
        return tool_result(
            _sample_text(result), structured={"text": _sample_text(result), "model": result.get("model")}
        )
    if kind in ("elicit", "elicit_url"):
        return _elicit_result(result)
    return _roots_text(result)


def _client_input_tool(kind: str) -> ToolFn:
    def run(ctx: Any, args: Dict[str, Any]) -> Dict[str, Any]:
        cap, sub, method = _INPUT_KINDS[kind]
        try:
            _need(ctx, cap, sub)
        except _ToolError as exc:
            return tool_result(str(exc), is_error=True)
        if ctx.era == "modern":
            return _mrtr(ctx, kind, args)
        key = "e%d" % next(ctx.server.counter)
        req = _input_request(ctx, kind, args, key)
        try:
            result = ctx.client_request(req["method"], req.get("params"))
        except RpcError as exc:
            return tool_result("client error %d: %s" % (exc.code, exc.message), is_error=True)
        if kind == "elicit_url" and ctx.version == "2025-11-25" and result.get("action") == "accept":
            ctx.notify_client("notifications/elicitation/complete", {"elicitationId": key})
        return _finish(kind, result)

    return run


def _mrtr(ctx: Any, kind: str, args: Dict[str, Any]) -> Dict[str, Any]:
    """The modern-era multi round-trip flow, stateless: everything lives in requestState."""
    rounds = max(1, int(ctx.options.mrtr_rounds))
    params = ctx.params
    state_text = params.get("requestState")
    responses = params.get("inputResponses") if isinstance(params.get("inputResponses"), dict) else {}
    done = 0
    if state_text is not None:
        state = decode_state(state_text)
        if state.get("tool") != ctx.tool_name:
            raise RpcError(INVALID_PARAMS, "requestState does not belong to this request")
        done = int(state.get("round", 0))
        pending_key = state.get("key")
        answer = responses.get(pending_key) if pending_key else None
        if not isinstance(answer, dict):
            # The answer is missing: ask again for the same round (spec: re-request, not an error).
            return _input_required(ctx, kind, args, done)
        error = answer.get("error")
        if isinstance(error, dict) and len(answer) == 1:  # the client's handler failed: as in the handshake era
            return tool_result("client error %s: %s" % (error.get("code"), error.get("message")), is_error=True)
        done += 1
        if done >= rounds:
            return _finish(kind, answer)
    return _input_required(ctx, kind, args, done)


def _input_required(ctx: Any, kind: str, args: Dict[str, Any], round_no: int) -> Dict[str, Any]:
    key = "%s_%d" % (kind, round_no + 1)
    state = encode_state({"tool": ctx.tool_name, "round": round_no, "key": key})
    return {
        "resultType": "input_required",
        "inputRequests": {key: _input_request(ctx, kind, args, key)},
        "requestState": state,
    }


# ----------------------------------------------------------------------------- task_work


def t_task_work(ctx: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    """Synchronous variant (the client did not ask for / support a task)."""
    seconds = float(_arg(args, "seconds", 1.0))
    if ctx.cancelled.wait(max(0.0, seconds)):
        return tool_result("cancelled", is_error=True)
    if _arg(args, "fail", False):
        raise RpcError(-32603, "task_work failed on request")
    return tool_result("task done after %gs" % seconds, structured={"seconds": seconds})


def run_task_body(task: Any, args: Dict[str, Any], ask: Callable[[Dict[str, Any]], Dict[str, Any]]) -> Dict[str, Any]:
    """The body of a ``task_work`` task; ``ask(input_request)`` blocks for the client's answer."""
    seconds = float(_arg(args, "seconds", 1.0))
    half = max(0.0, seconds) / 2.0
    if task.cancel_event.wait(half):
        raise _Cancelled()
    extra = ""
    if _arg(args, "ask", False):
        answer = ask(
            {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "Continue the task?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"confirm": {"type": "boolean", "default": True}},
                        "required": ["confirm"],
                    },
                },
            }
        )
        extra = "; answer: %s" % answer.get("action")
    if task.cancel_event.wait(half):
        raise _Cancelled()
    if _arg(args, "fail", False):
        raise RpcError(-32603, "task_work failed on request")
    return tool_result("task done after %gs%s" % (seconds, extra), structured={"seconds": seconds})


class _Cancelled(Exception):
    """Internal: the task body noticed cancellation."""


TASK_CANCELLED = _Cancelled

#: Tool name -> implementation.
TOOL_FUNCS: Dict[str, ToolFn] = {
    "echo": t_echo,
    "add": t_add,
    "slow": t_slow,
    "fail": t_fail,
    "bad_output": t_bad_output,
    "sample": _client_input_tool("sample"),
    "elicit": _client_input_tool("elicit"),
    "elicit_url": _client_input_tool("elicit_url"),
    "roots": _client_input_tool("roots"),
    "payload": t_payload,
    "log": t_log,
    "add_tool": t_add_tool,
    "add_prompt": t_add_prompt,
    "add_resource": t_add_resource,
    "touch": t_touch,
    "end_listens": t_end_listens,
    "pid": t_pid,
    "crash": t_crash,
    "stderr_flood": t_stderr_flood,
    "task_work": t_task_work,
}


def dynamic_tool_def(name: str) -> Dict[str, Any]:
    """Definition of a tool added with ``add_tool``."""
    return {
        "name": name,
        "description": "A tool added at run time; echoes its arguments.",
        "inputSchema": _schema({"message": {"type": "string"}}),
    }


def t_dynamic(ctx: Any, args: Dict[str, Any]) -> Dict[str, Any]:
    return tool_result("%s: %s" % (ctx.tool_name, args.get("message", "")))
