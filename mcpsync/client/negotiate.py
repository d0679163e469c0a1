"""Protocol era negotiation: ``server/discover`` first, the ``initialize`` handshake as the fallback.

The verdict (which revision a server speaks) is cached per server command or URL
within the process, and probed again when a cached verdict fails.
"""

from __future__ import annotations

import logging
import threading
from typing import Any, Dict, List, Optional

from ..errors import (
    MCPError,
    ProtocolError,
    RemoteError,
    RequestTimeout,
    TransportError,
    UnsupportedProtocolVersion,
    UnsupportedVersionError,
)
from ..session import Session
from ..types import Implementation
from ..wire import protocol as P

__all__ = ["ERA_CACHE", "Negotiation"]

logger = logging.getLogger(__name__)


class _EraCache:
    """Per-process memory of which era each server spoke (keyed by command or URL). Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._data: Dict[Any, str] = {}

    def get(self, key: Any) -> Optional[str]:
        with self._lock:
            return self._data.get(key)

    def put(self, key: Any, version: str) -> None:
        with self._lock:
            self._data[key] = version

    def forget(self, key: Any) -> None:
        with self._lock:
            self._data.pop(key, None)


ERA_CACHE = _EraCache()


class Negotiation:
    """The negotiation half of :class:`~mcpsync.client.core.ClientCore` (a mixin; uses its attributes)."""

    name: str
    protocol: str
    probe_timeout: float
    connect_timeout: Optional[float]
    client_info: Dict[str, Any]
    log_level: Optional[str]
    era: Optional[str]
    protocol_version: Optional[str]
    server_info: Implementation
    server_capabilities: Dict[str, Any]
    instructions: Optional[str]

    def _capabilities(self, modern: bool) -> Dict[str, Any]:  # provided by ClientCore
        raise NotImplementedError

    def _cache_key(self) -> Any:  # provided by ClientCore
        raise NotImplementedError

    def _envelope(self, version: Optional[str] = None) -> Dict[str, Any]:  # provided by ClientCore
        raise NotImplementedError

    def _negotiate(self, session: Session) -> None:
        mode = self.protocol
        key = self._cache_key()
        if mode == "legacy" or P.era_of(mode) == "legacy":
            self._initialize(session, mode if P.era_of(mode) else P.LATEST_HANDSHAKE_VERSION)
            return
        if mode == "modern" or P.era_of(mode) == "modern":
            version = mode if P.era_of(mode) else P.LATEST_MODERN_VERSION
            if self._discover(session, version, strict=True) is None:
                raise UnsupportedProtocolVersion(
                    "server does not speak the 2026-07-28 protocol", offered=version, server=self.name
                )
            return
        if session.transport.kind == "sse":
            # the 2024-11-05 HTTP+SSE transport predates server/discover: go straight to the handshake
            self._initialize(session, P.LATEST_HANDSHAKE_VERSION)
            return
        cached = ERA_CACHE.get(key)
        if cached is not None:
            try:
                if P.era_of(cached) == "legacy":
                    self._initialize(session, P.LATEST_HANDSHAKE_VERSION)
                    return
                if self._discover(session, cached, strict=False) is not None:
                    return
            except (RemoteError, ProtocolError, RequestTimeout):
                if session.closed:
                    raise
                logger.info("[%s] cached protocol verdict %s failed; probing again", self.name, cached)
                ERA_CACHE.forget(key)
        self._auto(session, key)

    def _auto(self, session: Session, key: Any, reprobed: bool = False) -> None:
        version = self._discover(session, P.LATEST_MODERN_VERSION, strict=False)
        if version is not None:
            ERA_CACHE.put(key, version)
            return
        try:
            self._initialize(session, P.LATEST_HANDSHAKE_VERSION)
        except UnsupportedVersionError:
            if reprobed:
                raise
            # The server locked itself modern after a slow probe: probe once more.
            self._auto(session, key, reprobed=True)
            return
        ERA_CACHE.put(key, self.protocol_version or P.LATEST_HANDSHAKE_VERSION)

    def _discover(self, session: Session, version: str, *, strict: bool, attempts: int = 2) -> Optional[str]:
        """Send ``server/discover``. Returns the modern version chosen, or None to fall back to initialize."""
        params = {"_meta": self._envelope(version)}
        timeout = self.probe_timeout if not strict else self.connect_timeout
        try:
            result = session.request("server/discover", params, timeout=timeout)
        except UnsupportedVersionError as exc:
            mutual = [v for v in P.MODERN_VERSIONS if v in exc.supported]
            if mutual and attempts > 0:
                return self._discover(session, mutual[0], strict=strict, attempts=attempts - 1)
            if strict:
                raise
            return None
        except (RemoteError, ProtocolError, RequestTimeout, TransportError) as exc:
            if strict or (isinstance(exc, TransportError) and session.closed):
                raise
            if isinstance(exc, TransportError) and not _is_status_error(exc):
                raise
            logger.debug("[%s] server/discover failed (%s): using initialize", self.name, exc)
            return None
        if not isinstance(result, dict):
            if strict:
                raise ProtocolError("server/discover returned a non-object result", server=self.name)
            return None
        supported = result.get("supportedVersions")
        supported = [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []
        mutual = [v for v in P.MODERN_VERSIONS if v in supported]
        if not mutual:
            if strict:
                raise UnsupportedProtocolVersion(
                    "no mutual modern protocol version", offered=version, supported=supported, server=self.name
                )
            return None
        chosen = mutual[0]
        caps = result.get("capabilities")
        self.server_capabilities = caps if isinstance(caps, dict) else {}
        given = result.get("_meta")
        meta = given if isinstance(given, dict) else {}
        self.server_info = Implementation.from_dict(meta.get(P.META_SERVER_INFO) or result.get("serverInfo"))
        instr = result.get("instructions")
        self.instructions = instr if isinstance(instr, str) else None
        self.era = "modern"
        self.protocol_version = chosen
        session.transport.set_protocol(chosen, "modern")
        self._discover_result = result
        return chosen

    def _initialize(self, session: Session, offer: str, retried: bool = False) -> None:
        params = {"protocolVersion": offer, "capabilities": self._capabilities(False), "clientInfo": self.client_info}
        try:
            result = session.request("initialize", params, timeout=self.connect_timeout)
        except UnsupportedVersionError:
            raise
        except RemoteError as exc:
            supported = _supported_from_error(exc)
            older = [v for v in P.HANDSHAKE_VERSIONS if v in supported and v != offer] or (
                [] if supported else _older_than(offer)
            )
            if not retried and older and "version" in exc.message.lower():
                logger.info("[%s] server refused protocol %s; retrying with %s", self.name, offer, older[0])
                return self._initialize(session, older[0], retried=True)
            raise
        if not isinstance(result, dict):
            raise ProtocolError("initialize returned a non-object result", server=self.name, method="initialize")
        version = result.get("protocolVersion")
        if not isinstance(version, str) or P.era_of(version) != "legacy":
            raise UnsupportedProtocolVersion(
                "server answered initialize with unsupported protocol version %r" % (version,),
                offered=offer,
                supported=[version] if isinstance(version, str) else [],
                server=self.name,
                method="initialize",
            )
        caps = result.get("capabilities")
        self.server_capabilities = caps if isinstance(caps, dict) else {}
        self.server_info = Implementation.from_dict(result.get("serverInfo"))
        instr = result.get("instructions")
        self.instructions = instr if isinstance(instr, str) else None
        self.era = "legacy"
        self.protocol_version = version
        session.transport.set_protocol(version, "legacy")
        session.notify("notifications/initialized")
        if self.log_level is not None and "logging" in self.server_capabilities:
            try:
                session.request("logging/setLevel", {"level": self.log_level}, timeout=self.connect_timeout)
            except MCPError as exc:
                logger.warning("[%s] logging/setLevel failed: %s", self.name, exc)


def _is_status_error(exc: BaseException) -> bool:
    return exc.__class__.__name__ == "HTTPStatusError" or hasattr(exc, "status_code")


def _supported_from_error(exc: RemoteError) -> List[str]:
    data = exc.data
    if isinstance(data, dict):
        s = data.get("supported")
        if isinstance(s, list):
            return [v for v in s if isinstance(v, str)]
    return []


def _older_than(version: str) -> List[str]:
    if version in P.HANDSHAKE_VERSIONS:
        i = P.HANDSHAKE_VERSIONS.index(version)
        return list(P.HANDSHAKE_VERSIONS[i + 1 :])
    return []
