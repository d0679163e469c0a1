"""HTTP/1.1 answers read off a socket: the status line, the headers and the body's framing (RFC 9112).

The standard-library engine (:mod:`mcpsync.transports.http.engine`) reads answers with this instead of
``http.client.HTTPResponse``, whose header parsing goes through the ``email`` package (a feed parser, a
policy object and a linear scan per ``get``): about as much Python per call as the rest of a call's path.
Here the head is split with ``bytes`` methods into a :class:`Headers` map, and :class:`Body` reads the
three framings with ``read1`` semantics (at most one read of the socket that returns data).

Strict where leniency is a risk: a status line that is not ``HTTP/1.x NNN``, a header line without a colon
or with whitespace before it, a ``Content-Length`` that is not one non-negative integer (or a list of the
same one), a ``Transfer-Encoding`` other than one ``chunked``, a malformed chunk size, chunk data not
followed by exactly CRLF, a head over 64 KiB per line or 100 headers: all raise :class:`BadAnswer`.
``Transfer-Encoding`` wins over ``Content-Length`` (and the connection is then not reused); interim 1xx
answers are skipped; ``HEAD``, 1xx, 204 and 304 answers have no body (after a 101 the connection is not
reused). Where this differs from ``http.client`` and h11, and why, is listed (and fuzzed) in
``tests/test_http_wire_differential.py``; the measured reason to keep it is in ``bench/README.md``.
"""

from __future__ import annotations

from typing import Any, Dict, Iterator, List, Optional, Tuple

__all__ = ["BadAnswer", "Body", "Headers", "IncompleteBody", "NoAnswer", "read_head"]

MAX_LINE = 65536
MAX_HEADERS = 100
_TOKEN = frozenset(b"!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")


class BadAnswer(Exception):
    """The server's bytes are not an HTTP/1.1 answer."""


class NoAnswer(BadAnswer):
    """The connection ended before a single byte of an answer."""


class IncompleteBody(BadAnswer):
    """The connection ended inside the body."""


class Headers:
    """An answer's headers: case-insensitive, in arrival order, repeated names kept.

    ``get`` returns the first value of a name (as ``http.client`` does), ``get_all`` every value.
    """

    __slots__ = ("_items", "_index")

    def __init__(self, items: List[Tuple[str, str]]) -> None:
        self._items = items
        index: Dict[str, List[str]] = {}
        for name, value in items:
            key = name.lower()
            found = index.get(key)
            if found is None:
                index[key] = [value]
            else:
                found.append(value)
        self._index = index

    def get(self, name: str, default: Any = None) -> Any:
        found = self._index.get(name.lower())
        return found[0] if found else default

    def get_all(self, name: str, default: Any = None) -> Any:
        found = self._index.get(name.lower())
        return list(found) if found else default

    def __getitem__(self, name: str) -> str:
        found = self._index.get(name.lower())
        if not found:
            raise KeyError(name)
        return found[0]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._index

    def items(self) -> List[Tuple[str, str]]:
        return list(self._items)

    def keys(self) -> List[str]:
        return [k for k, _ in self._items]

    def __iter__(self) -> Iterator[str]:
        return iter(self.keys())

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:  # names only: values may be secrets (Set-Cookie)
        return "Headers(%s)" % ", ".join(sorted(self._index))


def _line(fp: Any) -> bytes:
    line: bytes = fp.readline(MAX_LINE + 1)
    if len(line) > MAX_LINE:
        raise BadAnswer("a line of the answer's head exceeds %d bytes" % MAX_LINE)
    return line


def read_head(fp: Any, method: str) -> Tuple[int, str, Headers, "Body"]:
    """Read one answer's head from ``fp`` (a buffered reader); interim 1xx answers are skipped.

    Returns ``(status, reason, headers, body)``. Blocks until the head arrives. Raises
    :class:`NoAnswer` when the connection ends first, :class:`BadAnswer` for anything malformed, and
    whatever the reader raises (``OSError``, ``socket.timeout``).
    """
    first = True
    while True:
        line = _line(fp)
        if not line:
            if first:
                raise NoAnswer("the server closed the connection without an answer")
            raise BadAnswer("the connection ended in the answer's head")
        first = False
        version, _, rest = line.rstrip(b"\r\n").partition(b" ")
        # HTTP/1.2..1.9 are read as 1.1 (RFC 9112 2.3: a higher minor version is treated as the highest known)
        if len(version) != 8 or version[:7] != b"HTTP/1." or version[7] not in b"0123456789":
            raise BadAnswer("not an HTTP/1.x status line: %r" % line[:80])
        code = rest[:3]
        if len(code) != 3 or not code.isdigit() or rest[3:4] not in (b"", b" "):
            raise BadAnswer("bad status code in %r" % line[:80])
        status = int(code)
        if status < 100:
            raise BadAnswer("bad status code in %r" % line[:80])
        reason = rest[4:].strip().decode("latin-1")
        items = _read_fields(fp)
        if 100 <= status < 200 and status != 101:
            continue  # 100 Continue, 103 Early Hints...: the real answer follows
        headers = Headers(items)
        return status, reason, headers, Body(fp, version == b"HTTP/1.0", status, method, headers)


