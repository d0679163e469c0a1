"""examples/flask_input.py in a real browser: a tool call that needs confirmation shows the server's form,
the user fills it in and submits, the call resumes in that later request, and the result is shown.

Headless Chromium (Debian's package) drives the real Flask app over HTTP; the app talks to the bundled
example server in the 2026-07-28 era. Skipped without chromium, except under CI=true.
"""

from __future__ import annotations

import importlib.util
import json
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.peers.cdp import Chromium, find_chromium

pytestmark = pytest.mark.browser
pytest.importorskip("flask")

ROOT = Path(__file__).resolve().parents[2]


def _load_example() -> Any:
    spec = importlib.util.spec_from_file_location("flask_input_example", ROOT / "examples" / "flask_input.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def app_url() -> Iterator[str]:
    from werkzeug.serving import make_server

    app = _load_example().create_app(secret="browser-test-secret")
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, name="test-flask-input", daemon=True)
    thread.start()
    try:
        yield "http://127.0.0.1:%d" % server.server_port
    finally:
        server.shutdown()
        thread.join(10)
        app.extensions["mcpsync"].close()


class Page:
    """The browser's one tab, as these tests use it: load a page, click what submits a form, read the DOM."""

    def __init__(self, browser: Page) -> None:
        self.browser = browser

    def goto(self, url: str) -> None:
        self.browser.load(lambda: self.browser.open(url) if self.browser.session is None else self.evaluate(
            "location.href = %s" % json.dumps(url)))

    def evaluate(self, expression: str) -> Any:
        return self.browser.evaluate(expression)

    def submit_and_wait(self, expression: str) -> None:
        self.browser.load(lambda: self.evaluate(expression))

    def screenshot(self, path: Path) -> Path:
        self.browser.screenshot(str(path))
        return path


@pytest.fixture
def served_app() -> Iterator[Any]:
    """The example app in front of the example server over HTTP, so the test can count what reached it."""
    from werkzeug.serving import make_server

    from tests.peers.httpserver import MCPTestServer

    with MCPTestServer(era="modern") as mcp:
        app = _load_example().create_app(target=mcp.url, secret="browser-test-secret")
        server = make_server("127.0.0.1", 0, app, threaded=True)
        thread = threading.Thread(target=server.serve_forever, name="test-flask-input", daemon=True)
        thread.start()
        try:
            yield "http://127.0.0.1:%d" % server.server_port, mcp
        finally:
            server.shutdown()
            thread.join(10)
            app.extensions["mcpsync"].close()


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Page]:
    b = Chromium(find_chromium(), str(tmp_path / "profile"))
    try:
        yield Page(b)
    finally:
        b.close()


def _open(page: Page, url: str) -> Page:
    page.goto(url)
    return page


def _fill(page: Any, values: dict) -> None:
    page.evaluate(
        "(() => { const v = %s; for (const [k, x] of Object.entries(v)) {"
        " const el = document.querySelector('[name=\"f_' + k + '\"]');"
        " if (el.type === 'checkbox') el.checked = !!x; else el.value = x; } })()" % json.dumps(values)
    )


def test_confirm_in_the_browser_resumes_the_call(app_url: str, browser: Page, tmp_path: Path) -> None:
    page = _open(browser, app_url + "/")
    page.submit_and_wait("document.getElementById('order').click()")
    # the server's question, rendered from its schema
    assert page.evaluate("document.querySelector('.mcp-message').textContent") == "Confirm your order of 3 book(s)"
    names = page.evaluate("[...document.querySelectorAll('form.mcp-elicitation [name]')].map(e => e.name)")
    assert {"token", "key", "f_name", "f_age", "f_score", "f_subscribe", "f_color"} <= set(names)
    assert page.evaluate("document.querySelector('[name=f_name]').value") == "Ada"  # the schema's default
    _fill(page, {"name": "Grace", "age": "85", "subscribe": True, "color": "blue"})
    shot = page.screenshot(tmp_path / "form.png")
    assert shot.stat().st_size > 1000
    page.submit_and_wait("document.querySelector('button[value=accept]').click()")
    text = page.evaluate("document.getElementById('result').textContent")
    assert text.startswith("action: accept; content: ")
    content = json.loads(text.split("content: ", 1)[1])
    assert content == {"name": "Grace", "age": 85, "subscribe": True, "color": "blue"}


