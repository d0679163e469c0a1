"""DeferInput: a call that needs user input stops with InputRequired and resumes later.

Against the bundled example server (stdio and Streamable HTTP) in both eras: the 2026-07-28 era raises a
serialisable InputRequired that resumes in another thread or another process; the handshake era parks the
question for another thread with a bounded wait.
"""

from __future__ import annotations

import json
import os
import pickle
import queue
import subprocess
import sys
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mcpsync

from tests.conftest import server_cmd
from tests.peers.httpserver import MCPTestServer
from mcpsync.input import DeferInput, deferring, pending_input, resume, resume_tool
from mcpsync.middleware import ToolPolicy

ANSWER = {"name": "Ada", "age": 36}
SECRET = "test-secret-not-a-credential"


def _defer(client: mcpsync.Client, tool: str = "elicit", args=None, **kw):  # type: ignore[no-untyped-def]
    with pytest.raises(mcpsync.input.InputRequired) as info:
        client.call_tool(tool, args if args is not None else {"message": "Confirm the order?"}, **kw)
    return info.value


# --------------------------------------------------------------------------- 2026-07-28


@pytest.mark.parametrize("per_call", [False, True])
def test_modern_call_raises_then_resumes(per_call: bool) -> None:
    with mcpsync.connect(server_cmd("--era", "modern"), extensions=[DeferInput(every_call=not per_call)]) as c:
        assert c.era == "modern"
        if per_call:
            with deferring(c):
                ir = _defer(c)
        else:
            ir = _defer(c)
        assert ir.method == "tools/call" and ir.tool_name == "elicit"
        assert ir.arguments == {"message": "Confirm the order?"}
        assert ir.era == "modern" and not ir.live and ir.round == 1 and ir.request_state
        (q,) = ir.questions
        assert q.kind == "form" and q.message == "Confirm the order?"
        assert q.requested_schema and q.requested_schema["required"] == ["name", "age"]
        assert "_meta" not in ir.params  # the client's envelope is not kept
        result = resume_tool(c, ir, {q.key: q.accept(ANSWER)})
        assert result.structured_content == {"action": "accept", "content": ANSWER}


def test_without_defer_the_handlers_still_answer() -> None:
    with mcpsync.connect(
        server_cmd("--era", "modern"),
        elicitation_handler=lambda r: r.decline(),
        extensions=[DeferInput(every_call=False)],
    ) as c:
        assert c.call_tool("elicit", {}).structured_content == {"action": "decline"}
        # a per-call defer wins over the handler for the calls in the block only
        with deferring(c):
            ir = _defer(c)
        assert c.call_tool("elicit", {}).structured_content == {"action": "decline"}
        result = resume_tool(c, ir, {ir.questions[0].key: {"action": "cancel"}})
        assert result.structured_content == {"action": "cancel"}


def test_several_rounds_raise_again_with_the_round_counted() -> None:
    with mcpsync.connect(
        server_cmd("--era", "modern", "--mrtr-rounds", "3"), extensions=[DeferInput()]
    ) as c:
        ir = _defer(c)
        rounds = [ir.round]
        while True:
            q = ir.questions[0]
            try:
                result = resume(c, ir, {q.key: q.accept(ANSWER)})
                break
            except mcpsync.input.InputRequired as again:
                ir = again
                rounds.append(ir.round)
        assert rounds == [1, 2, 3]
        assert result.structured_content["content"] == ANSWER


def test_resume_with_defer_off_lets_the_handlers_finish() -> None:
    with mcpsync.connect(
        server_cmd("--era", "modern", "--mrtr-rounds", "3"),
        extensions=[DeferInput()],
        elicitation_handler=lambda r: r.accept(ANSWER),
    ) as c:
        ir = _defer(c)
        result = resume(c, ir, {ir.questions[0].key: ir.questions[0].accept(ANSWER)}, defer_again=False)
        assert result.structured_content["action"] == "accept"  # the handler's answer (it adds defaults)
        assert ANSWER.items() <= result.structured_content["content"].items()


def test_the_round_limit_holds_across_resumes() -> None:
    with mcpsync.connect(
        server_cmd("--era", "modern", "--mrtr-rounds", "11"), extensions=[DeferInput()]
    ) as c:
        ir = _defer(c)
        with pytest.raises(mcpsync.ProtocolError, match="more than 10"):
            for _ in range(12):
                try:
                    resume(c, ir, {ir.questions[0].key: ir.questions[0].accept(ANSWER)})
                except mcpsync.input.InputRequired as again:
                    ir = again


