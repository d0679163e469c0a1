"""The client against the bundled example server over stdio, in both protocol eras."""

from __future__ import annotations

import queue
import sys
import threading
from typing import Any

import pytest

import mcpsync
from mcpsync.client import handlers

from tests.conftest import misbehaving_cmd, server_cmd, wait_for
from mcpsync.client import Callbacks, ClientOptions, StdioOptions


def connect(era: str, *flags: str, **options):  # type: ignore[no-untyped-def]
    return mcpsync.connect(server_cmd("--era", era, *flags), **options)


def test_handshake_and_info(era: str) -> None:
    with connect(era) as c:
        assert c.era == era
        assert c.protocol_version == ("2026-07-28" if era == "modern" else "2025-11-25")
        assert c.server_info.name == "mcpsync-example"
        assert "tools" in c.server_capabilities
        assert isinstance(c.instructions, str)
        c.ping()


def test_tools_and_calls(era: str) -> None:
    with connect(era) as c:
        names = [t.name for t in c.list_tools()]
        assert {"echo", "add", "slow", "fail"} <= set(names)
        add = c.get_tool("add")
        assert add is not None and add.output_schema is not None
        assert c.call_tool("echo", {"message": "héllo ✓"}).text == "héllo ✓"
        r = c.call_tool("add", {"a": 2, "b": 3.5})
        assert r.structured_content == {"sum": 5.5}
        failed = c.call_tool("fail", {"message": "boom"})
        assert failed.is_error and "boom" in failed.text
        with pytest.raises(mcpsync.ToolError):
            failed.raise_for_error()


def test_output_schema_validation(era: str) -> None:
    with connect(era) as c:
        c.list_tools()
        with pytest.raises(mcpsync.errors.ToolOutputInvalid) as info:
            c.call_tool("bad_output")
        assert info.value.result is not None
        assert info.value.schema_path
        assert c.call_tool("bad_output", validate_output=False).structured_content is not None


def test_output_schema_validation_without_listing_first(era: str) -> None:
    """A result with structuredContent for a tool not yet known lists the tools once, then validates."""
    with connect(era) as c:
        assert c.call_tool("add", {"a": 1, "b": 2}).structured_content == {"sum": 3}  # lists once, valid
        with pytest.raises(mcpsync.errors.ToolOutputInvalid):
            c.call_tool("bad_output")
    with connect(era) as c:
        with pytest.raises(mcpsync.errors.ToolOutputInvalid):
            c.call_tool_async("bad_output").result()


def test_cli_call_exits_4_on_invalid_output() -> None:
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "mcpsync", "call", "bad_output", "--", sys.executable, "-m", "mcpsync.example_server"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 4 and "structuredContent of tool 'bad_output'" in proc.stderr, proc.stderr


def test_input_validation_before_sending(era: str) -> None:
    with connect(era, options=ClientOptions(validate_input=True)) as c:
        c.list_tools()
        with pytest.raises(mcpsync.errors.ToolInputInvalid) as info:
            c.call_tool("add", {"a": "x", "b": 1})
        assert "type" in info.value.schema_path


def test_prompts_resources_completion(era: str) -> None:
    with connect(era) as c:
        prompts = {p.name: p for p in c.list_prompts()}
        assert "greet" in prompts and prompts["greet"].arguments[0].required
        got = c.get_prompt("greet", {"name": "Ada"})
        assert "Ada" in got.text
        uris = [r.uri for r in c.list_resources()]
        assert "example://hello" in uris
        assert c.read_resource("example://hello").text
        templates = c.list_resource_templates()
        assert templates and "{id}" in templates[0].uri_template
        with pytest.raises(mcpsync.errors.ResourceNotFound):
            c.read_resource("example://nope")
        comp = c.complete(mcpsync.client.prompt_ref("greet"), "name", "A")
        assert comp.values


@pytest.mark.parametrize("page_size", ["1", "2"])
def test_pagination_follows_empty_cursor(era: str, page_size: str) -> None:
    with connect(era, "--page-size", page_size) as c:
        first = c.list_tools_page()
        assert first.next_cursor == ""  # the empty string is a cursor, not the end
        tools = c.list_tools()
        assert len(tools) >= 10 and len({t.name for t in tools}) == len(tools)


def test_cursor_loop_is_stopped(era: str) -> None:
    with mcpsync.connect(misbehaving_cmd("--era", era, "--page-size", "2", "--cursor-loop")) as c:
        tools = c.list_tools()
        assert 0 < len(tools) <= 6


