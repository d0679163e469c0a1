"""mcpsync: a synchronous, thread-based Model Context Protocol client.

``import mcpsync`` is cheap: it imports neither requests, jsonschema, filelock
nor http.client, and starts no thread. The client, transports and helpers are
loaded on first attribute access.
"""

import logging as _logging
from typing import TYPE_CHECKING
from typing import Any as _Any
from typing import List as _List

from .__version__ import __version__ as __version__
from ._lazy import exports as _exports
from ._type_names import TYPE_NAMES as _TYPE_NAMES
from .errors import *  # noqa: F401,F403
from .errors import __all__ as _errors_all

if TYPE_CHECKING:  # the lazy names below, for type checkers (at run time each loads on first use);
    # "X as X" marks each as re-exported
    from ._dispatch import (
        NotificationQueue as NotificationQueue,
    )
    from .auth import (
        CredentialBackend as CredentialBackend,
        CredentialStore as CredentialStore,
        KeyringCredentialStore as KeyringCredentialStore,
        OAuthAuth as OAuthAuth,
        OAuthConfig as OAuthConfig,
        OAuthManager as OAuthManager,
        RedisCredentialStore as RedisCredentialStore,
    )
    from .apps.bridge import (
        AppBridge as AppBridge,
        HostCallbacks as HostCallbacks,
    )
    from .apps.web import (
        AppWebHost as AppWebHost,
    )
    from .client.app_page import (
        AppResource as AppResource,
    )
    from .httpauth import (
        Auth as Auth,
        AuthRequest as AuthRequest,
        AuthResponse as AuthResponse,
        BearerAuth as BearerAuth,
    )
    from .client.client import (
        Client as Client,
        connect as connect,
        prompt_ref as prompt_ref,
        resource_ref as resource_ref,
    )
    from .client.deferred import (
        InputExpired as InputExpired,
        InputQuestion as InputQuestion,
        InputRequired as InputRequired,
    )
    from .client.forms import (
        parse_form as parse_form,
        render_form as render_form,
    )
    from .client.seen import (
        SeenStore as SeenStore,
        open_seen_store as open_seen_store,
    )
    from .client.seen_file import FileSeenStore as FileSeenStore
    from .client.seen_memory import MemorySeenStore as MemorySeenStore
    from .client.seen_redis import RedisSeenStore as RedisSeenStore
    from .client.warm import (
        WarmCache as WarmCache,
    )
    from .client.handlers import (
        ElicitationHandler as ElicitationHandler,
        ElicitationRequest as ElicitationRequest,
        ElicitationResult as ElicitationResult,
        SamplingHandler as SamplingHandler,
        SamplingRequest as SamplingRequest,
        SamplingResult as SamplingResult,
    )
    from .client.interceptors import (
        Interceptor as Interceptor,
        RequestInfo as RequestInfo,
    )
    from .client.modern import (
        Subscription as Subscription,
    )
    from .client.policy import (
        Approval as Approval,
        ToolApprovalRequest as ToolApprovalRequest,
        ToolPolicy as ToolPolicy,
    )
    from .client.retry import (
        Retry as Retry,
        RetryEvent as RetryEvent,
    )
    from .client.skills import (
        LoadedSkill as LoadedSkill,
        Skill as Skill,
        SkillFile as SkillFile,
        SkillResource as SkillResource,
    )
    from .client.tasks import (
        TaskHandle as TaskHandle,
        resume_task as resume_task,
        start_task as start_task,
    )
    from .client.tracing import (
        OpenTelemetryTracing as OpenTelemetryTracing,
    )
    from .manager.adapters import (
        execute_tool_call as execute_tool_call,
        to_anthropic_tools as to_anthropic_tools,
        to_openai_responses_tools as to_openai_responses_tools,
        to_openai_tools as to_openai_tools,
        tool_definitions as tool_definitions,
    )
    from .integrations.core import (
        McpTool as McpTool,
        McpToolkit as McpToolkit,
    )
    from .integrations.results import (
        ResultBudget as ResultBudget,
    )
    from .manager.transforms import (
        ArgTransform as ArgTransform,
        ToolTransform as ToolTransform,
    )
    from .manager.config import (
        ServerConfig as ServerConfig,
        find_config as find_config,
        load_config as load_config,
        parse_config as parse_config,
    )
    from .manager.manager import (
        Manager as Manager,
        ServerManager as ServerManager,
        ServerStatus as ServerStatus,
        ServerTool as ServerTool,
        UnknownTool as UnknownTool,
    )
    from .registry.client import (
        RegistryClient as RegistryClient,
        RegistryEntry as RegistryEntry,
    )
    from .registry.errors import (
        RegistryError as RegistryError,
    )
    from .registry.installer import (
        ConsentRequest as ConsentRequest,
        InstallResult as InstallResult,
        install_server as install_server,
        outdated_servers as outdated_servers,
        update_servers as update_servers,
    )
    from .session import (
        DEFAULT as DEFAULT,
        RequestContext as RequestContext,
        RequestHandle as RequestHandle,
        Session as Session,
    )
    from .transports.base import (
        Transport as Transport,
        TransportSink as TransportSink,
    )
    from .transports.http.transport import (
        StreamableHTTPTransport as StreamableHTTPTransport,
    )
    from .transports.http.legacy_sse import (
        SSETransport as SSETransport,
    )
    from .transports.stdio import (
        StdioTransport as StdioTransport,
    )
    from .types import (
        AudioContent as AudioContent,
        CallToolResult as CallToolResult,
        Completion as Completion,
        ContentBlock as ContentBlock,
        EmbeddedResource as EmbeddedResource,
        GetPromptResult as GetPromptResult,
        ImageContent as ImageContent,
        Implementation as Implementation,
        Page as Page,
        ProgressEvent as ProgressEvent,
        Prompt as Prompt,
        PromptArgument as PromptArgument,
        PromptMessage as PromptMessage,
        ReadResourceResult as ReadResourceResult,
        Resource as Resource,
        ResourceContents as ResourceContents,
        ResourceLink as ResourceLink,
        ResourceTemplate as ResourceTemplate,
        Root as Root,
        ServerNotification as ServerNotification,
        TextContent as TextContent,
        Tool as Tool,
        UnknownContent as UnknownContent,
        content_block as content_block,
    )


