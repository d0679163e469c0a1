"""Issue 9 defect 11: one rule for server-request handler exceptions, in both eras.

A handler (sampling, elicitation, roots) that raises is answered to the server as a JSON-RPC error:
``-32603 "Internal error while handling <method>"`` (nothing of the exception leaks), or the code,
message and data of a RemoteError the handler raised. Handshake era: the error response to the
server's request. 2026-07-28: the same error object as that key's ``inputResponses`` entry. The
server decides how the call ends (the example server returns an isError result naming the error);
the caller never gets the handler's exception. A server that asks again after such an answer makes
the call fail with the handler's failure, never a loop.
"""

from __future__ import annotations

from typing import Any, Dict, List

import pytest

import mcpsync

from tests.conftest import misbehaving_cmd, server_cmd


def _boom(_: Any) -> Any:
    raise ValueError("secret internal detail 1234")


def _remote(_: Any) -> Any:
    raise mcpsync.RemoteError(-32099, "the user walked away", {"why": "lunch"})


@pytest.mark.parametrize("tool,option", [("elicit", "elicitation_handler"), ("sample", "sampling_handler")])
def test_a_raising_handler_gives_the_same_outcome_in_both_eras(
    tool: str, option: str, caplog: pytest.LogCaptureFixture
) -> None:
    outcomes: Dict[str, Any] = {}
    args = {"prompt": "hi"} if tool == "sample" else {}
    for era in ("legacy", "modern"):
        options: Dict[str, Any] = {option: _boom}
        with mcpsync.connect(server_cmd("--era", era), **options) as c:
            r = c.call_tool(tool, args)
            outcomes[era] = (r.is_error, r.text)
            assert c.connected and c.call_tool("echo", {"message": "ok"}).text == "ok"
    assert outcomes["legacy"] == outcomes["modern"]
    is_error, text = outcomes["modern"]
    assert is_error and "-32603" in text and "Internal error while handling" in text
    assert "secret internal detail" not in text  # nothing of the exception reaches the server
    assert any("secret internal detail" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)


def test_a_remote_error_from_the_handler_is_sent_as_is_in_both_eras() -> None:
    texts: List[str] = []
    for era in ("legacy", "modern"):
        with mcpsync.connect(server_cmd("--era", era), elicitation_handler=_remote) as c:
            r = c.call_tool("elicit")
            assert r.is_error
            texts.append(r.text)
    assert texts[0] == texts[1] and "-32099" in texts[0] and "the user walked away" in texts[0]


def test_a_bad_return_value_follows_the_same_rule() -> None:
    texts = []
    for era in ("legacy", "modern"):
        with mcpsync.connect(server_cmd("--era", era), elicitation_handler=lambda r: 42) as c:  # type: ignore[arg-type,return-value]
            texts.append(c.call_tool("elicit").text)
    assert texts[0] == texts[1] and "-32603" in texts[0]


def test_modern_server_that_asks_again_after_an_error_answer_fails_the_call() -> None:
    """Only the error answer is sent once; a server that re-asks gets a local error with the handler's cause."""
    from mcpsync.client.client import Client

    calls: List[str] = []

    class FakeSession:
        forked = False

        def request(self, method: str, params: Dict[str, Any], **_: Any) -> Dict[str, Any]:
            calls.append(method)
            return {
                "resultType": "input_required",
                "inputRequests": {"k": {"method": "elicitation/create", "params": {"message": "?"}}},
            }

    c = Client(server_cmd(), elicitation_handler=_boom)
    c._session = FakeSession()  # type: ignore[assignment]  # noqa: SLF001
    c._state = "open"  # noqa: SLF001
    first = FakeSession().request("tools/call", {})
    with pytest.raises(mcpsync.MCPError) as info:
        c._complete("tools/call", {"name": "x"}, first, None, None, None, False)  # noqa: SLF001
    assert isinstance(info.value.__cause__, ValueError)
    assert "asked for the input again" in info.value.message
    assert calls == ["tools/call", "tools/call"]  # the first call, one retry with the error answer, then the failure
    c._state = "closed"  # noqa: SLF001
    c.notifications.close()


def test_handler_missing_is_still_local_in_the_modern_era() -> None:
    with mcpsync.connect(misbehaving_cmd("--era", "modern", "--ignore-client-capabilities")) as c:
        with pytest.raises(mcpsync.HandlerMissing):
            c.call_tool("elicit")
