"""Keyword checking for :class:`mcpsync.Client`: an unknown option is a :class:`~mcpsync.ConfigError` that names
the nearest option (``timout=`` -> "did you mean 'timeout'?"), and a keyword that moved into an option object says
where it went (``cwd= moved: pass stdio=StdioOptions(cwd=...)``), before anything is built. Also how the option
objects combine with the client's own keywords (:func:`checked_groups`, :func:`remote_arguments`).

Type checkers see the explicit keyword-only parameters of ``Client.__init__`` and reject such calls already;
this is the same rule at run time, for options that come from dicts (a configuration file's ``options``,
``connect(**settings)``). Thread-safe: the per-class cache is filled idempotently.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Dict, FrozenSet, Mapping, Optional, Tuple

from ..errors import ConfigError
from .callbacks import Callbacks
from .client_options import LEFT_THE_CORE, ClientOptions
from .stdio_options import StdioOptions

if TYPE_CHECKING:
    from ..transports.http.options import HTTPOptions

__all__ = [
    "HTTP_FIELDS",
    "MOVED_KEYWORDS",
    "call_keyword_error",
    "check_keywords",
    "checked_groups",
    "keyword_names",
    "moved_keyword_error",
    "remote_arguments",
    "unknown_option_error",
]

#: The settings of :class:`~mcpsync.transports.http.options.HTTPOptions` a client takes through ``http=``.
HTTP_FIELDS = (
    "verify",
    "cert",
    "proxies",
    "trust_env",
    "read_timeout",
    "pool_maxsize",
    "max_message_size",
    "transport",
    "get_stream",
    "max_stream_retries",
    "reconnect",
    "max_reconnect_attempts",
    "max_retry_delay",
)


def _table() -> Mapping[str, str]:
    table: Dict[str, str] = {}
    groups = (
        ("stdio=StdioOptions(%s=...)", StdioOptions),
        ("callbacks=Callbacks(%s=...)", Callbacks),
        ("options=ClientOptions(%s=...)", ClientOptions),
    )
    for spelling, group in groups:
        for field_name in group.__dataclass_fields__:
            table[field_name] = spelling % field_name
    table["max_message_size"] = "stdio=StdioOptions(max_message_size=...) or http=HTTPOptions(max_message_size=...)"
    for field_name in HTTP_FIELDS:
        table.setdefault(field_name, "http=HTTPOptions(%s=...)" % field_name)
    table["cache"] = "options=ClientOptions(cache=...)"
    table["tasks"] = "options=ClientOptions(tasks=...)"
    table["interceptors"] = "middleware=[...] (the same Interceptor and Middleware objects, in the same order)"
    table["retry"] = "middleware=[Retry(...), ...] (a Retry runs outermost wherever it stands)"
    table["allowed_tools"] = "middleware=[ToolPolicy(allowed=(...)), ...]"
    table["disabled_tools"] = "middleware=[ToolPolicy(denied=(...)), ...]"
    table.update(LEFT_THE_CORE)
    return MappingProxyType(table)


#: Keywords :class:`mcpsync.Client` no longer takes, with where each moved (``StdioOptions``, ``HTTPOptions``,
#: ``Callbacks``, ``ClientOptions`` and the ``middleware=`` / ``extensions=`` lists). Read-only.
MOVED_KEYWORDS: Mapping[str, str] = _table()
_IMPORTS = (
    ("StdioOptions", "mcpsync.client"),
    ("HTTPOptions", "mcpsync.client"),
    ("Callbacks", "mcpsync.client"),
    ("ClientOptions", "mcpsync.client"),
    ("Retry", "mcpsync.middleware"),
    ("ToolPolicy", "mcpsync.middleware"),
)


def moved_keyword_error(key: str, value: Any = None) -> Optional[ConfigError]:
    """The error for a keyword that moved into an option object (None when ``key`` did not move). ``engine=``
    is gone altogether: its error says so."""
    if key == "engine":
        from ..transports.http.options import _check_engine  # raises for any engine

        try:
            _check_engine(value if value is not None else "auto")
        except ConfigError as exc:
            return exc
    where = MOVED_KEYWORDS.get(key)
    if where is None:
        return None
    names = [(n, m) for n, m in _IMPORTS if n + "(" in where]
    hint = "; ".join("from %s import %s" % (m, n) for n, m in names)
    return ConfigError("%s= moved: pass %s%s" % (key, where, " (%s)" % hint if hint else ""))


def call_keyword_error(method: str, kwargs: Mapping[str, Any]) -> ConfigError:
    """The error for keywords a client method (``call_tool``...) does not take: where one that left the client
    went (:data:`~.client_options.LEFT_THE_CORE`), else that it is unknown."""
    key = sorted(kwargs)[0]
    where = LEFT_THE_CORE.get(key)
    if where is not None:
        return ConfigError("%s(%s=) moved: use %s" % (method, key, where))
    return ConfigError("%s() got an unknown keyword %r" % (method, key))


def checked_groups(
    stdio: Optional[StdioOptions],
    http: Optional["HTTPOptions"],
    callbacks: Optional[Callbacks],
    options: Optional[ClientOptions],
) -> Tuple[StdioOptions, Callbacks, ClientOptions]:
    """The option objects a client was given (defaults for None), each checked for its type."""
    for value, kind, keyword in (
        (stdio, StdioOptions, "stdio"),
        (callbacks, Callbacks, "callbacks"),
        (options, ClientOptions, "options"),
    ):
        if value is not None and not isinstance(value, kind):
            raise ConfigError("%s= takes a mcpsync.client.%s, got %r" % (keyword, kind.__name__, value))
    if http is not None:
        from ..transports.http.options import HTTPOptions

        if not isinstance(http, HTTPOptions):
            raise ConfigError("http= takes a mcpsync.client.HTTPOptions, got %r" % (http,))
    return stdio or StdioOptions(), callbacks or Callbacks(), options or ClientOptions()


def remote_arguments(
    http: Optional["HTTPOptions"], headers: Optional[Mapping[str, str]], bearer_token: Optional[str], auth: Any
) -> Dict[str, Any]:
    """The remote transports' options of a client: ``http``'s, with the client's ``headers`` merged over its
    headers and the client's ``bearer_token`` / ``auth`` (refused when ``http`` sets either as well)."""
    out: Dict[str, Any] = http.client_arguments() if http is not None else {}
    if http is not None and http.headers or headers is not None:
        merged = dict(http.headers) if http is not None else {}
        merged.update(headers or {})
        out["headers"] = merged
    if http is not None and (http.bearer_token is not None or http.auth is not None):
        if bearer_token is not None or auth is not None:
            raise ConfigError("credentials given twice: pass bearer_token/auth to the client or in HTTPOptions")
        bearer_token, auth = http.bearer_token, http.auth
    if bearer_token is not None:
        out["bearer_token"] = bearer_token
    if auth is not None:
        out["auth"] = auth
    return out


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


