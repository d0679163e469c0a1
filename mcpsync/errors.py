"""The exception tree of mcpsync.

Everything mcpsync raises derives from :class:`MCPError`. Builtins are mixed in
where callers expect them (a timeout is also a :class:`TimeoutError`, a bad
configuration also a :class:`ValueError`)::

    MCPError                                   root of everything mcpsync raises
    ├── ConfigError(MCPError, ValueError)      bad parameters or configuration file
    │   ├── MalformedHTTPRequest               an HTTP request that cannot be written correctly (not sent)
    │   ├── InputNotResumable                  an InputRequired that names no server, or another one
    │   └── InputTokenError                    a signed InputRequired token was refused
    │       ├── InputForged                    not what the secret signed: malformed, changed, other secret
    │       ├── InputTokenExpired              older than max_age, or dated in the future
    │       └── InputReplayed                  a single-use token that was used already
    ├── ClientClosed                           used after close()
    │   └── ForkedClientError                  used in a child process after os.fork()
    ├── TransportError
    │   ├── ConnectError                       spawn failed, TCP/TLS failed, bad status at connect
    │   │   ├── ProxyError                     the HTTP proxy refused (.status_code; 407: credentials)
    │   │   └── StdoutNotJSONRPC               a stdio server wrote non-JSON-RPC to stdout, never answered
    │   ├── ConnectionClosed                   the peer went away; pending calls fail with this
    │   │   └── ServerExited                   the stdio server exited (.exit_code, .stderr_tail, .stdout_lines)
    │   ├── SessionExpired                     HTTP 404 for a known session id, twice
    │   ├── HTTPStatusError                    an unexpected HTTP status (.status_code, short .body)
    │   └── MessageTooLarge                    one message exceeded the configured maximum size
    ├── ProtocolError                          undecodable frame, bad envelope, unsupported version
    │   ├── UnsupportedProtocolVersion         no protocol version both sides speak
    │   └── NotAvailableInEra                  the feature does not exist in the negotiated era
    ├── RequestTimeout(MCPError, TimeoutError) deadline passed; notifications/cancelled was sent
    │   └── ConnectTimeout(.., ConnectError)   open() took longer than connect_timeout (one deadline)
    ├── RequestCancelled                       the caller cancelled the request
    ├── CapabilityError                        the server did not declare the feature used
    ├── HandlerMissing                         the server needed input no handler was configured for
    ├── RemoteError                            a JSON-RPC error from the server (.code .message .data)
    │   ├── ParseError, InvalidRequest, MethodNotFound, InvalidParams, InternalError
    │   ├── ServerError, ResourceNotFound, PromptNotFound, ExecutionFailed, PermissionDenied
    │   ├── HeaderMismatch, MissingClientCapability, UnsupportedVersionError
    │   └── URLElicitationRequired
    ├── SchemaValidationError(MCPError, ValueError)
    │   ├── ToolInputInvalid                   arguments fail the tool's inputSchema
    │   └── ToolOutputInvalid                  structuredContent fails the tool's outputSchema
    ├── ToolError                              raised by CallToolResult.raise_for_error()
    ├── ToolDenied                             a tool policy or approval handler refused a call (never sent)
    ├── TaskFailed                             a task ended failed or cancelled
    ├── SkillVerificationError                 a skill file failed its digest, size or frontmatter check
    ├── AppResourceError                       an MCP Apps ui:// page failed its checks (scheme, MIME, size, pin)
    ├── AuthError
    │   ├── AuthRequired                       HTTP 401 (.www_authenticate parameters)
    │   ├── InsufficientScope                  HTTP 403 insufficient_scope
    │   ├── NeedsClientRegistration            no way to obtain a client id (.redirect_uri)
    │   ├── RegistrationUnavailable            registration endpoint down for now (5xx, 429, network); retry
    │   ├── OAuthError                         the authorization server said no (.error, .description)
    │   └── CallbackError                      the loopback callback failed (port busy, bad state)
    ├── CredentialStoreError                   lock timeout, bad file, corrupt JSON
    └── InputSeenStoreError                    the store of used resume-token ids cannot answer

Every error carries the context it knows: ``server`` (the server's name),
``method`` and ``request_id``. A remote error additionally has ``code``,
``message`` and ``data``. Local failures never carry a JSON-RPC code.
"""

