"""The HTML pages the loopback callback server shows in the browser.

Dark theme (#1a1a2e), success in green (#4ade80), errors in red (#f87171) with the
description in monospace; every piece of text is HTML-escaped; the page tries to close
itself after 2 seconds. Pure functions.
"""

from __future__ import annotations

import html

__all__ = ["success_page", "error_page"]

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
<p><small>This window closes automatically.</small></p>
</div>
<script>setTimeout(function () {{ window.close(); }}, 2000);</script>
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
    )
