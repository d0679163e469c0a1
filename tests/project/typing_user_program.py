"""A small program written the way the README and docs/ show mcpsync being used.

tests/project/test_typing.py type-checks it with ``mypy --strict`` (no error may appear), checks each
``reveal_type`` against the ``# revealed:`` comment on its line, and runs :func:`main` against the
bundled example server. Keep it plain user code: only public names, no casts, no ``Any``.
"""

from __future__ import annotations

import queue
import sys
from typing import TYPE_CHECKING, Dict, List, Optional

import mcpsync
from mcpsync import (
    CallToolResult,
    Client,
    ElicitationRequest,
    ElicitationResult,
    Manager,
    MCPError,
    RequestTimeout,
    SamplingRequest,
    SamplingResult,
    Tool,
    ToolError,
)
from mcpsync.manager import ServerStatus
from mcpsync.types import ProgressEvent, ServerNotification
from mcpsync.client import ClientOptions, HTTPOptions

EXAMPLE_SERVER = [sys.executable, "-m", "mcpsync.example_server"]


def sample(request: SamplingRequest) -> SamplingResult:
    """A stand-in model: answer every sampling request with the last message's text."""
    return SamplingResult("sampled: %s" % request.text, model="test-model")


def elicit(request: ElicitationRequest) -> ElicitationResult:
    """A stand-in user: fill in the numbers a form asks for (the defaults do the rest), decline URLs."""
    if request.mode == "url":
        return request.decline()
    answer: Dict[str, object] = {}
    for name, field in request.fields.items():
        if field.get("type") in ("integer", "number") and "default" not in field:
            answer[name] = field.get("minimum", 0)
    return request.accept(answer)


def on_progress(event: ProgressEvent) -> None:
    print("progress %s/%s %s" % (event.progress, event.total, event.message or ""))


def tool_names(client: Client) -> List[str]:
    tools: List[Tool] = client.list_tools()
    return [t.name for t in tools]


def add(client: Client, a: float, b: float) -> float:
    result: CallToolResult = client.call_tool("add", {"a": a, "b": b}, timeout=10)
    structured = result.raise_for_error().structured_content
    total = structured["sum"] if isinstance(structured, dict) else None
    if not isinstance(total, (int, float)):
        raise ValueError("add returned %r" % (structured,))
    return float(total)


def main(command: Optional[List[str]] = None) -> Dict[str, str]:
    """Use the documented API end to end; returns what it saw."""
    seen: Dict[str, str] = {}
    cmd = command or EXAMPLE_SERVER
    with mcpsync.connect(cmd, sampling_handler=sample, elicitation_handler=elicit, timeout=30) as client:
        seen["server"] = client.server_info.name or ""
        seen["tools"] = ",".join(sorted(tool_names(client)))
        seen["echo"] = client.call_tool("echo", {"message": "hi"}).text
        seen["sum"] = str(add(client, 2, 3))
        seen["slow"] = client.call_tool("slow", {"seconds": 0.1, "steps": 2}, progress=on_progress).text
        seen["sample"] = client.call_tool("sample", {"prompt": "hello"}).text
        seen["elicit"] = client.call_tool("elicit", {"message": "who?"}).text
        handle = client.call_tool_async("echo", {"message": "later"})
        seen["async"] = handle.result(timeout=10).text
        page = client.list_tools_page()
        seen["first_page"] = page.items[0].name if page.items else ""
        prompt = client.get_prompt("greet", {"name": "Ada"})
        seen["prompt"] = prompt.text
        failed = client.call_tool("fail", {"message": "nope"})
        try:
            failed.raise_for_error()
        except ToolError as exc:
            seen["tool_error"] = str(exc)
        try:
            client.call_tool("slow", {"seconds": 5, "steps": 1}, timeout=0.2)
        except RequestTimeout as exc:
            seen["timeout"] = type(exc).__name__
        except MCPError as exc:
            seen["timeout"] = "other: %s" % exc
        try:
            note: ServerNotification = client.notifications.get(timeout=0)
            seen["notification"] = note.method
        except queue.Empty:
            seen["notification"] = ""

    lazy = Client(
        cmd, options=ClientOptions(lazy=True), timeout=30
    )  # a module-level client in a web app: opens on first use
    try:
        seen["lazy"] = lazy.call_tool("echo", {"message": "lazily"}).text
    finally:
        lazy.close()

    manager = Manager({"mcpServers": {"example": {"command": cmd[0], "args": cmd[1:]}}})
    changes: List[str] = []

    def status_changed(server: str, status: ServerStatus) -> None:
        changes.append("%s:%s" % (server, status.status))

    remove_listener = manager.on("status_changed", status_changed)
    with manager:
        statuses = manager.status()
        seen["manager_status"] = statuses["example"].status
        definitions = manager.tools_for("openai")
        seen["manager_tools"] = str(len(definitions))
        seen["manager_echo"] = manager.call_tool("example_echo", {"message": "via manager"}).text
    remove_listener()
    seen["manager_events"] = ",".join(changes)
    return seen


