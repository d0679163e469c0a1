"""Tool policy and approval: which tools a client exposes and calls, and a hook before each call.

* :class:`ToolPolicy` holds allow and deny lists of tool names, exact or glob (``fnmatch``, case
  sensitive: ``*``, ``?``, ``[abc]``). A name matching a deny pattern is refused; when an allow list is
  given, a name must also match one of its patterns. Deny wins. The client hides refused tools from
  ``list_tools()`` (and so from the manager, its adapters and ``tools_for``) and refuses to call them
  with :class:`~mcpsync.ToolDenied` before anything is sent.
* An approval handler (``approval_handler=`` on the client) is called before every allowed tool call
  with a :class:`ToolApprovalRequest` and returns an :class:`Approval`: approve, approve with edited
  arguments, or deny with a reason (the call then raises :class:`~mcpsync.ToolDenied`, unsent).
  The handler runs on the thread that makes the call. The annotations it sees (``destructiveHint``,
  ``readOnlyHint``...) come from the server and are **untrusted hints**.

Everything here is pure data, thread-safe and immutable.
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Pattern, Sequence, Tuple

from ..errors import ConfigError
from ..types import Tool

__all__ = ["Approval", "ApprovalHandler", "ToolApprovalRequest", "ToolPolicy"]


def _compile(patterns: Iterable[str], what: str) -> Tuple[Tuple[str, ...], Optional[Pattern[str]]]:
    names: List[str] = []
    for p in patterns:
        if not isinstance(p, str) or not p:
            raise ConfigError("%s must be non-empty strings (tool names or glob patterns), got %r" % (what, p))
        names.append(p)
    if not names:
        return (), None
    return tuple(names), re.compile("|".join("(?:%s)" % fnmatch.translate(p) for p in names))


@dataclass(frozen=True)
class ToolPolicy:
    """Allow and deny lists of tool names (exact or glob). Immutable; thread-safe.

    Args:
        allowed: when given (even empty), only tools matching one of these patterns are exposed.
            ``None`` allows every tool not denied.
        denied: tools matching one of these patterns are never exposed nor called (deny wins).
    """

    allowed: Optional[Tuple[str, ...]] = None
    denied: Tuple[str, ...] = ()
    _allow_re: Optional[Pattern[str]] = field(default=None, init=False, repr=False, compare=False)
    _deny_re: Optional[Pattern[str]] = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.allowed, str) or isinstance(self.denied, str):
            raise ConfigError("allowed_tools / disabled_tools must be lists of names, not one string")
        denied, deny_re = _compile(self.denied, "disabled_tools")
        object.__setattr__(self, "denied", denied)
        object.__setattr__(self, "_deny_re", deny_re)
        if self.allowed is not None:
            allowed, allow_re = _compile(self.allowed, "allowed_tools")
            object.__setattr__(self, "allowed", allowed)
            object.__setattr__(self, "_allow_re", allow_re)

    @classmethod
    def of(
        cls, allowed: Optional[Iterable[str]] = None, denied: Optional[Iterable[str]] = None
    ) -> Optional["ToolPolicy"]:
        """A policy from two optional lists; None when neither restricts anything."""
        if allowed is None and not denied:
            return None
        return cls(tuple(allowed) if allowed is not None else None, tuple(denied or ()))

    def check(self, name: str) -> Optional[str]:
        """None when ``name`` is allowed, else a short reason."""
        if self._deny_re is not None and self._deny_re.match(name):
            return "tool %r matches the deny list %s" % (name, list(self.denied))
        if self.allowed is not None and (self._allow_re is None or not self._allow_re.match(name)):
            return "tool %r is not in the allow list %s" % (name, list(self.allowed))
        return None

    def allows(self, name: str) -> bool:
        """True when ``name`` may be listed and called."""
        return self.check(name) is None

    def filter(self, tools: Sequence[Tool]) -> List[Tool]:
        """The tools this policy allows, in order."""
        return [t for t in tools if self.allows(t.name)]


@dataclass(frozen=True)
class ToolApprovalRequest:
    """What an approval handler is asked about: one tool call, before it is sent.

    Attributes:
        server: the server's name.
        tool: the tool's name.
        arguments: the arguments about to be sent (a copy: edit them through :meth:`Approval.approve`).
        annotations: the tool's annotations from the last listing (``destructiveHint``,
            ``readOnlyHint``, ``idempotentHint``, ``openWorldHint``...); **untrusted hints** from the
            server, empty when the tool was never listed.
        definition: the listed :class:`~mcpsync.Tool`, or None when the tool was never listed.
    """

    server: str
    tool: str
    arguments: Dict[str, Any]
    annotations: Mapping[str, Any]
    definition: Optional[Tool] = None

    @property
    def destructive(self) -> bool:
        """The server's ``destructiveHint`` (the spec's default for a tool that is not read-only: True)."""
        if self.annotations.get("readOnlyHint") is True:
            return False
        return self.annotations.get("destructiveHint") is not False

    @property
    def read_only(self) -> bool:
        """The server's ``readOnlyHint`` (default False)."""
        return self.annotations.get("readOnlyHint") is True


@dataclass(frozen=True)
class Approval:
    """An approval handler's answer. Build it with :meth:`approve` or :meth:`deny`.

    Attributes:
        approved: True to let the call go ahead.
        reason: why it was denied (shown in :class:`~mcpsync.ToolDenied`).
        arguments: replacement arguments (None: send the original ones).
    """

    approved: bool
    reason: str = ""
    arguments: Optional[Dict[str, Any]] = None

    @classmethod
    def approve(cls, arguments: Optional[Mapping[str, Any]] = None) -> "Approval":
        """Let the call go ahead, with ``arguments`` instead of the original ones when given."""
        if arguments is not None and not isinstance(arguments, Mapping):
            raise ConfigError("approved arguments must be a dict")
        return cls(True, "", dict(arguments) if arguments is not None else None)

    @classmethod
    def deny(cls, reason: str = "denied by the approval handler") -> "Approval":
        """Refuse the call: it raises :class:`~mcpsync.ToolDenied` and is never sent."""
        return cls(False, str(reason) or "denied by the approval handler", None)


#: ``approval_handler(request) -> Approval``; runs on the thread that makes the call.
ApprovalHandler = Callable[[ToolApprovalRequest], Approval]
