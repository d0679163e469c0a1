"""Protocol constants and small helpers shared by the example server modules.

Standard library only. Nothing here does I/O.
"""

from __future__ import annotations

import base64
import datetime
import json
from typing import Any, Dict, List, Optional, Tuple

__all__ = [
    "ALL_VERSIONS",
    "LATEST_LEGACY",
    "LEGACY_VERSIONS",
    "LOG_LEVELS",
    "MODERN_VERSIONS",
    "RpcError",
    "decode_state",
    "encode_state",
    "error_response",
    "notification",
    "now_iso",
    "request",
    "result_response",
]

#: Handshake-era revisions, newest first.
LEGACY_VERSIONS: Tuple[str, ...] = ("2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05")
#: Stateless-era revisions, newest first.
MODERN_VERSIONS: Tuple[str, ...] = ("2026-07-28",)
ALL_VERSIONS: Tuple[str, ...] = MODERN_VERSIONS + LEGACY_VERSIONS
LATEST_LEGACY = "2025-11-25"
LATEST_MODERN = "2026-07-28"

SERVER_NAME = "mcpsync-example"
SERVER_TITLE = "mcpsync example server"
SERVER_VERSION = "1.0.0"

# _meta keys of the 2026-07-28 request envelope.
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SUBSCRIPTION = "io.modelcontextprotocol/subscriptionId"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_RELATED_TASK = "io.modelcontextprotocol/related-task"
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"

# JSON-RPC and MCP error codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
RESOURCE_NOT_FOUND_LEGACY = -32002
HEADER_MISMATCH = -32020
MISSING_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022

#: RFC 5424 severities used by MCP logging, lowest first.
LOG_LEVELS: Tuple[str, ...] = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class RpcError(Exception):
    """Raised by a handler to answer the request with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_dict(self) -> Dict[str, Any]:
        """The JSON-RPC ``error`` member."""
        err: Dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err


def result_response(request_id: Any, result: Dict[str, Any]) -> Dict[str, Any]:
    """A JSON-RPC success response."""
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error_response(request_id: Any, code: int, message: str, data: Any = None) -> Dict[str, Any]:
    """A JSON-RPC error response (``request_id`` may be None)."""
    return {"jsonrpc": "2.0", "id": request_id, "error": RpcError(code, message, data).to_dict()}


def notification(method: str, params: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """A JSON-RPC notification."""
    msg: Dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def request(request_id: Any, method: str, params: Optional[Dict[str, Any]] = None) -> Dict[str, Any]:
    """A JSON-RPC request."""
    msg: Dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def now_iso() -> str:
    """The current UTC time as an ISO 8601 string with a ``Z`` suffix."""
    now = datetime.datetime.now(datetime.timezone.utc)
    return now.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (now.microsecond // 1000)


def encode_state(state: Dict[str, Any]) -> str:
    """Encode MRTR request state as an opaque URL-safe base64 string."""
    raw = json.dumps(state, separators=(",", ":"), sort_keys=True).encode("utf-8")
    return "st1." + base64.urlsafe_b64encode(raw).decode("ascii")


def decode_state(text: Any) -> Dict[str, Any]:
    """Decode a ``requestState`` produced by :func:`encode_state` (raises RpcError -32602)."""
    if not isinstance(text, str) or not text.startswith("st1."):
        raise RpcError(INVALID_PARAMS, "Invalid requestState")
    try:
        value = json.loads(base64.urlsafe_b64decode(text[4:].encode("ascii")).decode("utf-8"))
    except (ValueError, UnicodeError):
        raise RpcError(INVALID_PARAMS, "Invalid requestState") from None
    if not isinstance(value, dict):
        raise RpcError(INVALID_PARAMS, "Invalid requestState")
    return value


def level_enabled(level: str, threshold: Optional[str]) -> bool:
    """True when a message at ``level`` passes ``threshold`` (None lets everything through)."""
    if threshold is None:
        return True
    try:
        return LOG_LEVELS.index(level) >= LOG_LEVELS.index(threshold)
    except ValueError:
        return True


def text_content(text: str) -> List[Dict[str, Any]]:
    """A one-element content list with a text block."""
    return [{"type": "text", "text": text}]
