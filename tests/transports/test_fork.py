"""Issue 9 defect 9 and issue 19 item 6: a client made before ``os.fork()`` never hangs in the child.

By default (``after_fork="reopen"``) the child's first use opens the client again in the child (a new
server process or HTTP connection of its own); the parent's connection and server are untouched. With
``after_fork="error"`` every use raises :class:`mcpsync.errors.ForkedClientError` (a ClientClosed) at once, naming
the fix (open clients after forking). Either way ``close()`` in the child releases only the child's copies
of pipes and sockets. A :class:`~mcpsync.Manager` reopens its servers in the child on next use. Tested with
a raw ``os.fork()`` and with multiprocessing's "fork" context, including a fork taken while another thread
is blocked inside a call (held there by an Event, not a sleep).
"""

from __future__ import annotations

import json
import multiprocessing
import os
import select
import sys
import threading
from typing import Any, Callable, Dict

import pytest

import mcpsync
from mcpsync.manager import Manager

from tests.conftest import server_cmd
from mcpsync.client import ClientOptions, HTTPOptions

pytestmark = [
    pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork() is POSIX only"),
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),  # 3.12+: fork() of a multi-threaded process
]

BOUND = 60.0  # a hang guard for reading the child's report, never a measurement


def in_child(body: Callable[[], Dict[str, Any]]) -> Dict[str, Any]:
    """Fork; run ``body`` in the child and return its JSON report (the child always exits with os._exit)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child
        code = 0
        try:
            os.close(r)
            try:
                result = body()
            except BaseException as exc:  # noqa: BLE001 - reported to the parent
                result = {"unexpected": "%s: %s" % (type(exc).__name__, exc)}
            os.write(w, json.dumps(result).encode())
        except BaseException:  # noqa: BLE001
            code = 1
        finally:
            os._exit(code)
    os.close(w)
    try:
        ready, _, _ = select.select([r], [], [], BOUND)
        assert ready, "the forked child did not report within %ss (it hangs)" % BOUND
        data = b""
        while True:
            chunk = os.read(r, 65536)
            if not chunk:
                break
            data += chunk
    finally:
        os.close(r)
        _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, status
    report: Dict[str, Any] = json.loads(data.decode())
    assert "unexpected" not in report, report
    return report


def _try(fn: Callable[[], Any]) -> Dict[str, Any]:
    try:
        value = fn()
    except mcpsync.MCPError as exc:
        return {
            "type": type(exc).__name__,
            "client_closed": isinstance(exc, mcpsync.ClientClosed),
            "message": str(exc),
            "parent_pid": getattr(exc, "parent_pid", None),
            "child_pid": getattr(exc, "child_pid", None),
        }
    return {"value": repr(value)}


def test_raw_fork_raises_forked_client_error_and_parent_keeps_working(era: str) -> None:
    with mcpsync.connect(server_cmd("--era", era), options=ClientOptions(after_fork="error")) as c:
        server_pid = c.call_tool("pid").text
        parent = os.getpid()

        def child() -> Dict[str, Any]:
            out = {
                "call": _try(lambda: c.call_tool("echo", {"message": "x"})),
                "ping": _try(c.ping),
                "list": _try(lambda: c.list_tools()),
                "connected": c.connected,
                "me": os.getpid(),
            }
            c.close()  # releases the child's copies only; must not stop the parent's server
            c.close()
            out["after_close"] = _try(c.ping)
            return out

        report = in_child(child)
        for key in ("call", "ping", "list", "after_close"):
            assert report[key]["type"] == "ForkedClientError", report
            assert report[key]["client_closed"] is True
            assert "after forking" in report[key]["message"]
            assert report[key]["parent_pid"] == parent and report[key]["child_pid"] == report["me"]
        assert report["connected"] is False
        # the parent's connection and server are untouched
        assert c.connected
        assert c.call_tool("echo", {"message": "still here"}).text == "still here"
        assert c.call_tool("pid").text == server_pid


def test_fork_while_a_call_is_in_flight() -> None:
    """A thread is held inside a call (the server is sending progress) at the moment of the fork: in the child
    that call fails at once (its answer goes to the parent), and a new call opens the client again there."""
    with mcpsync.connect(server_cmd()) as c:
        in_call = threading.Event()
        release = threading.Event()

        def on_progress(_: Any) -> None:
            in_call.set()
            release.wait(BOUND)  # the dispatch thread is held here: the call cannot finish meanwhile

        handle = c.call_tool_async("slow", {"seconds": 0.2, "steps": 2}, progress=on_progress)
        assert in_call.wait(BOUND)
        try:
            report = in_child(
                lambda: {
                    "result": _try(lambda: handle.result()),
                    "new": _try(lambda: c.call_tool("echo", {"message": "x"}).text),
                    "closed": _try(c.close),
                }
            )
        finally:
            release.set()
        assert report["result"]["type"] == "ForkedClientError"
        assert report["new"] == {"value": repr("x")}, report
        assert not handle.result().is_error  # the parent's call completes normally


def _mp_child(client: Any, conn: Any) -> None:
    report = {"connected": client.connected, "call": _try(lambda: client.call_tool("echo", {"message": "x"}).text)}
    report["connected_after"] = client.connected
    client.close()
    conn.send(report)
    conn.close()


@pytest.mark.parametrize("after_fork", ["reopen", "error"])
def test_multiprocessing_fork_context_holding_the_parents_client(after_fork: str) -> None:
    ctx = multiprocessing.get_context("fork")
    with mcpsync.connect(server_cmd(), options=ClientOptions(after_fork=after_fork)) as c:
        c.ping()
        parent_end, child_end = ctx.Pipe(duplex=False)
        p = ctx.Process(target=_mp_child, args=(c, child_end))
        p.start()
        try:
            assert parent_end.poll(BOUND), "the multiprocessing child hangs"
            report = parent_end.recv()
        finally:
            p.join(BOUND)
            parent_end.close()
            child_end.close()
        assert p.exitcode == 0
        assert report["connected"] is False
        if after_fork == "error":
            assert report["call"]["type"] == "ForkedClientError"
        else:
            assert report["call"] == {"value": repr("x")} and report["connected_after"] is True
        assert c.call_tool("echo", {"message": "ok"}).text == "ok"


def test_manager_reopens_its_servers_in_the_child() -> None:
    with Manager({"ex": {"command": server_cmd()}}) as mgr:
        parent_server = mgr.call_tool("ex_pid").text

        def child() -> Dict[str, Any]:
            try:
                text = mgr.call_tool("ex_pid").text  # transparently reconnected in this process
                echo = mgr.call_tool("ex_echo", {"message": "from the child"}).text
                status = mgr.status("ex").status
            finally:
                mgr.close()  # stops the child's own server
            return {"pid": text, "echo": echo, "status": status}

        report = in_child(child)
        assert report["echo"] == "from the child"
        assert report["status"] == "connected"
        assert report["pid"] != parent_server  # a server of the child's own
        assert mgr.call_tool("ex_pid").text == parent_server  # the parent's connection is untouched


def test_a_client_constructed_before_the_fork_but_opened_after_works() -> None:
    c = mcpsync.Client(server_cmd())

    def child() -> Dict[str, Any]:
        with c:
            return {"echo": c.call_tool("echo", {"message": "opened in the child"}).text}

    assert in_child(child) == {"echo": "opened in the child"}


if sys.platform.startswith("linux"):

    def test_the_child_releases_the_inherited_pipes() -> None:
        """After the fork the child holds no copy of the server's stdin: the parent's close is not delayed."""
        with mcpsync.connect(server_cmd()) as c:
            proc = c.transport.process  # type: ignore[attr-defined]
            stdin_fd = proc.stdin.fileno()
            target = os.readlink("/proc/self/fd/%d" % stdin_fd)

            def child() -> Dict[str, Any]:
                held = []
                for fd in os.listdir("/proc/self/fd"):
                    try:
                        if os.readlink("/proc/self/fd/%s" % fd) == target:
                            held.append(fd)
                    except OSError:
                        pass
                return {"held": held}

            assert in_child(child) == {"held": []}


def test_listen_stream_and_notification_queue_end_in_the_child() -> None:
    with mcpsync.connect(server_cmd("--era", "modern"), options=ClientOptions(after_fork="error")) as c:
        sub = c.listen(tools=True)
        assert sub.wait_acknowledged(BOUND)

        def child() -> Dict[str, Any]:
            events = list(sub)  # ends at once: the stream is the parent's
            list(c.notifications)  # ends too (whatever was already queued is returned)
            return {"events": len(events), "ended": sub.ended.is_set()}

        assert in_child(child) == {"events": 0, "ended": True}
        c.call_tool("add_tool", {"name": "after_fork"})
        assert sub.get(timeout=BOUND).method == "notifications/tools/list_changed"  # the parent's stream still works
        sub.close()


def test_http_client_in_a_forked_child_closes_only_its_copies_of_the_sockets() -> None:
    """The child's copies of the pooled sockets are closed (nothing held open on the child's side);
    nothing is shut down, so the parent's connections, session and GET stream keep working."""
    from tests.peers.httpserver import MCPTestServer

    def sockets_to(port: int) -> int:
        """This process's TCP sockets whose remote end is ``port`` (from /proc: fd inodes x net/tcp)."""
        inodes = set()
        for fd in os.listdir("/proc/self/fd"):
            try:
                link = os.readlink("/proc/self/fd/" + fd)
            except OSError:
                continue
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
        count = 0
        with open("/proc/self/net/tcp") as f:
            for line in f.readlines()[1:]:
                fields = line.split()
                if int(fields[2].split(":")[1], 16) == port and fields[9] in inodes:
                    count += 1
        return count

    if not os.path.exists("/proc/self/net/tcp"):
        pytest.skip("needs Linux's /proc to count sockets")
    with MCPTestServer(era="legacy") as srv:
        with mcpsync.connect(
            srv.url, http=HTTPOptions(transport="http"), options=ClientOptions(after_fork="error"), timeout=20
        ) as c:
            assert c.call_tool("echo", {"message": "a"}).text == "a"
            before = sockets_to(srv.port)
            assert before >= 1

            def child() -> Dict[str, Any]:
                out = {"call": _try(lambda: c.call_tool("echo", {"message": "x"}))}
                c.close()
                out["sockets"] = sockets_to(srv.port)
                return out

            report = in_child(child)
            assert report["call"]["type"] == "ForkedClientError"
            assert report["sockets"] == 0, report
            assert c.call_tool("echo", {"message": "still here"}).text == "still here"
            assert sockets_to(srv.port) >= 1
            assert len(srv.records("DELETE")) == 0  # the child never ended the parent's session


