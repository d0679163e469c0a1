"""The shared toolkit (mcpsync.integrations.McpToolkit) follows the server's tool list, honours or refuses its
naming options, and caps a call's whole duration: against the bundled example server (whose ``add_tool`` adds
a tool at run time and sends ``notifications/tools/list_changed``), over a Client in both eras and a Manager.
No agent framework needed (tests/integrations/ drives the same through each framework's agent loop)."""

from __future__ import annotations

import sys
import threading
from typing import Any, Dict, Iterator, List

import pytest

import mcpsync
from mcpsync.errors import ConfigError
from mcpsync.integrations import McpToolkit
from mcpsync.integrations.core import toolkit_of

EXAMPLE = [sys.executable, "-m", "mcpsync.example_server"]


def _config(*names: str) -> Dict[str, Any]:
    return {"mcpServers": {n: {"command": EXAMPLE[0], "args": EXAMPLE[1:]} for n in names}}


def _wait_tools_changed(client: mcpsync.Client) -> None:
    """Block until the client routed a tools/list_changed (its notification queue gets it last)."""
    while True:
        note = client.notifications.get(timeout=30)
        if note.method == "notifications/tools/list_changed":
            return


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_client_toolkit_follows_list_changed(era: str) -> None:
    with mcpsync.connect(EXAMPLE, protocol=era) as client:
        kit = McpToolkit(client)
        first = {t.name: t for t in kit.tools()}
        assert "dyn_one" not in first and not kit.stale
        assert kit.call("add_tool", {"name": "dyn_one"}).text == "added tool dyn_one"
        _wait_tools_changed(client)  # in the modern era, through the listen stream the toolkit opened
        assert kit.stale
        second = {t.name: t for t in kit.tools()}
        assert "dyn_one" in second
        assert second["echo"] is first["echo"]  # unchanged tools keep their objects (and built models)
        assert kit.call("dyn_one", {"message": "hi"}).text == "dyn_one: hi"
        assert not kit.stale and [t.name for t in kit.tools()] == sorted(second)
        kit.close()


def test_follow_false_lists_once() -> None:
    with mcpsync.connect(EXAMPLE, protocol="legacy") as client:  # the handshake era: list_changed comes anyway
        kit = McpToolkit(client, follow=False)
        kit.tools()
        kit.call("add_tool", {"name": "dyn_two"})
        _wait_tools_changed(client)
        assert "dyn_two" not in {t.name for t in kit.tools()}
        assert "dyn_two" in {t.name for t in kit.tools(refresh=True)}


def test_a_change_while_listing_is_not_lost() -> None:
    """The change count is read before listing: a list_changed that lands while the toolkit lists (here:
    forced at that very point) makes the listing stale at once."""
    with mcpsync.connect(EXAMPLE) as client:
        kit = McpToolkit(client)
        real_list = kit._list
        armed = [True]

        def list_then_change() -> List[Any]:
            listed = real_list()
            if armed and armed.pop():
                client.call_tool("add_tool", {"name": "late"})  # list_changed arrives before this returns
            return listed

        kit._list = list_then_change  # type: ignore[method-assign]
        assert "late" not in {t.name for t in kit.tools()}
        assert kit.stale
        assert "late" in {t.name for t in kit.tools()}


@pytest.fixture
def manager() -> Iterator[mcpsync.Manager]:
    with mcpsync.Manager(_config("one", "two")) as m:
        yield m


def test_a_manager_toolkit_follows_list_changed(manager: mcpsync.Manager) -> None:
    kit = McpToolkit(manager)
    assert "one_dyn_three" not in {t.name for t in kit.tools()}
    refreshed = threading.Event()
    remove = manager.on("tools_changed", lambda server: refreshed.set())  # runs after the toolkit's listener
    try:
        assert kit.call("one_add_tool", {"name": "dyn_three"}).text == "added tool dyn_three"
        assert refreshed.wait(30)
        assert kit.stale
        assert kit.call("one_dyn_three", {"message": "x"}).text == "dyn_three: x"
        assert "one_dyn_three" in {t.name for t in kit.tools()}
    finally:
        remove()
        kit.close()


