"""Server configuration: in code, and from the files users already have.

A configuration is a mapping ``server name -> ServerConfig``. It can be built

* in code: ``ServerConfig(name, command=[...])`` or plain dicts (:func:`parse_config`);
* from a file or a dict in any of these formats (detected by the top-level key):

  - **OpenCode** (``opencode.json``): ``{"mcp": {name: {"type": "local", "command": [...],
    "environment": {...}, "enabled": true, "timeout": 5000} | {"type": "remote", "url": ...,
    "headers": {...}, "oauth": false | {"clientId", "clientSecret", "scope"}}}}``. ``timeout`` is in
    **milliseconds** and bounds connecting; ``experimental.mcp_timeout`` (ms) is the tool-call timeout.
    Local servers inherit the whole environment, as in OpenCode.
  - **Claude Desktop / Cursor / Claude Code / Windsurf** (``mcpServers``): ``{"command", "args", "env"}``
    or ``{"url" | "serverUrl", "headers", "type"}``; ``disabled: true`` and ``timeout`` (seconds) are honoured,
    and so are tool lists: ``disabledTools`` / ``excludeTools`` (hidden and refused) and ``allowedTools`` /
    ``includeTools`` (only these), names or glob patterns. mcpsync's own ``oauth`` (``false`` turns OAuth off)
    and ``bearer_token`` / ``bearerToken`` are accepted too. Claude Code's ``~/.claude.json`` adds per-project
    servers (``projects[<path>].mcpServers``): those of the project containing the current directory (or
    ``project=``) are merged over the top-level (user) ones, as Claude Code does.
  - **Gemini CLI** (``~/.gemini/settings.json``, ``.gemini/settings.json``; recognized by the path, by
    ``httpUrl``/``trust``/``authProviderType`` entries, or by a Gemini ``mcp`` block): ``mcpServers`` with
    ``command`` + ``args``/``env``/``cwd``, ``httpUrl`` (Streamable HTTP) or ``url`` (legacy SSE) + ``headers``,
    ``timeout`` in **milliseconds** (a tool call's timeout; default 600 000 as in Gemini CLI), ``includeTools``
    / ``excludeTools``, ``oauth`` (``enabled: false`` turns it off; ``clientId``, ``clientSecret``, ``scopes``);
    ``trust`` and ``description`` are accepted and ignored; ``$VAR`` works besides ``${VAR}``. The top-level
    ``mcp.allowed`` / ``mcp.excluded`` server lists mark the other servers disabled.
  - **VS Code** (``.vscode/mcp.json`` ``servers``, or ``settings.json`` ``mcp.servers``): like
    ``mcpServers`` plus ``type: stdio|http|sse``, ``envFile``, ``${workspaceFolder}``, ``${userHome}``.
  - **native** (a plain ``{name: entry}`` mapping): the keys of :class:`ServerConfig` (timeouts in
    seconds); unknown keys are errors, so a typo is never silently ignored.

Strings in commands, arguments, environment values, URLs, headers and OAuth
settings may use ``${VAR}``, ``${VAR:-default}``, ``${env:VAR}`` (and ``{env:VAR}``
in OpenCode files); ``$$`` is a literal ``$``. A variable that is not set makes
that one server fail with a :class:`~mcpsync.ConfigError` (its ``error``), not
the whole file.

Files are validated with jsonschema (imported on first use); errors name the
file, point at the bad key (``mcpServers.github.args[1]``) and say what was
expected. JSON with comments and trailing commas (``.jsonc``) is accepted.

Everything here is pure data and computation, safe to call from any thread;
only :func:`load_config` and :func:`find_config` touch the file system.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterable, List, Mapping, Optional, Tuple, Union

from ..errors import ConfigError
from ..types import JSON
from .config_formats import claude_projects, from_gemini, is_gemini, project_key
from .config_schema import (
    FOREIGN_KNOWN,
    GEMINI_KNOWN,
    REMOTE_TYPES as _REMOTE_TYPES,
    STDIO_TYPES as _STDIO_TYPES,
    validate_document,
)
from .transforms import ToolTransform, parse_transforms

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_CONNECT_TIMEOUT",
    "ServerConfig",
    "config_search_paths",
    "find_config",
    "interpolate",
    "load_config",
    "parse_config",
    "server_config",
]

log = logging.getLogger(__name__)

#: Seconds a tool call may stay idle (reset on each progress notification) unless configured.
DEFAULT_CALL_TIMEOUT = 30.0
#: Seconds connecting (spawn/TCP + initialize + the first tools/list) may take unless configured.
DEFAULT_CONNECT_TIMEOUT = 30.0

_CLIENT_OPTION_NAMES = frozenset({
    "headers",
    "env",
    "cwd",
    "name",
    "timeout",
    "connect_timeout",
    "auth",
    "bearer_token",
    "transport",
    "inherit_env",
    "allowed_tools",
    "disabled_tools",
})


@dataclass
class ServerConfig:
    """The configuration of one server.

    Attributes:
        name: the server's name (the prefix of its exposed tool names).
        command: for a stdio server, the program and its arguments.
        env: extra environment variables for a stdio server.
        cwd: the working directory of a stdio server.
        inherit_env: pass the whole parent environment (None: the client's default, a safe subset).
        url: for a remote server, its URL.
        headers: extra HTTP headers for a remote server (values are never logged).
        transport: remote transport: ``auto`` (Streamable HTTP, falling back to legacy SSE), ``http``, ``sse``.
        oauth: remote servers only: True (use OAuth when the server asks for it with a 401 challenge),
            False (never), or a dict of :class:`mcpsync.auth.OAuthConfig` settings (``client_id``,
            ``client_secret``, ``scope``, ``grant``...; camelCase accepted). In every file format
            ``"oauth": false`` turns it off. A static credential (``bearer_token`` or an ``Authorization``
            header) is always sent and OAuth never starts for that server.
        bearer_token: a static token sent as ``Authorization: Bearer`` (never logged). In files:
            ``bearer_token`` or ``bearerToken``.
        enabled: False marks the server ``disabled``; it is never connected.
        timeout: seconds a tool call may stay idle; reset by progress notifications.
        connect_timeout: seconds connecting may take.
        lazy: connect on first use rather than at start (None: the manager's default).
        allowed_tools: only these tools (names or glob patterns) are exposed and callable (None: all).
            In files: ``allowed_tools`` (native), ``allowedTools`` or ``includeTools`` (Gemini CLI).
        disabled_tools: these tools (names or glob patterns) are hidden and refused; they win over
            ``allowed_tools``. In files: ``disabled_tools`` (native), ``disabledTools`` (Windsurf, Cline)
            or ``excludeTools`` (Gemini CLI).
        options: further settings of the :class:`mcpsync.Client`, by the flat names of the option objects' fields
            (``verify``, ``stderr``, ``on_log``, ``apps``...: see :func:`mcpsync.manager.flat.grouped`).
        tool_transforms: ``{tool name: ToolTransform}``: how the framework integrations show this server's tools
            (a new name or description, arguments hidden and bound); ``tools`` in files
            (see :mod:`mcpsync.manager.transforms`).
        card: a Server Card URL: the remote it describes is connected to (the card is fetched, checked and cached
            when the server connects; :mod:`mcpsync.cards`). In files: ``"card": URL`` or ``"card": {"url": URL,
            "inputs": {...}, "allow_local": [...], "allow_other_domains": false, "remote": 0}``; ``headers`` add
            to the card's.
        card_options: the object form's other keys (``inputs``, ``allow_local``, ``allow_other_domains``,
            ``remote``), passed to :func:`mcpsync.cards.resolve_card`.
        source: where the entry came from (``file.json: mcpServers.github``), for messages.
        error: a problem found while reading this entry (an unset variable); the server fails with it.
    """

    name: str
    command: List[str] = field(default_factory=list)
    env: Dict[str, str] = field(default_factory=dict)
    cwd: Optional[str] = None
    inherit_env: Optional[bool] = None
    url: Optional[str] = None
    headers: Dict[str, str] = field(default_factory=dict)
    transport: str = "auto"
    oauth: Union[bool, Dict[str, Any]] = True
    bearer_token: Optional[str] = None
    enabled: bool = True
    timeout: Optional[float] = DEFAULT_CALL_TIMEOUT
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    lazy: Optional[bool] = None
    allowed_tools: Optional[List[str]] = None
    disabled_tools: List[str] = field(default_factory=list)
    options: Dict[str, Any] = field(default_factory=dict)
    source: Optional[str] = None
    error: Optional[ConfigError] = None
    tool_transforms: Dict[str, ToolTransform] = field(default_factory=dict)
    card: Optional[str] = None
    card_options: Dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ConfigError("a server needs a non-empty name")
        if isinstance(self.command, str):
            self.command = [self.command]
        if self.error is None and not self.command and not self.url and not self.card:
            raise ConfigError("server %r: give a command (stdio), a url (remote) or a card" % self.name)
        if sum(1 for given in (self.command, self.url, self.card) if given) > 1:
            raise ConfigError("server %r: give one of a command, a url and a card" % self.name)
        if self.transport not in ("auto", "http", "sse"):
            raise ConfigError("server %r: transport must be auto, http or sse, not %r" % (self.name, self.transport))
        for what in ("allowed_tools", "disabled_tools"):
            value = getattr(self, what)
            if value is None:
                continue
            if isinstance(value, str) or not all(isinstance(v, str) and v for v in value):
                raise ConfigError("server %r: %s must be a list of tool names or glob patterns" % (self.name, what))
            setattr(self, what, list(value))
        for key in self.options:
            if key in _CLIENT_OPTION_NAMES:
                raise ConfigError("server %r: set %r as a field, not in options" % (self.name, key))

    @property
    def kind(self) -> str:
        """``stdio`` or ``remote``."""
        return "remote" if self.url or self.card else "stdio"

    @property
    def static_credential(self) -> bool:
        """True when the configuration carries its own credential: a ``bearer_token`` or an ``Authorization``
        header. It is always sent, and OAuth never starts for this server."""
        return bool(self.bearer_token) or any(k.lower() == "authorization" for k in self.headers)

    @property
    def oauth_enabled(self) -> bool:
        """True when this remote server may use OAuth when it asks for it (a 401 challenge): ``oauth`` is not
        False and no static credential (:attr:`static_credential`) was given."""
        return self.kind == "remote" and self.oauth is not False and not self.static_credential

    @property
    def oauth_settings(self) -> Dict[str, Any]:
        """The OAuth settings dict (empty when none were given)."""
        return dict(self.oauth) if isinstance(self.oauth, dict) else {}

    def client_arguments(self) -> Tuple[Any, Dict[str, Any]]:
        """``(target, keyword arguments)`` for :class:`mcpsync.Client` (``auth`` is added by the manager)."""
        kwargs: Dict[str, Any] = dict(self.options)
        kwargs["name"] = self.name
        kwargs["timeout"] = self.timeout
        kwargs["connect_timeout"] = self.connect_timeout
        if self.allowed_tools is not None:
            kwargs["allowed_tools"] = list(self.allowed_tools)
        if self.disabled_tools:
            kwargs["disabled_tools"] = list(self.disabled_tools)
        if self.kind == "stdio":
            if self.env:
                kwargs["env"] = dict(self.env)
            if self.cwd is not None:
                kwargs["cwd"] = self.cwd
            if self.inherit_env is not None:
                kwargs["inherit_env"] = self.inherit_env
            return list(self.command), kwargs
        if self.headers:
            kwargs["headers"] = dict(self.headers)
        kwargs["transport"] = self.transport
        if self.bearer_token:
            kwargs["bearer_token"] = self.bearer_token
        return self.url, kwargs

    def __repr__(self) -> str:  # never shows env values, header values or tokens
        where = ("command=%r" % (self.command[:1],)) if self.command else (
            "url=%r" % self.url if self.url or not self.card else "card=%r" % self.card)
        extras = []
        if self.env:
            extras.append("env=[%s]" % ", ".join(sorted(self.env)))
        if self.headers:
            extras.append("headers=[%s]" % ", ".join(sorted(self.headers)))
        if not self.enabled:
            extras.append("enabled=False")
        return "ServerConfig(%r, %s%s)" % (self.name, where, "".join(", " + e for e in extras))


# ---------------------------------------------------------------------------
# Interpolation
# ---------------------------------------------------------------------------

_VAR = re.compile(r"\$\$|\$\{([^{}]*)\}")
_VAR_OR_BARE = re.compile(r"\$\$|\$\{([^{}]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)")  # Gemini CLI: $VAR too
_OPENCODE_VAR = re.compile(r"\{env:([A-Za-z_][A-Za-z0-9_]*)\}")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def interpolate(
    value: str,
    env: Optional[Mapping[str, str]] = None,
    *,
    variables: Optional[Mapping[str, str]] = None,
    opencode: bool = False,
    bare: bool = False,
) -> str:
    """Expand ``${VAR}``, ``${VAR:-default}``, ``${env:VAR}`` (and ``{env:VAR}`` when ``opencode``, ``$VAR`` when
    ``bare``, as Gemini CLI does) in ``value``; ``${secret:SERVER/NAME}`` reads a secret from the credential store
    (:mod:`mcpsync.auth.secrets`).

    ``env`` defaults to ``os.environ``; ``variables`` adds named values such as
    ``workspaceFolder``. Raises :class:`~mcpsync.ConfigError` for an unset
    variable without a default or an unsupported ``${...}`` form.
    """
    env = os.environ if env is None else env
    variables = variables or {}

    def lookup(expr: str) -> str:
        name, sep, default = expr.partition(":-")
        if name.startswith("secret:"):  # a value kept in the credential store (mcpsync install)
            from ..auth.secrets import resolve_secret_reference

            return resolve_secret_reference(name[7:])
        if name.startswith("env:"):
            name = name[4:]
        elif name in variables:
            return variables[name]
        if not _NAME.match(name):
            raise ConfigError("unsupported variable ${%s}" % expr)
        if name in env and (env[name] != "" or not sep):
            return env[name]
        if sep:
            return default
        raise ConfigError("environment variable %s is not set" % name)

    def sub(match: "re.Match[str]") -> str:
        if match.group(0) == "$$":
            return "$"
        if match.group(1) is None:  # bare $VAR
            return lookup(match.group(2))
        return lookup(match.group(1))

    out = (_VAR_OR_BARE if bare else _VAR).sub(sub, value)
    if opencode:
        out = _OPENCODE_VAR.sub(lambda m: lookup(m.group(1)), out)
    return out


# ---------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------


def _detect_format(data: Mapping[str, Any], source: str = "<config>") -> str:
    if is_gemini(data, source):
        return "gemini"
    mcp = data.get("mcp")
    if isinstance(mcp, dict):
        if set(mcp) == {"servers"} and isinstance(mcp["servers"], dict):
            return "vscode-settings"
        return "opencode"
    if "mcpServers" in data or claude_projects(data):
        return "mcpServers"
    if isinstance(data.get("servers"), dict) and (
        "inputs" in data or all(isinstance(v, dict) for v in data["servers"].values())
    ):
        return "vscode"
    return "native"


def _read_env_file(path: str) -> Dict[str, str]:
    """The variables of an ``envFile``, parsed by python-dotenv's rules (quotes, escapes, multi-line values,
    ``export``, comments; keys without ``=`` are skipped). python-dotenv expands nothing here: the values then go
    through the configuration's own ``${...}`` interpolation, like the entry's ``env``."""
    from dotenv import dotenv_values

    with open(path, encoding="utf-8") as fh:
        values = dotenv_values(stream=fh, interpolate=False)
    return {key: value for key, value in values.items() if value is not None}


class _Expander:
    def __init__(
        self, env: Mapping[str, str], variables: Mapping[str, str], opencode: bool, bare: bool = False
    ) -> None:
        self.env, self.variables, self.opencode, self.bare = env, variables, opencode, bare

    def __call__(self, value: Any, where: str) -> Any:
        if isinstance(value, str):
            try:
                return interpolate(value, self.env, variables=self.variables, opencode=self.opencode, bare=self.bare)
            except ConfigError as exc:
                raise ConfigError("%s: %s" % (where, exc.message)) from None
        if isinstance(value, list):
            return [self(v, "%s[%d]" % (where, i)) for i, v in enumerate(value)]
        if isinstance(value, dict):
            return {k: self(v, "%s.%s" % (where, k)) for k, v in value.items()}
        return value


def _check_type(entry: Mapping[str, Any], where: str) -> None:
    kind = str(entry.get("type") or "").lower()
    has_url = bool(entry.get("url") or entry.get("serverUrl") or entry.get("card"))
    if kind in _STDIO_TYPES and has_url:
        raise ConfigError("%s.type: %r servers take a command, not a url" % (where, entry.get("type")))
    if kind in _REMOTE_TYPES | {"streamablehttp"} and not has_url:
        raise ConfigError("%s.url: %r servers need a url" % (where, entry.get("type")))


def _remote_auth(entry: Mapping[str, Any], expand: _Expander, where: str) -> JSON:
    """The headers, ``oauth`` settings and bearer token of a remote entry (a URL or a card), interpolated."""
    out: JSON = {"headers": expand(dict(entry.get("headers") or {}), where + ".headers")}
    if "oauth" in entry:
        oauth = entry["oauth"]
        if isinstance(oauth, dict):
            oauth = _oauth_settings(expand(dict(oauth), where + ".oauth"))
        out["oauth"] = oauth
    for key in ("bearer_token", "bearerToken"):
        if entry.get(key):
            out["bearer_token"] = expand(entry[key], where + "." + key)
    return out


def _native_fields(name: str, entry: Mapping[str, Any], expand: _Expander, where: str) -> JSON:
    """Map one native / foreign entry to ServerConfig keyword arguments (interpolated)."""
    kind = str(entry.get("type") or "").lower()
    url = entry.get("url") or entry.get("serverUrl")
    out: JSON = {"name": name}
    card = entry.get("card")
    if card is not None and url is None:
        settings = dict(card) if isinstance(card, dict) else {"url": card}
        out["card"] = expand(settings.pop("url", None), where + ".card")
        out["card_options"] = expand(settings, where + ".card")
        if entry.get("transport"):
            out["transport"] = entry["transport"]
        out.update(_remote_auth(entry, expand, where))
    elif url is not None:
        out["url"] = expand(url, where + ".url")
        if entry.get("transport"):
            out["transport"] = entry["transport"]
        elif kind == "sse":
            out["transport"] = "sse"
        elif kind in ("http", "streamable-http", "streamable_http", "streamablehttp"):
            out["transport"] = "http"
        else:
            out["transport"] = "auto"
        out.update(_remote_auth(entry, expand, where))
    else:
        command = entry.get("command")
        command = [command] if isinstance(command, str) else list(command or [])
        command += list(entry.get("args") or [])
        out["command"] = expand(command, where + ".command")
        env = dict(entry.get("env") or entry.get("environment") or {})
        out["env"] = expand(env, where + ".env")
        if entry.get("cwd") is not None:
            out["cwd"] = expand(entry["cwd"], where + ".cwd")
        if entry.get("inherit_env") is not None:
            out["inherit_env"] = entry["inherit_env"]
    out["enabled"] = bool(entry.get("enabled", True)) and not entry.get("disabled", False)
    for key in ("timeout", "connect_timeout", "lazy"):
        if key in entry:
            out[key] = entry[key]
    allowed = _tool_list(entry, ("allowed_tools", "allowedTools", "includeTools"), where)
    if allowed is not None:
        out["allowed_tools"] = allowed
    denied = _tool_list(entry, ("disabled_tools", "disabledTools", "excludeTools"), where)
    if denied:
        out["disabled_tools"] = denied
    if entry.get("options"):
        out["options"] = dict(entry["options"])
    if entry.get("tools") is not None:
        out["tool_transforms"] = parse_transforms(entry["tools"], where)
    return out


def _tool_list(entry: Mapping[str, Any], keys: Tuple[str, ...], where: str) -> Optional[List[str]]:
    """The union of the tool-name lists under any of ``keys`` (None when none is present)."""
    found: Optional[List[str]] = None
    for key in keys:
        if key not in entry:
            continue
        value = entry[key]
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise ConfigError("%s.%s: expected a list of tool names or glob patterns" % (where, key))
        found = found if found is not None else []
        found.extend(v for v in value if v not in found)
    return found


def _oauth_settings(raw: Mapping[str, Any]) -> Dict[str, Any]:
    aliases = {"clientId": "client_id", "clientSecret": "client_secret"}
    return {aliases.get(k, k): v for k, v in raw.items()}


def _build(name: str, fields: JSON, where: str) -> ServerConfig:
    try:
        return ServerConfig(source=where, **fields)
    except ConfigError as exc:
        raise ConfigError("%s: %s" % (where, exc.message)) from None


def _entry(
    name: str,
    entry: Mapping[str, Any],
    fmt: str,
    where: str,
    env: Mapping[str, str],
    variables: Mapping[str, str],
    base_dir: Optional[Path],
    call_timeout: Optional[float],
) -> ServerConfig:
    expand = _Expander(env, variables, opencode=(fmt == "opencode"), bare=(fmt == "gemini"))
    if fmt == "gemini":
        unknown = sorted(set(entry) - GEMINI_KNOWN)
        if unknown:
            log.warning("%s: ignoring unknown keys %s", where, ", ".join(unknown))
        entry = from_gemini(entry, where)
    _check_type(entry, where)
    try:
        if fmt == "gemini":
            fields = _native_fields(name, entry, expand, where)
        elif fmt == "opencode":
            fields = _native_fields(name, entry, expand, where)
            fields.pop("timeout", None)
            if "timeout" in entry:
                fields["connect_timeout"] = entry["timeout"] / 1000.0
            if call_timeout is not None:
                fields["timeout"] = call_timeout
            if entry.get("type") == "local":
                fields["inherit_env"] = True
        else:
            if fmt != "native":
                unknown = sorted(set(entry) - FOREIGN_KNOWN)
                if unknown:
                    log.warning("%s: ignoring unknown keys %s", where, ", ".join(unknown))
                entry = {k: v for k, v in entry.items() if k in FOREIGN_KNOWN}
                if entry.get("envFile"):
                    env_file = expand(entry["envFile"], where + ".envFile")
                    if base_dir is not None:
                        env_file = str(base_dir / env_file)
                    try:
                        file_env = _read_env_file(env_file)
                    except OSError as exc:
                        raise ConfigError("%s.envFile: cannot read %s: %s" % (where, env_file, exc.strerror)) from None
                    except ValueError as exc:  # not UTF-8
                        raise ConfigError("%s.envFile: cannot read %s: %s" % (where, env_file, exc)) from None
                    entry = dict(entry, env=dict(file_env, **(entry.get("env") or {})))
            fields = _native_fields(name, entry, expand, where)
    except ConfigError as exc:
        # An unset variable fails this one server, not the whole configuration.
        kwargs: JSON = {"name": name, "enabled": bool(entry.get("enabled", True)) and not entry.get("disabled")}
        if entry.get("url") or entry.get("serverUrl"):
            kwargs["url"] = str(entry.get("url") or entry.get("serverUrl"))  # uninterpolated, never used
        return ServerConfig(error=exc, source=where, **kwargs)
    if fmt != "opencode" and "timeout" not in fields and call_timeout is not None:
        fields["timeout"] = call_timeout
    if fields.get("cwd") and base_dir is not None and not os.path.isabs(fields["cwd"]):
        fields["cwd"] = str(base_dir / fields["cwd"])
    return _build(name, fields, where)


def parse_config(
    data: Union[Mapping[str, Any], Iterable[ServerConfig]],
    *,
    source: str = "<config>",
    env: Optional[Mapping[str, str]] = None,
    base_dir: Optional[Union[str, Path]] = None,
    validate: bool = True,
    project: Optional[Union[str, Path]] = None,
) -> Dict[str, ServerConfig]:
    """Read a configuration from a dict (any supported format) or an iterable of :class:`ServerConfig`.

    A mapping's values may also be :class:`ServerConfig` objects. ``env``
    (default ``os.environ``) is used for interpolation; ``base_dir`` resolves
    relative ``cwd`` and ``envFile`` paths; ``project`` (default: the current directory) picks the
    per-project servers of Claude Code's ``~/.claude.json``. Raises :class:`~mcpsync.ConfigError`
    for a structurally invalid configuration (message: source, key path, what was expected).
    """
    env = os.environ if env is None else env
    base = Path(base_dir) if base_dir is not None else None
    if not isinstance(data, Mapping):
        if isinstance(data, (str, bytes)) or not isinstance(data, Iterable):
            raise ConfigError(
                "%s: a configuration must be an object of servers, got %s" % (source, type(data).__name__)
            )
        out: Dict[str, ServerConfig] = {}
        for cfg in data:
            if not isinstance(cfg, ServerConfig):
                raise ConfigError("%s: expected ServerConfig objects, got %s" % (source, type(cfg).__name__))
            out[cfg.name] = cfg
        return out
    if data and all(isinstance(v, ServerConfig) for v in data.values()):
        return {k: v if v.name == k else _rename(v, k) for k, v in data.items()}
    fmt = _detect_format(data, source)
    if fmt == "native":
        plain = {k: v for k, v in data.items() if not isinstance(v, ServerConfig)}
        if validate:
            validate_document(plain, fmt, source)
        out = {}
        for name, entry in data.items():
            out[name] = (
                _rename(entry, name)
                if isinstance(entry, ServerConfig)
                else _entry(
                    name, entry, fmt, name if source == "<config>" else "%s: %s" % (source, name), env, {}, base, None
                )
            )
        return out
    if validate:
        validate_document(data, fmt, source)
    variables: Dict[str, str] = {"userHome": str(Path.home())}
    if base is not None:
        if base.name == ".gemini":  # Gemini CLI: a relative cwd is the project's, not the settings folder's
            base = base.parent
        variables["workspaceFolder"] = str(base.parent if base.name == ".vscode" else base)
    call_timeout = None
    if fmt == "opencode":
        entries, prefix = data["mcp"], "mcp"
        ms = (data.get("experimental") or {}).get("mcp_timeout")
        call_timeout = ms / 1000.0 if ms else None
    elif fmt == "vscode-settings":
        entries, prefix = data["mcp"]["servers"], "mcp.servers"
    elif fmt == "vscode":
        entries, prefix = data["servers"], "servers"
    elif fmt == "gemini":
        return _gemini_servers(data, source, env, variables, base)
    else:
        out = {
            name: _entry(name, entry, fmt, "%s: mcpServers.%s" % (source, name), env, variables, base, None)
            for name, entry in (data.get("mcpServers") or {}).items()
        }
        out.update(_claude_project_servers(data, source, env, variables, base, project, validate))
        return out
    return {
        name: _entry(name, entry, fmt, "%s: %s.%s" % (source, prefix, name), env, variables, base, call_timeout)
        for name, entry in entries.items()
    }


def _claude_project_servers(
    data: Mapping[str, Any],
    source: str,
    env: Mapping[str, str],
    variables: Mapping[str, str],
    base: Optional[Path],
    project: Optional[Union[str, Path]],
    validate: bool,
) -> Dict[str, ServerConfig]:
    """Claude Code's local-scope servers (``projects[<path>].mcpServers`` of ``~/.claude.json``) for ``project``;
    they win over the user-scope servers of the same name, as in Claude Code."""
    projects = claude_projects(data)
    key = project_key(projects, project)
    if key is None:
        return {}
    servers = projects[key]["mcpServers"]
    where = "%s: projects[%s]" % (source, json.dumps(key))
    if validate:
        validate_document({"mcpServers": servers}, "mcpServers", where)
    return {
        name: _entry(name, entry, "mcpServers", "%s.mcpServers.%s" % (where, name), env, variables, base, None)
        for name, entry in servers.items()
    }


def _gemini_servers(
    data: Mapping[str, Any], source: str, env: Mapping[str, str], variables: Mapping[str, str], base: Optional[Path]
) -> Dict[str, ServerConfig]:
    """Gemini CLI's ``mcpServers``, with its ``mcp.allowed`` / ``mcp.excluded`` server lists applied."""
    out = {
        name: _entry(name, entry, "gemini", "%s: mcpServers.%s" % (source, name), env, variables, base, None)
        for name, entry in (data.get("mcpServers") or {}).items()
    }
    mcp = data.get("mcp")
    block: Mapping[str, Any] = mcp if isinstance(mcp, dict) else {}
    allowed: Optional[List[Any]] = block["allowed"] if isinstance(block.get("allowed"), list) else None
    excluded: List[Any] = block["excluded"] if isinstance(block.get("excluded"), list) else []
    for name, cfg in out.items():
        if name in excluded or (allowed is not None and name not in allowed):
            cfg.enabled = False
    return out