# ---------------------------------------------------------------------------- issue 19 item 6: reopen in the child


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_a_stdio_client_opened_before_the_fork_reopens_in_the_child(era: str) -> None:
    """The gunicorn --preload shape: a module-level client opened in the master, used in a worker."""
    with mcpsync.connect(server_cmd("--era", era)) as c:
        parent_server = c.call_tool("pid").text

        def child() -> Dict[str, Any]:
            out: Dict[str, Any] = {"connected_before": c.connected}
            out["pid"] = c.call_tool("pid").text  # opens again, in this process: a server of the child's own
            out["echo"] = c.call_tool("echo", {"message": "from the child"}).text
            out["tools"] = len(c.list_tools())
            out["era"] = c.era
            out["connected"] = c.connected
            c.close()  # stops the child's own server only
            out["after_close"] = _try(c.ping)
            return out

        report = in_child(child)
        assert report["connected_before"] is False and report["connected"] is True
        assert report["echo"] == "from the child" and report["tools"] > 3 and report["era"] == era
        assert report["pid"] != parent_server
        assert report["after_close"]["type"] == "ClientClosed"  # closed in the child: never reopened again
        assert c.call_tool("pid").text == parent_server  # the parent's connection and server are untouched
        assert c.call_tool("echo", {"message": "parent"}).text == "parent"


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_an_http_client_opened_before_the_fork_reopens_in_the_child(era: str) -> None:
    from tests.peers.httpserver import MCPTestServer

    with MCPTestServer(era=era) as srv:
        with mcpsync.connect(srv.url, timeout=30) as c:
            assert c.call_tool("echo", {"message": "a"}).text == "a"
            sessions_before = len(srv.records("DELETE"))

            def child() -> Dict[str, Any]:
                out = {"echo": c.call_tool("echo", {"message": "child"}).text, "era": c.era}
                c.close()
                return out

            report = in_child(child)
            assert report == {"echo": "child", "era": era}
            assert c.call_tool("echo", {"message": "still here"}).text == "still here"
            if era == "legacy":  # the child ended its own session only (one DELETE), never the parent's
                assert len(srv.records("DELETE")) == sessions_before + 1


