"""Protocol era negotiation: ``server/discover`` first, the ``initialize`` handshake as the fallback.

The verdict (which revision a server speaks) is kept per server command or URL in the
:class:`~mcpsync.client.memory.ServerMemory` the negotiator is given (the client's, or its manager's),
and probed again when a kept verdict fails.
"""

from __future__ import annotations

import logging
import time
from typing import Any, Callable, Dict, List, Optional

from dataclasses import dataclass

from ..errors import (
    ConnectionClosed,
    ConnectTimeout,
    MCPError,
    ProtocolError,
    RemoteError,
    RequestTimeout,
    ServerExited,
    TransportError,
    UnsupportedProtocolVersion,
    UnsupportedVersionError,
)
from ..session import Session
from ..types import Implementation
from ..wire import protocol as P
from .memory import ServerMemory

__all__ = ["Deadline", "Negotiated", "Negotiator"]

logger = logging.getLogger(__name__)


class Deadline:
    """One deadline for a whole ``open()``: ``connect_timeout`` seconds from now (None: no deadline).

    Every step of the open (the transport's start, the probe, a fallback, the handshake) takes its timeout
    from :meth:`clip`, so the steps together never outlast the deadline. ``clock`` is injectable (tests).
    """

    def __init__(self, seconds: Optional[float], clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self._clock = clock
        self._end = None if seconds is None else clock() + seconds

    def remaining(self) -> Optional[float]:
        """Seconds left (never negative), or None without a deadline."""
        return None if self._end is None else max(0.0, self._end - self._clock())

    def clip(self, timeout: Optional[float]) -> Optional[float]:
        """``timeout`` bounded by what is left (None means no bound on either side)."""
        left = self.remaining()
        if left is None:
            return timeout
        return left if timeout is None else min(timeout, left)

    def expired(self) -> bool:
        """True once the deadline passed."""
        left = self.remaining()
        return left is not None and left <= 0.0

    def error(self, name: str, cause: Optional[BaseException] = None) -> ConnectTimeout:
        """The error for an open that ran out of time (naming the ``connect_timeout`` option)."""
        what = " (the last step: %s)" % cause.message if isinstance(cause, MCPError) and cause.message else ""
        return ConnectTimeout(
            "connecting took longer than connect_timeout=%ss, the bound for the whole open: starting the "
            "server, the protocol probe, any fallback and the handshake%s" % (_fmt(self.seconds), what),
            timeout=self.seconds,
            server=name,
        )


def _fmt(seconds: Optional[float]) -> str:
    return "%g" % seconds if seconds is not None else "None"  # the option's value as the user wrote it


@dataclass
class Negotiated:
    """What one connection agreed on: the era, the revision, and what the server said about itself."""

    era: str
    protocol_version: str
    server_info: Implementation
    server_capabilities: Dict[str, Any]
    instructions: Optional[str]
    #: 2026-07-28: the discover result's ``ttlMs`` (how long it may be reused), when it gave one
    ttl_ms: Optional[float] = None


class Negotiator:
    """Negotiates the protocol era of one connection (``server/discover`` first, ``initialize`` as the fallback).

    A part of :class:`~mcpsync.Client`, built for each connection attempt with what it
    needs of the client; :meth:`negotiate` returns the :class:`Negotiated` outcome and changes nothing else
    (but the verdict it keeps in ``memory``, the client's :class:`~mcpsync.client.memory.ServerMemory`; a fresh
    one when none is given).
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
        deadline: Optional[Deadline] = None,
        send: Optional[Callable[[Session, str, Dict[str, Any], Optional[float]], Any]] = None,
        memory: Optional[ServerMemory] = None,
    ) -> None:
        self.name = name
        self.protocol = protocol
        self.probe_timeout = probe_timeout
        self.connect_timeout = connect_timeout
        self.client_info = client_info
        self.log_level = log_level
        self._key = cache_key
        self.memory = memory if memory is not None else ServerMemory()
        self._capabilities = capabilities
        self._envelope = envelope
        self.deadline = deadline if deadline is not None else Deadline(connect_timeout)
        self._last_timeout: Optional[RequestTimeout] = None
        # how a handshake request is sent (the client's pipeline: tracing, interceptors); default: directly
        self._send = send or (lambda session, method, params, timeout: session.request(method, params, timeout=timeout))

    def _timeout(self, wanted: Optional[float]) -> Optional[float]:
        """``wanted`` clipped to the open's deadline; raises ConnectTimeout when nothing is left."""
        if self.deadline.expired():
            raise self.deadline.error(self.name, self._last_timeout) from self._last_timeout
        return self.deadline.clip(wanted)

    def _request(self, session: Session, method: str, params: Dict[str, Any], wanted: Optional[float]) -> Any:
        try:
            return self._send(session, method, params, self._timeout(wanted))
        except ConnectTimeout:
            raise
        except RequestTimeout as exc:
            self._last_timeout = exc
            if self.deadline.expired():
                raise self.deadline.error(self.name, exc) from exc
            raise

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
        cached = self.memory.era(key)
        if cached is None:
            running = self.memory.begin_probe(key)
            if running is None:
                try:
                    return self._auto(session, key)
                finally:
                    self.memory.end_probe(key)
            # another connection to this server is probing: wait for its verdict (bounded like a probe)
            running.wait(self._timeout(self.probe_timeout))
            cached = self.memory.era(key)
        if cached is not None:
            try:
                if P.era_of(cached) == "legacy":
                    return self._initialize(session, P.LATEST_HANDSHAKE_VERSION)
                agreed = self._discover(session, cached, strict=False)
                if agreed is not None:
                    return agreed
            except (RemoteError, ProtocolError, RequestTimeout):
                if session.closed or self.deadline.expired():
                    raise
                logger.info("[%s] cached protocol verdict %s failed; probing again", self.name, cached)
                self.memory.forget_era(key)
        return self._auto(session, key)

    def _auto(self, session: Session, key: Any, reprobed: bool = False) -> Negotiated:
        agreed = self._discover(session, P.LATEST_MODERN_VERSION, strict=False)
        if agreed is not None:
            self.memory.remember_era(key, agreed.protocol_version)
            return agreed
        # the verdict is "handshake era" as of now: connections waiting for it start their handshakes while
        # this one does its own (a server that then refuses initialize makes them probe again)
        self.memory.remember_era(key, P.LATEST_HANDSHAKE_VERSION)
        self.memory.end_probe(key)
        try:
            agreed = self._initialize(session, P.LATEST_HANDSHAKE_VERSION)
        except UnsupportedVersionError:
            if reprobed:
                raise
            # The server locked itself modern after a slow probe: probe once more.
            return self._auto(session, key, reprobed=True)
        self.memory.remember_era(key, agreed.protocol_version or P.LATEST_HANDSHAKE_VERSION)
        return agreed

    def _discover(self, session: Session, version: str, *, strict: bool, attempts: int = 2) -> Optional[Negotiated]:
        """Send ``server/discover``. Returns the modern agreement, or None to fall back to initialize."""
        params = {"_meta": self._envelope(version)}
        try:
            result = self._request(session, "server/discover", params, self.probe_timeout if not strict else None)
        except UnsupportedVersionError as exc:
            mutual = [v for v in P.MODERN_VERSIONS if v in exc.supported]
            if mutual and attempts > 0:
                return self._discover(session, mutual[0], strict=strict, attempts=attempts - 1)
            if strict:
                raise
            return None
        except (RemoteError, ProtocolError, RequestTimeout, TransportError) as exc:
            if strict or isinstance(exc, ConnectTimeout) or (isinstance(exc, TransportError) and session.closed):
                raise
            if isinstance(exc, TransportError) and not (_is_status_error(exc) or _is_dropped_request(exc)):
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
        ttl = result.get("ttlMs")
        agreed = Negotiated(
            era="modern",
            protocol_version=chosen,
            server_info=Implementation.from_dict(meta.get(P.META_SERVER_INFO) or result.get("serverInfo")),
            server_capabilities=caps if isinstance(caps, dict) else {},
            instructions=instr if isinstance(instr, str) else None,
            ttl_ms=float(ttl) if isinstance(ttl, (int, float)) and not isinstance(ttl, bool) and ttl > 0 else None,
        )
        session.transport.set_protocol(chosen, "modern")
        return agreed

    def _initialize(self, session: Session, offer: str, retried: bool = False) -> Negotiated:
        params = {"protocolVersion": offer, "capabilities": self._capabilities(False), "clientInfo": self.client_info}
        try:
            result = self._request(session, "initialize", params, None)
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
                self._request(session, "logging/setLevel", {"level": self.log_level}, None)
            except ConnectTimeout:
                raise
            except MCPError as exc:
                logger.warning("[%s] logging/setLevel failed: %s", self.name, exc)
        return agreed


def _is_status_error(exc: BaseException) -> bool:
    return exc.__class__.__name__ == "HTTPStatusError" or hasattr(exc, "status_code")


def _is_dropped_request(exc: BaseException) -> bool:
    """The probe's own request was cut (a reset or close on an HTTP POST) while the connection lives on.

    A server that cannot take ``server/discover`` may reset that request as readily as answer it 500;
    both fall back to ``initialize``. A stdio server that exited is :class:`ServerExited` and the session
    is closed by then (checked by the caller), so that still fails the open.
    """
    return isinstance(exc, ConnectionClosed) and not isinstance(exc, ServerExited)


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