def test_unanswered_question_without_handler_is_refused_before_sending() -> None:
    with mcpsync.connect(server_cmd("--era", "modern"), extensions=[DeferInput()]) as c:
        ir = _defer(c)
        with pytest.raises(mcpsync.HandlerMissing):
            resume(c, ir, {})
        with pytest.raises(mcpsync.ConfigError, match="did not ask"):
            resume(c, ir, {"other": {"action": "accept"}})
        # still usable, and the same object still resumes
        assert resume_tool(c, ir, {ir.questions[0].key: {"action": "decline"}}).structured_content == {
            "action": "decline"
        }


def test_answer_is_checked_against_the_requested_schema() -> None:
    with mcpsync.connect(server_cmd("--era", "modern"), extensions=[DeferInput()]) as c:
        q = _defer(c).questions[0]
        with pytest.raises(mcpsync.SchemaValidationError, match="age"):
            q.accept({"name": "Ada"})
        with pytest.raises(mcpsync.SchemaValidationError, match="age"):
            q.accept({"name": "Ada", "age": 500})


def test_url_sampling_and_roots_questions() -> None:
    # sampling is declared only with a sampling handler; a deferring client still defers its questions
    with mcpsync.connect(
        server_cmd("--era", "modern"),
        extensions=[DeferInput()],
        roots=["file:///work"],
        sampling_handler=lambda r: "unused",
    ) as c:
        url_q = _defer(c, "elicit_url", {}).questions[0]
        assert url_q.kind == "url" and url_q.url and url_q.url.startswith("https://")
        sample = _defer(c, "sample", {"prompt": "hi"})
        assert sample.questions[0].kind == "sampling"
        answer = {"role": "assistant", "content": {"type": "text", "text": "hello"}, "model": "m"}
        assert resume_tool(c, sample, {sample.questions[0].key: answer}).text == "hello"
        # roots the client has are answered from its configuration: nothing to defer
        assert c.call_tool("roots", {}).text == "file:///work"


def test_resume_in_another_thread() -> None:
    with mcpsync.connect(server_cmd("--era", "modern"), extensions=[DeferInput()]) as c:
        ir = _defer(c)
        out: "queue.Queue[object]" = queue.Queue()

        def finish() -> None:
            try:
                out.put(resume_tool(c, ir, {ir.questions[0].key: ir.questions[0].accept(ANSWER)}))
            except BaseException as exc:  # noqa: BLE001 - reported to the test thread
                out.put(exc)

        t = threading.Thread(target=finish, name="test-resume")
        t.start()
        t.join(60)
        result = out.get(timeout=1)
        assert isinstance(result, mcpsync.CallToolResult) and result.structured_content["content"] == ANSWER


def test_resume_in_another_process_over_http() -> None:
    """A web worker asks; a different process (a later request elsewhere) resumes from a signed token."""
    with MCPTestServer(era="modern") as srv:
        with mcpsync.connect(srv.url, name="shop", extensions=[DeferInput()]) as c:
            ir = _defer(c)
        token = ir.dumps(SECRET)
        assert "Confirm the order" not in token  # base64: not readable at a glance (but not secret either)
        program = (
            "import json, sys, mcpsync\n"
            "ir = mcpsync.input.InputRequired.loads(sys.argv[2], sys.argv[3], max_age=600)\n"
            "q = ir.questions[0]\n"
            "with mcpsync.connect(sys.argv[1], name='shop', extensions=[mcpsync.input.DeferInput()]) as c:\n"
            "    r = mcpsync.input.resume_tool(c, ir, {q.key: q.accept({'name': 'Ada', 'age': 36})})\n"
            "    sys.stdout.write(json.dumps(r.structured_content))\n"
        )
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")]))
        proc = subprocess.run(
            [sys.executable, "-c", program, srv.url, token, SECRET],
            capture_output=True,
            text=True,
            timeout=120,
            env=env,
        )
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout) == {"action": "accept", "content": ANSWER}


def test_resume_refuses_another_servers_question() -> None:
    with mcpsync.connect(server_cmd("--era", "modern"), name="a", extensions=[DeferInput()]) as a:
        ir = _defer(a)
    with mcpsync.connect(server_cmd("--era", "modern"), name="b", extensions=[DeferInput()]) as b:
        with pytest.raises(mcpsync.ConfigError, match="belongs to server 'a'"):
            resume(b, ir, {})


