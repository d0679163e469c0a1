"""Resumable input as an extension: ``Client(extensions=[DeferInput()])``, the per-call switch ``deferring()``
(thread-scoped, nesting), what a client without the extension does, and the old spellings (``defer_input=``,
``input_timeout=``, ``client.resume``...) as ConfigErrors that name the new one. Against the bundled example
server in both eras."""

from __future__ import annotations

import queue
import threading
from typing import Any, Dict

import pytest

import mcpsync
from mcpsync.client import ClientOptions
from mcpsync.client.hooks import ClientExtension
from mcpsync.client.options import MOVED_KEYWORDS
from mcpsync.input import DeferInput, deferring, pending_input, resume, resume_tool
from mcpsync.input.deferral import InputDeferral
from tests.conftest import server_cmd

ANSWER = {"name": "Ada", "age": 36}


def _decline(request: Any) -> Any:
    return request.decline()


# --------------------------------------------------------------------------- the old spellings


@pytest.mark.parametrize("keyword", ["defer_input", "input_timeout"])
def test_the_removed_client_keywords_name_the_extension(keyword: str) -> None:
    for make in (mcpsync.Client, mcpsync.connect):
        with pytest.raises(mcpsync.ConfigError) as info:
            make(server_cmd(), **{keyword: True})
        message = str(info.value)
        assert message.startswith("%s= moved: pass extensions=[mcpsync.input.DeferInput(" % keyword), message
        assert MOVED_KEYWORDS[keyword] in message


@pytest.mark.parametrize("field", ["defer_input", "input_timeout"])
def test_the_removed_client_options_fields_name_the_extension(field: str) -> None:
    expected = r"^ClientOptions\(%s=\) moved: pass extensions=\[mcpsync\.input\.DeferInput\(" % field
    with pytest.raises(mcpsync.ConfigError, match=expected):
        ClientOptions(**{field: 1})
    assert "defer_input" not in ClientOptions.__dataclass_fields__
    assert ClientOptions(lazy=True).lazy  # the other fields are untouched


def test_the_removed_per_call_keyword_names_deferring() -> None:
    with mcpsync.connect(server_cmd("--era", "modern")) as c:
        for call in (
            lambda: c.call_tool("echo", {"message": "x"}, defer_input=True),  # type: ignore[call-arg]
            lambda: c.get_prompt("greet", {"name": "x"}, defer_input=True),  # type: ignore[call-arg]
            lambda: c.read_resource("example://hello", defer_input=False),  # type: ignore[call-arg]
        ):
            with pytest.raises(mcpsync.ConfigError, match=r"\(defer_input=\) moved: use .*mcpsync\.input\.deferring"):
                call()
        with pytest.raises(mcpsync.ConfigError, match=r"call_tool\(\) got an unknown keyword 'timout'"):
            c.call_tool("echo", {"message": "x"}, timout=3)  # type: ignore[call-arg]
        assert c.call_tool("echo", {"message": "still fine"}).text == "still fine"  # nothing was sent before
        for gone in ("resume", "resume_tool", "pending_input", "defer_input", "input_timeout"):
            assert not hasattr(c, gone), gone


# --------------------------------------------------------------------------- a client without the extension


def test_a_client_without_the_extension_never_defers_and_says_what_to_add() -> None:
    with mcpsync.connect(server_cmd("--era", "modern"), name="shop", extensions=[DeferInput()]) as deferring_client:
        with pytest.raises(mcpsync.input.InputRequired) as info:
            deferring_client.call_tool("elicit", {})
    ir = info.value
    with mcpsync.connect(server_cmd("--era", "modern"), name="shop", elicitation_handler=_decline) as c:
        assert c.extension(ClientExtension) is None
        assert c.call_tool("elicit", {}).structured_content == {"action": "decline"}
        for attempt in (
            lambda: deferring(c).__enter__(),
            lambda: pending_input(c),
            lambda: resume(c, ir, {ir.questions[0].key: {"action": "decline"}}),
            lambda: resume_tool(c, ir, {}),
        ):
            with pytest.raises(mcpsync.ConfigError, match=r"extensions=\[mcpsync\.input\.DeferInput\(\)\]"):
                attempt()