_logging.getLogger(__name__).addHandler(_logging.NullHandler())

#: name -> module that defines it, imported on first use (keeps ``import mcpsync`` fast).
#: Add every new name to the ``if TYPE_CHECKING:`` imports above too (tests/test_typing.py checks it).
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
    "ElicitationHandler": "client.handlers",
    "SamplingHandler": "client.handlers",
    "SamplingRequest": "client.handlers",
    "SamplingResult": "client.handlers",
    "Subscription": "client.modern",
    "TaskHandle": "client.tasks",
    "Skill": "client.skills",
    "SkillResource": "client.skills",
    "SkillFile": "client.skills",
    "LoadedSkill": "client.skills",
    "AppResource": "client.app_page",
    "AppBridge": "apps.bridge",
    "HostCallbacks": "apps.bridge",
    "AppWebHost": "apps.web",
    "start_task": "client.tasks",
    "resume_task": "client.tasks",
    **{name: "types" for name in _TYPE_NAMES},
    "StreamableHTTPTransport": "transports.http.transport",
    "SSETransport": "transports.http.legacy_sse",
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
    "Auth": "httpauth",
    "AuthRequest": "httpauth",
    "AuthResponse": "httpauth",
    "BearerAuth": "httpauth",
    "OAuthConfig": "auth",
    "OAuthManager": "auth",
    "CredentialStore": "auth",
    "CredentialBackend": "auth",
    "Approval": "client.policy",
    "ToolApprovalRequest": "client.policy",
    "ToolPolicy": "client.policy",
    "Interceptor": "client.interceptors",
    "RequestInfo": "client.interceptors",
    "Retry": "client.retry",
    "RetryEvent": "client.retry",
    "OpenTelemetryTracing": "client.tracing",
    "KeyringCredentialStore": "auth",
    "RedisCredentialStore": "auth",
    "InputRequired": "client.deferred",
    "InputExpired": "client.deferred",
    "InputQuestion": "client.deferred",
    "render_form": "client.forms",
    "parse_form": "client.forms",
    "SeenStore": "client.seen",
    "open_seen_store": "client.seen",
    "MemorySeenStore": "client.seen_memory",
    "FileSeenStore": "client.seen_file",
    "RedisSeenStore": "client.seen_redis",
    "WarmCache": "client.warm",
    "RegistryClient": "registry.client",
    "RegistryEntry": "registry.client",
    "RegistryError": "registry.errors",
    "ConsentRequest": "registry.installer",
    "InstallResult": "registry.installer",
    "install_server": "registry.installer",
    "outdated_servers": "registry.installer",
    "update_servers": "registry.installer",
    "McpTool": "integrations.core",
    "McpToolkit": "integrations.core",
    "ResultBudget": "integrations.results",
    "ToolTransform": "manager.transforms",
    "ArgTransform": "manager.transforms",
}


_load, _names = _exports(__name__, _LAZY, globals())


def __getattr__(name: str) -> _Any:
    return _load(name)


def __dir__() -> _List[str]:
    return _names()


__all__ = sorted(set(_errors_all) | set(_LAZY) | {"__version__"})