if TYPE_CHECKING:  # never runs: what a type checker sees at the main entry points
    from typing_extensions import reveal_type  # (mypy ships its stubs; nothing is imported at run time)

    c = Client(EXAMPLE_SERVER)
    m = Manager({})
    reveal_type(mcpsync.connect)  # revealed: def (target: Sequence[str] | str | Transport, *, name: ...
    reveal_type(mcpsync.connect(EXAMPLE_SERVER))  # revealed: Client
    reveal_type(c.__enter__())  # revealed: Client
    reveal_type(c.open())  # revealed: Client
    remote = Client(
        "https://mcp.example.com/mcp",
        headers={"X-Api-Key": "k"},
        bearer_token="t",
        http=HTTPOptions(transport="http", verify="system", read_timeout=30.0, get_stream=False),
        options=ClientOptions(lazy=True, after_fork="reopen"),
    )
    reveal_type(remote)  # revealed: Client
    reveal_type(remote.after_fork)  # revealed: Literal['reopen'] | Literal['error']
    reveal_type(c.call_tool("echo"))  # revealed: CallToolResult
    reveal_type(c.call_tool_async("echo"))  # revealed: RequestHandle[CallToolResult]
    reveal_type(c.call_tool_async("echo").result())  # revealed: CallToolResult
    reveal_type(c.list_tools())  # revealed: list[Tool]
    reveal_type(c.list_tools_page())  # revealed: Page[Tool]
    reveal_type(c.list_prompts())  # revealed: list[Prompt]
    reveal_type(c.list_resources())  # revealed: list[Resource]
    reveal_type(c.list_resource_templates())  # revealed: list[ResourceTemplate]
    reveal_type(c.list_prompts_page())  # revealed: Page[Prompt]
    reveal_type(c.list_resources_page().items)  # revealed: list[Resource]
    reveal_type(c.list_resource_templates_page())  # revealed: Page[ResourceTemplate]
    reveal_type(c.read_resource("example://x"))  # revealed: ReadResourceResult
    reveal_type(c.get_prompt("greet"))  # revealed: GetPromptResult
    reveal_type(c.notifications.get())  # revealed: ServerNotification
    reveal_type(c.listen(tools=True))  # revealed: Subscription
    reveal_type(c.sampling_handler)  # revealed: (def (SamplingRequest) -> SamplingResult | str | dict[str, ...
    reveal_type(c.elicitation_handler)  # revealed: (def (ElicitationRequest) -> ElicitationResult | dict[str, ...
    reveal_type(m.__enter__())  # revealed: Manager
    reveal_type(m.status())  # revealed: dict[str, ServerStatus]
    reveal_type(m.status("example"))  # revealed: ServerStatus
    reveal_type(m.client("example"))  # revealed: Client
    reveal_type(m.call_tool("example_echo"))  # revealed: CallToolResult
    reveal_type(m.on("tools_changed", print))  # revealed: def ()
    reveal_type(mcpsync.tasks.start_task(c, "slow"))  # revealed: TaskHandle | CallToolResult
    reveal_type(mcpsync.tasks.resume_task(c, "t1").result())  # revealed: CallToolResult
    reveal_type(m.call_tool_async("example_echo"))  # revealed: RequestHandle[CallToolResult]
    unfinished: List[mcpsync.handles.Handle[mcpsync.CallToolResult]] = [
        c.call_tool_async("echo"),
        mcpsync.tasks.resume_task(c, "t1"),
    ]
    reveal_type(unfinished[0].result(timeout=5))  # revealed: CallToolResult
    reveal_type(unfinished[1].exception())  # revealed: BaseException | None
    reveal_type(mcpsync.OAuthManager().auth("x"))  # revealed: OAuthAuth
    deferring_client = Client(EXAMPLE_SERVER, extensions=[mcpsync.input.DeferInput(timeout=60.0)])
    ir = mcpsync.input.InputRequired.from_json("{}")
    answers = {"k": ir.questions[0].decline()}
    reveal_type(mcpsync.input.resume_tool(deferring_client, ir, answers))  # revealed: CallToolResult
    resumed = mcpsync.input.resume(deferring_client, ir)
    reveal_type(resumed)  # revealed: CallToolResult | GetPromptResult | ReadResourceResult | None
    reveal_type(mcpsync.input.pending_input(deferring_client).get(timeout=1.0))  # revealed: InputRequired
    with mcpsync.input.deferring(deferring_client, False):
        reveal_type(deferring_client.call_tool("elicit"))  # revealed: CallToolResult


if __name__ == "__main__":
    for key, value in main().items():
        print("%s: %s" % (key, value))
