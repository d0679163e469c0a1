"""Protocol era negotiation: ``server/discover`` first, the ``initialize`` handshake as the fallback.

The verdict (which revision a server speaks) is cached per server command or URL
within the process, and probed again when a cached verdict fails.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional

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

__all__ = ["ERA_CACHE", "Negotiated", "Negotiator"]

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


@dataclass
class Negotiated:
    """What one connection agreed on: the era, the revision, and what the server said about itself."""

    era: str
    protocol_version: str
    server_info: Implementation
    server_capabilities: Dict[str, Any]
    instructions: Optional[str]


class Negotiator:
    """Negotiates the protocol era of one connection (``server/discover`` first, ``initialize`` as the fallback).

    A part of :class:`~mcpsync.client.core.ClientCore`, built for each connection attempt with what it
    needs of the client; :meth:`negotiate` returns the :class:`Negotiated` outcome and changes nothing else
    (the per-process :data:`ERA_CACHE` aside).
    """

    def __init__(
        self,
        *,
        name: str,
        protocol: str,
        probe_timeout: float,
        connect_timeout: Optional[float],
        client_info: Dict[str, Any],
        log_level: Optional[str],
        cache_key: Any,
        capabilities: Callable[[bool], Dict[str, Any]],
        envelope: Callable[[str], Dict[str, Any]],
    ) -> None:
        self.name = name
        self.protocol = protocol
        self.probe_timeout = probe_timeout
        self.connect_timeout = connect_timeout
        self.client_info = client_info
        self.log_level = log_level
        self._key = cache_key
        self._capabilities = capabilities
        self._envelope = envelope

    def negotiate(self, session: Session) -> Negotiated:
        """Agree on a protocol revision over ``session`` (started). Raises like :meth:`mcpsync.Client.open`."""
        mode = self.protocol
        key = self._key
        if mode == "legacy" or P.era_of(mode) == "legacy":
            return self._initialize(session, mode if P.era_of(mode) else P.LATEST_HANDSHAKE_VERSION)
        if mode == "modern" or P.era_of(mode) == "modern":
            version = mode if P.era_of(mode) else P.LATEST_MODERN_VERSION
            agreed = self._discover(session, version, strict=True)
            if agreed is None:
                raise UnsupportedProtocolVersion(
                    "server does not speak the 2026-07-28 protocol", offered=version, server=self.name
                )
            return agreed
        if session.transport.kind == "sse":
            # the 2024-11-05 HTTP+SSE transport predates server/discover: go straight to the handshake
            return self._initialize(session, P.LATEST_HANDSHAKE_VERSION)
        cached = ERA_CACHE.get(key)
        if cached is not None:
            try:
                if P.era_of(cached) == "legacy":
                    return self._initialize(session, P.LATEST_HANDSHAKE_VERSION)
                agreed = self._discover(session, cached, strict=False)
                if agreed is not None:
                    return agreed
            except (RemoteError, ProtocolError, RequestTimeout):
                if session.closed:
                    raise
                logger.info("[%s] cached protocol verdict %s failed; probing again", self.name, cached)
                ERA_CACHE.forget(key)
        return self._auto(session, key)

    def _auto(self, session: Session, key: Any, reprobed: bool = False) -> Negotiated:
        agreed = self._discover(session, P.LATEST_MODERN_VERSION, strict=False)
        if agreed is not None:
            ERA_CACHE.put(key, agreed.protocol_version)
            return agreed
        try:
            agreed = self._initialize(session, P.LATEST_HANDSHAKE_VERSION)
        except UnsupportedVersionError:
            if reprobed:
                raise
            # The server locked itself modern after a slow probe: probe once more.
            return self._auto(session, key, reprobed=True)
        ERA_CACHE.put(key, agreed.protocol_version or P.LATEST_HANDSHAKE_VERSION)
        return agreed

    def _discover(self, session: Session, version: str, *, strict: bool, attempts: int = 2) -> Optional[Negotiated]:
        """Send ``server/discover``. Returns the modern agreement, or None to fall back to initialize."""
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
        given = result.get("_meta")
        meta = given if isinstance(given, dict) else {}
        instr = result.get("instructions")
        agreed = Negotiated(
            era="modern",
            protocol_version=chosen,
            server_info=Implementation.from_dict(meta.get(P.META_SERVER_INFO) or result.get("serverInfo")),
            server_capabilities=caps if isinstance(caps, dict) else {},
            instructions=instr if isinstance(instr, str) else None,
        )
        session.transport.set_protocol(chosen, "modern")
        return agreed

    def _initialize(self, session: Session, offer: str, retried: bool = False) -> Negotiated:
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
        instr = result.get("instructions")
        agreed = Negotiated(
            era="legacy",
            protocol_version=version,
            server_info=Implementation.from_dict(result.get("serverInfo")),
            server_capabilities=caps if isinstance(caps, dict) else {},
            instructions=instr if isinstance(instr, str) else None,
        )
        session.transport.set_protocol(version, "legacy")
        session.notify("notifications/initialized")
        if self.log_level is not None and "logging" in agreed.server_capabilities:
            try:
                session.request("logging/setLevel", {"level": self.log_level}, timeout=self.connect_timeout)
            except MCPError as exc:
                logger.warning("[%s] logging/setLevel failed: %s", self.name, exc)
        return agreed


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