def test_progress_and_reset_on_progress(era: str) -> None:
    events = []
    with connect(era) as c:
        # 15 steps over 3 s (one every 0.2 s) with an idle timeout of 2 s: the call outlives its timeout only
        # because progress resets it. The gap between notifications is a tenth of the timeout, so a stalled
        # scheduler on a loaded machine does not end the call early.
        r = c.call_tool("slow", {"seconds": 3.0, "steps": 15}, timeout=2.0, progress=events.append)
        assert r.text == "done"
        assert wait_for(lambda: len(events) >= 14)
        assert events[-1].total == 15


def test_hard_maximum_and_cancel_on_timeout(era: str) -> None:
    with connect(era, options=ClientOptions(log_level="debug")) as c:
        with pytest.raises(mcpsync.RequestTimeout) as info:
            c.call_tool("slow", {"seconds": 5, "steps": 50}, timeout=2, max_total_timeout=0.5)
        assert isinstance(info.value, TimeoutError)
        assert info.value.method == "tools/call"
        # the session still works and the late reply is ignored
        assert c.call_tool("echo", {"message": "after"}).text == "after"


def test_async_handle_cancel(era: str) -> None:
    with connect(era) as c:
        handle = c.call_tool_async("slow", {"seconds": 5, "steps": 5})
        assert not handle.done()
        assert handle.cancel()
        with pytest.raises(mcpsync.RequestCancelled):
            handle.result()
        assert c.call_tool("echo", {"message": "x"}).text == "x"
        ok = c.call_tool_async("echo", {"message": "y"})
        assert ok.result().text == "y"


def test_server_requests_with_handlers(era: str) -> None:
    seen = []

    def sample(req: handlers.SamplingRequest):  # type: ignore[no-untyped-def]
        seen.append(("sample", req.server))
        return req.reply("sampled: " + req.text)

    def elicit(req: handlers.ElicitationRequest):  # type: ignore[no-untyped-def]
        seen.append(("elicit", req.mode))
        if req.mode == "url":
            assert req.host
            return req.accept()
        defaults = req.defaults()
        assert defaults
        answer = {}
        for name, prop in req.fields.items():
            if name in defaults:
                continue
            low = prop.get("minimum", 0)
            answer[name] = {"integer": int(low), "number": float(low), "boolean": True, "string": "s"}.get(
                prop.get("type"), "x"
            )
            if "enum" in prop:
                answer[name] = prop["enum"][0]
        return req.accept(answer)

    with connect(era, sampling_handler=sample, elicitation_handler=elicit, roots=["/tmp"]) as c:
        assert "sampled:" in c.call_tool("sample", {"prompt": "hi"}).text
        assert "accept" in c.call_tool("elicit", {"message": "who?"}).text
        assert "accept" in c.call_tool("elicit_url", {"message": "go"}).text
        assert "file:///tmp" in c.call_tool("roots").text
        c.set_roots(["/var"])
        assert "file:///var" in c.call_tool("roots").text
    assert ("sample", c.name) in seen


def test_missing_handlers(era: str) -> None:
    with mcpsync.connect(misbehaving_cmd("--era", era, "--ignore-client-capabilities")) as c:
        if era == "modern":
            with pytest.raises(mcpsync.HandlerMissing):
                c.call_tool("sample", {"prompt": "hi"})
        else:
            r = c.call_tool("sample", {"prompt": "hi"})
            assert r.is_error or "-32601" in r.text or "not found" in r.text.lower()


def test_handler_exception_does_not_leak(era: str) -> None:
    def sample(req):  # type: ignore[no-untyped-def]
        raise RuntimeError("secret internal detail")

    with connect(era, sampling_handler=sample) as c:
        # one rule in both eras (tests/client/test_handler_errors.py): the server gets a generic internal error
        r = c.call_tool("sample", {"prompt": "hi"})
        assert r.is_error and "-32603" in r.text and "secret internal detail" not in r.text


def test_notifications_logs_and_list_changed(era: str) -> None:
    changed = threading.Event()
    logs = []
    with connect(
        era,
        callbacks=Callbacks(on_tools_changed=changed.set, on_log=logs.append),
        options=ClientOptions(log_level="debug"),
    ) as c:
        before = {t.name for t in c.list_tools()}
        c.call_tool("log", {"level": "warning", "message": "hello log"})
        assert wait_for(lambda: any("hello log" in str(p.get("data")) for p in logs))
        c.call_tool("add_tool", {"name": "fresh"})
        assert changed.wait(30)
        assert "fresh" in {t.name for t in c.list_tools()} - before


