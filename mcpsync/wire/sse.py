"""Server-Sent Events: a linear-time incremental parser and the glue that reads a ``requests`` response.

Why not ``sseclient.SSEClient`` directly: as documented it reads ``iter_content(128)``
and grows each event with ``data += line`` (quadratic: a 10 MB event does not finish
in a minute), and it silently drops events whose ``data`` is empty, which are exactly
the *priming* events (an ``id`` and nothing else) that Streamable HTTP resumption
relies on. :class:`EventParser` follows the WHATWG event-stream rules
(https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation)
and yields one :class:`SSEEvent` per dispatched block, priming events included; the
last event id and the ``retry`` hint are tracked by whoever reads the events.

Every byte is copied a bounded number of times, whatever the chunking, so a 64 MiB
event costs a few times its size in memory and linear time.

No I/O happens here except in :func:`iter_response_bytes`, which reads an open
``requests`` response as bytes arrive (never waiting for a fixed-size block).
"""

from __future__ import annotations

from typing import Any, Iterable, Iterator, List, Optional

__all__ = ["EventParser", "SSEEvent", "iter_events", "iter_response_bytes"]

_BOM = b"\xef\xbb\xbf"
_READ_SIZE = 1 << 20


class SSEEvent:
    """One dispatched event.

    Attributes:
        event: the event type (``"message"`` when the stream named none).
        data: the data lines joined with ``\\n``, as bytes (``b""`` for a priming event).
        id: the ``id`` field of this block, or None when the block had none
            (``""`` means the stream reset the last event id).
        retry: the ``retry`` hint in milliseconds carried by this block, or None.
        oversized: True when the data exceeded the parser's maximum and was discarded
            (``data`` is then ``b""``).
    """

    __slots__ = ("event", "data", "id", "retry", "oversized")

    def __init__(
        self,
        event: str = "message",
        data: bytes = b"",
        id: Optional[str] = None,  # noqa: A002 - the SSE field name
        retry: Optional[int] = None,
        oversized: bool = False,
    ) -> None:
        self.event = event
        self.data = data
        self.id = id
        self.retry = retry
        self.oversized = oversized

    @property
    def has_data(self) -> bool:
        """True when the block carried at least one ``data`` line (even an empty one) that was kept."""
        return bool(self.data)

    def __repr__(self) -> str:
        return "SSEEvent(event=%r, id=%r, retry=%r, %d bytes%s)" % (
            self.event,
            self.id,
            self.retry,
            len(self.data),
            ", oversized" if self.oversized else "",
        )


