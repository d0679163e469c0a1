"""Write an installed server into the user's own configuration file, in that file's format.

Formats (as :mod:`mcpsync.manager.config` reads them), for an existing file by its content, for a new one by
its name:

- ``mcpServers`` (Claude Desktop, Claude Code ``.mcp.json``, Cursor, Windsurf; the default for a new file):
  ``{"command", "args", "env"}`` or ``{"type": "http"|"sse", "url", "headers"}`` (plus ``"oauth": false``
  when the server.json gives an ``Authorization`` header, which OAuth would otherwise replace);
- VS Code ``servers`` (``.vscode/mcp.json``; ``settings.json``'s ``mcp.servers``): the same with ``"type"``;
- OpenCode ``mcp`` (``opencode.json``/``.jsonc``): ``{"type": "local", "command": [...], "environment"}`` or
  ``{"type": "remote", "url", "headers"}``;
- mcpsync's native mapping (``mcpsync.json``, ``~/.config/mcpsync/config.json``): ``{"command": [...], "env"}``
  or ``{"url", "headers", "transport"}``.

The registry name, version and registry URL (and the non-secret answers, for ``mcpsync update``) are kept
with the entry under ``"registry"``; OpenCode validates its entries strictly, so for OpenCode files they go to
a sidecar ``<file>.mcpsync-registry.json`` beside it instead.

The file is rewritten atomically (a temporary file in the same directory, fsync-ed, ``os.replace``-d, the
original mode kept), with every other key as it was (2-space indented JSON). A file with comments (JSONC) is
refused rather than silently stripped of them. Blocks on file I/O; not safe against two processes
installing into the same file at the same instant (the later write wins).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple, Union

from .._files import write_atomically
from ..errors import ConfigError
from .resolver import ResolvedServer

__all__ = [
    "FORMATS",
    "detect_file_format",
    "installed_servers",
    "read_document",
    "refuse_taken_name",
    "remove_server",
    "write_server",
]

FORMATS = ("mcpServers", "vscode", "vscode-settings", "opencode", "native")
META_KEY = "registry"
SIDECAR_SUFFIX = ".mcpsync-registry.json"


def read_document(path: Union[str, Path]) -> Optional[Dict[str, Any]]:
    """The file's JSON object, or None when the file does not exist. ConfigError for comments or non-JSON."""
    from ..manager.config import _strip_jsonc

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError("%s: cannot read the configuration: %s" % (p, exc)) from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except ValueError:
        try:
            json.loads(_strip_jsonc(text))
        except ValueError as exc:
            raise ConfigError("%s: not valid JSON: %s" % (p, exc)) from None
        raise ConfigError(
            "%s has comments or trailing commas; mcpsync will not rewrite it and lose them "
            "(install into another file with --config, or remove the comments)" % p
        ) from None
    if not isinstance(data, dict):
        raise ConfigError("%s: expected a JSON object at the top level" % p)
    return data


def detect_file_format(path: Union[str, Path], data: Optional[Dict[str, Any]]) -> str:
    """The format of ``data`` (the file's content), or, for a new or empty file, the one its name implies."""
    from ..manager.config import _detect_format

    p = Path(path)
    if data:
        fmt = _detect_format(data)
        if fmt != "native" or p.name in ("mcpsync.json", "config.json") or p.parent.name == "mcpsync":
            return fmt
        return "native" if all(isinstance(v, dict) for v in data.values()) and data else "mcpServers"
    if p.name.startswith("opencode.json"):
        return "opencode"
    if p.name == "settings.json" and p.parent.name in (".vscode", "User"):
        return "vscode-settings"
    if p.parent.name == ".vscode" and p.name == "mcp.json":
        return "vscode"
    if p.name == "mcpsync.json" or p.parent.name == "mcpsync":
        return "native"
    return "mcpServers"


def refuse_taken_name(path: Union[str, Path], doc: Dict[str, Any], fmt: Optional[str], name: str, hint: str) -> None:
    """Raise :class:`~mcpsync.errors.ConfigError` when the configuration ``doc`` (read from ``path``; ``fmt``: its
    format, detected when None) already has a server called ``name``; ``hint`` says what to do instead. An
    installer checks this before asking for consent, so nothing is asked or downloaded for a name that is taken."""
    if name in _servers(doc, fmt or detect_file_format(path, doc), create=True):
        raise ConfigError("%s already has a server named %r (%s)" % (path, name, hint))


def _servers(data: Dict[str, Any], fmt: str, create: bool) -> Dict[str, Any]:
    def child(parent: Dict[str, Any], key: str) -> Dict[str, Any]:
        value = parent.get(key)
        if value is None and create:
            value = parent[key] = {}
        if not isinstance(value, dict):
            raise ConfigError("the configuration's %r is not an object" % key)
        return value

    if fmt == "opencode":
        return child(data, "mcp")
    if fmt == "vscode-settings":
        return child(child(data, "mcp"), "servers")
    if fmt == "vscode":
        return child(data, "servers")
    if fmt == "mcpServers":
        return child(data, "mcpServers")
    return data


