"""mcpsync: a synchronous, thread-based Model Context Protocol client.

The top level holds what most programs need: :class:`Client` and :func:`connect`, :class:`Manager` for many
servers, :class:`Auth` and :class:`OAuthManager`, the result types, the sampling and elicitation request types,
and :class:`MCPError` with its first-level subclasses. Everything else lives in a namespace with its own
``__all__``:

* :mod:`mcpsync.errors` -- every error class; :mod:`mcpsync.types` -- every protocol type
* :mod:`mcpsync.handles` -- :class:`~mcpsync.handles.Handle`, the one contract of every handle for unfinished work
* :mod:`mcpsync.client`, :mod:`mcpsync.session`, :mod:`mcpsync.transports` -- the layers under a client
* :mod:`mcpsync.auth` -- OAuth, credential stores, :class:`~mcpsync.auth.BearerAuth`
* :mod:`mcpsync.adapters` -- tools in the OpenAI / Anthropic formats; :mod:`mcpsync.integrations` -- agent frameworks
* :mod:`mcpsync.middleware` -- policy, approval, interceptors, retry, tracing
* :mod:`mcpsync.input`, :mod:`mcpsync.tasks`, :mod:`mcpsync.skills`, :mod:`mcpsync.apps`, :mod:`mcpsync.warm`,
  :mod:`mcpsync.manager`, :mod:`mcpsync.registry` -- the extensions

``import mcpsync`` is cheap: it imports neither requests, jsonschema, filelock nor http.client, and starts no
thread. The client, transports, namespaces and helpers are loaded on first attribute access.
"""

import logging as _logging
from types import MappingProxyType as _MappingProxyType
from typing import TYPE_CHECKING

from .__version__ import __version__ as __version__
from ._lazy import exports as _exports
from .errors import (
    AppResourceError as AppResourceError,
    AuthError as AuthError,
    CapabilityError as CapabilityError,
    ClientClosed as ClientClosed,
    ConfigError as ConfigError,
    CredentialStoreError as CredentialStoreError,
    HandlerMissing as HandlerMissing,
    InputSeenStoreError as InputSeenStoreError,
    MCPError as MCPError,
    ProtocolError as ProtocolError,
    RemoteError as RemoteError,
    RequestCancelled as RequestCancelled,
    RequestTimeout as RequestTimeout,
    SchemaValidationError as SchemaValidationError,
    SkillVerificationError as SkillVerificationError,
    TaskFailed as TaskFailed,
    ToolDenied as ToolDenied,
    ToolError as ToolError,
    TransportError as TransportError,
)

if TYPE_CHECKING:  # the lazy names below, for type checkers (at run time each loads on first use);
    # "X as X" marks each as re-exported
    from . import (
        adapters as adapters,
        apps as apps,
        auth as auth,
        client as client,
        errors as errors,
        handles as handles,
        input as input,
        integrations as integrations,
        manager as manager,
        middleware as middleware,
        registry as registry,
        session as session,
        skills as skills,
        tasks as tasks,
        transports as transports,
        types as types,
        warm as warm,
    )
    from .auth import (
        OAuthManager as OAuthManager,
    )
    from .client.client import (
        Client as Client,
        connect as connect,
    )
    from .client.handlers import (
        ElicitationRequest as ElicitationRequest,
        ElicitationResult as ElicitationResult,
        SamplingRequest as SamplingRequest,
        SamplingResult as SamplingResult,
    )
    from .httpauth import (
        Auth as Auth,
    )
    from .manager.manager import (
        Manager as Manager,
    )
    from .types import (
        AudioContent as AudioContent,
        CallToolResult as CallToolResult,
        ContentBlock as ContentBlock,
        EmbeddedResource as EmbeddedResource,
        GetPromptResult as GetPromptResult,
        ImageContent as ImageContent,
        Page as Page,
        Prompt as Prompt,
        ReadResourceResult as ReadResourceResult,
        Resource as Resource,
        ResourceContents as ResourceContents,
        ResourceLink as ResourceLink,
        ResourceTemplate as ResourceTemplate,
        TextContent as TextContent,
        Tool as Tool,
    )


_logging.getLogger(__name__).addHandler(_logging.NullHandler())

#: name -> module that defines it, imported on first use (keeps ``import mcpsync`` fast).
#: Add every new name to the ``if TYPE_CHECKING:`` imports above too (tests/project/test_typing.py checks it).
#: Keep the top level small (tests/project/test_public_api.py): a new name belongs in a namespace first.
_LAZY = _MappingProxyType(
    {
        "Auth": "httpauth",
        "Client": "client.client",
        "ElicitationRequest": "client.handlers",
        "ElicitationResult": "client.handlers",
        "Manager": "manager.manager",
        "OAuthManager": "auth",
        "SamplingRequest": "client.handlers",
        "SamplingResult": "client.handlers",
        "connect": "client.client",
        **{
            name: "types"
            for name in (
                "AudioContent",
                "CallToolResult",
                "ContentBlock",
                "EmbeddedResource",
                "GetPromptResult",
                "ImageContent",
                "Page",
                "Prompt",
                "ReadResourceResult",
                "Resource",
                "ResourceContents",
                "ResourceLink",
                "ResourceTemplate",
                "TextContent",
                "Tool",
            )
        },
    }
)

#: The namespaces, loaded on first attribute access (``mcpsync.errors`` is always loaded).
_SUBMODULES = frozenset(
    {
        "adapters",
        "apps",
        "auth",
        "client",
        "errors",
        "handles",
        "input",
        "integrations",
        "manager",
        "middleware",
        "registry",
        "session",
        "skills",
        "tasks",
        "transports",
        "types",
        "warm",
    }
)

__getattr__, __dir__ = _exports(__name__, _LAZY, globals(), _SUBMODULES)


__all__ = [
    "AppResourceError",
    "AudioContent",
    "Auth",
    "AuthError",
    "CallToolResult",
    "CapabilityError",
    "Client",
    "ClientClosed",
    "ConfigError",
    "ContentBlock",
    "CredentialStoreError",
    "ElicitationRequest",
    "ElicitationResult",
    "EmbeddedResource",
    "GetPromptResult",
    "HandlerMissing",
    "ImageContent",
    "InputSeenStoreError",
    "MCPError",
    "Manager",
    "OAuthManager",
    "Page",
    "Prompt",
    "ProtocolError",
    "ReadResourceResult",
    "RemoteError",
    "RequestCancelled",
    "RequestTimeout",
    "Resource",
    "ResourceContents",
    "ResourceLink",
    "ResourceTemplate",
    "SamplingRequest",
    "SamplingResult",
    "SchemaValidationError",
    "SkillVerificationError",
    "TaskFailed",
    "TextContent",
    "Tool",
    "ToolDenied",
    "ToolError",
    "TransportError",
    "__version__",
    "connect",
]
