"""How a client starts and talks to a local server process: :class:`StdioOptions` (``Client(stdio=...)``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Mapping, Optional

from ..errors import ConfigError

__all__ = ["StdioOptions"]


@dataclass(frozen=True)
class StdioOptions:
    """The settings of a stdio server (a command list target); ``Client(cmd, stdio=StdioOptions(cwd="/srv"))``.

    Immutable and thread-safe; one object may serve many clients. Checked when built (a bad value is a
    :class:`~mcpsync.errors.ConfigError` before any process starts).

    Args:
        cwd: the server process's working directory (None: the caller's).
        env: environment variables for the server. With ``inherit_env=False`` (the default) the server gets
            only these plus a minimal safe set (``PATH``, ``HOME``, ``SYSTEMROOT``...), never the caller's
            secrets.
        inherit_env: start from the caller's whole environment (``env`` is laid over it).
        stderr: ``"capture"`` (default: kept in :attr:`mcpsync.Client.stderr_tail` and logged at debug level),
            ``"inherit"`` (the caller's stderr) or ``"discard"``.
        on_stderr: called with each stderr line of the server (``stderr="capture"``), on the stderr reader
            thread: keep it quick.
        framing: ``"newline"`` (the MCP stdio framing) or ``"content-length"`` (LSP-style headers).
        max_message_size: the largest single message accepted from the server, in bytes (64 MiB).
        shutdown_timeout: seconds ``close()`` waits for each step of the shutdown (close stdin, terminate,
            kill).
        stdout_grace: seconds the server may keep writing after it was asked to stop before its stdout is
            abandoned (None: wait for the process).
    """

    cwd: Optional[str] = None
    env: Optional[Mapping[str, str]] = field(default=None, hash=False)
    inherit_env: bool = False
    stderr: str = "capture"
    on_stderr: Optional[Callable[[str], object]] = None
    framing: str = "newline"
    max_message_size: int = 64 * 1024 * 1024
    shutdown_timeout: float = 2.0
    stdout_grace: Optional[float] = 3.0

    def __post_init__(self) -> None:
        if self.stderr not in ("capture", "inherit", "discard"):
            raise ConfigError("StdioOptions.stderr must be 'capture', 'inherit' or 'discard'")
        if self.framing not in ("newline", "content-length"):
            raise ConfigError("StdioOptions.framing must be 'newline' or 'content-length'")
        if not isinstance(self.max_message_size, int) or self.max_message_size <= 0:
            raise ConfigError("StdioOptions.max_message_size must be a positive integer")
        env = self.env
        if env is not None and not (
            isinstance(env, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())
        ):
            raise ConfigError("StdioOptions.env must map strings to strings")
        if self.on_stderr is not None and not callable(self.on_stderr):
            raise ConfigError("StdioOptions.on_stderr must be callable")

    def transport_arguments(self) -> Dict[str, Any]:
        """The keyword arguments of :class:`~mcpsync.transports.stdio.StdioTransport` these options stand for."""
        return {
            "cwd": self.cwd,
            "env": dict(self.env) if self.env is not None else None,
            "inherit_env": self.inherit_env,
            "stderr": self.stderr,
            "on_stderr": self.on_stderr,
            "framing": self.framing,
            "max_message_size": self.max_message_size,
            "shutdown_timeout": self.shutdown_timeout,
            "stdout_grace": self.stdout_grace,
        }