from __future__ import annotations

from types import MappingProxyType

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: importing typing at run time costs ~15 ms
    from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Tuple, Type

__all__ = [
    "AppResourceError",
    "AuthError",
    "AuthRequired",
    "CallbackError",
    "CapabilityError",
    "ClientClosed",
    "ConfigError",
    "ConnectError",
    "ConnectTimeout",
    "ConnectionClosed",
    "CredentialStoreError",
    "ExecutionFailed",
    "ForkedClientError",
    "HTTPStatusError",
    "HandlerMissing",
    "HeaderMismatch",
    "InputForged",
    "InputNotResumable",
    "InputReplayed",
    "InputSeenStoreError",
    "InputTokenError",
    "InputTokenExpired",
    "InsufficientScope",
    "InternalError",
    "InvalidParams",
    "InvalidRequest",
    "MCPError",
    "MalformedHTTPRequest",
    "MessageTooLarge",
    "MethodNotFound",
    "MissingClientCapability",
    "NeedsClientRegistration",
    "NotAvailableInEra",
    "OAuthError",
    "ParseError",
    "PermissionDenied",
    "PromptNotFound",
    "ProtocolError",
    "ProxyError",
    "RegistrationUnavailable",
    "RemoteError",
    "RequestCancelled",
    "RequestTimeout",
    "ResourceNotFound",
    "SchemaValidationError",
    "ServerError",
    "ServerExited",
    "SessionExpired",
    "SkillVerificationError",
    "StdoutNotJSONRPC",
    "TaskFailed",
    "ToolDenied",
    "ToolError",
    "ToolInputInvalid",
    "ToolOutputInvalid",
    "TransportError",
    "URLElicitationRequired",
    "UnsupportedProtocolVersion",
    "UnsupportedVersionError",
    "error_from_response",
]


