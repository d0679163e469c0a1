"""A Flask app whose tool call stops to ask the user, and resumes in a later request.

The client defers input (``extensions=[mcpsync.input.DeferInput()]``): when the server needs input (an
elicitation form), it raises :class:`mcpsync.input.InputRequired` instead of blocking the worker. The view
renders the server's question as an HTML form (:func:`mcpsync.input.render_form`), with the paused call signed
into a hidden field (:meth:`InputRequired.dumps`). Submitting the form is a new request, maybe on another worker
or process: it checks the token (:meth:`InputRequired.loads`), checks the answer against the schema
(:func:`mcpsync.input.parse_form`) and resumes the call (:func:`mcpsync.input.resume_tool`). Nothing blocks
between the two requests, and nothing but the signed token carries the state.

Each token works once: its one-time id is recorded in a seen store when the form comes back, so a second
post of the same form (the back button, a double click, a copied token) is refused and the paused call
completes once. ``$MCPSYNC_FORM_SEEN`` names the store every worker shares: ``memory`` (the default: one
process), a file path (the worker processes of one host) or a ``redis://`` URL (many hosts).

This needs a server in the 2026-07-28 era (the bundled example server by default). Run it with::

    MCPSYNC_FORM_SECRET=change-me MCPSYNC_FORM_SEEN=/tmp/forms-seen.json flask --app examples/flask_input.py run

Then open http://127.0.0.1:5000/ and place an order. ``$MCPSYNC_FORM_SERVER`` may name another server
(a URL, or a command line).
"""

from __future__ import annotations

import html
import os
import secrets
import shlex
import sys
import threading
from typing import Any, List, Optional, Union

from flask import Flask, request

import mcpsync


def default_target() -> Union[str, List[str]]:
    """$MCPSYNC_FORM_SERVER (a URL or a command line), else the bundled example server (2026-07-28)."""
    target = os.environ.get("MCPSYNC_FORM_SERVER")
    if target:
        return target if target.startswith(("http://", "https://")) else shlex.split(target)
    return [sys.executable, "-m", "mcpsync.example_server", "--era", "modern"]


PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
 body {{ font-family: sans-serif; max-width: 40em; margin: 2em auto; }}
 .mcp-field {{ margin: .8em 0; }} .mcp-field label {{ display: block; font-weight: bold; }}
 .mcp-description {{ display: block; color: #555; }} .mcp-error {{ color: #b00; display: block; }}
 .result {{ background: #eef; padding: 1em; white-space: pre-wrap; }}
</style></head><body><h1>{title}</h1>{body}</body></html>"""


#: how long a form stays valid (seconds since the server asked)
MAX_AGE = 15 * 60


def create_app(target: Any = None, secret: Optional[str] = None, seen: Optional[str] = None) -> Flask:
    """Build the app around one module-level client, opened on first use and shared by every request thread.

    ``seen`` names the store of used form tokens (:func:`mcpsync.input.open_seen_store`; default
    ``$MCPSYNC_FORM_SEEN``, else ``memory``). Several worker processes must share one (a file, or Redis).
    """
    app = Flask(__name__)
    secret = secret or os.environ.get("MCPSYNC_FORM_SECRET") or secrets.token_urlsafe(32)
    used = mcpsync.input.open_seen_store(seen or os.environ.get("MCPSYNC_FORM_SEEN") or "memory")
    client = mcpsync.Client(target or default_target(), name="shop", extensions=[mcpsync.input.DeferInput()])
    lock = threading.Lock()

    def opened() -> mcpsync.Client:
        with lock:
            if not client.connected:
                client.open()
        return client

    app.extensions["mcpsync"] = client

    def page(title: str, body: str, status: int = 200) -> Any:
        return PAGE.format(title=html.escape(title), body=body), status, {"Content-Type": "text/html; charset=utf-8"}

    def ask(ir: mcpsync.input.InputRequired, values: Any = None, errors: Any = None) -> Any:
        """Render the first question of ``ir`` as a form carrying the signed, paused call."""
        question = ir.questions[0]
        if question.kind != "form":
            return page("Cannot ask here", "<p>The server asked for %s input.</p>" % html.escape(question.kind), 502)
        form = mcpsync.input.render_form(
            question.requested_schema or {"type": "object"},
            action="/answer",
            message=question.message,
            values=values,
            errors=errors,
            hidden={"token": ir.dumps(secret), "key": question.key},
            submit_label="Confirm",
        )
        return page("Please confirm", form)

    def show(result: mcpsync.CallToolResult) -> Any:
        return page("Done", '<div class="result" id="result">%s</div>' % html.escape(result.text))

    @app.get("/")
    def index() -> Any:
        return page(
            "Order books",
            '<form method="post" action="/order"><label>Books <input name="count" value="3"></label>'
            ' <button type="submit" id="order">Place order</button></form>',
        )

    @app.post("/order")
    def order() -> Any:
        message = "Confirm your order of %s book(s)" % request.form.get("count", "1")
        try:
            result = opened().call_tool("elicit", {"message": message})
        except mcpsync.input.InputRequired as ir:
            return ask(ir)
        except mcpsync.MCPError as exc:
            return page("Error", "<p>%s</p>" % html.escape(str(exc)), 502)
        return show(result)

    @app.post("/answer")
    def answer() -> Any:
        again = "<p>%s <a href='/'>Start again</a>.</p>"
        try:
            # verifies the signature and the age, and records the token's one-time id: it works once
            ir = mcpsync.input.InputRequired.loads(request.form.get("token", ""), secret, max_age=MAX_AGE, seen=used)
            question = ir.question(request.form.get("key", ""))
        except mcpsync.errors.InputReplayed:
            return page("Already answered", again % "This form was sent already.", 409)
        except mcpsync.errors.InputTokenExpired:
            return page("Expired", again % "This form is no longer valid.", 400)
        except (mcpsync.errors.InputForged, KeyError):
            return page("Forged", again % "This form was not issued by this site, or was changed.", 400)
        except (mcpsync.ConfigError, mcpsync.InputSeenStoreError):
            return page("Cannot check this form", again % "Please try again later.", 503)
        if request.form.get("_action") == "decline":
            reply = question.decline()
        else:
            content, errors = mcpsync.input.parse_form(question.requested_schema or {"type": "object"}, request.form)
            if errors:
                return ask(ir, values=content, errors=errors)  # a fresh token: this one is spent
            reply = question.accept(content)
        try:
            return show(mcpsync.input.resume_tool(opened(), ir, {question.key: reply}))
        except mcpsync.input.InputRequired as again:  # the server asks once more
            return ask(again)
        except mcpsync.MCPError as exc:
            return page("Error", "<p>%s</p>" % html.escape(str(exc)), 502)

    return app


if __name__ == "__main__":  # pragma: no cover - manual run
    create_app().run(threaded=True)
