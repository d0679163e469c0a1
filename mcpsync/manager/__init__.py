"""Many servers at once: :class:`Manager` (:mod:`.manager`), configuration files (:mod:`.config`), tool naming
(:mod:`.naming`) and the per-server records (:mod:`.records`). The provider formats of the tools
(:mod:`.adapters`) are public as :mod:`mcpsync.adapters`."""

from .config import ServerConfig, config_search_paths, find_config, interpolate, load_config, parse_config
from .manager import Manager, ServerTool
from .records import (
    CONNECTED,
    CONNECTING,
    DISABLED,
    DISCONNECTED,
    EVENTS,
    FAILED,
    NEEDS_AUTH,
    NEEDS_CLIENT_REGISTRATION,
    NOT_CONNECTED,
    ServerPrompt,
    ServerResource,
    ServerResourceTemplate,
    ServerStatus,
    UnknownTool,
)
from .transforms import ArgTransform, ToolTransform

__all__ = [
    "ArgTransform",
    "CONNECTED",
    "CONNECTING",
    "DISABLED",
    "DISCONNECTED",
    "EVENTS",
    "FAILED",
    "Manager",
    "NEEDS_AUTH",
    "NEEDS_CLIENT_REGISTRATION",
    "NOT_CONNECTED",
    "ServerConfig",
    "ServerPrompt",
    "ServerResource",
    "ServerResourceTemplate",
    "ServerStatus",
    "ServerTool",
    "ToolTransform",
    "UnknownTool",
    "config_search_paths",
    "find_config",
    "interpolate",
    "load_config",
    "parse_config",
]