def _read_fields(fp: Any) -> List[Tuple[str, str]]:
    items: List[Tuple[str, str]] = []
    while True:
        line = _line(fp)
        if not line:
            raise BadAnswer("the connection ended in the answer's head")
        if line in (b"\r\n", b"\n"):
            return items
        if line[:1] in (b" ", b"\t"):  # obsolete line folding: part of the previous value
            if not items:
                raise BadAnswer("a folded line before any header")
            name, value = items[-1]
            items[-1] = (name, (value + " " + line.strip().decode("latin-1")).strip())
            continue
        raw_name, colon, raw_value = line.partition(b":")
        if not colon or not raw_name or not _TOKEN.issuperset(raw_name):
            raise BadAnswer("malformed header line %r" % line[:80])
        if len(items) >= MAX_HEADERS:
            raise BadAnswer("more than %d headers" % MAX_HEADERS)
        items.append((raw_name.decode("ascii"), raw_value.strip().decode("latin-1")))


class Body:
    """The body of one answer, framed by its headers; :meth:`read1` as ``BufferedReader.read1``.

    ``complete`` turns True when the body has been read to its end (for a close-delimited body: when
    the connection ended); ``reusable`` says whether the connection may carry another request then.
    """

    __slots__ = ("_fp", "_mode", "_left", "complete", "reusable")

    def __init__(self, fp: Any, http10: bool, status: int, method: str, headers: Headers) -> None:
        self._fp = fp
        connection = (headers.get("Connection") or "").lower()
        keep = "keep-alive" in connection if http10 else "close" not in connection
        self.complete = False
        self._left = 0
        index = headers._index
        # the framing headers are checked even where no body follows (HEAD, 204, 304): a server that
        # sends conflicting ones is not trusted to frame the next answer on this connection either
        if "transfer-encoding" in index:
            # only "chunked", once: any other coding (gzip, identity, chunked twice) is not decoded here and
            # its bytes would be handed on as the content (RFC 9112 6.1; h11 refuses the same)
            codings = [c.strip().lower() for c in ",".join(index["transfer-encoding"]).split(",")]
            if codings != ["chunked"]:
                raise BadAnswer("unsupported Transfer-Encoding %r" % ", ".join(codings)[:40])
            mode = "chunked"
            if "content-length" in index:
                keep = False  # both present: never reuse (RFC 9112 6.3 item 3)
        elif "content-length" in index:
            mode = "length"
            self._left = _content_length(index["content-length"])
        else:
            mode = "close"
        if method == "HEAD" or status in (204, 304) or 100 <= status < 200:
            mode = "none"
            self._left = 0
            if status == 101:  # the connection now speaks another protocol
                keep = False
        elif mode == "close":
            keep = False
        self._mode = mode
        if mode == "none" or (mode == "length" and not self._left):
            self.complete = True
        self.reusable = keep

    def read1(self, n: int) -> bytes:
        """Up to ``n`` bytes (``n`` < 0: what one read gives) of the body; ``b""`` at its end."""
        if self.complete or n == 0:
            return b""
        if n < 0:
            n = 1 << 20
        mode = self._mode
        if mode == "length":
            data: bytes = self._fp.read1(min(n, self._left))
            if not data:
                raise IncompleteBody("the connection ended with %d bytes of the body missing" % self._left)
            self._left -= len(data)
            if not self._left:
                self.complete = True
            return data
        if mode == "chunked":
            if not self._left:
                self._left = self._next_chunk()
                if not self._left:
                    return b""
            data = self._fp.read1(min(n, self._left))
            if not data:
                raise IncompleteBody("the connection ended inside a chunk")
            self._left -= len(data)
            if not self._left:
                end = self._fp.read(2)  # exactly CRLF: a bare LF here is where a lenient reader desynchronises
                if end != b"\r\n":
                    if len(end) < 2 and b"\r\n".startswith(end):
                        raise IncompleteBody("the connection ended after a chunk")
                    raise BadAnswer("a chunk is not followed by CRLF")
            return data
        data = self._fp.read1(n)  # close-delimited
        if not data:
            self.complete = True
        return data

    def _next_chunk(self) -> int:
        line = _line(self._fp)
        if not line:
            raise IncompleteBody("the connection ended before the next chunk")
        size = line.split(b";", 1)[0].strip()
        if not size or len(size) > 16 or not all(c in b"0123456789abcdefABCDEF" for c in size):
            raise BadAnswer("bad chunk size line %r" % line[:80])
        left = int(size, 16)
        if left == 0:
            while True:  # trailer fields, up to the empty line
                trailer = _line(self._fp)
                if not trailer:
                    raise IncompleteBody("the connection ended in the trailer")
                if trailer in (b"\r\n", b"\n"):
                    break
            self.complete = True
        return left


def _content_length(values: List[str]) -> int:
    found: Optional[int] = None
    for value in values:
        for part in value.split(","):
            part = part.strip()
            # at most 18 digits (h11 allows 20): int() of a 5,000-digit string raises ValueError, and no
            # body is an exabyte
            if not part.isdigit() or not part.isascii() or len(part) > 18:
                raise BadAnswer("bad Content-Length %r" % value[:40])
            n = int(part)
            if found is not None and n != found:
                raise BadAnswer("conflicting Content-Length values")
            found = n
    if found is None:
        raise BadAnswer("empty Content-Length")
    return found