def test_a_tampered_tool_name_meets_the_policy_again() -> None:
    with mcpsync.connect(
        server_cmd("--era", "modern"), extensions=[DeferInput()], middleware=[ToolPolicy(denied=["add"])]
    ) as c:
        ir = _defer(c)
        d = ir.to_dict()
        d["params"] = {"name": "add", "arguments": {"a": 1, "b": 2}}
        forged = mcpsync.input.InputRequired.from_dict(d)
        with pytest.raises(mcpsync.ToolDenied):
            resume(c, forged, {ir.questions[0].key: {"action": "accept"}})


def test_approval_hook_sees_the_resumed_call() -> None:
    seen = []

    def approve(req):  # type: ignore[no-untyped-def]
        seen.append(req.tool)
        return mcpsync.middleware.Approval.approve()

    with mcpsync.connect(
        server_cmd("--era", "modern"), extensions=[DeferInput()], approval_handler=approve
    ) as c:
        ir = _defer(c)
        resume(c, ir, {ir.questions[0].key: {"action": "decline"}})
    assert seen == ["elicit", "elicit"]


# --------------------------------------------------------------------------- serialisation


def test_pickle_json_and_signed_round_trips() -> None:
    with mcpsync.connect(server_cmd("--era", "modern"), extensions=[DeferInput()]) as c:
        ir = _defer(c)
    for copy in (
        pickle.loads(pickle.dumps(ir)),
        mcpsync.input.InputRequired.from_json(ir.to_json()),
        mcpsync.input.InputRequired.loads(ir.dumps(SECRET), SECRET),
    ):
        assert copy.to_dict() == ir.to_dict()
        assert isinstance(copy, mcpsync.MCPError) and str(copy)
    token = ir.dumps(SECRET)
    with pytest.raises(mcpsync.ConfigError, match="signature"):
        mcpsync.input.InputRequired.loads(token, "another secret")
    head, payload, sig = token.split(".")
    forged = json.loads(__import__("base64").urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    forged["params"]["name"] = "add"
    raw = __import__("base64").urlsafe_b64encode(json.dumps(forged).encode()).rstrip(b"=").decode()
    with pytest.raises(mcpsync.ConfigError, match="signature"):
        mcpsync.input.InputRequired.loads("%s.%s.%s" % (head, raw, sig), SECRET)
    with pytest.raises(mcpsync.ConfigError, match="older"):
        mcpsync.input.InputRequired.loads(token, SECRET, max_age=-1)
    with pytest.raises(mcpsync.ConfigError):
        ir.dumps("")
    text = ir.to_json()
    assert "token" not in text.lower() and "authorization" not in text.lower()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.one_of(
        st.text(),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
            lambda kids: st.lists(kids) | st.dictionaries(st.text(), kids),
            max_leaves=20,
        ),
        st.builds(
            lambda d: dict(d, type="mcpsync.input.InputRequired", v=1),
            st.dictionaries(
                st.sampled_from(["method", "params", "inputRequests", "era", "round", "live", "issuedAt", "server"]),
                st.none() | st.integers() | st.text() | st.booleans() | st.dictionaries(st.text(), st.text()),
            ),
        ),
    )
)
def test_hostile_serialised_input_only_raises_config_error(junk) -> None:  # type: ignore[no-untyped-def]
    for attempt in (
        lambda: mcpsync.input.InputRequired.from_dict(junk),
        lambda: mcpsync.input.InputRequired.from_json(junk if isinstance(junk, str) else json.dumps(junk)),
        lambda: mcpsync.input.InputRequired.loads(junk if isinstance(junk, str) else json.dumps(junk), SECRET),
    ):
        try:
            ir = attempt()
        except mcpsync.ConfigError:
            continue
        assert isinstance(ir, mcpsync.input.InputRequired)
        [q.kind for q in ir.questions]  # reading a rebuilt one never raises


