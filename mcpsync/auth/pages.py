"""The HTML pages the loopback callback server shows in the browser.

Dark theme (#1a1a2e), success in green (#4ade80), errors in red (#f87171) with the
description in monospace; every piece of text is HTML-escaped; the success and error pages try to close
themselves after 2 seconds; the 400 pages (missing or unknown state) stay open and say what to do.
Pure functions.
"""

from __future__ import annotations

import html
from types import MappingProxyType

__all__ = ["success_page", "error_page", "missing_state_page", "invalid_state_page"]

#: The footer and script of a page that closes itself.
_CLOSES = MappingProxyType({
    "action": "",
    "footer": "<p><small>This window closes automatically.</small></p>",
    "script": "<script>setTimeout(function () { window.close(); }, 2000);</script>",
})

_TEMPLATE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
  html, body {{ margin: 0; height: 100%; }}
  body {{ background: #1a1a2e; color: #e2e8f0; display: flex; align-items: center; justify-content: center;
         font-family: -apple-system, BlinkMacSystemFont, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; }}
  .card {{ max-width: 36rem; padding: 2rem 2.5rem; text-align: center; }}
  h1 {{ color: {color}; font-size: 1.6rem; margin: 0 0 1rem; }}
  p {{ color: #cbd5e1; line-height: 1.5; }}
  pre {{ background: #0f0f1e; color: #f87171; padding: 0.75rem 1rem; border-radius: 6px; text-align: left;
         white-space: pre-wrap; word-break: break-word; font-family: ui-monospace, Menlo, Consolas, monospace; }}
</style>
</head>
<body>
<div class="card">
<h1 id="mcpsync-title">{heading}</h1>
<p id="mcpsync-message">{message}</p>
{detail}
{action}
{footer}
</div>
{script}
</body>
</html>
"""


def success_page(server_name: str = "") -> str:
    """The page shown after a successful authorization of ``server_name``."""
    what = "the MCP server %s" % server_name if server_name else "the MCP server"
    return _TEMPLATE.format(
        title="Authorization successful",
        color="#4ade80",
        heading="Authorization successful",
        message=html.escape("mcpsync is now authorized to access %s. You can close this window." % what),
        detail="",
        **_CLOSES,
    )


def error_page(error: str, description: str = "") -> str:
    """The page shown when the authorization failed with OAuth ``error`` and its ``description``."""
    detail = '<pre id="mcpsync-error">%s</pre>' % html.escape("%s: %s" % (error, description) if description else error)
    return _TEMPLATE.format(
        title="Authorization failed",
        color="#f87171",
        heading="Authorization failed",
        message=html.escape("The authorization server did not grant access. Return to the application and try again."),
        detail=detail,
        **_CLOSES,
    )


def _bad_request_page(heading: str, message: str, action: str) -> str:
    return _TEMPLATE.format(
        title=html.escape(heading),
        color="#f87171",
        heading=html.escape(heading),
        message=html.escape(message),
        detail="",
        action='<p id="mcpsync-action"><strong>What to do:</strong> %s</p>' % html.escape(action),
        footer="",
        script="",  # stays open: the user has something to read and do
    )


_START_AGAIN = (
    "start the login again from the application (for example with: mcpsync auth login NAME) and finish it in the "
    "browser window it opens."
)


def missing_state_page() -> str:
    """The 400 page for a callback without a ``state`` parameter (not a redirect from a login mcpsync started)."""
    return _bad_request_page(
        "Missing state parameter",
        "This address was opened without the state parameter that ties an authorization to the login that asked "
        "for it, so mcpsync cannot use it.",
        "if you were logging in, " + _START_AGAIN,
    )


def invalid_state_page() -> str:
    """The 400 page for a callback whose ``state`` no login is waiting for (finished, timed out, or foreign)."""
    return _bad_request_page(
        "Invalid state",
        "No login is waiting for this authorization: it may have completed or timed out already, or it was started "
        "by another program or an earlier run.",
        _START_AGAIN[0].upper() + _START_AGAIN[1:],
    )
