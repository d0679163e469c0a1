"""The request's shape, checked before a byte of it is written (RFC 9110 and RFC 9112).

A request whose method, target or headers cannot be written correctly is refused with
:class:`~mcpsync.errors.MalformedHTTPRequest`, naming what is wrong: never a header value (it may be a secret),
and a header name only when it is itself well formed. What passes is written exactly as given, except that a
header value's leading and trailing blanks are not part of it (RFC 9110 §5.5) and a character outside ASCII in the
target is sent percent-encoded as UTF-8, as are the few ASCII characters a URI may not hold, and percent-escapes
are upper-cased (RFC 3986 §2.1 and §6.2.2: what urllib3 writes).

The rules:

* the method and every header name are tokens (``tchar``: letters, digits and ``!#$%&'*+-.^_`|~``);
* the request target (and the host it names) holds no control character (``\\x00``-``\\x1f``, ``\\x7f``) and no
  space;
* a header value holds no control character but the horizontal tab, and no character above ``\\xff`` (values are
  written as Latin-1, as ``http.client`` does).

Pure functions, thread-safe; a check costs one regular-expression match per part.
"""

from __future__ import annotations

import re
from typing import Iterable, List, Mapping, Tuple

from ...errors import MalformedHTTPRequest

__all__ = ["check_headers", "check_mapping", "check_method", "check_target", "encode_target", "request_target"]

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z").match
_TOKENS = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+(?:\n[!#$%&'*+\-.^_`|~0-9A-Za-z]+)*\Z").match  # line-joined
_BAD_VALUE = re.compile("[\x00-\x08\x0a-\x1f\x7f\u0100-\U0010ffff]").search
_BAD_TARGET = re.compile("[\x00-\x20\x7f]").search
_TARGET_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/?")
_PLAIN_TARGET = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?]|%[0-9A-F]{2})*\Z").match
_ESCAPE = re.compile("%[0-9A-Fa-f]{2}").match
_PLAIN_METHODS = frozenset(("GET", "POST", "DELETE", "HEAD", "PUT", "PATCH", "OPTIONS"))


def check_method(method: str) -> None:
    """Raise :class:`~mcpsync.errors.MalformedHTTPRequest` unless ``method`` is an HTTP token."""
    if method not in _PLAIN_METHODS and not _TOKEN(method):
        raise MalformedHTTPRequest("the HTTP method is not a token; request not sent", part="method")


def check_target(url: str, shown: str) -> None:
    """Raise :class:`~mcpsync.errors.MalformedHTTPRequest` when ``url`` (a whole URL: its host and its request
    target) holds a control character or a space. Checked on the URL as given, before it is split (``urlsplit``
    silently drops tabs and line breaks). ``shown`` is the URL as an error may name it (redacted)."""
    if _BAD_TARGET(url):
        raise MalformedHTTPRequest(
            "the URL %s holds a control character or a space; request not sent (percent-encode it)" % shown,
            part="target",
        )


def request_target(url: str, netloc: str) -> str:
    """The request target (origin form) of ``url`` whose authority is ``netloc``: its path and query as written,
    an empty query (``/a?``) included, without the fragment; ``/`` for an empty path."""
    rest = url.split("://", 1)[-1][len(netloc) :].split("#", 1)[0]
    if not rest or rest[0] != "/":
        rest = "/" + rest
    return rest


def encode_target(target: str) -> str:
    """``target`` (checked by :func:`check_target`) as written: RFC 3986 §6.2.2 normalized, as urllib3 writes a
    target. A percent-escape ``%HH`` is kept (its hex digits upper-cased); a character a URI may not hold as such
    (outside ASCII, or one of ``"<>\\^`{|}[]`` and a ``%`` that starts no escape) is percent-encoded as UTF-8;
    letters, digits, ``-._~!$&'()*+,;=:@/?`` pass as given."""
    if _PLAIN_TARGET(target):
        return target
    out: List[str] = []
    i = 0
    n = len(target)
    while i < n:
        c = target[i]
        if c == "%" and _ESCAPE(target, i):
            out.append(target[i : i + 3].upper())
            i += 3
            continue
        if c in _TARGET_CHARS:
            out.append(c)
        else:
            out.extend("%%%02X" % b for b in c.encode("utf-8", "surrogatepass"))
        i += 1
    return "".join(out)


def check_headers(headers: Iterable[Tuple[str, str]]) -> None:
    """Raise :class:`~mcpsync.errors.MalformedHTTPRequest` for the first header whose name is not a token or whose
    value holds a control character (other than a tab) or a character above ``\\xff``."""
    for index, (name, value) in enumerate(headers):
        if not isinstance(name, str) or not _TOKEN(name):
            raise MalformedHTTPRequest(
                "HTTP header number %d has a name that is not a token; request not sent" % (index + 1),
                part="header name",
            )
        if not isinstance(value, str) or _BAD_VALUE(value):
            raise MalformedHTTPRequest(
                "the value of the HTTP header %s holds a control character or a character outside Latin-1; "
                "request not sent" % name,
                part="header value",
                header=name,
            )


def check_mapping(headers: Mapping[str, str]) -> None:
    """:func:`check_headers` for a mapping, in a few C-level passes when every header is well formed.

    The names are joined with a line break (never part of a token) and matched at once, and the values joined
    with a space (allowed in a value, so it changes no verdict) and checked at once: printable ASCII throughout
    (``isascii``/``isprintable``, the common case) passes without a regular expression, anything else is searched
    for what a value may not hold. ``str.join`` reads each string's own characters (a ``str`` subclass cannot hide
    any) and refuses anything that is not a string. A name that holds the separator makes one more line than there
    are headers, and is refused. On any refusal the per-header check runs and raises its own error (which header,
    which part)."""
    if not headers:
        return
    try:
        names = "\n".join(headers)
        values = " ".join(headers.values())
    except TypeError:  # a name or value that is not a string: refused below
        names = values = ""
    if (
        names
        and _TOKENS(names)
        and names.count("\n") == len(headers) - 1
        and ((values.isascii() and values.isprintable()) or not _BAD_VALUE(values))
    ):
        return
    check_headers(headers.items())
