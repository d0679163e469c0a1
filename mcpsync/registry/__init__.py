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

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._lazy import exports as _exports
from .._lazy import table as _table

if _TYPE_CHECKING:  # the lazy names, for type checkers ("X as X" re-exports each; nothing is imported at run time)
    from .client import DEFAULT_REGISTRY_URL as DEFAULT_REGISTRY_URL, RegistryClient as RegistryClient
    from .client import RegistryEntry as RegistryEntry, registry_url as registry_url
    from .errors import ConsentRefused as ConsentRefused, ConsentRequired as ConsentRequired
    from .errors import IntegrityError as IntegrityError, InvalidInput as InvalidInput
    from .errors import InvalidServerJson as InvalidServerJson, MissingInput as MissingInput
    from .errors import RegistryError as RegistryError, RegistryNotFound as RegistryNotFound
    from .errors import RegistryUnavailable as RegistryUnavailable
    from .inputs import InputRequest as InputRequest, InputSource as InputSource, inputs_from as inputs_from
    from .installer import ConsentRequest as ConsentRequest, InstallResult as InstallResult, Outdated as Outdated
    from .installer import install as install, outdated as outdated, uninstall as uninstall, update as update
    from .resolver import ResolvedServer as ResolvedServer, resolve as resolve

_LAZY = _table(
    {
        ".client": ("DEFAULT_REGISTRY_URL", "RegistryClient", "RegistryEntry", "registry_url"),
        ".errors": ("ConsentRefused", "ConsentRequired", "IntegrityError", "InvalidInput", "InvalidServerJson",
                    "MissingInput", "RegistryError", "RegistryNotFound", "RegistryUnavailable"),
        ".inputs": ("InputRequest", "InputSource", "inputs_from"),
        ".installer": ("ConsentRequest", "InstallResult", "Outdated", "install", "outdated", "uninstall", "update"),
        ".resolver": ("ResolvedServer", "resolve"),
    }
)
__all__ = sorted(_LAZY)

__getattr__, __dir__ = _exports(__name__, _LAZY, globals())