class MCPError(Exception):
    """Root of every exception mcpsync raises.

    Attributes:
        server: the name of the server involved, when known.
        method: the JSON-RPC method involved, when known.
        request_id: the JSON-RPC request id involved, when known.
    """

    def __init__(
        self,
        message: str = "",
        *,
        server: Optional[str] = None,
        method: Optional[str] = None,
        request_id: Any = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.server = server
        self.method = method
        self.request_id = request_id

    def _context(self) -> str:
        parts = []
        if self.server:
            parts.append("server=%s" % self.server)
        if self.method:
            parts.append("method=%s" % self.method)
        if self.request_id is not None:
            parts.append("id=%r" % (self.request_id,))
        return ", ".join(parts)

    def __str__(self) -> str:
        ctx = self._context()
        return "%s [%s]" % (self.message, ctx) if ctx else self.message

    def with_context(self, **context: Any) -> "MCPError":
        """Fill in missing context attributes (server, method, request_id); returns self."""
        for key, value in context.items():
            if value is not None and getattr(self, key, None) is None:
                setattr(self, key, value)
        return self


class ConfigError(MCPError, ValueError):
    """A parameter or a configuration file is invalid."""


class MalformedHTTPRequest(ConfigError):
    """An HTTP request that cannot be written correctly, refused before a byte of it was sent: a method that is
    not an HTTP token, a request target (or host) holding a control character or a space, a header name that is
    not a token, or a header value holding a control character (RFC 9110). Nothing reached the server.

    Attributes:
        part: what is wrong: ``"method"``, ``"target"``, ``"header name"`` or ``"header value"``.
        header: the header's name for a bad header value (``None`` otherwise). The message never holds a header
            value (it may be a secret), nor a header name that is itself malformed (only its position).
    """

    def __init__(self, message: str = "", *, part: str = "", header: Optional[str] = None, **context: Any) -> None:
        super().__init__(message, **context)
        self.part = part
        self.header = header


class InputNotResumable(ConfigError):
    """An :class:`~mcpsync.input.InputRequired` that cannot resume on this client: it names no server (so it could
    be replayed on any), or it belongs to another server name. Nothing was sent."""


class InputTokenError(ConfigError):
    """A signed :class:`~mcpsync.input.InputRequired` token (``InputRequired.loads``) was refused."""


class InputForged(InputTokenError):
    """The token is not one the secret signed: malformed, changed by even one byte, or signed with another
    secret. Never the same as an expired token: a forged one is an attack or a bug, not a slow user."""


class InputTokenExpired(InputTokenError):
    """The token's time stamp is older than ``max_age`` seconds, or lies in the future (beyond the leeway)."""


class InputReplayed(InputTokenError):
    """A single-use token came back a second time: its one-time id is already in the seen store."""


class InputSeenStoreError(MCPError):
    """The store of used token ids could not be read or written (lock timeout, bad file, Redis down, full).
    The token is refused: a store that cannot answer never lets a token through twice."""


class ClientClosed(MCPError):
    """The client (or manager) was used after ``close()``."""


class ForkedClientError(ClientClosed):
    """A client (or its session) made in one process was used in a child forked from it.

    Its threads and connection belong to the parent: in the child it is closed, never hangs. Raised in the
    child for a call that was in flight at fork time, and for every use of a client made with
    ``after_fork="error"`` (by default a client opens again in the child on first use). Open clients after
    forking (gunicorn ``post_fork``, Celery ``worker_process_init``, inside the multiprocessing worker), or
    let them reopen, or use a :class:`~mcpsync.Manager`, which reopens its servers in the child.

    Attributes:
        parent_pid: the process that opened the client.
        child_pid: the process that tried to use it.
    """

    def __init__(self, message: str = "", *, parent_pid: int = 0, child_pid: int = 0, **context: Any) -> None:
        super().__init__(message, **context)
        self.parent_pid = parent_pid
        self.child_pid = child_pid


class TransportError(MCPError):
    """Base class of failures of the underlying connection."""


class ConnectError(TransportError):
    """The connection could not be established (spawn failed, TCP/TLS error, bad status)."""


class ProxyError(ConnectError):
    """The HTTP proxy refused or could not make the connection.

    Attributes:
        status_code: the proxy's HTTP status (407: it wants credentials, or refused the ones in the proxy
            URL), or 0 when it broke off without an answer.
    """

    def __init__(self, message: str = "", *, status_code: int = 0, **context: Any) -> None:
        self.status_code = status_code
        super().__init__(message, **context)


def _stdout_text(lines: Sequence[str]) -> str:
    return "\n  " + "\n  ".join(lines)


class StdoutNotJSONRPC(ConnectError):
    """A stdio server wrote lines to stdout that are not JSON-RPC and sent no JSON-RPC message in time.

    Stdout carries only protocol messages; a banner or a log line printed there (``print("Server
    started")``) is the most common first-server bug. Raised by ``open()`` as soon as the handshake can
    no longer succeed: the server is alive, has written only such lines, and sent nothing else within
    ``stdout_grace`` seconds of the first one (a server that prints and exits raises
    :class:`ServerExited`, whose ``stdout_lines`` name the lines too).

    Attributes:
        stdout_lines: the first lines that were not JSON-RPC (each cut to 200 characters).
        line_count: how many such lines the server wrote in all.
        stderr_tail: the last lines the server wrote to stderr (captured mode only).
    """

    def __init__(
        self,
        message: str = "",
        *,
        stdout_lines: Optional[Sequence[str]] = None,
        line_count: int = 0,
        stderr_tail: Optional[List[str]] = None,
        **context: Any,
    ) -> None:
        self.stdout_lines = list(stdout_lines or [])
        self.line_count = max(line_count, len(self.stdout_lines))
        self.stderr_tail = list(stderr_tail or [])
        text = message or "the server wrote lines to stdout that are not JSON-RPC and no JSON-RPC message"
        if self.stdout_lines:
            text += "; stdout carries only protocol messages (a server logs to stderr); the first of %d line(s):%s" % (
                self.line_count,
                _stdout_text(self.stdout_lines),
            )
        if self.stderr_tail:
            text += "\nlast stderr lines:" + _stdout_text(self.stderr_tail[-10:])
        super().__init__(text, **context)


class ConnectionClosed(TransportError):
    """The connection ended; every pending call fails with this."""


class ServerExited(ConnectionClosed):
    """The stdio server process exited.

    Attributes:
        exit_code: the process's exit status (negative: killed by that signal), or None.
        stderr_tail: the last lines the server wrote to stderr (captured mode only).
        stdout_lines: for a server that exited before it sent any JSON-RPC message, the first lines it
            wrote to stdout that are not JSON-RPC (else empty).
    """

    def __init__(
        self,
        message: str = "",
        *,
        exit_code: Optional[int] = None,
        stderr_tail: Optional[List[str]] = None,
        stdout_lines: Optional[Sequence[str]] = None,
        **context: Any,
    ) -> None:
        self.exit_code = exit_code
        self.stderr_tail = list(stderr_tail or [])
        self.stdout_lines = list(stdout_lines or [])
        text = message or "server process exited"
        if exit_code is not None:
            text += " with exit code %s" % exit_code
        if self.stdout_lines:
            text += (
                " before it sent any JSON-RPC message; it wrote to stdout lines that are not JSON-RPC (stdout "
                "carries only protocol messages: a server logs to stderr), the first:%s"
                % _stdout_text(self.stdout_lines)
            )
        if self.stderr_tail:
            text += "; last stderr lines:\n  " + "\n  ".join(self.stderr_tail[-10:])
        super().__init__(text, **context)


class SessionExpired(TransportError):
    """The HTTP server no longer knows the session (404), even after one re-initialize."""


class HTTPStatusError(TransportError):
    """An HTTP response had a status the protocol does not expect.

    Attributes:
        status_code: the HTTP status.
        body: the first 500 characters of the response body.
        retry_after: seconds the server asked to wait (its ``Retry-After`` header), or None.
    """

    def __init__(
        self,
        message: str = "",
        *,
        status_code: int = 0,
        body: str = "",
        retry_after: Optional[float] = None,
        **context: Any,
    ) -> None:
        self.status_code = status_code
        self.body = (body or "")[:500]
        self.retry_after = retry_after
        super().__init__(message or "unexpected HTTP status %d" % status_code, **context)


class MessageTooLarge(TransportError):
    """One incoming message exceeded the configured maximum size; it was skipped."""


class ProtocolError(MCPError):
    """The peer broke the protocol (bad frame, bad envelope, unknown result type)."""


class UnsupportedProtocolVersion(ProtocolError):
    """No protocol version is supported by both sides.

    Attributes:
        offered: the version(s) the client offered.
        supported: the versions the server says it supports, when known.
    """

    def __init__(self, message: str = "", *, offered: Any = None, supported: Any = None, **context: Any) -> None:
        self.offered = offered
        self.supported = list(supported or [])
        super().__init__(message, **context)


class NotAvailableInEra(ProtocolError):
    """The feature does not exist in the protocol era negotiated with this server."""


class SkillVerificationError(MCPError):
    """A skill (SEP-2640 Skills extension) failed verification; its content was not handed out.

    Attributes:
        uri: the file (or skill) URI that failed.
        reason: ``"digest"``, ``"size"``, ``"frontmatter"``, ``"unlisted"`` (a file the skill's entry
            does not list), ``"entry"`` (an invalid skill entry) or ``"dynamic"`` (the entry publishes
            no digests and ``allow_dynamic`` was not set).
    """

    def __init__(self, message: str = "", *, uri: str = "", reason: str = "", **context: Any) -> None:
        self.uri = uri
        self.reason = reason
        super().__init__(message, **context)


class AppResourceError(MCPError):
    """An MCP Apps page (``ui://`` resource) failed verification; nothing of it was handed out.

    Attributes:
        uri: the page's URI.
        reason: ``"scheme"`` (not ``ui://``), ``"mime"`` (not exactly ``text/html;profile=mcp-app``),
            ``"content"`` (no text, or a blob that is not base64 UTF-8), ``"size"`` (over the cap),
            ``"origin"`` (not the same server, or contents for another URI), ``"digest"`` (the SHA-256 pin
            did not match), ``"link"`` (the tool links no page) or ``"csp"`` (the policy would hold a control
            character).
    """

    def __init__(self, message: str = "", *, uri: str = "", reason: str = "", **context: Any) -> None:
        self.uri = uri
        self.reason = reason
        super().__init__(message, **context)


def seconds_text(seconds: Optional[float]) -> str:
    """A duration for a message: ``2s``, ``1.99s``, ``0.25s``, ``120s`` (three significant digits at most; the
    float noise of a clock subtraction such as ``1.9936182530000224`` never reaches the user)."""
    if seconds is None:
        return "no limit"
    if seconds >= 100:
        return "%ds" % round(seconds)
    return "%ss" % ("%.3g" % seconds)


class RequestTimeout(MCPError, TimeoutError):
    """The request's deadline passed. ``notifications/cancelled`` was sent and a late reply is ignored.

    Attributes:
        timeout: the idle timeout in seconds that expired (or the hard maximum).
    """

    def __init__(self, message: str = "", *, timeout: Optional[float] = None, **context: Any) -> None:
        self.timeout = timeout
        MCPError.__init__(self, message or "request timed out after %s" % seconds_text(timeout), **context)


class ConnectTimeout(RequestTimeout, ConnectError):
    """``open()`` did not finish within ``connect_timeout``: one deadline for the whole open (spawn or connect,
    the ``server/discover`` probe, a transport fallback, the handshake). Also a :class:`RequestTimeout` and a
    :class:`ConnectError` (and a builtin :class:`TimeoutError`).

    Attributes:
        timeout: the ``connect_timeout`` that passed.
    """


class RequestCancelled(MCPError):
    """The caller cancelled the request (``RequestHandle.cancel()``, Ctrl-C)."""


class CapabilityError(MCPError):
    """The server did not declare the capability the called feature needs; nothing was sent."""


class HandlerMissing(MCPError):
    """The server asked for input (sampling, elicitation, roots) and no handler is configured."""


class SchemaValidationError(MCPError, ValueError):
    """A value failed a JSON Schema.

    Attributes:
        schema_path: the path inside the schema of the failing keyword, e.g. ``properties/a/type``.
        instance_path: the path inside the value that failed, e.g. ``a``.
        errors: every validation message.
    """

    def __init__(
        self,
        message: str = "",
        *,
        schema_path: str = "",
        instance_path: str = "",
        errors: Optional[List[str]] = None,
        **context: Any,
    ) -> None:
        self.schema_path = schema_path
        self.instance_path = instance_path
        self.errors = list(errors or [])
        super().__init__(message, **context)


class ToolInputInvalid(SchemaValidationError):
    """Tool arguments do not match the tool's ``inputSchema``; nothing was sent."""


class ToolOutputInvalid(SchemaValidationError):
    """A tool's ``structuredContent`` does not match its ``outputSchema``.

    Attributes:
        result: the CallToolResult that failed validation (nothing is lost).
    """

    result: Any = None


class ToolError(MCPError):
    """Raised by ``CallToolResult.raise_for_error()`` when the tool reported ``isError``.

    Attributes:
        result: the CallToolResult.
    """

    def __init__(self, message: str = "", *, result: Any = None, **context: Any) -> None:
        self.result = result
        super().__init__(message, **context)


class ToolDenied(MCPError):
    """A tool call was refused on this side: it never reached the server.

    Attributes:
        tool: the tool's name.
        reason: why (the policy rule, or the approval handler's reason).
        by: ``"policy"`` (allow/deny lists), ``"approval"`` (the approval handler) or ``"visibility"``
            (MCP Apps ``_meta.ui.visibility``: an app-only tool called for a model, or a model-only tool
            called by an App).
    """

    def __init__(
        self, message: str = "", *, tool: str = "", reason: str = "", by: str = "policy", **context: Any
    ) -> None:
        self.tool = tool
        self.reason = reason
        self.by = by
        super().__init__(message, **context)


class TaskFailed(MCPError):
    """A task ended in the ``failed`` or ``cancelled`` state.

    Attributes:
        task: the last task status object (a dict).
    """

    def __init__(self, message: str = "", *, task: Any = None, **context: Any) -> None:
        self.task = task
        super().__init__(message, **context)


class AuthError(MCPError):
    """Base class of authentication and authorization failures."""


class AuthRequired(AuthError):
    """The server answered 401: credentials are missing or no longer valid.

    Attributes:
        www_authenticate: the parsed ``WWW-Authenticate`` parameters
            (``resource_metadata``, ``scope``, ``error``, ``error_description``...).
        status_code: the HTTP status (401).
    """

    def __init__(
        self,
        message: str = "",
        *,
        www_authenticate: Optional[Dict[str, str]] = None,
        status_code: int = 401,
        **context: Any,
    ) -> None:
        self.www_authenticate = dict(www_authenticate or {})
        self.status_code = status_code
        super().__init__(message or "authorization required", **context)

    @property
    def resource_metadata(self) -> Optional[str]:
        """The ``resource_metadata`` URL from the challenge, if any."""
        return self.www_authenticate.get("resource_metadata")

    @property
    def scope(self) -> Optional[str]:
        """The ``scope`` from the challenge, if any."""
        return self.www_authenticate.get("scope")


class InsufficientScope(AuthRequired):
    """The server answered 403 with ``error="insufficient_scope"``."""

    def __init__(self, message: str = "", **kwargs: Any) -> None:
        kwargs.setdefault("status_code", 403)
        super().__init__(message or "insufficient scope", **kwargs)


class NeedsClientRegistration(AuthError):
    """No client id could be obtained; register ``redirect_uri`` with the authorization server.

    Attributes:
        redirect_uri: the exact redirect URI to register.
    """

    def __init__(self, message: str = "", *, redirect_uri: Optional[str] = None, **context: Any) -> None:
        self.redirect_uri = redirect_uri
        super().__init__(message, **context)


class RegistrationUnavailable(AuthError):
    """Dynamic client registration failed for a passing reason: HTTP 5xx, 429, or the network.

    Retryable: nothing is wrong with the configuration, and no client needs to be registered by
    hand (that is :class:`NeedsClientRegistration`, for a registration the server refused). Try
    the same operation again later, after ``retry_after`` seconds when the server said so.

    Attributes:
        status_code: the HTTP status (None when no answer came).
        retry_after: seconds from the ``Retry-After`` header, or None.
        retryable: always True.
    """

    retryable = True

    def __init__(
        self,
        message: str = "",
        *,
        status_code: Optional[int] = None,
        retry_after: Optional[float] = None,
        **context: Any,
    ) -> None:
        self.status_code = status_code
        self.retry_after = retry_after
        super().__init__(message, **context)


class OAuthError(AuthError):
    """The authorization server returned an OAuth error.

    Attributes:
        error: the OAuth error code (``invalid_grant``...).
        description: the ``error_description``, if any.
    """

    def __init__(self, message: str = "", *, error: str = "", description: str = "", **context: Any) -> None:
        self.error = error
        self.description = description
        super().__init__(message or ("%s: %s" % (error, description) if description else error), **context)


class CallbackError(AuthError):
    """The OAuth loopback callback failed (port taken, state mismatch, user denied, timeout)."""


class CredentialStoreError(MCPError):
    """The credential store could not be read or written (lock timeout, corrupt file, bad mode)."""


# ---------------------------------------------------------------------------
# Remote (JSON-RPC) errors and the code registry
# ---------------------------------------------------------------------------


def _code(*codes: int):  # type: ignore[no-untyped-def]
    """Mark a RemoteError class as the one for ``codes`` (collected into ``_BY_CODE`` below)."""

    def decorator(cls: Type["RemoteError"]) -> Type["RemoteError"]:
        cls._codes = codes
        cls.code = codes[0]
        return cls

    return decorator


class RemoteError(MCPError):
    """A JSON-RPC error object returned by the server.

    Attributes:
        code: the integer error code.
        message: the server's message.
        data: the optional ``data`` member, as received.
    """

    code: int = 0
    _codes: Tuple[int, ...] = ()  # the codes this very class stands for (set by @_code)

    def __init__(self, code: int, message: str, data: Any = None, **context: Any) -> None:
        super().__init__(message, **context)
        self.code = code
        self.data = data

    def __str__(self) -> str:
        base = "%s (code %d)" % (self.message, self.code)
        ctx = self._context()
        return "%s [%s]" % (base, ctx) if ctx else base

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (
            _rebuild_remote,
            (type(self), self.code, self.message, self.data, self.server, self.method, self.request_id),
        )


def _rebuild_remote(cls, code, message, data, server, method, request_id):  # type: ignore[no-untyped-def]
    return cls(code, message, data, server=server, method=method, request_id=request_id)


@_code(-32700)
class ParseError(RemoteError):
    """-32700: the server could not parse what was sent."""


@_code(-32600)
class InvalidRequest(RemoteError):
    """-32600: the request was not a valid JSON-RPC request."""


@_code(-32601)
class MethodNotFound(RemoteError):
    """-32601: the server does not implement the method."""


@_code(-32602)
class InvalidParams(RemoteError):
    """-32602: invalid method parameters."""


@_code(-32603)
class InternalError(RemoteError):
    """-32603: an internal error in the server."""


@_code(-32000)
class ServerError(RemoteError):
    """-32000: a server-specific error."""


@_code(-32002, -32001)
class ResourceNotFound(RemoteError):
    """-32002 (spec) or -32001 (older servers): the resource does not exist.

    In the 2026-07-28 revision resource-not-found arrives as -32602 with a ``uri``
    in ``data``; the client maps that case to this class too.
    """


@_code(-32003)
class PromptNotFound(RemoteError):
    """-32003: the prompt does not exist."""


@_code(-32004)
class ExecutionFailed(RemoteError):
    """-32004: the server failed to execute the operation."""


@_code(-32005)
class PermissionDenied(RemoteError):
    """-32005: the operation is not permitted."""


@_code(-32020)
class HeaderMismatch(RemoteError):
    """-32020: HTTP headers do not match the request body (2026-07-28)."""


@_code(-32021)
class MissingClientCapability(RemoteError):
    """-32021: the request needs a client capability that was not declared (2026-07-28)."""


@_code(-32022)
class UnsupportedVersionError(RemoteError):
    """-32022: the server does not support the request's protocol version.

    ``supported`` lists the versions the server offered in ``data.supported``.
    """

    @property
    def supported(self) -> List[str]:
        """The versions the server says it supports."""
        if isinstance(self.data, dict) and isinstance(self.data.get("supported"), list):
            return [v for v in self.data["supported"] if isinstance(v, str)]
        return []


@_code(-32042)
class URLElicitationRequired(RemoteError):
    """-32042: the server needs the user to complete a URL elicitation first."""

    @property
    def elicitations(self) -> List[Dict[str, Any]]:
        """The URL elicitations listed in ``data.elicitations``."""
        if isinstance(self.data, dict) and isinstance(self.data.get("elicitations"), list):
            return list(self.data["elicitations"])
        return []


def _remote_classes(cls: Type[RemoteError]) -> Iterator[Type[RemoteError]]:
    yield cls
    for sub in cls.__subclasses__():
        yield from _remote_classes(sub)


#: JSON-RPC error code -> the most specific RemoteError class (read-only, built once at import)
_BY_CODE: Mapping[int, Type[RemoteError]] = MappingProxyType(
    {c: cls for cls in _remote_classes(RemoteError) for c in cls.__dict__.get("_codes", ())}
)


def error_from_response(error: Dict[str, Any], **context: Any) -> RemoteError:
    """Build the most specific :class:`RemoteError` for a JSON-RPC error object.

    Unknown codes become a plain :class:`RemoteError` carrying ``.code``.
    A -32602 whose data names a ``uri`` on ``resources/read`` is a :class:`ResourceNotFound`.
    """
    code = error.get("code")
    if not isinstance(code, int) or isinstance(code, bool):
        code = -32603
    message = error.get("message")
    if not isinstance(message, str):
        message = str(message)
    data = error.get("data")
    cls = _BY_CODE.get(code, RemoteError)
    if code == -32602 and context.get("method") == "resources/read" and isinstance(data, dict) and "uri" in data:
        cls = ResourceNotFound
    return cls(code, message, data, **context)
