"""The login in a real browser: headless Chromium opens the authorization URL, the test
authorization server approves (or denies) and redirects to the callback server, the page
renders, and the login completes (or fails).

Needs Debian's ``chromium`` (``apt-get install -y chromium``). Skipped when absent, except
under CI (``CI=true``), where its absence is a failure.
"""

from __future__ import annotations

import subprocess

import pytest
import requests

from mcpsync.errors import OAuthError
from tests.peers.authserver import make_manager, no_auth_leaks, srv, store  # noqa: F401
from tests.peers.cdp import FLAGS, find_chromium

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("no_auth_leaks")]

@pytest.fixture
def chromium() -> str:
    return find_chromium()


class Browser:
    """``open_browser`` for the manager: one headless Chromium run per URL, DOM on stdout + a screenshot."""

    def __init__(self, chromium, tmp_path):
        self.chromium = chromium
        self.tmp_path = tmp_path
        self.procs = []
        self.screenshot = str(tmp_path / "page.png")

    def __call__(self, url):
        profile = self.tmp_path / ("profile%d" % len(self.procs))
        cmd = (
            [self.chromium]
            + FLAGS
            + ["--user-data-dir=%s" % profile, "--dump-dom", "--screenshot=%s" % self.screenshot, url]
        )
        self.procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True))
        return True

    def dom(self):
        out, _ = self.procs[-1].communicate(timeout=120)
        return out

    def close(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()


@pytest.fixture
def browser(chromium, tmp_path):
    b = Browser(chromium, tmp_path)
    yield b
    b.close()


def test_real_browser_login_success_page(srv, make_manager, browser):
    m = make_manager(authorize_handler=None, open_browser=browser)
    m.add_server("srv", srv.server_url)
    m.authenticate("srv", timeout=120)
    dom = browser.dom()
    assert "Authorization successful" in dom and "srv" in dom
    with open(browser.screenshot, "rb") as fh:
        assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    assert m.get_auth_status("srv") == "authenticated"
    with requests.Session() as session:
        with session.get(srv.server_url, auth=m.auth("srv"), timeout=30) as resp:
            assert resp.status_code == 200


def test_real_browser_login_error_page(srv, make_manager, browser):
    srv.approve = "access_denied"
    srv.error_description = "Denied <by> policy"
    m = make_manager(authorize_handler=None, open_browser=browser)
    m.add_server("srv", srv.server_url)
    with pytest.raises(OAuthError) as info:
        m.authenticate("srv", timeout=120)
    assert info.value.error == "access_denied"
    dom = browser.dom()
    assert "Authorization failed" in dom and "Denied &lt;by&gt; policy" in dom
    with open(browser.screenshot, "rb") as fh:
        assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    assert m.get_auth_status("srv") == "not_authenticated"


@pytest.mark.parametrize(
    "query, heading",
    [("code=x", "Missing state parameter"), ("code=x&state=nobody-waits", "Invalid state")],
)
def test_real_browser_bad_callback_pages(store, browser, query, heading):
    """The 400 pages render in a real browser as the same styled page, saying what to do."""
    from mcpsync.auth import callback
    from tests.peers.authserver import free_port

    port = free_port()
    with callback.expect_callback("the-real-state", port=port, store=store):
        browser("http://127.0.0.1:%d%s?%s" % (port, callback.DEFAULT_CALLBACK_PATH, query))
        dom = browser.dom()
    assert heading in dom and "What to do:" in dom and "start the login again" in dom.lower()
    assert 'id="mcpsync-title"' in dom and "#1a1a2e" in dom
    with open(browser.screenshot, "rb") as fh:
        assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
