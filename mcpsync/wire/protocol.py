"""Protocol constants: revisions, eras, method names, ``_meta`` keys."""

from __future__ import annotations

__all__ = [
    "HANDSHAKE_VERSIONS",
    "LATEST_HANDSHAKE_VERSION",
    "MODERN_VERSIONS",
    "LATEST_MODERN_VERSION",
    "META_CLIENT_CAPABILITIES",
    "META_CLIENT_INFO",
    "META_LOG_LEVEL",
    "META_PROTOCOL_VERSION",
    "META_SERVER_INFO",
    "META_SUBSCRIPTION_ID",
    "TASKS_EXTENSION",
    "UI_EXTENSION",
    "UI_MIME_TYPE",
    "era_of",
]

#: The handshake-era revisions we accept, newest first (we offer the first).
HANDSHAKE_VERSIONS = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
LATEST_HANDSHAKE_VERSION = HANDSHAKE_VERSIONS[0]

#: The stateless revisions we speak, newest first.
MODERN_VERSIONS = ("2026-07-28",)
LATEST_MODERN_VERSION = MODERN_VERSIONS[0]

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
#: MCP Apps (ext-apps, stable 2026-01-26): the extension id and the one page MIME type it defines
UI_EXTENSION = "io.modelcontextprotocol/ui"
UI_MIME_TYPE = "text/html;profile=mcp-app"

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def era_of(version: str) -> str:
    """'modern' for a stateless revision, 'legacy' for a handshake one, '' for an unknown string.

    Versions are an enumerated set, never compared as dates.
    """
    if version in MODERN_VERSIONS:
        return "modern"
    if version in HANDSHAKE_VERSIONS:
        return "legacy"
    return ""