# --------------------------------------------------------------------------- handshake era


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_handshake_question_is_parked_for_another_thread(transport: str) -> None:
    srv = MCPTestServer(era="legacy").start() if transport == "http" else None
    try:
        target = srv.url if srv is not None else server_cmd("--era", "legacy")
        with mcpsync.connect(target, extensions=[DeferInput()]) as c:
            assert c.era == "legacy"
            out: "queue.Queue[object]" = queue.Queue()
            t = threading.Thread(
                target=lambda: out.put(c.call_tool("elicit", {"message": "Ship it?"})), name="test-caller"
            )
            t.start()
            ir = pending_input(c).get(timeout=60)
            assert ir.live and ir.era == "legacy" and ir.method == "elicitation/create"
            (q,) = ir.questions
            assert q.message == "Ship it?" and q.kind == "form"
            assert resume(c, ir, {q.key: q.accept(ANSWER)}) is None
            t.join(60)
            result = out.get(timeout=1)
            assert isinstance(result, mcpsync.CallToolResult)
            assert result.structured_content == {"action": "accept", "content": ANSWER}
            with pytest.raises(mcpsync.input.InputExpired):  # answered once only
                resume(c, ir, {q.key: q.decline()})
            # a pickled live question cannot be answered in another process; here it is the same one
            with pytest.raises(mcpsync.input.InputExpired):
                resume(c, pickle.loads(pickle.dumps(ir)), {q.key: q.decline()})
    finally:
        if srv is not None:
            srv.stop()


def test_handshake_wait_is_bounded_and_the_server_gets_cancel() -> None:
    with mcpsync.connect(
        server_cmd("--era", "legacy"), extensions=[DeferInput(timeout=0.2)]
    ) as c:
        # nobody answers: after input_timeout the server is told "cancel" and the call ends
        assert c.call_tool("elicit", {}).structured_content == {"action": "cancel"}
        with pytest.raises(queue.Empty):
            pending_input(c).get(timeout=0)  # an expired question is not handed out


def test_close_ends_a_parked_wait_and_no_answer_runs_after() -> None:
    c = mcpsync.connect(server_cmd("--era", "legacy"), extensions=[DeferInput()])
    out: "queue.Queue[object]" = queue.Queue()

    def call() -> None:
        try:
            out.put(c.call_tool("elicit", {}))
        except BaseException as exc:  # noqa: BLE001 - reported to the test thread
            out.put(exc)

    t = threading.Thread(target=call, name="test-caller")
    t.start()
    ir = pending_input(c).get(timeout=60)
    c.close()
    t.join(30)
    assert not t.is_alive()
    assert isinstance(out.get(timeout=1), mcpsync.MCPError)
    with pytest.raises(mcpsync.input.InputExpired):
        resume(c, ir, {ir.questions[0].key: {"action": "accept", "content": ANSWER}})


def test_handshake_per_call_defer_parks_only_while_such_a_call_runs() -> None:
    with mcpsync.connect(
        server_cmd("--era", "legacy"),
        elicitation_handler=lambda r: r.decline(),
        extensions=[DeferInput(every_call=False)],
    ) as c:
        assert c.call_tool("elicit", {}).structured_content == {"action": "decline"}
        out: "queue.Queue[object]" = queue.Queue()

        def deferred_call() -> None:
            with deferring(c):
                out.put(c.call_tool("elicit", {}))

        t = threading.Thread(target=deferred_call, name="test-caller")
        t.start()
        ir = pending_input(c).get(timeout=60)
        resume(c, ir, {ir.questions[0].key: {"action": "cancel"}})
        t.join(60)
        assert out.get(timeout=1).structured_content == {"action": "cancel"}  # type: ignore[attr-defined]
        assert c.call_tool("elicit", {}).structured_content == {"action": "decline"}


def test_handshake_parking_is_bounded_and_the_overflow_is_cancelled() -> None:
    with mcpsync.connect(server_cmd("--era", "legacy"), extensions=[DeferInput()]) as c:
        out: "queue.Queue[object]" = queue.Queue()
        threads = [
            threading.Thread(target=lambda: out.put(c.call_tool("elicit", {})), name="test-caller-%d" % i)
            for i in range(4)
        ]
        for t in threads:
            t.start()
        parked = [pending_input(c).get(timeout=60) for _ in range(3)]
        # the fourth question found no room: answered "cancel" at once, its call returns
        first = out.get(timeout=60)
        assert first.structured_content == {"action": "cancel"}  # type: ignore[attr-defined]
        c.ping()  # the connection is still usable while three questions wait
        for ir in parked:
            resume(c, ir, {ir.questions[0].key: ir.questions[0].accept(ANSWER)})
        for t in threads:
            t.join(60)
        rest = [out.get(timeout=1) for _ in range(3)]
        assert all(r.structured_content == {"action": "accept", "content": ANSWER} for r in rest)  # type: ignore[attr-defined]


