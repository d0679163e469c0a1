"""Issue 9 defect 12: listen() streams fire the client's callbacks exactly like subscribe_resource().

``on_resource_updated``, ``on_notification``, the list_changed callbacks and the client's notification
queue see an event whichever API subscribed to it, once per event (when the implicit stream of
subscribe_resource()/list_changed callbacks carries the same event, the callbacks fire once).
Against the real example server in the 2026-07-28 era; ordering is proven by a marker sent through
the dispatch thread after the event (callbacks run in order there), never by sleeping.
"""

from __future__ import annotations

import threading
from typing import Any, Dict, List, Tuple

import mcpsync

from tests.conftest import server_cmd, wait_for
from mcpsync.client import Callbacks

URI = "example://hello"


def _drain_callbacks(c: mcpsync.Client) -> None:
    """Every callback queued so far has run once this returns (the dispatch thread runs them in order)."""
    done = threading.Event()
    c.session.dispatch(done.set)
    assert done.wait(10)


def _recorder() -> Tuple[Dict[str, List[Any]], Dict[str, Any]]:
    seen: Dict[str, List[Any]] = {"updated": [], "notes": [], "tools": []}
    callbacks: Dict[str, Any] = {
        "callbacks": Callbacks(on_resource_updated=seen["updated"].append),
        "on_notification": lambda n: seen["notes"].append(n.method),
    }
    return seen, callbacks


def _run(c: mcpsync.Client, seen: Dict[str, List[Any]]) -> None:
    c.call_tool("touch", {"uri": URI})
    assert wait_for(lambda: URI in seen["updated"], 10)
    _drain_callbacks(c)


def test_listen_fires_on_resource_updated_and_on_notification_like_subscribe_resource() -> None:
    results = {}
    for api in ("subscribe_resource", "listen"):
        seen, callbacks = _recorder()
        with mcpsync.connect(server_cmd("--era", "modern"), **callbacks) as c:
            if api == "listen":
                sub = c.listen(resource_uris=[URI])
                assert sub.wait_acknowledged(10)
            else:
                c.subscribe_resource(URI)
                implicit = c._modern._implicit  # noqa: SLF001
                assert implicit is not None and implicit.wait_acknowledged(10)
            _run(c, seen)
            queued = [n.method for n in c.notifications.drain()]
            if api == "listen":
                assert sub.get(timeout=10).method == "notifications/resources/updated"
                sub.close()
        results[api] = (seen["updated"], [m for m in seen["notes"] if m.startswith("notifications/resources")], queued)
    assert results["listen"] == results["subscribe_resource"]
    assert results["listen"][0] == [URI]
    assert "notifications/resources/updated" in results["listen"][2]


def test_listen_fires_list_changed_callbacks_once() -> None:
    changed: List[str] = []
    with mcpsync.connect(
        server_cmd("--era", "modern"), callbacks=Callbacks(on_tools_changed=lambda: changed.append("tools"))
    ) as c:
        implicit = c._modern._implicit  # noqa: SLF001  (on_tools_changed opens it)
        assert implicit is not None and implicit.wait_acknowledged(10)
        sub = c.listen(tools=True)
        assert sub.wait_acknowledged(10)
        c.call_tool("add_tool", {"name": "once"})
        assert sub.get(timeout=10).method == "notifications/tools/list_changed"  # the explicit stream got it
        assert wait_for(lambda: bool(changed), 10)
        _drain_callbacks(c)
        assert changed == ["tools"]  # both streams carried the event; the callback fired once
        sub.close()


def test_listen_alone_fires_list_changed_callback_without_an_implicit_stream() -> None:
    notes: List[str] = []
    with mcpsync.connect(server_cmd("--era", "modern"), on_notification=lambda n: notes.append(n.method)) as c:
        assert c._modern._implicit is None  # noqa: SLF001
        c.on_tools_changed = None
        sub = c.listen(tools=True)
        assert sub.wait_acknowledged(10)
        c.call_tool("add_tool", {"name": "alone"})
        assert sub.get(timeout=10).method == "notifications/tools/list_changed"
        _drain_callbacks(c)
        assert notes.count("notifications/tools/list_changed") == 1
        sub.close()