def _rename(cfg: ServerConfig, name: str) -> ServerConfig:
    import dataclasses

    return cfg if cfg.name == name else dataclasses.replace(cfg, name=name)


def server_config(
    name: str, entry: Union[ServerConfig, Mapping[str, Any]], *, env: Optional[Mapping[str, str]] = None
) -> ServerConfig:
    """One native entry (a dict with :class:`ServerConfig`'s keys) as a validated :class:`ServerConfig`."""
    if isinstance(entry, ServerConfig):
        return _rename(entry, name)
    if not isinstance(entry, Mapping):
        raise ConfigError("server %r: expected a dict or a ServerConfig, got %s" % (name, type(entry).__name__))
    return parse_config({name: dict(entry)}, source="server %r" % name, env=env)[name]


_COMMENT = re.compile(r'"(?:[^"\\]|\\.)*"|//[^\n]*|/\*.*?\*/', re.S)
_TRAILING_COMMA = re.compile(r'"(?:[^"\\]|\\.)*"|,(\s*[}\]])', re.S)


def _strip_jsonc(text: str) -> str:
    text = _COMMENT.sub(lambda m: m.group(0) if m.group(0).startswith('"') else re.sub(r"[^\n]", " ", m.group(0)), text)
    return _TRAILING_COMMA.sub(lambda m: m.group(0) if m.group(0).startswith('"') else m.group(1), text)


