"""The loopback callback server: answers, pages, lifecycle, and the busy-port cases."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
import threading

import pytest
import requests

from mcpsync.auth import callback, pages
from mcpsync.auth.store import CredentialStore
from mcpsync.errors import CallbackError, OAuthError
from tests.peers.authserver import free_port

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PATH = "/mcp/oauth/callback"


def mcpsync_threads():
    return [t.name for t in threading.enumerate() if t.name.startswith("mcpsync-")]


@pytest.fixture(autouse=True)
def no_leftover_threads():
    yield
    assert callback.running_servers() == []
    assert mcpsync_threads() == []


@pytest.fixture
def store(tmp_path):
    return CredentialStore(str(tmp_path / "mcp-auth.json"))


def get(port, query, path=PATH):
    with requests.get("http://127.0.0.1:%d%s" % (port, path), params=query, timeout=10) as resp:
        return resp.status_code, resp.text, resp.headers


def test_success_page_and_delivery(store):
    port = free_port()
    with callback.expect_callback("s1", port=port, store=store, label="linear") as waiter:
        assert "mcpsync-oauth-callback" in mcpsync_threads()
        status, text, headers = get(port, {"code": "C0DE", "state": "s1", "iss": "https://as"})
        assert status == 200 and "Authorization successful" in text and "#4ade80" in text
        assert "linear" in text and "window.close" in text and "2000" in text
        assert headers["X-MCPSync-Callback"] == "1"
        result = waiter.result(5)
        assert (result.code, result.state, result.iss) == ("C0DE", "s1", "https://as")
        assert "C0DE" not in repr(result)
    assert callback.running_servers() == []


def test_missing_and_unknown_state(store):
    port = free_port()
    with callback.expect_callback("s1", port=port, store=store):
        status, text, headers = get(port, {"code": "x"})
        assert status == 400 and "Missing state parameter" in text and "What to do:" in text
        assert headers["Content-Type"].startswith("text/html") and "#1a1a2e" in text  # the same styled page
        status, text, _ = get(port, {"code": "x", "state": "nope"})
        assert status == 400 and "Invalid state" in text and "start the login again" in text.lower()
        assert "window.close" not in text  # stays open: there is something to read


def test_error_parameter_fails_the_login_and_shows_escaped_page(store):
    port = free_port()
    with callback.expect_callback("s1", port=port, store=store) as waiter:
        status, text, _ = get(
            port, {"state": "s1", "error": "access_denied", "error_description": "<script>alert(1)</script>"}
        )
        assert status == 200 and "Authorization failed" in text and "#f87171" in text
        assert "<script>alert(1)</script>" not in text and "&lt;script&gt;" in text
        assert "monospace" in text
        with pytest.raises(OAuthError) as info:
            waiter.result(5)
        assert info.value.error == "access_denied" and "<script>" in info.value.description


def test_pages_escape_everything():
    assert "<b>" not in pages.success_page("<b>x</b>")
    page = pages.error_page("e&<", "d\"'>")
    assert "e&amp;&lt;" in page and "&quot;" in page


def test_timeout_and_cancel(store):
    port = free_port()
    with callback.expect_callback("s1", port=port, store=store) as waiter:
        with pytest.raises(CallbackError, match="timed out"):
            waiter.result(0.3)
    with callback.expect_callback("s2", port=port, store=store) as waiter:
        waiter.cancel("stop")
        with pytest.raises(CallbackError, match="stop"):
            waiter.result(5)


def test_two_logins_share_one_server_until_both_finish(store):
    port = free_port()
    a = callback.expect_callback("a", port=port, store=store)
    b = callback.expect_callback("b", port=port, store=store)
    assert callback.running_servers() == [("127.0.0.1", port)]
    a.close()
    assert callback.running_servers() == [("127.0.0.1", port)]
    get(port, {"state": "b", "code": "cb"})
    assert b.result(5).code == "cb"
    b.close()
    assert callback.running_servers() == []


def test_foreign_listener_fails_at_once_naming_the_port(store):
    port = free_port()
    foreign = socket.socket()
    foreign.bind(("127.0.0.1", port))
    foreign.listen(5)
    try:
        with pytest.raises(CallbackError) as info:
            callback.expect_callback("s", port=port, store=store)
        message = str(info.value)
        assert str(port) in message and "callback_port" in message and "MCPSYNC_OAUTH_CALLBACK_PORT" in message
        assert "state" not in message.lower()
    finally:
        foreign.close()


def test_foreign_http_server_is_not_mistaken_for_mcpsync(store):
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class H(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        def log_message(self, *a):
            pass

    srv = HTTPServer(("127.0.0.1", 0), H)
    t = threading.Thread(target=srv.serve_forever, args=(0.1,))
    t.start()
    try:
        with pytest.raises(CallbackError, match="another program"):
            callback.expect_callback("s", port=srv.server_address[1], store=store)
    finally:
        srv.shutdown()
        srv.server_close()
        t.join()


_HOLDER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[3])
    from mcpsync.auth import callback
    from mcpsync.auth.store import CredentialStore
    store = CredentialStore(sys.argv[1])
    store.update_oauth_state("holder", "holder-state")
    with callback.expect_callback("holder-state", port=int(sys.argv[2]), store=store) as w:
        print("ready", flush=True)
        r = w.result(60)
        print("holder got", r.code, flush=True)
    """
)


def _start_holder(store, port):
    proc = subprocess.Popen(
        [sys.executable, "-c", _HOLDER, store.path, str(port), ROOT], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "ready"
    return proc


def test_port_held_by_another_mcpsync_process_still_completes(store):
    port = free_port()
    holder = _start_holder(store, port)
    try:
        store.update_oauth_state("mine", "my-state")
        with callback.expect_callback("my-state", port=port, store=store) as waiter:
            assert waiter.relayed
            status, text, _ = get(port, {"code": "MYCODE", "state": "my-state"})
            assert status == 200 and "Authorization successful" in text
            assert waiter.result(10).code == "MYCODE"
        # the holder still completes its own login
        get(port, {"code": "HC", "state": "holder-state"})
        assert holder.wait(20) == 0
        assert "holder got HC" in holder.stdout.read()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
        holder.stdout.close()


def test_waiter_takes_the_port_over_when_the_holder_leaves(store):
    port = free_port()
    holder = _start_holder(store, port)
    try:
        store.update_oauth_state("mine", "my-state")
        with callback.expect_callback("my-state", port=port, store=store) as waiter:
            assert waiter.relayed
            get(port, {"code": "HC", "state": "holder-state"})
            assert holder.wait(20) == 0
            # the holder is gone; our next wait iteration binds the port itself
            got = {}

            def browser():
                import time

                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    try:
                        got["r"] = get(port, {"code": "LATE", "state": "my-state"})
                        if got["r"][0] == 200:
                            return
                    except requests.ConnectionError:
                        pass
                    time.sleep(0.1)

            t = threading.Thread(target=browser)
            t.start()
            assert waiter.result(20).code == "LATE"
            t.join()
    finally:
        if holder.poll() is None:
            holder.kill()
            holder.wait()
        holder.stdout.close()


def test_mcpsync_holder_with_another_store_is_reported(store, tmp_path):
    port = free_port()
    holder = _start_holder(CredentialStore(str(tmp_path / "other.json")), port)
    try:
        with pytest.raises(CallbackError, match="different credential store"):
            callback.expect_callback("x", port=port, store=store)
    finally:
        get(port, {"code": "HC", "state": "holder-state"})
        holder.wait(20)
        holder.stdout.close()
