"""The 2026-07-28 era: negotiation edge cases, input rounds, listen, caching, tasks."""

from __future__ import annotations

import threading

import pytest

import mcpsync

from tests.conftest import misbehaving_cmd, server_cmd, wait_for
from mcpsync.client import Callbacks, ClientOptions, ServerMemory


@pytest.mark.parametrize(
    "flags,era",
    [
        (["--era", "auto"], "modern"),
        (["--era", "modern"], "modern"),
        (["--era", "legacy"], "legacy"),  # discover -> -32601
        (["--era", "legacy", "--discover", "garbage"], "legacy"),
        (["--era", "legacy", "--discover", "error"], "legacy"),
        (["--era", "auto", "--reject-version-once"], "modern"),  # -32022 then retry
    ],
)
def test_negotiation(flags, era) -> None:  # type: ignore[no-untyped-def]
    misbehaves = "--discover" in flags or "--reject-version-once" in flags
    with mcpsync.connect((misbehaving_cmd if misbehaves else server_cmd)(*flags)) as c:
        assert c.era == era
        assert c.call_tool("echo", {"message": "ok"}).text == "ok"


def test_discover_never_answered_falls_back_after_probe_timeout() -> None:
    with mcpsync.connect(
        misbehaving_cmd("--era", "legacy", "--discover", "never"), options=ClientOptions(probe_timeout=0.5)
    ) as c:
        assert c.era == "legacy"


def test_verdict_is_cached_per_command() -> None:
    cmd = misbehaving_cmd("--era", "legacy", "--discover", "never")
    memory = ServerMemory()  # shared by the two clients (as a Manager's clients share its memory)
    with mcpsync.connect(cmd, options=ClientOptions(probe_timeout=0.5, memory=memory)) as c:
        assert c.era == "legacy"
    assert memory.era(("cmd", tuple(cmd), None)) == "2025-11-25"
    # the second connect skips the probe (a probe would now cost a long timeout)
    with mcpsync.connect(cmd, options=ClientOptions(probe_timeout=30, memory=memory)) as c:
        assert c.era == "legacy"


def test_unsupported_initialize_version_is_an_error() -> None:
    with pytest.raises(mcpsync.errors.UnsupportedProtocolVersion):
        mcpsync.connect(misbehaving_cmd("--era", "legacy", "--version", "1999-01-01"))


