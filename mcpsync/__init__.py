"""mcpsync: a synchronous, thread-based Model Context Protocol client.

``import mcpsync`` is cheap: it imports neither requests, jsonschema, filelock
nor http.client, and starts no thread. The client, transports and helpers are
loaded on first attribute access.
"""

import logging as _logging

from .__version__ import __version__ as __version__
from ._names import TYPE_NAMES as _TYPE_NAMES
from .errors import *  # noqa: F401,F403
from .errors import __all__ as _errors_all

_logging.getLogger(__name__).addHandler(_logging.NullHandler())

#: name -> module that defines it, imported on first use (keeps ``import mcpsync`` fast).
_LAZY = {
    "Client": "client.client",
    "connect": "client.client",
    "prompt_ref": "client.client",
    "resource_ref": "client.client",
    "DEFAULT": "session",
    "RequestHandle": "session",
    "RequestContext": "session",
    "Session": "session",
    "Transport": "transports.base",
    "TransportSink": "transports.base",
    "StdioTransport": "transports.stdio",
    "NotificationQueue": "_dispatch",
    "ElicitationRequest": "client.handlers",
    "ElicitationResult": "client.handlers",
    "SamplingRequest": "client.handlers",
    "SamplingResult": "client.handlers",
    "Subscription": "client.modern",
    "TaskHandle": "client.tasks",
    "start_task": "client.tasks",
    "resume_task": "client.tasks",
    **{name: "types" for name in _TYPE_NAMES},
    "StreamableHTTPTransport": "transports.http",
    "SSETransport": "transports.sse",
    "Manager": "manager.manager",
    "ServerManager": "manager.manager",
    "ServerStatus": "manager.manager",
    "ServerTool": "manager.manager",
    "UnknownTool": "manager.manager",
    "parse_config": "manager.config",
    "to_openai_responses_tools": "manager.adapters",
    "tool_definitions": "manager.adapters",
    "ServerConfig": "manager.config",
    "load_config": "manager.config",
    "find_config": "manager.config",
    "to_openai_tools": "manager.adapters",
    "to_anthropic_tools": "manager.adapters",
    "execute_tool_call": "manager.adapters",
    "OAuthAuth": "auth",
    "OAuthConfig": "auth",
    "OAuthManager": "auth",
    "CredentialStore": "auth",
    "CredentialBackend": "auth",
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
