"""Byte-stream framing for stdio: newline-delimited JSON and ``Content-Length:`` headers.

:class:`FrameReader` turns chunks of bytes (as they come from ``os.read``) into
complete frames. It is linear in the input size however long a line is (pieces
are collected in a list and joined once), skips an oversized frame without
holding it in memory and resynchronises at the next newline, and detects
``Content-Length:`` framing at the very start of the stream.

A ``Content-Length`` that lies never wedges the reader: a complete header inside a
body (impossible in JSON, whose strings cannot hold raw CR/LF) ends that frame and
parsing resumes at the header, so a server declaring ``10**17`` bytes is skipped
only up to its next frame, not forever.

Not thread-safe: one reader thread owns one FrameReader.
"""

from __future__ import annotations

import re
from typing import Callable, List, Optional

__all__ = ["FrameReader", "encode_content_length"]

_CL_HEADER = re.compile(rb"content-length[ \t]*:[ \t]*(\d+)", re.IGNORECASE)
_ID_HEAD = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)')


def encode_content_length(body: bytes) -> bytes:
    """Frame ``body`` with a Content-Length header."""
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def guess_id(head: bytes) -> Optional[object]:
    """Best-effort: the JSON-RPC id near the start of a frame (for failing an oversized message)."""
    m = _ID_HEAD.search(head[:512])
    if not m:
        return None
    raw = m.group(1)
    if raw.startswith(b'"'):
        return raw[1:-1].decode("utf-8", "replace")
    try:
        return int(raw)
    except ValueError:
        return None


class FrameReader:
    """Incremental frame splitter.

    Args:
        on_frame: called with the bytes of each complete frame (without the newline).
        on_oversize: called with the first bytes of a frame that exceeded ``max_size``.
        on_resync: called (content-length framing) with the first bytes of a frame cut short because
            another header came before its declared ``Content-Length`` was reached: the length lied.
        max_size: the largest frame accepted, in bytes.
        framing: "newline", "content-length", or "auto" (newline unless the stream starts
            with a Content-Length header).
    """

    def __init__(
        self,
        on_frame: Callable[[bytes], None],
        on_oversize: Callable[[bytes], None],
        max_size: int,
        framing: str = "auto",
        on_resync: Optional[Callable[[bytes], None]] = None,
    ) -> None:
        self._on_frame = on_frame
        self._on_resync = on_resync
        self._on_oversize = on_oversize
        self._max = max_size
        self._mode = framing  # "auto" until decided
        self._parts: List[bytes] = []
        self._size = 0
        self._skipping = False
        self._buf = bytearray()  # content-length mode only
        self._need: Optional[int] = None
        self._scanned = 0  # bytes at the start of the current body already searched for a header
        self._dropped = False  # bytes of the current (oversized) body were dropped and reported

    @property
    def mode(self) -> str:
        """The framing in use ("auto" until the first bytes arrived)."""
        return self._mode

    def feed(self, chunk: bytes) -> None:
        """Consume one chunk of bytes, emitting every frame it completes."""
        if self._mode == "auto":
            data = b"".join(self._parts) + chunk if self._parts else chunk
            stripped = data.lstrip()
            if not stripped:
                self._parts = []
                return
            head = stripped[:15].lower()
            if len(head) < 15 and b"\n" not in head and b"content-length:".startswith(head):
                self._parts = [data]  # could still become a header: wait for more bytes
                return
            self._parts = []
            self._mode = "content-length" if head.startswith(b"content-length") else "newline"
            chunk = data
        if self._mode == "content-length":
            self._feed_cl(chunk)
        else:
            self._feed_nl(chunk)

    # newline-delimited ------------------------------------------------------

    def _feed_nl(self, chunk: bytes) -> None:
        start = 0
        find = chunk.find
        while True:
            nl = find(b"\n", start)
            if nl < 0:
                if start < len(chunk) and not self._skipping:
                    piece = chunk[start:] if start else chunk
                    self._size += len(piece)
                    if self._size > self._max:
                        head = self._parts[0] if self._parts else piece
                        self._parts = []
                        self._size = 0
                        self._skipping = True
                        self._on_oversize(head[:512])
                    else:
                        self._parts.append(piece)
                return
            if self._skipping:
                self._skipping = False
                start = nl + 1
                continue
            if self._parts:
                self._size += nl - start
                if self._size > self._max:
                    head = self._parts[0]
                    self._parts = []
                    self._size = 0
                    self._on_oversize(head[:512])
                    start = nl + 1
                    continue
                self._parts.append(chunk[start:nl])
                line = b"".join(self._parts)
                self._parts = []
                self._size = 0
            else:
                if nl - start > self._max:
                    self._on_oversize(chunk[start : start + 512])
                    start = nl + 1
                    continue
                line = chunk[start:nl]
            start = nl + 1
            self._on_frame(line)
            del line

    # content-length ---------------------------------------------------------

    def _feed_cl(self, chunk: bytes) -> None:
        buf = self._buf
        buf += chunk
        while True:
            if self._need is None:
                end, sep = buf.find(b"\r\n\r\n"), 4
                bare = buf.find(b"\n\n", 0, end if end >= 0 else len(buf))
                if bare >= 0:  # the first blank line ends the header, whichever its line endings
                    end, sep = bare, 2
                if end < 0:
                    if len(buf) > 8192:  # not a header: drop up to the last newline and resync
                        cut = buf.rfind(b"\n")
                        del buf[: cut + 1 if cut >= 0 else len(buf)]
                    return
                header = bytes(buf[:end])
                del buf[: end + sep]
                m = _CL_HEADER.search(header)
                if m and len(m.group(1)) > 18:  # no real frame is that long: not a usable header
                    self._on_oversize(header[:512])
                    m = None
                    header = b""
                # Stray lines (a banner, newline-framed JSON, or a frame whose Content-Length was too short
                # and so ended inside the next header) before the header: hand them over as frames.
                if m is None or m.start():
                    for line in (header[: m.start()] if m else header).splitlines():
                        if line.strip():
                            self._on_frame(line)
                if not m:
                    continue
                self._need = int(m.group(1))
                self._scanned = 0
                self._skipping = self._need > self._max  # reported once the first byte is dropped
                self._dropped = False
            need = self._need
            # A Content-Length that lies: a whole header inside the body cannot be valid JSON (raw CR/LF
            # never appear in a JSON string), so the frame ends there and the reader resynchronises.
            scanned = self._scanned
            hit = -1
            if buf.find(b"\n", scanned, need) >= 0:  # memchr: a compact JSON body has no newline at all
                hit = _header_inside(buf, max(0, scanned - 3), min(need, len(buf)))
            if hit >= 0:
                if self._on_resync is not None:
                    self._on_resync(bytes(buf[: min(hit, 512)]))
                if not self._dropped:
                    self._on_frame(bytes(buf[:hit]))  # what came before the next header (junk is dropped later)
                del buf[:hit]
                self._need = None
                self._skipping = False
                continue
            if self._skipping:
                # drop what was scanned, keeping a tail in which a header may have started
                drop = min(need, len(buf))
                if drop < need:
                    drop = max(0, drop - _HEADER_TAIL)
                if drop and not self._dropped:  # no header in what came so far: a real oversized frame
                    self._dropped = True
                    self._on_oversize(bytes(buf[:512]))
                del buf[:drop]
                self._need = need - drop
                self._scanned = min(need, len(buf) + drop) - drop
                if self._need:
                    return
                self._need = None
                self._skipping = False
                continue
            if len(buf) < need:
                self._scanned = len(buf)
                return
            body = bytes(buf[:need])
            del buf[:need]
            self._need = None
            self._on_frame(body)
            del body