def test_invalid_answer_is_shown_again_with_the_error(app_url: str, browser: Page) -> None:
    page = _open(browser, app_url + "/")
    page.submit_and_wait("document.getElementById('order').click()")
    _fill(page, {"name": "Grace", "age": "151"})  # above the schema's maximum
    # form.submit() skips the browser's own checks: the server must catch it
    page.submit_and_wait("document.querySelector('form.mcp-elicitation').submit()")
    assert page.evaluate("document.querySelector('[data-field=age] .mcp-error') !== null")
    assert page.evaluate("document.querySelector('[name=f_name]').value") == "Grace"  # what the user typed stays
    _fill(page, {"age": "40"})
    page.submit_and_wait("document.querySelector('button[value=accept]').click()")
    assert '"age": 40' in page.evaluate("document.getElementById('result').textContent")


def test_decline_and_a_tampered_token(app_url: str, browser: Page) -> None:
    page = _open(browser, app_url + "/")
    page.submit_and_wait("document.getElementById('order').click()")
    _fill(page, {"age": "30"})
    page.evaluate("document.querySelector('[name=token]').value += 'x'")
    page.submit_and_wait("document.querySelector('button[value=accept]').click()")
    assert page.evaluate("document.title") == "Forged"  # reported as what it is, not as an expired form
    page.goto(app_url + "/")
    page.submit_and_wait("document.getElementById('order').click()")
    page.submit_and_wait("document.querySelector('button[value=decline]').click()")
    assert page.evaluate("document.getElementById('result').textContent") == "action: decline"


def test_the_same_form_posted_twice_completes_the_call_once(served_app: Any, browser: Page) -> None:
    url, mcp = served_app
    page = _open(browser, url + "/")
    page.submit_and_wait("document.getElementById('order').click()")
    form = page.evaluate("document.querySelector('form.mcp-elicitation').outerHTML")  # token and all
    _fill(page, {"name": "Ada", "age": "36"})
    page.submit_and_wait("document.querySelector('button[value=accept]').click()")
    assert '"name": "Ada"' in page.evaluate("document.getElementById('result').textContent")
    # the very same form, token included, posted again with another answer
    page.evaluate("document.body.insertAdjacentHTML('beforeend', %s)" % json.dumps(form))
    _fill(page, {"name": "Eve", "age": "36"})
    page.submit_and_wait("document.querySelector('button[value=accept]').click()")
    assert page.evaluate("document.title") == "Already answered"
    resumed = [
        r for r in mcp.records(rpc="tools/call") if "inputResponses" in ((r.body or {}).get("params") or {})
    ]
    assert len(resumed) == 1 and "Ada" in json.dumps(resumed[0].body) and "Eve" not in json.dumps(resumed[0].body)


def test_a_resubmitted_form_keeps_the_servers_order_and_shows_every_error(app_url: str, browser: Page) -> None:
    page = _open(browser, app_url + "/")
    page.submit_and_wait("document.getElementById('order').click()")
    fields = "[...document.querySelectorAll('form.mcp-elicitation [data-field]')].map(e => e.dataset.field)"
    assert page.evaluate(fields) == ["name", "age", "score", "subscribe", "color"]  # the server's order
    # a required field left empty, a fraction for an integer, a score above its maximum: all wrong at once
    _fill(page, {"name": "", "age": "3.5", "score": "2"})
    page.submit_and_wait("document.querySelector('form.mcp-elicitation').submit()")  # past the browser's checks
    # the form came back from its signed token: still in the server's order, not sorted (Age, Colour, Name...)
    assert page.evaluate(fields) == ["name", "age", "score", "subscribe", "color"]
    shown = page.evaluate(
        "Object.fromEntries([...document.querySelectorAll('[data-field]')]"
        ".filter(e => e.querySelector('.mcp-error'))"
        ".map(e => [e.dataset.field, e.querySelector('.mcp-error').textContent]))"
    )
    assert list(shown) == ["name", "age", "score"]
    assert shown["name"] == "required" and shown["age"] == "not a whole number"
    # the required field that failed is not refilled with the schema's default ("Ada")
    assert page.evaluate("document.querySelector('[name=f_name]').value") == ""
    _fill(page, {"name": "Grace", "age": "36", "score": "0.5"})
    page.submit_and_wait("document.querySelector('button[value=accept]').click()")
    content = json.loads(page.evaluate("document.getElementById('result').textContent").split("content: ", 1)[1])
    assert content["name"] == "Grace" and content["age"] == 36 and content["score"] == 0.5