def test_prefix_false_on_a_manager_gives_the_tools_own_names(manager: mcpsync.Manager) -> None:
    kit = McpToolkit(manager, prefix=False)
    names = {t.name: t for t in kit.tools()}
    # both servers offer "add": one keeps the plain name, the other a stable hash suffix; both route right
    adds = sorted(n for n in names if n == "add" or n.startswith("add_") and n not in ("add_tool", "add_prompt"))
    adds = [n for n in adds if names[n].tool.name == "add"]
    assert adds[0] == "add" and len(adds) == 2 and {names[n].server for n in adds} == {"one", "two"}
    for name in adds:
        assert kit.call(name, {"a": 2, "b": 3}).text == "5"
    only_one = McpToolkit(manager, server="two", prefix=False)
    assert {"add", "echo"} <= {t.name for t in only_one.tools()}
    assert only_one.get("add").server == "two" and only_one.call("echo", {"message": "m"}).text == "m"
    assert "one_add" in {t.name for t in McpToolkit(manager).tools()}  # the default stays prefixed


def test_prefix_true_on_a_client_and_refused_options() -> None:
    with mcpsync.connect(EXAMPLE, name="ex") as client:
        assert "ex_add" in {t.name for t in McpToolkit(client, prefix=True).tools()}
        assert McpToolkit(client, prefix=True).call("ex_add", {"a": 2, "b": 3}).text == "5"
        with pytest.raises(ConfigError, match="names a server of a Manager"):
            McpToolkit(client, server="other")
        with pytest.raises(ConfigError, match="prefix must be"):
            McpToolkit(client, prefix="yes")  # type: ignore[arg-type]
        with pytest.raises(ConfigError, match="unknown tool option prefixed"):
            toolkit_of(client, None, {"prefixed": False})


@pytest.mark.parametrize("over", ["client", "manager"])
def test_max_total_timeout_caps_a_call_that_keeps_reporting_progress(over: str) -> None:
    """``slow`` reports progress every 0.1 s for 30 s: the 2 s idle timeout never fires, the total cap does."""
    arguments = {"seconds": 30, "steps": 300}
    if over == "client":
        with mcpsync.connect(EXAMPLE) as client:
            rendered = McpToolkit(client, timeout=2, max_total_timeout=0.5).call("slow", arguments)
    else:
        with mcpsync.Manager(_config("one")) as m:
            rendered = McpToolkit(m, timeout=2, max_total_timeout=0.5).call("one_slow", arguments)
    assert rendered.is_error and "timed out" in rendered.text, rendered.text


def test_many_toolkits_over_one_client_share_its_one_listen_stream() -> None:
    """2026-07-28: the toolkits ask the Client to follow (its own implicit listen stream), not one stream each."""
    with mcpsync.connect(EXAMPLE, protocol="modern") as client:
        kits = [McpToolkit(client) for _ in range(5)]
        for kit in kits:
            kit.tools()
        assert len(client._modern.subs) == 1
        kits[0].call("add_tool", {"name": "dyn_many"})
        _wait_tools_changed(client)
        assert all("dyn_many" in {t.name for t in kit.tools()} for kit in kits)


def test_a_dropped_manager_toolkit_stops_listening(manager: mcpsync.Manager) -> None:
    import gc

    listeners = manager._events._listeners
    before = {e: len(v) for e, v in listeners.items()}
    kit = McpToolkit(manager)
    kit.tools()
    assert len(listeners["tools_changed"]) == before["tools_changed"] + 1
    del kit
    gc.collect()  # the toolkit and its tools form a cycle
    assert {e: len(v) for e, v in listeners.items()} == before
    closed = McpToolkit(manager)
    closed.close()
    assert {e: len(v) for e, v in listeners.items()} == before


HARD = [sys.executable, str(__import__("pathlib").Path(__file__).parent / "hardserver.py")]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_server_whose_listing_breaks_after_a_change_keeps_the_previous_list(era: str, caplog: Any) -> None:
    """The server says its list changed and then answers every tools/list with an error: the toolkit keeps the
    tools it had (and says so in the log), tries again on each read, and a forced refresh raises."""
    with mcpsync.connect(HARD, protocol=era) as client:
        kit = McpToolkit(client)
        before = [t.name for t in kit.tools()]
        assert kit.call("break_listing", {"name": "never_seen"}).text == "listing broken after adding never_seen"
        if era == "modern":
            _wait_tools_changed(client)
        assert kit.stale
        assert [t.name for t in kit.tools()] == before and "keeping the previous list" in caplog.text
        assert kit.stale  # tried again on the next read
        assert kit.call("echo", {"message": "still"}).text == "still"
        with pytest.raises(mcpsync.MCPError, match="broken on purpose"):
            kit.tools(refresh=True)
