"""Keyword checking for :class:`mcpsync.Client`: an unknown option is a :class:`~mcpsync.ConfigError` that names
the nearest option (``timout=`` -> "did you mean 'timeout'?"), before anything is built.

Type checkers see the explicit keyword-only parameters of ``Client.__init__`` and reject such calls already;
this is the same rule at run time, for options that come from dicts (a configuration file's ``options``,
``connect(**settings)``). Thread-safe: the per-class cache is filled idempotently.
"""

from __future__ import annotations

from typing import Any, FrozenSet, Mapping, Optional

from ..errors import ConfigError

__all__ = ["REMOTE_OPTIONS", "check_keywords", "keyword_names", "unknown_option_error"]

#: The keyword arguments of :class:`mcpsync.Client` for remote servers (HTTP / SSE) only, in signature order.
REMOTE_OPTIONS = (
    "headers",
    "bearer_token",
    "auth",
    "transport",
    "verify",
    "cert",
    "proxies",
    "trust_env",
    "read_timeout",
    "pool_maxsize",
    "engine",
    "get_stream",
    "max_stream_retries",
    "reconnect",
    "max_reconnect_attempts",
    "max_retry_delay",
)

_CO_VARKEYWORDS = 0x08  # the code flag of a function taking **kwargs


def keyword_names(cls: type) -> Optional[FrozenSet[str]]:
    """The keyword arguments ``cls.__init__`` accepts (None when it takes ``**kwargs``, or is not plain Python code:
    anything goes, Python itself checks). A few attribute reads: not cached (a cache would be module state)."""
    # from the code object, not ``inspect.signature`` (importing inspect costs a cold start several ms)
    code = getattr(cls.__init__, "__code__", None)  # type: ignore[misc]
    names: Optional[FrozenSet[str]] = None
    if code is not None and not code.co_flags & _CO_VARKEYWORDS:
        names = frozenset(code.co_varnames[1 : code.co_argcount + code.co_kwonlyargcount])
    return names


def unknown_option_error(unknown: str, known: "Any", what: str) -> ConfigError:
    """The error for an unknown option ``unknown`` among ``known`` names, with the nearest as a suggestion."""
    import difflib  # only on an error

    close = difflib.get_close_matches(unknown, sorted(known), n=3, cutoff=0.6)
    if not close:  # a prefix or a part of a name (``bearer`` -> ``bearer_token``)
        close = sorted(n for n in known if len(unknown) >= 3 and (n.startswith(unknown) or unknown in n))[:3]
    hint = "; did you mean %s?" % " or ".join(repr(c) for c in close) if close else ""
    return ConfigError("unknown %s option %r%s" % (what, unknown, hint))


def check_keywords(cls: type, kwargs: Mapping[str, Any]) -> None:
    """Raise :class:`~mcpsync.ConfigError` for the first keyword ``cls`` does not take (sorted, so stable)."""
    names = keyword_names(cls)
    if names is None:
        return
    for key in sorted(kwargs):
        if key not in names:
            raise unknown_option_error(key, names, cls.__name__)
