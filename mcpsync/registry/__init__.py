"""Find and install MCP servers from an MCP Registry (the official one, or a subregistry).

Importing this package is cheap: it imports neither urllib3 nor jsonschema; the names below load their
module on first use. Typical use::

    from mcpsync.registry import RegistryClient, install

    with RegistryClient() as registry:                 # $MCPSYNC_REGISTRY_URL or the official registry
        found = [(entry.name, entry.version, entry.description) for entry in registry.search("weather")]

    install("io.github.acme/weather", config="~/.cursor/mcp.json",
            inputs={"WEATHER_API_KEY": key}, approve=lambda request: ask_user(request.describe()))

See docs/guides/registry.md.
"""

from __future__ import annotations

from types import MappingProxyType as _MappingProxyType
from typing import TYPE_CHECKING

from .._lazy import exports

if TYPE_CHECKING:
    from .client import DEFAULT_REGISTRY_URL, RegistryClient, RegistryEntry, registry_url
    from .errors import (
        ConsentRefused,
        ConsentRequired,
        IntegrityError,
        InvalidInput,
        InvalidServerJson,
        MissingInput,
        RegistryError,
        RegistryNotFound,
        RegistryUnavailable,
    )
    from .inputs import InputRequest, InputSource, inputs_from
    from .installer import ConsentRequest, InstallResult, Outdated, install, outdated, uninstall, update
    from .resolver import ResolvedServer, resolve

__all__ = [
    "ConsentRefused",
    "ConsentRequest",
    "ConsentRequired",
    "DEFAULT_REGISTRY_URL",
    "InputRequest",
    "InputSource",
    "InstallResult",
    "IntegrityError",
    "InvalidInput",
    "InvalidServerJson",
    "MissingInput",
    "Outdated",
    "RegistryClient",
    "RegistryEntry",
    "RegistryError",
    "RegistryNotFound",
    "RegistryUnavailable",
    "ResolvedServer",
    "inputs_from",
    "install",
    "outdated",
    "registry_url",
    "resolve",
    "uninstall",
    "update",
]

_LAZY = _MappingProxyType({
    "DEFAULT_REGISTRY_URL": ".client",
    "RegistryClient": ".client",
    "RegistryEntry": ".client",
    "registry_url": ".client",
    "ConsentRefused": ".errors",
    "ConsentRequired": ".errors",
    "IntegrityError": ".errors",
    "InvalidInput": ".errors",
    "InvalidServerJson": ".errors",
    "MissingInput": ".errors",
    "RegistryError": ".errors",
    "RegistryNotFound": ".errors",
    "RegistryUnavailable": ".errors",
    "InputRequest": ".inputs",
    "InputSource": ".inputs",
    "inputs_from": ".inputs",
    "ConsentRequest": ".installer",
    "InstallResult": ".installer",
    "Outdated": ".installer",
    "install": ".installer",
    "outdated": ".installer",
    "uninstall": ".installer",
    "update": ".installer",
    "ResolvedServer": ".resolver",
    "resolve": ".resolver",
})


__getattr__, __dir__ = exports(__name__, _LAZY, globals())