def _spelled(name: str) -> str:
    where = MOVED_KEYWORDS.get(name)
    return repr(name) if where is None else "%r (now %s)" % (name, where)


def unknown_option_error(unknown: str, known: "Any", what: str, note: str = "") -> ConfigError:
    """The error for an unknown option ``unknown`` among ``known`` names, with the nearest as a suggestion (and
    ``note`` after it)."""
    import difflib  # only on an error

    close = difflib.get_close_matches(unknown, sorted(known), n=3, cutoff=0.6)
    if not close:  # a prefix or a part of a name (``bearer`` -> ``bearer_token``)
        close = sorted(n for n in known if len(unknown) >= 3 and (n.startswith(unknown) or unknown in n))[:3]
    hint = "; did you mean %s?" % " or ".join(_spelled(c) for c in close) if close else ""
    message = "unknown %s option %r%s" % (what, unknown, hint)
    return ConfigError(message + ("%s %s" % ("" if hint else ".", note) if note else ""))


def check_keywords(cls: type, kwargs: Mapping[str, Any]) -> None:
    """Raise :class:`~mcpsync.ConfigError` for the first keyword ``cls`` does not take (sorted, so stable): where it
    moved (:data:`MOVED_KEYWORDS`), or the nearest names it takes."""
    names = keyword_names(cls)
    if names is None:
        return
    for key in sorted(kwargs):
        if key not in names:
            moved = moved_keyword_error(key, kwargs[key])
            if moved is not None:
                raise moved
            note = "An extension goes in extensions=[...]; docs/reference/client-options.md maps every removed keyword."
            raise unknown_option_error(key, names | frozenset(MOVED_KEYWORDS), cls.__name__, note)
