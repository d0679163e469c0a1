"""mcpsync: a synchronous, thread-based Model Context Protocol client.

``import mcpsync`` is cheap: it imports neither requests, jsonschema, filelock
nor http.client, and starts no thread. The client, transports and helpers are
loaded on first attribute access.
"""

import logging as _logging

from .__version__ import __version__ as __version__
from .errors import *  # noqa: F401,F403
from ._names import TYPE_NAMES as _TYPE_NAMES
from .errors import __all__ as _errors_all

_logging.getLogger(__name__).addHandler(_logging.NullHandler())

#: name -> module that defines it, imported on first use (keeps ``import mcpsync`` fast).
_LAZY = {
    "Client": "client",
    "connect": "client",
    "prompt_ref": "client",
    "resource_ref": "client",
    "DEFAULT": "session",
    "RequestHandle": "session",
    "RequestContext": "session",
    "Session": "session",
    "Transport": "transports.base",
    "TransportSink": "transports.base",
    "StdioTransport": "transports.stdio",
    "NotificationQueue": "_dispatch",
    "ElicitationRequest": "handlers",
    "ElicitationResult": "handlers",
    "SamplingRequest": "handlers",
    "SamplingResult": "handlers",
    "Subscription": "_modern",
    "TaskHandle": "tasks",
    "start_task": "tasks",
    "resume_task": "tasks",
    **{name: "types" for name in _TYPE_NAMES},
    "StreamableHTTPTransport": "transports.http",
    "SSETransport": "transports.sse",
    "Manager": "manager",
    "ServerManager": "manager",
    "ServerStatus": "manager",
    "ServerTool": "manager",
    "UnknownTool": "manager",
    "parse_config": "config",
    "to_openai_responses_tools": "adapters",
    "tool_definitions": "adapters",
    "ServerConfig": "config",
    "load_config": "config",
    "find_config": "config",
    "to_openai_tools": "adapters",
    "to_anthropic_tools": "adapters",
    "execute_tool_call": "adapters",
    "OAuthAuth": "auth",
    "OAuthConfig": "auth",
    "OAuthManager": "auth",
    "CredentialStore": "auth",
}


def __getattr__(name: str) -> "object":
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError("module 'mcpsync' has no attribute %r" % name)
    import importlib

    value = getattr(importlib.import_module("." + module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> "list[str]":
    return sorted(set(globals()) | set(_LAZY))


__all__ = sorted(set(_errors_all) | set(_LAZY) | {"__version__"})
