"""A client's keyword arguments as one flat dict and back, for code that merges settings from several places
(configuration files, a manager's defaults under a server's own, the command line).

:func:`flat_options` spreads the option objects of ``Client(...)`` keywords into the flat names of their fields
(``stdio=StdioOptions(cwd="/srv")`` -> ``cwd="/srv"``); :func:`grouped` gathers flat names into the option
objects again (and merges them into any option object already there). Configuration files keep their flat JSON
(``command``, ``args``, ``env``, ``cwd``, ``headers``, ``options: {"verify": false}``): the manager maps them with
:func:`grouped`. Pure functions; thread-safe.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Mapping, Optional

from ..errors import ConfigError
from .callbacks import Callbacks
from .client_options import ClientOptions
from .options import HTTP_FIELDS, moved_keyword_error
from .stdio_options import StdioOptions

__all__ = ["HTTP_FIELDS", "STDIO_FIELDS", "flat_options", "grouped"]

#: The settings of :class:`~mcpsync.client.StdioOptions` (``stdio=``).
STDIO_FIELDS = tuple(StdioOptions.__dataclass_fields__)
_STDIO = STDIO_FIELDS
_CALLBACKS = tuple(Callbacks.__dataclass_fields__)
_OPTIONS = tuple(ClientOptions.__dataclass_fields__)


def flat_options(kwargs: Mapping[str, Any]) -> Dict[str, Any]:
    """``kwargs`` (a client's keyword arguments, new or flat spelling) with every option object spread into flat
    names: ``stdio``, ``http``, ``callbacks``, ``options`` into their fields (those that differ from the default),
    ``middleware`` into ``interceptors`` / ``retry`` / ``allowed_tools`` / ``disabled_tools``; ``extensions`` stays
    a list (checked; of two entries of one type the first is kept). Flat names already in ``kwargs`` win over a
    group's."""
    out: Dict[str, Any] = {}
    for key, value in kwargs.items():
        if key in ("stdio", "callbacks", "options") and value is not None:
            default = type(value)()
            for name in value.__dataclass_fields__:
                if getattr(value, name) != getattr(default, name):
                    out.setdefault(name, getattr(value, name))
        elif key == "http" and value is not None:
            defaults = type(value)().client_arguments()
            for name, setting in value.client_arguments().items():
                if name not in defaults or setting != defaults[name]:
                    out.setdefault(name, setting)
            if value.headers:
                out["headers"] = dict(value.headers, **(kwargs.get("headers") or {}))
            for name in ("bearer_token", "auth"):
                if getattr(value, name) is not None:
                    out.setdefault(name, getattr(value, name))
        elif key == "middleware" and value is not None:
            from .controls import split_middleware

            policy, retry, chain = split_middleware(value)
            if chain:
                out["interceptors"] = list(chain) + list(out.get("interceptors") or ())
            if retry is not None:
                out.setdefault("retry", retry)
            if policy is not None:
                if policy.allowed is not None:
                    out.setdefault("allowed_tools", list(policy.allowed))
                if policy.denied:
                    out.setdefault("disabled_tools", list(policy.denied))
        elif key == "extensions" and value is not None:
            from .controls import checked_extensions

            kept = list(out.get("extensions") or ())
            kept += [e for e in checked_extensions(value) if not any(type(k) is type(e) for k in kept)]
            out["extensions"] = kept
        elif key == "headers" and "headers" in out:
            out["headers"] = dict(out["headers"], **(value or {}))
        elif value is not None or key not in out:
            out[key] = value
    return out


def grouped(kwargs: Mapping[str, Any], *, remote: bool) -> Dict[str, Any]:
    """``kwargs`` as :class:`mcpsync.Client` takes them: flat names gathered into ``stdio=``, ``http=``,
    ``callbacks=``, ``options=``, ``middleware=`` and ``extensions=`` (merged into an option object given there;
    the flat name wins). ``remote``: the target is a URL (``max_message_size`` goes to ``http=``, else to
    ``stdio=``). Names a client does not know stay as they are (the client reports them). Raises ConfigError for
    ``engine=``."""
    out: Dict[str, Any] = {}
    stdio: Dict[str, Any] = {}
    http: Dict[str, Any] = {}
    callbacks: Dict[str, Any] = {}
    options: Dict[str, Any] = {}
    middleware: List[Any] = list(kwargs.get("middleware") or ())
    extensions: List[Any] = list(kwargs.get("extensions") or ())
    allowed: Optional[List[str]] = None
    denied: List[str] = []
    for key, value in kwargs.items():
        if key in ("middleware", "extensions", "stdio", "http", "callbacks", "options"):
            continue
        if key == "max_message_size":
            (http if remote else stdio)[key] = value
        elif key in _STDIO:
            stdio[key] = value
        elif key in HTTP_FIELDS:
            http[key] = value
        elif key in _CALLBACKS:
            callbacks[key] = value
        elif key in _OPTIONS:
            options[key] = value
        elif key == "interceptors":
            middleware.extend(value or ())
        elif key == "retry":
            if value is not None:
                middleware.insert(0, value)
        elif key == "allowed_tools":
            allowed = None if value is None else list(value)
        elif key == "disabled_tools":
            denied = list(value or ())
        elif key == "engine":
            error = moved_keyword_error(key, value)
            assert error is not None
            raise error
        else:
            out[key] = value
    if allowed is not None or denied:
        from .policy import ToolPolicy

        middleware.append(ToolPolicy.of(allowed, denied))
    for name, group, given in (
        ("stdio", StdioOptions, stdio),
        ("callbacks", Callbacks, callbacks),
        ("options", ClientOptions, options),
    ):
        base = kwargs.get(name)
        if given:
            out[name] = dataclasses.replace(base if base is not None else group(), **given)
        elif base is not None:
            out[name] = base
    if http:
        out["http"] = _with_http(kwargs.get("http"), http)
    elif kwargs.get("http") is not None:
        out["http"] = kwargs["http"]
    if middleware:
        out["middleware"] = middleware
    if extensions:
        out["extensions"] = extensions
    return out


def _with_http(base: Any, changes: Dict[str, Any]) -> Any:
    from ..transports.http.options import HTTPOptions

    if base is not None and not isinstance(base, HTTPOptions):
        raise ConfigError("http= takes a mcpsync.client.HTTPOptions, got %r" % (base,))
    return dataclasses.replace(base, **changes) if base is not None else HTTPOptions(**changes)