def _entry(server: ResolvedServer, fmt: str, meta: Dict[str, Any]) -> Dict[str, Any]:
    entry: Dict[str, Any]
    if server.kind == "remote":
        if fmt == "opencode":
            entry = {"type": "remote", "url": server.url}
        elif fmt == "native":
            entry = {"url": server.url, "transport": server.transport}
        else:
            entry = {"type": "sse" if server.transport == "sse" else "http", "url": server.url}
        if server.headers:
            entry["headers"] = dict(server.headers)
        if any(k.lower() == "authorization" for k in server.headers):
            entry["oauth"] = False  # the registry's credential is the one to send; OAuth would replace it
    else:
        if fmt == "opencode":
            entry = {"type": "local", "command": list(server.command)}
            if server.env:
                entry["environment"] = dict(server.env)
        elif fmt == "native":
            entry = {"command": list(server.command)}
            if server.env:
                entry["env"] = dict(server.env)
        else:
            entry = {"type": "stdio"} if fmt.startswith("vscode") else {}
            entry["command"] = server.command[0]
            entry["args"] = list(server.command[1:])
            if server.env:
                entry["env"] = dict(server.env)
    if fmt == "opencode":
        entry["enabled"] = True
    else:
        entry[META_KEY] = meta
    return entry


def _atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: Optional[int] = os.stat(path).st_mode & 0o777
    except FileNotFoundError:
        mode = None
    write_atomically(path, text.encode("utf-8"), mode=mode if mode is not None else 0o600, durable=True)


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + SIDECAR_SUFFIX)


def write_server(
    path: Union[str, Path],
    server: ResolvedServer,
    meta: Dict[str, Any],
    *,
    fmt: Optional[str] = None,
    replace: bool = False,
) -> str:
    """Add (or with ``replace`` overwrite) ``server`` in the configuration file ``path``; returns the format.

    ``meta`` is the registry metadata kept with the entry. Raises ConfigError when the name is taken and
    ``replace`` is false, or the file cannot be rewritten safely. Nothing is written on error.
    """
    p = Path(path).expanduser()
    data = read_document(p)
    fmt = fmt or detect_file_format(p, data)
    if fmt not in FORMATS:
        raise ConfigError("unknown configuration format %r (one of %s)" % (fmt, ", ".join(FORMATS)))
    doc: Dict[str, Any] = data if data is not None else {}
    servers = _servers(doc, fmt, create=True)
    if server.config_name in servers and not replace:
        raise ConfigError(
            "%s already has a server named %r (choose another --name, or use mcpsync update)" % (p, server.config_name)
        )
    servers[server.config_name] = _entry(server, fmt, meta)
    text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
    if fmt == "opencode":
        side = _sidecar(p)
        side_doc = read_document(side) or {}
        side_doc[server.config_name] = meta
        _atomic_write(side, json.dumps(side_doc, indent=2, ensure_ascii=False) + "\n")
    _atomic_write(p, text)
    return fmt


def remove_server(path: Union[str, Path], config_name: str) -> bool:
    """Remove ``config_name`` from the file (and its sidecar metadata); returns whether it was there."""
    p = Path(path).expanduser()
    data = read_document(p)
    if not data:
        return False
    fmt = detect_file_format(p, data)
    servers = _servers(data, fmt, create=False)
    if config_name not in servers:
        return False
    del servers[config_name]
    _atomic_write(p, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    if fmt == "opencode":
        side = _sidecar(p)
        side_doc = read_document(side) or {}
        if side_doc.pop(config_name, None) is not None:
            _atomic_write(side, json.dumps(side_doc, indent=2, ensure_ascii=False) + "\n")
    return True


def installed_servers(path: Union[str, Path]) -> List[Tuple[str, Dict[str, Any]]]:
    """``(config name, registry metadata)`` of every server of the file that was installed from a registry."""
    p = Path(path).expanduser()
    data = read_document(p)
    if not data:
        return []
    fmt = detect_file_format(p, data)
    try:
        servers = _servers(data, fmt, create=False)
    except ConfigError:
        return []
    if fmt == "opencode":
        side = read_document(_sidecar(p)) or {}
        metas = {k: v for k, v in side.items() if k in servers}
    else:
        metas = {k: v.get(META_KEY) for k, v in servers.items() if isinstance(v, dict)}
    return [
        (name, meta) for name, meta in metas.items()
        if isinstance(meta, dict) and isinstance(meta.get("name"), str) and isinstance(meta.get("version"), str)
    ]
