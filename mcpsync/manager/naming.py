"""Provider-safe tool names and the table that routes them back.

LLM providers accept tool names matching ``^[a-zA-Z0-9_-]{1,64}$``. When many
servers are combined, each tool is exposed as ``{server}_{tool}`` with both
parts sanitised (every character outside ``[a-zA-Z0-9_-]`` becomes ``_``).

Rules, all deterministic (the same set of tools always gives the same names):

* A name longer than the limit is cut and ends with ``_`` plus an 8-character
  hash of the *original* server and tool names, so it stays unique and stable.
* When two tools end up with the same exposed name (``a.b``/``a_b`` sanitise
  alike, or ``a_b`` + ``c`` and ``a`` + ``b_c`` join alike), the pair whose names
  needed no sanitising keeps the plain name (ties: the smallest
  ``(server, tool)`` pair); every other one gets the hash suffix.
* Routing goes through :class:`NameTable`, never by splitting a name at ``_``.

Everything here is pure computation: no I/O, no locks. A :class:`NameTable` is
immutable once built and safe to share between threads.
"""

from __future__ import annotations

import hashlib
import re
from typing import Dict, Iterable, Iterator, List, Mapping, Optional, Tuple

__all__ = ["MAX_NAME_LENGTH", "NAME_PATTERN", "NameTable", "qualified_name", "sanitize", "stable_suffix"]

#: The longest tool name the major providers accept.
MAX_NAME_LENGTH = 64
#: The pattern every exposed name matches.
NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")

_BAD_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
_HASH_LEN = 8


def sanitize(part: str) -> str:
    """Replace every character outside ``[a-zA-Z0-9_-]`` with ``_`` (an empty string gives ``_``)."""
    return _BAD_CHARS.sub("_", part) or "_"


def stable_suffix(server: str, tool: str, length: int = _HASH_LEN) -> str:
    """A short hex digest of the original ``(server, tool)`` pair; the same input always gives the same suffix."""
    digest = hashlib.sha256(("%s\x00%s" % (server, tool)).encode("utf-8")).hexdigest()
    return digest[:length]


def _with_suffix(base: str, server: str, tool: str, max_length: int, hash_len: int = _HASH_LEN) -> str:
    suffix = "_" + stable_suffix(server, tool, hash_len)
    return base[: max(1, max_length - len(suffix))] + suffix


def qualified_name(server: str, tool: str, *, separator: str = "_", max_length: int = MAX_NAME_LENGTH) -> str:
    """The exposed name of one tool, ignoring collisions: ``{server}{separator}{tool}``, sanitised, length-capped.

    Over-long names are cut and given a stable hash suffix, so two long names that
    share a prefix stay distinct.
    """
    if max_length < _HASH_LEN + 2:
        raise ValueError("max_length must be at least %d" % (_HASH_LEN + 2))
    base = sanitize(server) + sanitize(separator) + sanitize(tool) if server else sanitize(tool)
    if len(base) <= max_length:
        return base
    return _with_suffix(base, server, tool, max_length)


class NameTable(Mapping[str, Tuple[str, str]]):
    """An immutable mapping ``exposed name -> (server, original tool name)``, and its inverse.

    Build it from every ``(server, tool)`` pair at once so collisions can be
    resolved deterministically (see the module docstring). Reading is lock-free
    and thread-safe.

    Example::

        table = NameTable([("github", "search"), ("jira", "search")])
        table.name_for("jira", "search")   # 'jira_search'
        table["github_search"]             # ('github', 'search')
    """

    def __init__(
        self,
        pairs: Iterable[Tuple[str, str]] = (),
        *,
        separator: str = "_",
        max_length: int = MAX_NAME_LENGTH,
        prefix: bool = True,
    ) -> None:
        """``prefix=False`` exposes bare tool names (still sanitised and de-duplicated)."""
        self.separator = separator
        self.max_length = max_length
        self.prefix = prefix
        unique = sorted(set((str(s), str(t)) for s, t in pairs))
        self._by_name: Dict[str, Tuple[str, str]] = {}
        self._by_pair: Dict[Tuple[str, str], str] = {}

        def plain(server: str, tool: str) -> str:
            return qualified_name(server if prefix else "", tool, separator=separator, max_length=max_length)

        groups: Dict[str, List[Tuple[str, str]]] = {}
        for pair in unique:
            groups.setdefault(plain(*pair), []).append(pair)

        def untouched(pair: Tuple[str, str]) -> bool:
            server, tool = pair
            return (not prefix or sanitize(server) == server) and sanitize(tool) == tool

        # Pass 1: one pair per plain name keeps it (the untouched one first, then the smallest pair).
        losers: List[Tuple[str, str]] = []
        for name in sorted(groups):
            members = sorted(groups[name], key=lambda p: (not untouched(p), p))
            self._assign(name, members[0])
            losers.extend(members[1:])
        # Pass 2: the others get a hash suffix, lengthened in the (astronomically rare) case it is taken too.
        for server, tool in sorted(losers):
            base = plain(server, tool)
            hash_len = _HASH_LEN
            name = _with_suffix(base, server, tool, max_length, hash_len)
            while name in self._by_name:
                hash_len += 4
                if hash_len > 64:  # pragma: no cover - would need a sha256 collision
                    raise ValueError("cannot make a unique name for %r/%r" % (server, tool))
                name = _with_suffix(base, server, tool, max_length, hash_len)
            self._assign(name, (server, tool))

    def _assign(self, name: str, pair: Tuple[str, str]) -> None:
        self._by_name[name] = pair
        self._by_pair[pair] = name

    def __getitem__(self, name: str) -> Tuple[str, str]:
        return self._by_name[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)

    def __repr__(self) -> str:
        return "NameTable(%d names)" % len(self)

    def resolve(self, name: str) -> Optional[Tuple[str, str]]:
        """``(server, tool)`` for an exposed name, or None when the name is unknown."""
        return self._by_name.get(name)

    def name_for(self, server: str, tool: str) -> str:
        """The exposed name of ``tool`` on ``server``; raises KeyError when the pair is not in the table."""
        return self._by_pair[(server, tool)]

    def names_for_server(self, server: str) -> List[str]:
        """Every exposed name that routes to ``server``, sorted."""
        return sorted(n for n, (s, _) in self._by_name.items() if s == server)