def test_manager_defers_and_resumes_on_the_right_server() -> None:
    import sys

    from mcpsync.manager import Manager

    cmd = [sys.executable, "-m", "mcpsync.example_server", "--era", "modern"]
    with Manager({"shop": {"command": cmd}, "other": {"command": cmd}}) as mgr:
        with pytest.raises(mcpsync.input.InputRequired) as info:
            mgr.call_tool("shop_elicit", {"message": "Sure?"}, defer_input=True)
        ir = info.value
        assert ir.server == "shop"
        token = ir.dumps(SECRET)
        parked = mcpsync.input.InputRequired.loads(token, SECRET)
        result = mgr.resume(parked, {ir.questions[0].key: {"action": "decline"}})
        assert result.structured_content == {"action": "decline"}


# --------------------------------------------------------------------------- order, and a question that names no server


def test_json_and_tokens_keep_the_servers_order() -> None:
    with mcpsync.connect(server_cmd("--era", "modern"), extensions=[DeferInput()]) as c:
        ir = _defer(c)
    props = list(ir.questions[0].requested_schema["properties"])  # type: ignore[index]
    assert props != sorted(props)  # the example server's order is not alphabetical
    InputRequired = mcpsync.input.InputRequired
    for copy in (InputRequired.from_json(ir.to_json()), InputRequired.loads(ir.dumps(SECRET), SECRET)):
        assert list(copy.questions[0].requested_schema["properties"]) == props  # type: ignore[index]
        assert list(copy.to_dict()) == list(ir.to_dict())


def test_a_question_that_names_no_server_resumes_on_no_client() -> None:
    from mcpsync.manager import Manager

    with mcpsync.connect(server_cmd("--era", "modern"), name="shop", extensions=[DeferInput()]) as c:
        ir = _defer(c)
        d = ir.to_dict()
        d["server"] = None  # an unsigned object edited, or made by hand
        unbound = mcpsync.input.InputRequired.from_dict(d)
        with pytest.raises(mcpsync.errors.InputNotResumable, match="names no server"):
            resume(c, unbound, {ir.questions[0].key: {"action": "decline"}})
        with pytest.raises(mcpsync.errors.InputNotResumable, match="belongs to server 'shop'"):
            with mcpsync.connect(server_cmd("--era", "modern"), name="other", extensions=[DeferInput()]) as other:
                resume(other, ir, {ir.questions[0].key: {"action": "decline"}})
        # the real one still resumes, once refused copies are out of the way
        assert resume_tool(c, ir, {ir.questions[0].key: {"action": "decline"}}).structured_content == {
            "action": "decline"
        }
    with Manager({"shop": {"command": server_cmd("--era", "modern")}}) as mgr:
        with pytest.raises(mcpsync.errors.InputNotResumable):
            mgr.resume(unbound, {})


# --------------------------------------------------------------------------- prompts and resources


def test_a_prompt_and_a_resource_read_defer_and_resume_typed() -> None:
    """The peer asks (input_required) before it serves ``prompts/get`` and ``resources/read``: both defer, pickle,
    and resume to their typed results; with defer_again=False a handler would answer instead."""
    from tests.conftest import misbehaving_cmd

    target = misbehaving_cmd("--era", "modern", "--ask-before-reading")
    with mcpsync.connect(target, name="docs", extensions=[DeferInput()]) as c:
        with pytest.raises(mcpsync.input.InputRequired) as info:
            c.get_prompt("greet", {"name": "Ada"})
        ir = pickle.loads(pickle.dumps(info.value))
        assert ir.method == "prompts/get" and ir.params == {"name": "greet", "arguments": {"name": "Ada"}}
        (q,) = ir.questions
        assert q.kind == "form" and q.message == "Who is reading prompt:greet?"
        prompt = resume(c, ir, {q.key: q.accept({"name": "Grace"})})
        assert isinstance(prompt, mcpsync.GetPromptResult)
        assert prompt.messages[-1].content.text == "read by Grace"  # type: ignore[union-attr]

        with pytest.raises(mcpsync.input.InputRequired) as info:
            c.read_resource("example://hello")
        ir = mcpsync.input.InputRequired.loads(info.value.dumps(SECRET), SECRET)
        assert ir.method == "resources/read" and ir.params == {"uri": "example://hello"}
        read = resume(c, ir, {ir.questions[0].key: ir.questions[0].decline()})
        assert isinstance(read, mcpsync.ReadResourceResult)
        assert read.contents[-1].text == "read by nobody"  # type: ignore[union-attr]
        with pytest.raises(mcpsync.ConfigError, match="resume_tool"):
            resume_tool(c, ir, {})
