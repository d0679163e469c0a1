"""Byte-stream framing for stdio: newline-delimited JSON and ``Content-Length:`` headers.

:class:`FrameReader` turns chunks of bytes (as they come from ``os.read``) into
complete frames. It is linear in the input size however long a line is (pieces
are collected in a list and joined once), skips an oversized frame without
holding it in memory and resynchronises at the next newline, and detects
``Content-Length:`` framing at the very start of the stream.

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
    ) -> None:
        self._on_frame = on_frame
        self._on_oversize = on_oversize
        self._max = max_size
        self._mode = framing  # "auto" until decided
        self._parts: List[bytes] = []
        self._size = 0
        self._skipping = False
        self._buf = bytearray()  # content-length mode only
        self._need: Optional[int] = None

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
                end = buf.find(b"\r\n\r\n")
                sep = 4
                if end < 0:
                    end = buf.find(b"\n\n")
                    sep = 2
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
                if not m:
                    # A stray line (banner, or newline-framed JSON): hand it over as a frame.
                    for line in header.splitlines():
                        if line.strip():
                            self._on_frame(line)
                    continue
                self._need = int(m.group(1))
                if self._need > self._max:
                    self._on_oversize(bytes(buf[:512]))
                    self._skipping = True
            need = self._need
            if self._skipping:
                drop = min(need, len(buf))
                del buf[:drop]
                self._need = need - drop
                if self._need:
                    return
                self._need = None
                self._skipping = False
                continue
            if len(buf) < need:
                return
            body = bytes(buf[:need])
            del buf[:need]
            self._need = None
            self._on_frame(body)
            del body