def test_threads_racing_the_first_use_in_the_child_reopen_once() -> None:
    """Eight threads of the child race their first call (held at a barrier): one open, one new server."""
    with mcpsync.connect(server_cmd()) as c:
        parent_server = c.call_tool("pid").text

        def child() -> Dict[str, Any]:
            barrier = threading.Barrier(8)
            pids: Dict[int, str] = {}

            def use(i: int) -> None:
                barrier.wait(BOUND)
                pids[i] = c.call_tool("pid").text

            threads = [threading.Thread(target=use, args=(i,)) for i in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(BOUND)
            opened = c._open_attempts  # noqa: SLF001 - the number of opens this process ran
            c.close()
            return {"pids": sorted(set(pids.values())), "calls": len(pids), "opens": opened}

        report = in_child(child)
        assert report["calls"] == 8 and report["opens"] == 1, report
        assert len(report["pids"]) == 1 and report["pids"][0] != parent_server


def test_a_lazy_client_never_used_before_the_fork_opens_in_each_process() -> None:
    c = mcpsync.Client(server_cmd(), options=ClientOptions(lazy=True))
    try:
        report = in_child(lambda: {"echo": c.call_tool("echo", {"message": "child"}).text, "closed": _try(c.close)})
        assert report["echo"] == "child"
        assert c.call_tool("echo", {"message": "parent"}).text == "parent"
    finally:
        c.close()


def test_a_client_built_on_a_transport_object_cannot_reopen_and_says_so() -> None:
    """A Transport given as the target is the parent's (already started): in the child it is an error."""
    from mcpsync.transports.stdio import StdioTransport

    with mcpsync.connect(StdioTransport(server_cmd())) as c:
        report = in_child(lambda: {"call": _try(lambda: c.call_tool("echo", {"message": "x"}))})
        assert report["call"]["type"] == "ForkedClientError", report
        assert c.call_tool("echo", {"message": "parent"}).text == "parent"