#: How far back from a blank line a Content-Length header can start (its name, spaces, 18 digits).
_HEADER_TAIL = 64
_HEADER_BEFORE = re.compile(rb"content-length[ \t]*:[ \t]*\d{1,18}[ \t]*\r?$", re.IGNORECASE)
_HEADER_FULL = re.compile(rb"content-length[ \t]*:[ \t]*\d{1,18}[ \t]*\r?\n\r?\n", re.IGNORECASE)
#: Blank lines checked one by one before one linear regex pass takes over.
_CANDIDATES = 64


def _header_inside(buf: bytearray, start: int, end: int) -> int:
    """Where the first complete ``Content-Length`` header (up to its blank line) in ``buf[:end]`` starts, or -1.

    Only blank lines found at or after ``start`` are considered (the body scanned before had none).
    Linear whatever the body: ``bytes.find`` jumps between blank lines (a JSON body has few, so this
    costs about a nanosecond a byte); each one is checked cheaply (a digit must precede it) and only
    then with a short regex. A body with many blank lines (a flood, on purpose or not) is searched for
    the rest in one pass of the compiled pattern in C (under 10 ns a byte).
    """
    a = buf.find(b"\n\r\n", start, end)  # the next blank line of each kind; each needle is searched once per hit
    b = buf.find(b"\n\n", start, end)
    p = start
    for _ in range(_CANDIDATES):
        if a < 0 and b < 0:
            return -1
        p = a if b < 0 or (0 <= a < b) else b
        q = p - 1
        if q >= 0 and buf[q] == 13:  # CR
            q -= 1
        while q >= 0 and q > p - _HEADER_TAIL and buf[q] in (32, 9):  # spaces after the number (bounded)
            q -= 1
        if q >= 0 and 48 <= buf[q] <= 57:  # a digit: worth the regex
            m = _HEADER_BEFORE.search(buf, max(0, p - _HEADER_TAIL), p)
            if m is not None:
                return m.start()
        if p == a:
            a = buf.find(b"\n\r\n", p + 1, end)
        if p == b:
            b = buf.find(b"\n\n", p + 1, end)
    m = _HEADER_FULL.search(buf, max(0, p - _HEADER_TAIL), end)
    return m.start() if m is not None else -1