def test_resource_subscription_updates(era: str) -> None:
    updated = queue.Queue()
    with connect(era, callbacks=Callbacks(on_resource_updated=updated.put)) as c:
        c.subscribe_resource("example://hello")
        c.call_tool("touch", {"uri": "example://hello"})
        assert updated.get(timeout=30) == "example://hello"
        c.unsubscribe_resource("example://hello")


def test_notification_queue(era: str) -> None:
    with connect(era, options=ClientOptions(log_level="info")) as c:
        c.call_tool("log", {"level": "error", "message": "queued"})
        while True:
            note = c.notifications.get(timeout=30)
            if note.method == "notifications/message":
                break
        assert note.server == c.name


def test_concurrency_out_of_order(era: str) -> None:
    errors = []
    with mcpsync.connect(misbehaving_cmd("--era", era, "--out-of-order")) as c:

        def worker(n: int) -> None:
            try:
                for i in range(200):
                    msg = "%d-%d" % (n, i)
                    assert c.call_tool("echo", {"message": msg}).text == msg
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(32)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors


def test_close_twice_and_use_after_close(era: str) -> None:
    c = connect(era)
    c.close()
    c.close()
    with pytest.raises(mcpsync.ClientClosed):
        c.list_tools()


def test_close_from_callback(era: str) -> None:
    done = threading.Event()
    c = connect(era, options=ClientOptions(log_level="info"))

    def on_log(params):  # type: ignore[no-untyped-def]
        c.close()
        done.set()

    c.on_log = on_log
    try:
        c.call_tool("log", {"level": "error", "message": "bye"})
    except mcpsync.MCPError:
        pass
    assert done.wait(30)
    assert wait_for(lambda: c.closed)


def test_protocol_option_forces_era() -> None:
    with mcpsync.connect(server_cmd("--era", "auto"), protocol="legacy") as c:
        assert c.era == "legacy"
    with mcpsync.connect(server_cmd("--era", "auto"), protocol="modern") as c:
        assert c.era == "modern"
    with pytest.raises(mcpsync.MCPError):
        mcpsync.connect(server_cmd("--era", "legacy"), protocol="modern")


def test_not_available_in_legacy() -> None:
    with connect("legacy") as c:
        with pytest.raises(mcpsync.errors.NotAvailableInEra):
            c.listen(tools=True)


def test_capability_error_before_sending() -> None:
    with connect("legacy") as c:
        c.server_capabilities = {}
        with pytest.raises(mcpsync.CapabilityError):
            c.list_prompts()


def test_bad_target_and_options() -> None:
    with pytest.raises(mcpsync.ConfigError):
        mcpsync.Client("not a url")
    with pytest.raises(mcpsync.ConfigError):
        mcpsync.Client(["x"], protocol="1999-01-01")
    with pytest.raises(mcpsync.errors.ConnectError) as info:
        mcpsync.connect(["definitely-not-a-command-xyz"])
    assert "definitely-not-a-command-xyz" in str(info.value) and "PATH" in str(info.value)


def test_env_merge_still_finds_interpreter(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    cmd = [os.path.basename(sys.executable), "-m", "mcpsync.example_server"]
    monkeypatch.setenv("PATH", os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    with mcpsync.connect(cmd, stdio=StdioOptions(env={"X": "1"})) as c:
        assert c.call_tool("echo", {"message": "env"}).text == "env"


def test_env_option_still_finds_npx() -> None:
    import shutil

    from mcpsync.transports.stdio import default_environment, resolve_command

    if shutil.which("npx") is None:
        pytest.skip("npx is not installed (Node.js)")
    env = default_environment({"X": "1"})
    assert env["X"] == "1" and "PATH" in env and env["PYTHONUTF8"] == "1"
    assert resolve_command("npx", env).endswith("npx")


def test_progress_callbacks_all_run_before_the_result(era: str) -> None:
    with connect(era) as c:
        for _ in range(5):
            events = []
            c.call_tool("slow", {"seconds": 0.05, "steps": 5}, progress=events.append)
            assert [e.progress for e in events] == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("blocking", [True, False])
def test_a_before_send_hook_that_raises_leaves_no_pending_request(blocking: bool) -> None:
    """The request never left: no entry may wait for an answer that cannot come (blocking and async alike)."""

    def boom(request_id: Any) -> None:
        raise RuntimeError("hook failed")

    with mcpsync.connect(server_cmd(), protocol="legacy") as client:
        session = client.session
        before = dict(session._pending)
        with pytest.raises(RuntimeError, match="hook failed"):
            if blocking:
                session.request("ping", before_send=boom)
            else:
                session.request_async("ping", before_send=boom)
        assert session._pending == before
        client.ping()  # the session is unharmed