def test_envelope_on_every_request() -> None:
    with mcpsync.connect(
        server_cmd("--era", "modern"),
        options=ClientOptions(log_level="info", trace_context={"traceparent": "00-ab-cd-01"}),
    ) as c:
        stamped = c._stamp({"x": 1})  # noqa: SLF001
        meta = stamped["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "mcpsync"
        assert "io.modelcontextprotocol/clientCapabilities" in meta
        assert meta["io.modelcontextprotocol/logLevel"] == "info"
        assert meta["traceparent"] == "00-ab-cd-01"


def test_mrtr_rounds_and_limit() -> None:
    answers = []

    def elicit(req):  # type: ignore[no-untyped-def]
        answers.append(req.message)
        return req.accept({"name": "n", "count": 1, "score": 0.5, "ok": True, "color": "red"})

    with mcpsync.connect(server_cmd("--era", "modern", "--mrtr-rounds", "3"), sampling_handler=lambda r: "s") as c:
        assert c.call_tool("sample", {"prompt": "p"}).text
    with mcpsync.connect(server_cmd("--era", "modern", "--mrtr-rounds", "11"), sampling_handler=lambda r: "s") as c:
        with pytest.raises(mcpsync.ProtocolError) as info:
            c.call_tool("sample", {"prompt": "p"})
        assert "more than 10" in str(info.value)


def test_listen_stream_and_refusal() -> None:
    with mcpsync.connect(server_cmd("--era", "modern", "--refuse-resource-subscriptions")) as c:
        sub = c.listen(tools=True, resource_uris=["example://hello"])
        assert sub.wait_acknowledged(5)
        assert sub.refused == {"resourceSubscriptions": ["example://hello"]}
        c.call_tool("add_tool", {"name": "via_listen"})
        note = sub.get(timeout=5)
        assert note.method == "notifications/tools/list_changed"
        sub.close()
        assert sub.ended.wait(5)


def test_listen_re_opens_when_the_server_ends_it() -> None:
    with mcpsync.connect(server_cmd("--era", "modern")) as c:
        sub = c.listen(tools=True)
        assert sub.wait_acknowledged(5)
        first = sub.request_id
        sub.acknowledged.clear()
        c.call_tool("end_listens")
        # a graceful end (resultType complete) ends it; an error end re-listens: accept either
        assert wait_for(lambda: sub.ended.is_set() or (sub.acknowledged.is_set() and sub.request_id != first), 10)
        sub.close()


def test_legacy_callbacks_ride_listen_in_modern_era() -> None:
    changed = threading.Event()
    updated = []
    with mcpsync.connect(
        server_cmd("--era", "modern"),
        callbacks=Callbacks(on_tools_changed=changed.set, on_resource_updated=updated.append),
    ) as c:
        c.subscribe_resource("example://hello")
        assert wait_for(lambda: c._modern._implicit is not None and c._modern._implicit.acknowledged.is_set())  # noqa: SLF001
        c.call_tool("add_tool", {"name": "n2"})
        assert changed.wait(5)
        c.call_tool("touch", {"uri": "example://hello"})
        assert wait_for(lambda: "example://hello" in updated)


def test_cache_honours_ttl_and_eviction() -> None:
    with mcpsync.connect(server_cmd("--era", "modern", "--ttl-ms", "60000")) as c:
        first = c.list_tools()
        pending_before = c.session._ids.next()  # noqa: SLF001
        second = c.list_tools()  # served from the cache: no request
        assert c.session._ids.next() == pending_before + 1  # noqa: SLF001
        assert [t.name for t in first] == [t.name for t in second]
        c.call_tool("add_tool", {"name": "cached_out"})
        c.clear_cache()
        assert "cached_out" in {t.name for t in c.list_tools()}
    with mcpsync.connect(server_cmd("--era", "modern", "--ttl-ms", "60000"), options=ClientOptions(cache=False)) as c:
        c.list_tools()
        n = c.session._ids.next()  # noqa: SLF001
        c.list_tools()
        assert c.session._ids.next() > n + 1  # noqa: SLF001


def test_task_extension_is_transparent_and_resumable() -> None:
    statuses = []
    with mcpsync.connect(server_cmd("--era", "modern", "--task-poll-interval-ms", "50")) as c:
        result = c.call_tool("task_work", {"seconds": 0.3})
        assert "task done" in result.text
        handle = mcpsync.tasks.start_task(c, "task_work", {"seconds": 0.3}, on_status=statuses.append)
        assert isinstance(handle, mcpsync.tasks.TaskHandle)
        again = mcpsync.tasks.resume_task(c, handle.task_id)
        assert "task done" in again.result(timeout=30).text
        slow = mcpsync.tasks.start_task(c, "task_work", {"seconds": 30})
        slow.cancel()
        with pytest.raises(mcpsync.TaskFailed):
            slow.result(timeout=30)


def test_task_input_required_via_tasks_update() -> None:
    with mcpsync.connect(
        server_cmd("--era", "modern", "--task-poll-interval-ms", "50"),
        elicitation_handler=lambda r: r.accept(),
    ) as c:
        assert "accept" in c.call_tool("task_work", {"seconds": 0.2, "ask": True}).text


def test_legacy_experimental_tasks() -> None:
    with mcpsync.connect(server_cmd("--era", "legacy", "--task-poll-interval-ms", "50"), protocol="legacy") as c:
        handle = mcpsync.tasks.start_task(c, "task_work", {"seconds": 0.2})
        assert isinstance(handle, mcpsync.tasks.TaskHandle) and handle.style == "experimental"
        assert "task done" in handle.result(timeout=30).text


def test_a_kept_verdict_that_no_longer_holds_is_forgotten_and_probed_again() -> None:
    """The server changed era since a client sharing the memory connected: the kept handshake verdict fails,
    the memory forgets it, and the open probes and ends modern."""
    cmd = server_cmd("--era", "modern")
    key = ("cmd", tuple(cmd), None)
    memory = ServerMemory()
    memory.remember_era(key, "2025-11-25")  # what an earlier connection learned (the server spoke it then)
    with mcpsync.connect(cmd, options=ClientOptions(memory=memory)) as c:
        assert c.era == "modern"
        assert c.call_tool("echo", {"message": "ok"}).text == "ok"
    assert memory.era(key) == c.protocol_version