def load_config(
    path: Union[str, Path], *, env: Optional[Mapping[str, str]] = None, project: Optional[Union[str, Path]] = None
) -> Dict[str, ServerConfig]:
    """Read a configuration file (JSON or JSONC, any supported format). Blocks on file I/O only.

    ``project`` (default: the current directory) picks the per-project servers of Claude Code's ``~/.claude.json``.

    Raises :class:`~mcpsync.ConfigError` when the file is missing, is not JSON
    (with line and column), or does not validate.
    """
    p = Path(path).expanduser()
    try:
        text = p.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise ConfigError("%s: cannot read the configuration: %s" % (p, exc.strerror or exc)) from None
    except UnicodeDecodeError as exc:
        raise ConfigError("%s: not UTF-8 text (byte %d): %s" % (p, exc.start, exc.reason)) from None
    try:
        data = json.loads(_strip_jsonc(text))
    except ValueError as exc:
        raise ConfigError("%s: not valid JSON: %s" % (p, exc)) from None
    if not isinstance(data, dict):
        raise ConfigError("%s: expected a JSON object at the top level" % p)
    return parse_config(data, source=str(p), env=env, base_dir=p.parent, project=project)


def config_search_paths(
    cwd: Optional[Union[str, Path]] = None,
    home: Optional[Union[str, Path]] = None,
    environ: Optional[Mapping[str, str]] = None,
    platform: Optional[str] = None,
) -> List[Path]:
    """Where the CLI looks for a configuration, in order (existing or not).

    ``$MCPSYNC_CONFIG``; then in ``cwd``: ``mcpsync.json``, ``.mcp.json`` (Claude Code),
    ``opencode.json(c)``, ``.cursor/mcp.json``, ``.vscode/mcp.json``, ``.gemini/settings.json`` (Gemini CLI);
    then per user: ``~/.config/mcpsync/config.json`` (``$XDG_CONFIG_HOME``), ``~/.cursor/mcp.json``,
    ``~/.config/opencode/opencode.json(c)``, Claude Code's ``~/.claude.json``, Gemini CLI's
    ``~/.gemini/settings.json``, Claude Desktop's ``claude_desktop_config.json``.
    """
    environ = os.environ if environ is None else environ
    cwd_p = Path(cwd) if cwd is not None else Path.cwd()
    home_p = Path(home) if home is not None else Path.home()
    platform = platform or sys.platform
    xdg = Path(environ.get("XDG_CONFIG_HOME") or home_p / ".config")
    paths: List[Path] = []
    if environ.get("MCPSYNC_CONFIG"):
        paths.append(Path(environ["MCPSYNC_CONFIG"]).expanduser())
    paths += [
        cwd_p / n
        for n in (
            "mcpsync.json",
            ".mcp.json",
            "opencode.json",
            "opencode.jsonc",
            ".cursor/mcp.json",
            ".vscode/mcp.json",
            ".gemini/settings.json",
        )
    ]
    paths += [
        xdg / "mcpsync" / "config.json",
        home_p / ".cursor" / "mcp.json",
        xdg / "opencode" / "opencode.json",
        xdg / "opencode" / "opencode.jsonc",
        home_p / ".claude.json",
        home_p / ".gemini" / "settings.json",
    ]
    if platform == "darwin":
        paths.append(home_p / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json")
    elif platform.startswith("win"):
        appdata = Path(environ.get("APPDATA") or home_p / "AppData" / "Roaming")
        paths.append(appdata / "Claude" / "claude_desktop_config.json")
    else:
        paths.append(xdg / "Claude" / "claude_desktop_config.json")
    return paths


def find_config(
    cwd: Optional[Union[str, Path]] = None,
    home: Optional[Union[str, Path]] = None,
    environ: Optional[Mapping[str, str]] = None,
    platform: Optional[str] = None,
) -> Optional[Path]:
    """The first existing file of :func:`config_search_paths` that has MCP servers in it, or None.

    A file named by ``$MCPSYNC_CONFIG`` is returned even when it has none. The general settings files of
    Claude Code (``~/.claude.json``) and Gemini CLI (``settings.json``) count only when they name at least one
    server (for Claude Code: at the top level or for the project containing ``cwd``).
    """
    environ = os.environ if environ is None else environ
    cwd_p = Path(cwd) if cwd is not None else Path.cwd()
    for i, path in enumerate(config_search_paths(cwd, home, environ, platform)):
        if not path.is_file():
            continue
        if i == 0 and environ.get("MCPSYNC_CONFIG"):
            return path
        try:
            data = json.loads(_strip_jsonc(path.read_text(encoding="utf-8-sig")))
        except (OSError, ValueError):
            log.debug("skipping unreadable configuration %s", path)
            continue
        if not isinstance(data, dict):
            continue
        if path.name in (".claude.json", "settings.json"):
            if _names_servers(data, cwd_p):
                return path
            continue
        if _detect_format(data, str(path)) != "native":
            return path
        if isinstance(data, dict) and path.name == "mcpsync.json":
            return path
    return None


def _names_servers(data: Mapping[str, Any], cwd: Path) -> bool:
    """Whether a general settings file (``~/.claude.json``, Gemini CLI's) names MCP servers for ``cwd``."""
    if isinstance(data.get("mcpServers"), dict) and data["mcpServers"]:
        return True
    projects = claude_projects(data)
    key = project_key(projects, cwd)
    return key is not None and bool(projects[key]["mcpServers"])
