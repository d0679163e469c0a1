"""Rewrite uses of the names that left the top level of ``mcpsync`` (the 0.2 public API).

Run from the repository root after merging a branch written against the old API::

    python tests/tools/migrate_public_names.py          # rewrites tests/ examples/ docs/ bench/ .ci/ mcpsync/ README.md
    python tests/tools/migrate_public_names.py --check  # lists what it would change, exits 1 if anything
    python tests/tools/migrate_public_names.py docs tests  # only these paths

It rewrites ``mcpsync.Name`` (code and prose) and ``from mcpsync import A, B`` statements (in .py files and in
docs' code blocks), using :data:`MOVES`. tests/project/test_public_api.py checks that :data:`MOVES` and
docs/reference/migration-0.2.md cover every name of :data:`OLD_ALL` that is no longer at the top level.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List, Tuple

#: old top-level name -> where it is now (``mcpsync.<namespace>.<name>``, or a renamed top-level name).
MOVES = {
    "AppBridge": "mcpsync.apps.AppBridge",
    "AppResource": "mcpsync.apps.AppResource",
    "AppWebHost": "mcpsync.apps.AppWebHost",
    "Approval": "mcpsync.middleware.Approval",
    "ArgTransform": "mcpsync.manager.ArgTransform",
    "AuthRequest": "mcpsync.auth.AuthRequest",
    "AuthRequired": "mcpsync.errors.AuthRequired",
    "AuthResponse": "mcpsync.auth.AuthResponse",
    "BearerAuth": "mcpsync.auth.BearerAuth",
    "CallbackError": "mcpsync.errors.CallbackError",
    "Completion": "mcpsync.types.Completion",
    "ConnectError": "mcpsync.errors.ConnectError",
    "ConnectTimeout": "mcpsync.errors.ConnectTimeout",
    "ConnectionClosed": "mcpsync.errors.ConnectionClosed",
    "ConsentRequest": "mcpsync.registry.ConsentRequest",
    "CredentialBackend": "mcpsync.auth.CredentialBackend",
    "CredentialStore": "mcpsync.auth.CredentialStore",
    "DEFAULT": "mcpsync.session.DEFAULT",
    "ElicitationHandler": "mcpsync.client.ElicitationHandler",
    "ExecutionFailed": "mcpsync.errors.ExecutionFailed",
    "FileSeenStore": "mcpsync.input.FileSeenStore",
    "ForkedClientError": "mcpsync.errors.ForkedClientError",
    "HTTPStatusError": "mcpsync.errors.HTTPStatusError",
    "HeaderMismatch": "mcpsync.errors.HeaderMismatch",
    "HostCallbacks": "mcpsync.apps.HostCallbacks",
    "Implementation": "mcpsync.types.Implementation",
    "InputExpired": "mcpsync.input.InputExpired",
    "InputForged": "mcpsync.errors.InputForged",
    "InputNotResumable": "mcpsync.errors.InputNotResumable",
    "InputQuestion": "mcpsync.input.InputQuestion",
    "InputReplayed": "mcpsync.errors.InputReplayed",
    "InputRequired": "mcpsync.input.InputRequired",
    "InputTokenError": "mcpsync.errors.InputTokenError",
    "InputTokenExpired": "mcpsync.errors.InputTokenExpired",
    "InstallResult": "mcpsync.registry.InstallResult",
    "InsufficientScope": "mcpsync.errors.InsufficientScope",
    "Interceptor": "mcpsync.middleware.Interceptor",
    "InternalError": "mcpsync.errors.InternalError",
    "InvalidParams": "mcpsync.errors.InvalidParams",
    "InvalidRequest": "mcpsync.errors.InvalidRequest",
    "KeyringCredentialStore": "mcpsync.auth.KeyringCredentialStore",
    "LoadedSkill": "mcpsync.skills.LoadedSkill",
    "McpTool": "mcpsync.integrations.McpTool",
    "McpToolkit": "mcpsync.integrations.McpToolkit",
    "MemorySeenStore": "mcpsync.input.MemorySeenStore",
    "MessageTooLarge": "mcpsync.errors.MessageTooLarge",
    "MethodNotFound": "mcpsync.errors.MethodNotFound",
    "MissingClientCapability": "mcpsync.errors.MissingClientCapability",
    "NeedsClientRegistration": "mcpsync.errors.NeedsClientRegistration",
    "NotAvailableInEra": "mcpsync.errors.NotAvailableInEra",
    "NotificationQueue": "mcpsync.client.NotificationQueue",
    "OAuthAuth": "mcpsync.auth.OAuthAuth",
    "OAuthConfig": "mcpsync.auth.OAuthConfig",
    "OAuthError": "mcpsync.errors.OAuthError",
    "OpenTelemetryTracing": "mcpsync.middleware.OpenTelemetryTracing",
    "ParseError": "mcpsync.errors.ParseError",
    "PermissionDenied": "mcpsync.errors.PermissionDenied",
    "ProgressEvent": "mcpsync.types.ProgressEvent",
    "PromptArgument": "mcpsync.types.PromptArgument",
    "PromptMessage": "mcpsync.types.PromptMessage",
    "PromptNotFound": "mcpsync.errors.PromptNotFound",
    "ProxyError": "mcpsync.errors.ProxyError",
    "RedisCredentialStore": "mcpsync.auth.RedisCredentialStore",
    "RedisSeenStore": "mcpsync.input.RedisSeenStore",
    "RegistrationUnavailable": "mcpsync.errors.RegistrationUnavailable",
    "RegistryClient": "mcpsync.registry.RegistryClient",
    "RegistryEntry": "mcpsync.registry.RegistryEntry",
    "RegistryError": "mcpsync.registry.RegistryError",
    "RequestContext": "mcpsync.session.RequestContext",
    "RequestHandle": "mcpsync.session.RequestHandle",
    "RequestInfo": "mcpsync.middleware.RequestInfo",
    "ResourceNotFound": "mcpsync.errors.ResourceNotFound",
    "ResultBudget": "mcpsync.integrations.ResultBudget",
    "Retry": "mcpsync.middleware.Retry",
    "RetryEvent": "mcpsync.middleware.RetryEvent",
    "Root": "mcpsync.types.Root",
    "SSETransport": "mcpsync.transports.SSETransport",
    "SamplingHandler": "mcpsync.client.SamplingHandler",
    "SeenStore": "mcpsync.input.SeenStore",
    "ServerConfig": "mcpsync.manager.ServerConfig",
    "ServerError": "mcpsync.errors.ServerError",
    "ServerExited": "mcpsync.errors.ServerExited",
    "ServerManager": "mcpsync.Manager",
    "ServerNotification": "mcpsync.types.ServerNotification",
    "ServerStatus": "mcpsync.manager.ServerStatus",
    "ServerTool": "mcpsync.manager.ServerTool",
    "Session": "mcpsync.session.Session",
    "SessionExpired": "mcpsync.errors.SessionExpired",
    "Skill": "mcpsync.skills.Skill",
    "SkillFile": "mcpsync.skills.SkillFile",
    "SkillResource": "mcpsync.skills.SkillResource",
    "StdioTransport": "mcpsync.transports.StdioTransport",
    "StdoutNotJSONRPC": "mcpsync.errors.StdoutNotJSONRPC",
    "StreamableHTTPTransport": "mcpsync.transports.StreamableHTTPTransport",
    "Subscription": "mcpsync.client.Subscription",
    "TaskHandle": "mcpsync.tasks.TaskHandle",
    "ToolApprovalRequest": "mcpsync.middleware.ToolApprovalRequest",
    "ToolInputInvalid": "mcpsync.errors.ToolInputInvalid",
    "ToolOutputInvalid": "mcpsync.errors.ToolOutputInvalid",
    "ToolPolicy": "mcpsync.middleware.ToolPolicy",
    "ToolTransform": "mcpsync.manager.ToolTransform",
    "Transport": "mcpsync.transports.Transport",
    "TransportSink": "mcpsync.transports.TransportSink",
    "URLElicitationRequired": "mcpsync.errors.URLElicitationRequired",
    "UnknownContent": "mcpsync.types.UnknownContent",
    "UnknownTool": "mcpsync.manager.UnknownTool",
    "UnsupportedProtocolVersion": "mcpsync.errors.UnsupportedProtocolVersion",
    "UnsupportedVersionError": "mcpsync.errors.UnsupportedVersionError",
    "WarmCache": "mcpsync.warm.WarmCache",
    "content_block": "mcpsync.types.content_block",
    "error_from_response": "mcpsync.errors.error_from_response",
    "execute_tool_call": "mcpsync.adapters.execute_tool_call",
    "find_config": "mcpsync.manager.find_config",
    "install_server": "mcpsync.registry.install",
    "load_config": "mcpsync.manager.load_config",
    "open_seen_store": "mcpsync.input.open_seen_store",
    "outdated_servers": "mcpsync.registry.outdated",
    "parse_config": "mcpsync.manager.parse_config",
    "parse_form": "mcpsync.input.parse_form",
    "prompt_ref": "mcpsync.client.prompt_ref",
    "render_form": "mcpsync.input.render_form",
    "resource_ref": "mcpsync.client.resource_ref",
    "resume_task": "mcpsync.tasks.resume_task",
    "start_task": "mcpsync.tasks.start_task",
    "to_anthropic_tools": "mcpsync.adapters.to_anthropic_tools",
    "to_openai_responses_tools": "mcpsync.adapters.to_openai_responses_tools",
    "to_openai_tools": "mcpsync.adapters.to_openai_tools",
    "tool_definitions": "mcpsync.adapters.tool_definitions",
    "update_servers": "mcpsync.registry.update",
}

OLD_ALL = (
    "AppBridge",
    "AppResource",
    "AppResourceError",
    "AppWebHost",
    "Approval",
    "ArgTransform",
    "AudioContent",
    "Auth",
    "AuthError",
    "AuthRequest",
    "AuthRequired",
    "AuthResponse",
    "BearerAuth",
    "CallToolResult",
    "CallbackError",
    "CapabilityError",
    "Client",
    "ClientClosed",
    "Completion",
    "ConfigError",
    "ConnectError",
    "ConnectTimeout",
    "ConnectionClosed",
    "ConsentRequest",
    "ContentBlock",
    "CredentialBackend",
    "CredentialStore",
    "CredentialStoreError",
    "DEFAULT",
    "ElicitationHandler",
    "ElicitationRequest",
    "ElicitationResult",
    "EmbeddedResource",
    "ExecutionFailed",
    "FileSeenStore",
    "ForkedClientError",
    "GetPromptResult",
    "HTTPStatusError",
    "HandlerMissing",
    "HeaderMismatch",
    "HostCallbacks",
    "ImageContent",
    "Implementation",
    "InputExpired",
    "InputForged",
    "InputNotResumable",
    "InputQuestion",
    "InputReplayed",
    "InputRequired",
    "InputSeenStoreError",
    "InputTokenError",
    "InputTokenExpired",
    "InstallResult",
    "InsufficientScope",
    "Interceptor",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "KeyringCredentialStore",
    "LoadedSkill",
    "MCPError",
    "Manager",
    "McpTool",
    "McpToolkit",
    "MemorySeenStore",
    "MessageTooLarge",
    "MethodNotFound",
    "MissingClientCapability",
    "NeedsClientRegistration",
    "NotAvailableInEra",
    "NotificationQueue",
    "OAuthAuth",
    "OAuthConfig",
    "OAuthError",
    "OAuthManager",
    "OpenTelemetryTracing",
    "Page",
    "ParseError",
    "PermissionDenied",
    "ProgressEvent",
    "Prompt",
    "PromptArgument",
    "PromptMessage",
    "PromptNotFound",
    "ProtocolError",
    "ProxyError",
    "ReadResourceResult",
    "RedisCredentialStore",
    "RedisSeenStore",
    "RegistrationUnavailable",
    "RegistryClient",
    "RegistryEntry",
    "RegistryError",
    "RemoteError",
    "RequestCancelled",
    "RequestContext",
    "RequestHandle",
    "RequestInfo",
    "RequestTimeout",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "ResourceNotFound",
    "ResourceTemplate",
    "ResultBudget",
    "Retry",
    "RetryEvent",
    "Root",
    "SSETransport",
    "SamplingHandler",
    "SamplingRequest",
    "SamplingResult",
    "SchemaValidationError",
    "SeenStore",
    "ServerConfig",
    "ServerError",
    "ServerExited",
    "ServerManager",
    "ServerNotification",
    "ServerStatus",
    "ServerTool",
    "Session",
    "SessionExpired",
    "Skill",
    "SkillFile",
    "SkillResource",
    "SkillVerificationError",
    "StdioTransport",
    "StdoutNotJSONRPC",
    "StreamableHTTPTransport",
    "Subscription",
    "TaskFailed",
    "TaskHandle",
    "TextContent",
    "Tool",
    "ToolApprovalRequest",
    "ToolDenied",
    "ToolError",
    "ToolInputInvalid",
    "ToolOutputInvalid",
    "ToolPolicy",
    "ToolTransform",
    "Transport",
    "TransportError",
    "TransportSink",
    "URLElicitationRequired",
    "UnknownContent",
    "UnknownTool",
    "UnsupportedProtocolVersion",
    "UnsupportedVersionError",
    "WarmCache",
    "__version__",
    "connect",
    "content_block",
    "error_from_response",
    "execute_tool_call",
    "find_config",
    "install_server",
    "load_config",
    "open_seen_store",
    "outdated_servers",
    "parse_config",
    "parse_form",
    "prompt_ref",
    "render_form",
    "resource_ref",
    "resume_task",
    "start_task",
    "to_anthropic_tools",
    "to_openai_responses_tools",
    "to_openai_tools",
    "tool_definitions",
    "update_servers",
)

ROOTS = ("tests", "examples", "docs", "bench", ".ci", "mcpsync", "README.md")
SKIP = {
    "mcpsync/__init__.py",
    "tests/tools/migrate_public_names.py",
    "tests/project/test_public_api.py",
    "docs/reference/migration-0.2.md",
    "CHANGELOG.md",
}
SUFFIXES = (".py", ".md", ".txt", ".toml", ".cfg", ".ini", ".sh", ".yml", ".yaml", "")

_ATTR = re.compile(r"(?<![\w.])mcpsync\.(%s)\b" % "|".join(sorted(MOVES, key=len, reverse=True)))
_FROM = re.compile(r"^(?P<indent>[ \t]*(?:>>> )?)from mcpsync import (?P<body>\([^)]*\)|[^\n]*)", re.M)


def _split_target(target: str) -> Tuple[str, str]:
    module, _, name = target.rpartition(".")
    return module, name


def _rewrite_from(match: "re.Match[str]") -> str:
    indent, body = match.group("indent"), match.group("body")
    trailing = ""
    if not body.startswith("("):
        code, hash_, comment = body.partition("#")
        body, trailing = code, ("  #" + comment) if hash_ else ""
    entries = [re.sub(r"#[^\n]*", "", e).strip() for e in body.strip("()").replace("\\\n", " ").split(",")]
    entries = [e for e in entries if e]
    groups: Dict[str, List[str]] = {}
    changed = False
    for entry in entries:
        name, _, alias = (part.strip() for part in entry.partition(" as "))
        if name in MOVES:
            changed = True
            module, new = _split_target(MOVES[name])
            bound = alias or name
            groups.setdefault(module, []).append(new if bound == new else "%s as %s" % (new, bound))
        else:
            groups.setdefault("mcpsync", []).append(entry)
    if not changed:
        return match.group(0)
    out = []
    for module in sorted(groups, key=lambda m: (m != "mcpsync", m)):
        items = groups[module]
        line = "%sfrom %s import %s" % (indent, module, ", ".join(items))
        if len(line) > 110:
            pad = indent + "    " if not indent.endswith(">>> ") else "...     "
            line = "%sfrom %s import (\n%s\n%s)" % (
                indent,
                module,
                "\n".join(pad + item + "," for item in items),
                indent if not indent.endswith(">>> ") else "... ",
            )
        out.append(line)
    return "\n".join(out) + trailing


def _rewrite_attr(match: "re.Match[str]") -> str:
    text, start, end = match.string, match.start(), match.end()
    if start and end < len(text) and text[start - 1] in "\"'" and text[end] == text[start - 1]:
        return match.group(0)  # a quoted tag such as "mcpsync.InputRequired" (a serialised type name) stays
    return MOVES[match.group(1)]


_MANAGER_ALIAS = re.compile(
    r"^([ \t]*from mcpsync\.manager(?:\.manager)? import [^\n]*?)(?<!as )\bServerManager\b", re.M
)


def rewrite(text: str) -> str:
    """``text`` with every use of a moved name rewritten (idempotent)."""
    text = _FROM.sub(_rewrite_from, text)
    text = _MANAGER_ALIAS.sub(r"\1Manager as ServerManager", text)  # the alias left mcpsync.manager too
    return _ATTR.sub(_rewrite_attr, text)


def files(root: Path, roots: "Tuple[str, ...]" = ROOTS) -> List[Path]:
    listed = subprocess.run(["git", "ls-files", *roots], cwd=root, capture_output=True, text=True, check=True)
    return [
        root / rel
        for rel in listed.stdout.split()
        if rel not in SKIP and Path(rel).suffix in SUFFIXES and (root / rel).is_file()
    ]


def main(argv: List[str]) -> int:
    root = Path.cwd()
    check = "--check" in argv
    roots = tuple(a for a in argv if not a.startswith("--")) or ROOTS
    touched = []
    for path in files(root, roots):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        new = rewrite(text)
        if new != text:
            touched.append(str(path.relative_to(root)))
            if not check:
                path.write_text(new, encoding="utf-8")
    for name in touched:
        print(("would rewrite " if check else "rewrote ") + name)
    return 1 if check and touched else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
