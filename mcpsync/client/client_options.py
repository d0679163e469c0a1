"""The protocol and behaviour settings of a client that most code leaves alone: :class:`ClientOptions`
(``Client(options=...)``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Mapping, Optional, Type, TypeVar, Union

from ..errors import ConfigError
from ..wire import protocol as P

if TYPE_CHECKING:
    from .interceptors import Interceptor
    from .memory import ServerMemory

__all__ = ["ClientOptions", "LEFT_THE_CORE"]

_O = TypeVar("_O", bound="ClientOptions")

#: Settings that left the client for an extension package, with their new spelling: the migration table for
#: ``ClientOptions(...)`` fields and ``Client(...)`` / per-call keywords of these names (see :mod:`.options`).
LEFT_THE_CORE: Mapping[str, str] = MappingProxyType(
    {
        "defer_input": "extensions=[mcpsync.input.DeferInput()] on the Client; per call: "
        "with mcpsync.input.deferring(client): ...",
        "input_timeout": "extensions=[mcpsync.input.DeferInput(timeout=...)] on the Client",
    }
)


@dataclass(frozen=True)
class ClientOptions:
    """Protocol knobs and defaults of one client; ``Client(target, options=ClientOptions(validate_input=True))``.

    Immutable and thread-safe; one object may serve many clients. Checked when built (a bad value is a
    :class:`~mcpsync.errors.ConfigError`).

    Args:
        max_total_timeout: the default hard cap per request in seconds, progress or not (None: none); each
            method's ``max_total_timeout=`` overrides it.
        probe_timeout: how long the ``server/discover`` probe may take before ``protocol="auto"`` falls back to
            the ``initialize`` handshake (clipped to what is left of ``connect_timeout``).
        log_level: ask the server for logs at this level and above (``"debug"``... ``"emergency"``); they go
            to ``Callbacks.on_log`` and the ``mcpsync.server.<name>`` logger.
        validate_input: check arguments against a listed tool's ``inputSchema`` before sending (a bad call
            raises ToolInputInvalid and is never sent).
        validate_output: check ``structuredContent`` against the tool's ``outputSchema`` (a result for a tool
            not yet listed makes the client list the tools once).
        keepalive: seconds between keep-alive pings (handshake era only; None: off).
        max_pages: guard against endless cursor loops in the ``list_*`` methods.
        cache: honour the 2026-07-28 ``ttlMs`` caching hints of listings and reads.
        tasks: declare task support (2026-07-28 tasks extension): long tool calls run as tasks.
        apps: declare MCP Apps support (``extensions["io.modelcontextprotocol/ui"]``, both eras), so servers
            offer tools that link an interactive page (a protocol declaration only: the page is read by the
            ``mcpsync.apps`` extension, see docs/guides/apps.md).
        auto_relisten: re-open listen streams that end unexpectedly.
        trace_context: W3C trace context (``traceparent``...) put into every request's ``_meta`` (with
            tracing active, the current span's context wins).
        tracing: ``"auto"`` (OpenTelemetry spans when the application set a tracer provider), True, False, or
            an :class:`~mcpsync.middleware.OpenTelemetryTracing` with its own tracer provider (outermost of
            the ``middleware=`` entries).
        lazy: open on first use (thread-safe, single flight) instead of at ``open()``/``with``; for module-level
            clients in web apps. A failed first open is retried by the next use.
        after_fork: a client opened before ``os.fork()`` (gunicorn ``--preload``, Celery prefork,
            multiprocessing "fork") is, in the child, ``"reopen"``: opened again there on first use, or
            ``"error"``: every use raises :class:`~mcpsync.errors.ForkedClientError`.
        memory: the :class:`~mcpsync.client.ServerMemory` the client keeps what it learns about servers in (the
            protocol era each spoke, the remote transport that worked for a URL) and reads it from on its next
            connections. None (the default): a memory of the client's own. Clients given one memory share it, so
            a fleet probes each server once; a :class:`~mcpsync.Manager` gives its clients its own
            (``manager.memory``). Not part of the options' equality.
    """

    max_total_timeout: Optional[float] = None
    probe_timeout: float = 5.0
    log_level: Optional[str] = None
    validate_input: bool = False
    validate_output: bool = True
    keepalive: Optional[float] = None
    max_pages: int = 1000
    cache: bool = True
    tasks: bool = True
    apps: bool = False
    auto_relisten: bool = True
    trace_context: Optional[Mapping[str, str]] = field(default=None, hash=False)
    tracing: Union[bool, str, "Interceptor"] = "auto"
    lazy: bool = False
    after_fork: Literal["reopen", "error"] = "reopen"
    memory: Optional["ServerMemory"] = field(default=None, compare=False, hash=False, repr=False)

    def __new__(cls: Type[_O], *args: Any, **kwargs: Any) -> _O:
        # a field that left for an extension is a ConfigError naming its new spelling (Python's TypeError
        # would only say the keyword is unexpected); type checkers reject it already
        for key in sorted(kwargs):
            if key in LEFT_THE_CORE:
                raise ConfigError("ClientOptions(%s=) moved: pass %s" % (key, LEFT_THE_CORE[key]))
        return super().__new__(cls)

    def __post_init__(self) -> None:
        if self.log_level is not None and self.log_level not in P.LOG_LEVELS:
            raise ConfigError("ClientOptions.log_level must be one of %s" % ", ".join(P.LOG_LEVELS))
        if self.after_fork not in ("reopen", "error"):
            raise ConfigError("ClientOptions.after_fork must be 'reopen' or 'error', not %r" % (self.after_fork,))
        if not isinstance(self.max_pages, int) or self.max_pages < 1:
            raise ConfigError("ClientOptions.max_pages must be a positive integer")
        if self.trace_context is not None and not (
            isinstance(self.trace_context, Mapping)
            and all(isinstance(k, str) and isinstance(v, str) for k, v in self.trace_context.items())
        ):
            raise ConfigError("ClientOptions.trace_context must map strings to strings")
        if self.memory is not None:
            from .memory import ServerMemory

            if not isinstance(self.memory, ServerMemory):
                raise ConfigError("ClientOptions.memory must be a mcpsync.client.ServerMemory, got %r" % (self.memory,))
