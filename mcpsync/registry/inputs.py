"""Inputs of an installation: what ``server.json`` asks the user for, and where the answers come from.

Every value a ``server.json`` leaves open (an environment variable, a header, a positional or named argument,
a ``{variable}`` of a value or of a remote's URL template, an mcpb ``user_config`` entry) becomes one
:class:`InputRequest`, handed to an input callback. Callbacks shipped here:

- :func:`inputs_from` -- a mapping (``--input NAME=VALUE``) and, for environment variables, the process
  environment, then an optional ``fallback`` that asks the user;
- :class:`InputSource` -- any such pair: what is ``known`` without asking, and how to ``ask``. An installation
  shows its consent first and asks after: the consent is resolved with the known answers alone (an input that
  would be asked shows as ``<NAME>`` and is listed as asked after approval), and only an approved
  installation calls ``ask``. A plain callable is treated as one that may ask: nothing of it is called before
  consent.

The CLI adds a terminal prompt (``getpass`` for secrets); a GUI passes its own callable (the library itself
never prompts or prints). A callback returns a string, a list of strings (a repeated argument), or None
(no answer: the default is used, and a required input without a default fails with
:class:`~.errors.MissingInput`).
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, List, Mapping, Optional, Sequence, Tuple, Union

from .errors import InvalidInput

__all__ = [
    "Answer",
    "InputCallback",
    "InputRequest",
    "InputSource",
    "Pending",
    "check_value",
    "inputs_from",
    "reinstall_inputs",
]

Answer = Union[None, str, Sequence[str]]


@dataclass(frozen=True)
class InputRequest:
    """One value an installation needs.

    Attributes:
        name: the name ``--input NAME=VALUE`` answers: an environment variable's or header's ``name``, a named
            argument's flag (``--port``; ``port`` answers it too), a positional argument's ``valueHint``, a
            ``{variable}``'s name, an mcpb ``user_config`` key.
        kind: ``env``, ``header``, ``argument``, ``variable``, ``url`` (a remote URL variable) or ``user_config``.
        server: the registry name of the server being installed.
        description: what the server says the value is for ("" when nothing).
        required: whether a value must be given.
        secret: a password or token: never echoed, stored in the credential store, never in a file.
        format: ``string``, ``number``, ``boolean`` or ``filepath``.
        default: the value used when the callback gives none.
        choices: the only allowed values (empty: any).
        placeholder: an example to show in a prompt.
        repeated: the argument may be given several times (the callback may return a list).
        aliases: other names that answer it (``port`` for ``--port``).
    """

    name: str
    kind: str
    server: str = ""
    description: str = ""
    required: bool = False
    secret: bool = False
    format: str = "string"
    default: Optional[str] = None
    choices: Tuple[str, ...] = ()
    placeholder: Optional[str] = None
    repeated: bool = False
    aliases: Tuple[str, ...] = field(default=())

    @property
    def names(self) -> Tuple[str, ...]:
        return (self.name,) + self.aliases

    def prompt(self) -> str:
        """A one-line prompt text (no trailing colon)."""
        text = "%s %s" % ({"env": "environment variable", "header": "HTTP header", "url": "URL variable"}.get(
            self.kind, self.kind.replace("_", " ")), self.name)
        if self.description:
            text += " (%s)" % self.description
        if self.choices:
            text += " [%s]" % "/".join(self.choices)
        if self.default is not None and not self.secret:
            text += " [default: %s]" % self.default
        elif self.placeholder and not self.secret:
            text += " [e.g. %s]" % self.placeholder
        if not self.required:
            text += " (optional)"
        return text


InputCallback = Callable[[InputRequest], Answer]


class Pending(str):
    """The stand-in (``<NAME>``) for an input that will be asked after consent, while the consent is built."""

    __slots__ = ()

    @classmethod
    def of(cls, request: InputRequest) -> "Pending":
        return cls("<%s>" % request.name)


def _empty(answer: Answer) -> bool:
    return answer is None or answer == "" or (not isinstance(answer, str) and len(answer) == 0)


class InputSource:
    """An input callback in two parts: ``known`` answers what needs no asking (given values, the environment, a
    previous installation), ``ask`` (optional) asks the user. Calling it tries ``known``, then ``ask``.

    :meth:`preview` is what an installation uses to build its consent before anything is asked: the known answer,
    else a :class:`Pending` stand-in when ``ask`` would be asked (else None: the default applies). Thread-safety
    is that of the two callables.
    """

    def __init__(self, known: InputCallback, ask: Optional[InputCallback] = None) -> None:
        self.known = known
        self.ask = ask

    def __call__(self, request: InputRequest) -> Answer:
        answer = self.known(request)
        if _empty(answer) and self.ask is not None:
            return self.ask(request)
        return answer

    def preview(self, request: InputRequest) -> Answer:
        answer = self.known(request)
        if _empty(answer) and self.ask is not None:
            return Pending.of(request)
        return answer

_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_TRUE = frozenset({"true", "yes", "1", "on"})
_FALSE = frozenset({"false", "no", "0", "off"})


def check_value(request: InputRequest, value: str) -> str:
    """``value`` normalized to the request's ``format`` (booleans as ``true``/``false``, numbers as given,
    file paths absolute), and checked against ``choices``. Raises :class:`~.errors.InvalidInput`."""
    if not isinstance(value, str):
        raise InvalidInput("input %s: expected a string, got %s" % (request.name, type(value).__name__),
                           input_name=request.name)
    if "\x00" in value:
        raise InvalidInput("input %s: a NUL character is not allowed" % request.name, input_name=request.name)
    fmt = request.format
    if fmt == "number":
        text = value.strip()
        if not _NUMBER.match(text) or not math.isfinite(float(text)):
            raise InvalidInput("input %s: %r is not a number" % (request.name, value), input_name=request.name)
        value = text
    elif fmt == "boolean":
        low = value.strip().lower()
        if low not in _TRUE | _FALSE:
            raise InvalidInput("input %s: %r is not true or false" % (request.name, value), input_name=request.name)
        value = "true" if low in _TRUE else "false"
    elif fmt == "filepath" and value:
        value = os.path.abspath(os.path.expanduser(value))
    if request.choices and value not in request.choices:
        raise InvalidInput(
            "input %s: %r is not one of %s" % (request.name, "<secret>" if request.secret else value,
                                               ", ".join(request.choices)),
            input_name=request.name,
        )
    return value


def inputs_from(
    values: Optional[Mapping[str, Union[str, Sequence[str]]]] = None,
    *,
    environ: Optional[Mapping[str, str]] = None,
    fallback: Optional[InputCallback] = None,
) -> InputCallback:
    """A non-interactive input callback: ``values`` by input name (any of :attr:`InputRequest.names`), then, for
    an environment variable input, ``environ`` (default: none; pass ``os.environ`` to use the process's), then
    ``fallback`` (e.g. a terminal prompt), asked only after consent. Unanswered inputs get their default."""
    values = dict(values or {})

    def known(request: InputRequest) -> Answer:
        for key in request.names:
            if key in values:
                return values[key]
        if environ is not None and request.kind == "env" and request.name in environ:
            return environ[request.name]
        return None

    return InputSource(known, fallback)


def reinstall_inputs(
    inputs: Union[InputCallback, Mapping[str, Any], None],
    recorded: Mapping[str, Any],
    config_name: str,
    store: Any = None,
) -> InputSource:
    """The inputs of installing ``config_name`` again (an update): a value given in ``inputs`` (a mapping), then
    what the previous installation recorded, then for a secret the credential store's ``config_name/INPUT``
    (``store``, default :func:`mcpsync.auth.open_store`), then what ``inputs`` (a callback) knows; only then is
    ``inputs``' ``ask`` asked (after consent, when the installation previews). Reads the store when called."""
    from ..auth.secrets import read_secret

    fallback: InputCallback = inputs if callable(inputs) else inputs_from(inputs or {})
    given: Mapping[str, Any] = inputs if isinstance(inputs, Mapping) else {}
    ask: Optional[InputCallback] = fallback.ask if isinstance(fallback, InputSource) else fallback
    also_known: Optional[InputCallback] = fallback.known if isinstance(fallback, InputSource) else None

    def known(request: InputRequest) -> Answer:
        for key in request.names:
            if key in given:
                return given[key]  # type: ignore[no-any-return]
        for key in request.names:
            if key in recorded:
                return recorded[key]  # type: ignore[no-any-return]
        if request.secret:
            stored = read_secret("%s/%s" % (config_name, request.name), store)
            if stored is not None:
                return stored
        return also_known(request) if also_known is not None else None

    return InputSource(known, ask)


def ask_all(callback: InputCallback, request: InputRequest) -> List[str]:
    """Ask ``callback`` for ``request``; the checked values (empty when there is no value and none is needed).

    Raises :class:`~.errors.MissingInput` for a required input without a value, InvalidInput for a bad one.
    """
    from .errors import MissingInput

    answer = callback(request)
    if isinstance(answer, Pending):
        return [answer]  # asked after consent: a stand-in, unchecked
    if _empty(answer):
        answer = request.default
    if answer is None or answer == "":
        if request.required:
            raise MissingInput(
                "%s needs %s%s (give it with --input %s=VALUE)" % (
                    request.server or "the server", request.prompt(), "", request.name),
                input_name=request.name,
            )
        return []
    items = [answer] if isinstance(answer, str) else list(answer)
    if len(items) > 1 and not request.repeated:
        raise InvalidInput("input %s takes one value, got %d" % (request.name, len(items)), input_name=request.name)
    return [check_value(request, item) for item in items]
