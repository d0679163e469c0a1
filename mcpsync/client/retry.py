"""Retries of requests that are safe to repeat: an immutable :class:`Retry` policy, like urllib3's.

``Client(..., middleware=[Retry(total=3)])`` retries a request when it failed to reach the server or the
server (or a proxy) answered HTTP 502, 503 or 504, only for methods that are safe to repeat
(``*/list``, ``resources/read``, ``prompts/get``, ``server/discover``, ``ping``,
``completion/complete``). ``tools/call`` is never retried, unless the tool's listing marks it
``idempotentHint: true`` **and** ``idempotent_tools=True`` was given. The wait before each retry is
``Retry-After`` when the server sent one (capped at ``max_retry_after``), else capped exponential
backoff (``backoff_factor * 2 ** (n - 1)``, at most ``backoff_max``) plus random jitter in
``[0, backoff_jitter]``. A retry only happens while the connection is still usable (a crashed stdio
server is not "retried" into the same dead pipe).

Each :meth:`Retry.increment` returns a new object (the policy itself is never changed), so one
``Retry`` can be shared by any number of clients and threads. When retries are exhausted the last
error is raised unchanged. ``sleep`` and ``random`` are injectable, so tests never sleep.
"""

from __future__ import annotations

import logging
import random as _random
import time
from dataclasses import dataclass, field, replace
from typing import Callable, FrozenSet, NamedTuple, Optional, Tuple

from ..errors import ConfigError, ConnectError, ConnectionClosed, HTTPStatusError, ServerExited
from ..types import Tool

__all__ = ["Retry", "RetryEvent", "SAFE_METHODS"]

logger = logging.getLogger(__name__)

#: Methods that read or probe and may be sent twice without harm.
SAFE_METHODS: FrozenSet[str] = frozenset(
    {
        "tools/list",
        "prompts/list",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/get",
        "server/discover",
        "ping",
        "completion/complete",
    }
)


class RetryEvent(NamedTuple):
    """One failed attempt, kept in :attr:`Retry.history`."""

    method: str
    error: str
    status: Optional[int]
    delay: float


@dataclass(frozen=True)
class Retry:
    """An immutable retry policy. See the module docstring.

    Args:
        total: how many retries at most (0: none).
        backoff_factor: seconds; the n-th retry waits ``backoff_factor * 2 ** (n - 1)``.
        backoff_max: cap of that wait.
        backoff_jitter: up to this many random seconds are added to each wait.
        status_forcelist: HTTP statuses worth a retry.
        respect_retry_after_header: wait what ``Retry-After`` says (when present).
        max_retry_after: cap on a ``Retry-After`` wait (a longer one is not waited for: the error is raised).
        methods: the methods that may be retried.
        idempotent_tools: also retry ``tools/call`` of tools whose listing says ``idempotentHint: true``.
        sleep, random: injectable for tests.
        history: the attempts so far (filled by :meth:`increment`).
    """

    total: int = 3
    backoff_factor: float = 0.5
    backoff_max: float = 30.0
    backoff_jitter: float = 0.25
    status_forcelist: FrozenSet[int] = frozenset({502, 503, 504})
    respect_retry_after_header: bool = True
    max_retry_after: float = 120.0
    methods: FrozenSet[str] = SAFE_METHODS
    idempotent_tools: bool = False
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False, repr=False)
    random: Callable[[], float] = field(default=_random.random, compare=False, repr=False)
    history: Tuple[RetryEvent, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.total, int) or self.total < 0:
            raise ConfigError("Retry.total must be an integer >= 0")
        for name in ("backoff_factor", "backoff_max", "backoff_jitter", "max_retry_after"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or value < 0:
                raise ConfigError("Retry.%s must be a number >= 0" % name)
        object.__setattr__(self, "status_forcelist", frozenset(self.status_forcelist))
        object.__setattr__(self, "methods", frozenset(self.methods))

    # ------------------------------------------------------------------ classification

    def allows(self, method: str, tool: Optional[Tool] = None) -> bool:
        """True when a request of ``method`` (for ``tools/call``: of ``tool``) may be retried at all."""
        if method == "tools/call":
            return self.idempotent_tools and tool is not None and tool.annotations.get("idempotentHint") is True
        return method in self.methods

    def is_retryable(self, error: BaseException) -> bool:
        """True for a failure to reach the server and for the statuses in ``status_forcelist``."""
        if isinstance(error, ServerExited):
            return False
        if isinstance(error, HTTPStatusError):
            return error.status_code in self.status_forcelist
        return isinstance(error, (ConnectError, ConnectionClosed))

    def is_exhausted(self) -> bool:
        """True when no retry is left."""
        return len(self.history) >= self.total

    # ------------------------------------------------------------------ stepping

    def delay_for(self, error: BaseException) -> float:
        """The wait before the next attempt after ``error`` (does not sleep)."""
        retry_after = getattr(error, "retry_after", None)
        if self.respect_retry_after_header and isinstance(retry_after, (int, float)) and retry_after >= 0:
            return float(retry_after)
        n = len(self.history) + 1
        backoff = min(float(self.backoff_max), self.backoff_factor * float(2 ** min(n - 1, 32)))
        return backoff + float(self.random()) * self.backoff_jitter

    def increment(self, method: str, error: BaseException) -> "Retry":
        """A new Retry with this failure recorded; raises ``error`` when it must not be retried.

        ``error`` is re-raised unchanged when it is not retryable, when no retry is left, or when a
        ``Retry-After`` asks for longer than ``max_retry_after``.
        """
        if not self.is_retryable(error) or self.is_exhausted():
            raise error
        delay = self.delay_for(error)
        if delay > self.max_retry_after:
            raise error
        status = error.status_code if isinstance(error, HTTPStatusError) else None
        event = RetryEvent(method, type(error).__name__, status, delay)
        new = replace(self, history=self.history + (event,))
        logger.debug(
            "retrying %s after %s (attempt %d of %d, waiting %.2fs)",
            method,
            event.error,
            len(new.history) + 1,
            self.total + 1,
            delay,
        )
        return new

    @property
    def last_delay(self) -> float:
        """The wait chosen by the last :meth:`increment` (0 before any)."""
        return self.history[-1].delay if self.history else 0.0

    def __repr__(self) -> str:
        return "Retry(total=%d, backoff_factor=%r, backoff_max=%r, history=%d)" % (
            self.total,
            self.backoff_factor,
            self.backoff_max,
            len(self.history),
        )