def test_the_extension_checks_its_settings_and_is_one_per_client() -> None:
    for bad in (-1, "soon", True):
        with pytest.raises(mcpsync.ConfigError, match="DeferInput"):
            DeferInput(timeout=bad)  # type: ignore[arg-type]
    with pytest.raises(mcpsync.ConfigError, match="two DeferInput"):
        mcpsync.Client(server_cmd(), extensions=[DeferInput(), DeferInput(timeout=1)])
    assert DeferInput(timeout=5) == DeferInput(timeout=5.0) and DeferInput() != DeferInput(every_call=False)
    assert repr(DeferInput(None, every_call=False)) == "DeferInput(timeout=None, every_call=False)"
    shared = DeferInput()
    first = mcpsync.Client(server_cmd(), extensions=[shared])
    second = mcpsync.Client(server_cmd(), extensions=[shared])
    assert first.extension(InputDeferral) is not second.extension(InputDeferral)  # one object, many clients
    first.close()
    second.close()


# --------------------------------------------------------------------------- per call, per thread


def test_deferring_off_lets_the_handlers_answer_on_a_client_that_defers_every_call() -> None:
    with mcpsync.connect(server_cmd("--era", "modern"), elicitation_handler=_decline, extensions=[DeferInput()]) as c:
        with pytest.raises(mcpsync.input.InputRequired):
            c.call_tool("elicit", {})
        with deferring(c, False):
            assert c.call_tool("elicit", {}).structured_content == {"action": "decline"}
            with deferring(c):  # nested: the innermost wins
                with pytest.raises(mcpsync.input.InputRequired):
                    c.call_tool("elicit", {})
            assert c.call_tool("elicit", {}).structured_content == {"action": "decline"}
        with pytest.raises(mcpsync.input.InputRequired):
            c.call_tool("elicit", {})


def test_deferring_is_scoped_to_the_thread() -> None:
    """Thread A holds a ``deferring(client)`` block open (parked on an event) while the main thread calls: the main
    thread's call is answered by the handler; A's call, made after, defers."""
    with mcpsync.connect(
        server_cmd("--era", "modern"), elicitation_handler=_decline, extensions=[DeferInput(every_call=False)]
    ) as c:
        entered, go = threading.Event(), threading.Event()
        out: "queue.Queue[object]" = queue.Queue()

        def in_block() -> None:
            with deferring(c):
                entered.set()
                go.wait(30)
                try:
                    out.put(c.call_tool("elicit", {}))
                except BaseException as exc:  # noqa: BLE001 - reported to the test thread
                    out.put(exc)

        t = threading.Thread(target=in_block, name="test-deferring")
        t.start()
        assert entered.wait(30)
        assert c.call_tool("elicit", {}).structured_content == {"action": "decline"}  # not this thread's block
        go.set()
        t.join(30)
        assert isinstance(out.get(timeout=1), mcpsync.input.InputRequired)


def test_a_live_question_cannot_resume_as_a_tool_and_a_modern_one_not_over_the_handshake_era() -> None:
    with mcpsync.connect(server_cmd("--era", "modern"), name="shop", extensions=[DeferInput()]) as c:
        with pytest.raises(mcpsync.input.InputRequired) as info:
            c.call_tool("elicit", {})
    modern_ir = info.value
    answers: Dict[str, Any] = {modern_ir.questions[0].key: modern_ir.questions[0].accept(ANSWER)}
    with mcpsync.connect(server_cmd("--era", "legacy"), name="shop", extensions=[DeferInput(timeout=30)]) as legacy:
        with pytest.raises(mcpsync.errors.InputNotResumable, match="handshake era"):
            resume(legacy, modern_ir, answers)
        out: "queue.Queue[object]" = queue.Queue()
        t = threading.Thread(target=lambda: out.put(legacy.call_tool("elicit", {})), name="test-caller")
        t.start()
        live = pending_input(legacy).get(timeout=60)
        with pytest.raises(mcpsync.ConfigError, match="resume_tool"):
            resume_tool(legacy, live, {live.questions[0].key: live.questions[0].decline()})
        assert resume(legacy, live, {live.questions[0].key: live.questions[0].decline()}) is None
        t.join(60)
        assert out.get(timeout=1).structured_content == {"action": "decline"}  # type: ignore[attr-defined]
