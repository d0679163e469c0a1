"""The parts of reading Claude Code's and Gemini CLI's configurations that need nothing else of
:mod:`mcpsync.manager.config`: recognising a Gemini CLI ``settings.json``, finding the per-project servers of
Claude Code's ``~/.claude.json``, and translating a Gemini CLI entry into the keys the loader reads.
Pure computation, safe from any thread (:func:`project_key` resolves paths)."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any, Dict, Mapping, Optional, Union

from ..errors import ConfigError
from ..types import JSON

__all__ = ["GEMINI_DEFAULT_TIMEOUT", "claude_projects", "from_gemini", "is_gemini", "project_key"]

log = logging.getLogger("mcpsync.manager.config")  # the loader's logger: one place to configure

_GEMINI_ENTRY_KEYS = frozenset({"httpUrl", "trust", "authProviderType", "extensionName"})
_GEMINI_MCP_KEYS = frozenset({"allowed", "excluded", "serverCommand"})


def is_gemini(data: Mapping[str, Any], source: str) -> bool:
    """A Gemini CLI ``settings.json``: by its path, its entries' own keys, or its ``mcp`` block."""
    if Path(source).parts[-2:] == (".gemini", "settings.json"):
        return True
    servers = data.get("mcpServers")
    if not isinstance(servers, dict):
        return False
    mcp = data.get("mcp")
    if isinstance(mcp, dict) and mcp and set(mcp) <= _GEMINI_MCP_KEYS:
        return True
    return any(isinstance(e, dict) and _GEMINI_ENTRY_KEYS & set(e) for e in servers.values())


def claude_projects(data: Mapping[str, Any]) -> Dict[str, Any]:
    """Claude Code's ``~/.claude.json``: ``projects`` path -> settings (with ``mcpServers``); {} otherwise."""
    projects = data.get("projects")
    if not isinstance(projects, dict):
        return {}
    return {k: v for k, v in projects.items() if isinstance(v, dict) and isinstance(v.get("mcpServers"), dict)}


#: Gemini CLI's default tool-call timeout (its ``timeout`` is in milliseconds).
GEMINI_DEFAULT_TIMEOUT = 600.0


def from_gemini(entry: Mapping[str, Any], where: str) -> JSON:
    """A Gemini CLI entry in the keys :func:`_native_fields` reads (URLs, transport, seconds, OAuth settings)."""
    out: JSON = {k: entry[k] for k in ("command", "args", "env", "cwd", "headers") if k in entry}
    kind = str(entry.get("type") or "").lower()
    if entry.get("httpUrl"):
        out["url"], out["transport"] = entry["httpUrl"], "http"
    elif entry.get("url"):  # Gemini CLI: `url` is a legacy SSE endpoint unless its `type` says otherwise
        out["url"] = entry["url"]
        out["transport"] = "http" if kind in ("http", "streamable-http", "streamable_http") else "sse"
    if kind:
        out["type"] = kind
    timeout = entry.get("timeout")
    if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0:
        out["timeout"] = timeout / 1000.0
    elif timeout is None:
        out["timeout"] = GEMINI_DEFAULT_TIMEOUT
    else:
        raise ConfigError("%s.timeout: expected a number of milliseconds > 0, got %r" % (where, timeout))
    for gemini_key, ours in (("includeTools", "allowed_tools"), ("excludeTools", "disabled_tools")):
        if gemini_key in entry:
            out[ours] = entry[gemini_key]
    oauth = entry.get("oauth")
    if isinstance(oauth, dict):
        if oauth.get("enabled") is False:
            out["oauth"] = False
        else:
            settings: JSON = {}
            for key, ours in (("clientId", "client_id"), ("clientSecret", "client_secret")):
                if oauth.get(key):
                    settings[ours] = oauth[key]
            scopes = oauth.get("scopes")
            if isinstance(scopes, list) and scopes:
                settings["scope"] = " ".join(str(x) for x in scopes)
            ignored = sorted(set(oauth) - {"enabled", "clientId", "clientSecret", "scopes"})
            if ignored:
                log.info("%s.oauth: %s are discovered from the server; the configured values are not used",
                         where, ", ".join(ignored))
            out["oauth"] = settings or True
    provider = entry.get("authProviderType")
    if provider not in (None, "dynamic_discovery"):
        log.warning("%s.authProviderType %r is not supported; the server's own OAuth discovery is used",
                    where, provider)
    if "enabled" in entry or "disabled" in entry:
        out["disabled"] = bool(entry.get("disabled")) or entry.get("enabled") is False
    return out


def project_key(projects: Mapping[str, Any], project: Optional[Union[str, Path]]) -> Optional[str]:
    """The key of ``projects`` for ``project`` (default: the current directory) or its nearest ancestor."""
    try:
        here = Path(project if project is not None else os.getcwd()).resolve()
    except OSError:
        return None
    keys = {}
    for key in projects:
        try:
            keys[Path(key).expanduser().resolve()] = key
        except (OSError, ValueError):
            continue
    for candidate in [here, *here.parents]:
        if candidate in keys:
            return keys[candidate]
    return None
