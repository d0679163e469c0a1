"""The errors of installing from an MCP Registry. Every one is an :class:`~mcpsync.errors.MCPError`."""

from __future__ import annotations

from typing import Any

from ..errors import MCPError

__all__ = [
    "ConsentRefused",
    "ConsentRequired",
    "IntegrityError",
    "InvalidInput",
    "InvalidServerJson",
    "MissingInput",
    "RegistryError",
    "RegistryNotFound",
    "RegistryUnavailable",
]


class RegistryError(MCPError):
    """Anything that went wrong talking to a registry or installing from it."""


class RegistryUnavailable(RegistryError):
    """The registry could not be reached or answered with an error status (and nothing usable was cached)."""

    def __init__(self, message: str = "", *, status: int = 0, url: str = "", **context: Any) -> None:
        super().__init__(message, **context)
        self.status = status
        self.url = url


class RegistryNotFound(RegistryError):
    """The registry has no such server or version (HTTP 404), or it is not ``active``."""


class InvalidServerJson(RegistryError):
    """A registry answer or a ``server.json`` that cannot be used: not JSON, the wrong shape, a value that
    breaks the schema's rules. The message says where (``packages[0].packageArguments[2].name``)."""


class MissingInput(RegistryError):
    """A required input has no value (no answer from the input callback, no default)."""

    def __init__(self, message: str = "", *, input_name: str = "", **context: Any) -> None:
        super().__init__(message, **context)
        self.input_name = input_name


class ConsentRequired(RegistryError):
    """Nothing was installed: there is no approval hook and ``yes`` was not given (SEP-1024)."""


class ConsentRefused(RegistryError):
    """Nothing was installed: the approval hook said no."""


class IntegrityError(RegistryError):
    """A downloaded file does not match its ``fileSha256``, or a bundle is unsafe to unpack; nothing ran."""


class InvalidInput(RegistryError):
    """An input's value breaks its ``format`` or ``choices``."""

    def __init__(self, message: str = "", *, input_name: str = "", **context: Any) -> None:
        super().__init__(message, **context)
        self.input_name = input_name