class EventParser:
    """Incremental event-stream parser. Feed it byte chunks of any size; it yields complete events.

    Not thread-safe (one parser per stream). ``max_event_size`` bounds the data of
    one event: a larger event is consumed and reported once with ``oversized=True``
    and empty data, so the stream stays usable.
    """

    def __init__(self, max_event_size: Optional[int] = None) -> None:
        self._max = max_event_size
        self._partial: List[bytes] = []  # pieces of the current, unterminated line
        self._partial_len = 0
        self._skip_lf = False  # the previous chunk ended with CR: a leading LF belongs to it
        self._first = True  # strip a UTF-8 BOM at the very start (even when split across chunks)
        self._bom_head = b""
        self._discarding_line = False  # the current line is too long and is being thrown away
        self._reset_block()

    def _reset_block(self) -> None:
        self._data: List[bytes] = []
        self._data_len = 0
        self._event = ""
        self._id: Optional[str] = None
        self._retry: Optional[int] = None
        self._seen = False  # any field in this block
        self._oversized = False

    def feed(self, chunk: bytes) -> List[SSEEvent]:
        """Consume ``chunk``; return the events it completed (possibly none)."""
        if not chunk:
            return []
        if self._first:
            head = self._bom_head + chunk
            if len(head) < len(_BOM) and _BOM.startswith(head):
                self._bom_head = head  # maybe a BOM split across chunks: decide once 3 bytes are here
                return []
            self._first = False
            self._bom_head = b""
            chunk = head[len(_BOM) :] if head.startswith(_BOM) else head
            if not chunk:
                return []
        if self._skip_lf:
            self._skip_lf = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
                if not chunk:
                    return []
        events: List[SSEEvent] = []
        lines = chunk.splitlines(True)
        last = lines[-1]
        complete = last.endswith((b"\n", b"\r"))
        if last.endswith(b"\r"):
            self._skip_lf = True
        n = len(lines) if complete else len(lines) - 1
        for i in range(n):
            line = lines[i]
            discarding = self._discarding_line
            self._discarding_line = False
            if self._partial:
                pieces = self._partial
                pieces.append(line)
                self._partial = []
                self._partial_len = 0
                if discarding:
                    continue
                ev = self._long_line(pieces)
            elif discarding:
                continue
            else:
                ev = self._line(line.rstrip(b"\r\n"))
            if ev is not None:
                events.append(ev)
        lines = []
        if not complete and not self._discarding_line:
            self._partial.append(last)
            self._partial_len += len(last)
            if self._max is not None and self._partial_len > self._max + 64:
                # One line longer than the maximum: drop it as it streams in.
                self._partial = []
                self._partial_len = 0
                self._discarding_line = True
                self._oversized = True
                self._seen = True
        return events

    def _long_line(self, pieces: List[bytes]) -> Optional[SSEEvent]:
        """A line that arrived in several pieces (a large ``data`` line): its value is copied once.

        The pieces are never joined into the whole line first and then sliced (two more copies of
        a line that may be tens of megabytes): a ``data:`` field whose name is in the first piece
        has its value joined straight from the pieces, without the line ending.
        """
        first = pieces[0]
        colon = first.find(b":")
        if 0 <= colon < len(first) - 1 and first[:colon] == b"data" and not self._oversized:
            last = pieces[-1]
            end = len(last)
            while end and last[end - 1 : end] in (b"\r", b"\n"):
                end -= 1
            start = colon + 2 if first[colon + 1 : colon + 2] == b" " else colon + 1
            pieces[0] = first[start:]
            pieces[-1] = last[:end]
            del first, last
            value = b"".join(pieces)
            pieces.clear()
            self._field(b"data", value)
            return None
        line = b"".join(pieces)
        pieces.clear()
        return self._line(line.rstrip(b"\r\n"))

    def _line(self, line: bytes) -> Optional[SSEEvent]:
        if not line:
            return self._dispatch()
        if line[:1] == b":":
            return None  # comment / keep-alive
        colon = line.find(b":")
        if colon < 0:
            field, value = line, b""
        else:
            field = line[:colon]
            value = line[colon + 2 :] if line[colon + 1 : colon + 2] == b" " else line[colon + 1 :]
        self._field(field, value)
        return None

    def _field(self, field: bytes, value: bytes) -> None:
        if field == b"data":
            self._seen = True
            if self._oversized:
                return None
            self._data.append(value)
            self._data_len += len(value) + 1
            if self._max is not None and self._data_len > self._max + 1:
                self._data = []
                self._data_len = 0
                self._oversized = True
        elif field == b"event":
            self._seen = True
            self._event = value.decode("utf-8", "replace")
        elif field == b"id":
            self._seen = True
            if b"\x00" not in value:
                self._id = value.decode("utf-8", "replace")
        elif field == b"retry":
            self._seen = True
            if value.isdigit():
                self._retry = int(value)
        return None

    def _dispatch(self) -> Optional[SSEEvent]:
        if not self._seen:
            self._reset_block()
            return None
        data = self._data
        if not data:
            payload = b""
        elif len(data) == 1:
            payload = data[0]
        else:
            payload = b"\n".join(data)
        ev = SSEEvent(self._event or "message", payload, self._id, self._retry, self._oversized)
        self._reset_block()
        return ev

    def close(self) -> List[SSEEvent]:
        """End of stream: per the event-stream rules an unterminated block is discarded."""
        self._partial = []
        self._reset_block()
        return []


def iter_response_bytes(response: Any, read_size: int = _READ_SIZE) -> Iterator[bytes]:
    """Yield the body of a streamed response (``response.read1``) as bytes arrive.

    Every body (chunked, ``Content-Length`` or close-delimited) is read with ``read1``, so an
    event is never held back waiting for a full buffer (for a chunked body the HTTP layer returns
    at most what is left of the current chunk). Each read is complete in itself: a caller that
    stops iterating early (its answer arrived) leaves the connection intact, so the rest of the
    body can still be drained and the connection reused. Content decoding (gzip) is applied.
    """
    read1 = response.read1
    while True:
        chunk = read1(read_size, decode_content=True)
        if not chunk:
            return
        yield chunk


def iter_events(chunks: Iterable[bytes], max_event_size: Optional[int] = None) -> Iterator[SSEEvent]:
    """Parse an iterable of byte chunks into events (priming events included)."""
    parser = EventParser(max_event_size)
    for chunk in chunks:
        for ev in parser.feed(chunk):
            yield ev
    parser.close()
