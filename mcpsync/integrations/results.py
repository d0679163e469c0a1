"""Tool results as a model can take them: rendering, the result budget, and the store of full results.

A :class:`~mcpsync.CallToolResult` becomes a :class:`Rendered`: its text (text blocks, embedded text
resources, resource links and audio as short notes, and the structured content when there is no text) and
its images (base64 with a MIME type; images are not counted against the text budget). Each framework module
turns that into what its framework accepts.

The budget (:class:`ResultBudget`) is in characters or in tokens (estimated as characters / 4, a deliberate
over-estimate for English text that needs no tokenizer). Text over it is cut and ends with a marker (counted
in the budget, unless the budget is smaller than the marker itself) saying how
much was left out and how to get it all: a handle (``result-3``) for :meth:`ResultStore.get`, and a file when
spilling is on. The :class:`ResultStore` keeps the last ``keep`` full results in memory (bounded: the oldest
is dropped first) and, when asked, writes each oversized one to a file in a directory it owns (created on
first use, removed with its files by :meth:`ResultStore.close`) or in a directory the caller gives (files are
then the caller's and are left in place). Thread-safe.
"""

from __future__ import annotations

import collections
import json
import os
import shutil
import tempfile
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ..errors import ConfigError
from ..manager.adapters import content_parts
from ..types import CallToolResult

__all__ = ["Rendered", "ResultBudget", "ResultStore", "render_result"]

#: Characters per token used to estimate tokens (no tokenizer needed; errs on the side of more tokens).
CHARS_PER_TOKEN = 4


@dataclass(frozen=True)
class ResultBudget:
    """How much result text a model gets per call.

    Attributes:
        max_chars: the most characters of text (None: no limit from characters).
        max_tokens: the most tokens of text, estimated as characters / 4 (None: no limit from tokens).
            When both are given the smaller limit wins.
        spill: write every oversized result in full to a file and name the file in the marker.
        spill_dir: where those files go (None: a private temporary directory removed on close).
    """

    max_chars: Optional[int] = None
    max_tokens: Optional[int] = None
    spill: bool = False
    spill_dir: Optional[str] = None

    def __post_init__(self) -> None:
        for name in ("max_chars", "max_tokens"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise ConfigError("%s must be a positive integer or None, got %r" % (name, value))

    @property
    def limit(self) -> Optional[int]:
        """The limit in characters (None: unlimited)."""
        limits = [x for x in (self.max_chars, (self.max_tokens or 0) * CHARS_PER_TOKEN or None) if x]
        return min(limits) if limits else None


@dataclass
class Rendered:
    """A tool result (or failure) ready for a model.

    Attributes:
        text: the text the model sees (cut to the budget, with the marker).
        images: ``(mime_type, base64 data)`` of each image, in order.
        is_error: the tool failed (``isError``, a timeout, a denial...).
        result: the full result (None for a failure that produced none).
        error: the exception behind a failure, if any.
        truncated: the text was cut.
        handle: the key of the full result in the :class:`ResultStore` when it was cut.
        spill_path: the file holding the full text when it was spilled.
    """

    text: str
    images: List[Tuple[str, str]] = field(default_factory=list)
    is_error: bool = False
    result: Optional[CallToolResult] = None
    error: Optional[BaseException] = None
    truncated: bool = False
    handle: Optional[str] = None
    spill_path: Optional[str] = None

    @property
    def structured(self) -> Any:
        """The result's ``structuredContent`` (None when there is none)."""
        return self.result.structured_content if self.result is not None else None


def _text_parts(result: CallToolResult) -> Tuple[List[str], List[Tuple[str, str]]]:
    """The texts (an image as ``[image N: MIME]``) and the ``(mime, base64 data)`` images of ``result``; the
    ``structuredContent`` as JSON first when there is no text besides images."""
    texts: List[str] = []
    images: List[Tuple[str, str]] = []
    for kind, value, mime in content_parts(result):
        if kind == "image":
            images.append((mime or "image/png", value))
            texts.append("[image %d: %s]" % (len(images), mime or "image/png"))
        else:
            texts.append(value)
    if not [t for t in texts if not t.startswith("[image ")] and result.structured_content is not None:
        texts.insert(0, json.dumps(result.structured_content, ensure_ascii=False, default=str))
    return texts, images


class ResultStore:
    """The full results of calls whose text was cut, by handle (see the module docstring). Thread-safe."""

    def __init__(self, keep: int = 32) -> None:
        """``keep``: how many full results stay in memory (the oldest is dropped first when more arrive)."""
        if keep < 1:
            raise ConfigError("keep must be at least 1")
        self._keep = keep
        self._lock = threading.Lock()
        self._results: "collections.OrderedDict[str, CallToolResult]" = collections.OrderedDict()
        self._counter = 0
        self._own_dir: Optional[str] = None
        self._finalizer: Optional[weakref.finalize] = None  # type: ignore[type-arg]
        self._closed = False

    def put(self, result: CallToolResult) -> str:
        """Keep ``result``; return its handle."""
        with self._lock:
            self._counter += 1
            handle = "result-%d" % self._counter
            self._results[handle] = result
            while len(self._results) > self._keep:
                self._results.popitem(last=False)
            return handle

    def get(self, handle: str) -> CallToolResult:
        """The full result kept under ``handle``; raises KeyError when it is unknown or was dropped."""
        with self._lock:
            return self._results[handle]

    def spill(self, handle: str, text: str, directory: Optional[str]) -> str:
        """Write ``text`` to a file named after ``handle`` and return its path (blocks for the write)."""
        with self._lock:
            if self._closed:
                raise ConfigError("the result store is closed")
            if directory is None:
                if self._own_dir is None:
                    self._own_dir = tempfile.mkdtemp(prefix="mcpsync-results-")
                    # a store never closed still removes its directory when collected or at exit
                    self._finalizer = weakref.finalize(self, shutil.rmtree, self._own_dir, True)
                directory = self._own_dir
        os.makedirs(directory, exist_ok=True)
        fd, path = tempfile.mkstemp(prefix="mcpsync-%s-" % handle, suffix=".txt", dir=directory)
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        return path

    def close(self) -> None:
        """Forget every result and remove the private spill directory (a caller's directory is left alone)."""
        with self._lock:
            self._closed = True
            self._results.clear()
            own, self._own_dir = self._own_dir, None
        if own is not None:
            shutil.rmtree(own, ignore_errors=True)
        if self._finalizer is not None:
            self._finalizer.detach()


def render_result(
    result: CallToolResult, budget: Optional[ResultBudget] = None, store: Optional[ResultStore] = None
) -> Rendered:
    """``result`` as a :class:`Rendered`, its text cut to ``budget`` (the full result kept in ``store``)."""
    texts, images = _text_parts(result)
    text = "\n".join(texts)
    rendered = Rendered(text=text, images=images, is_error=result.is_error, result=result)
    limit = budget.limit if budget is not None else None
    if limit is None or len(text) <= limit:
        return rendered
    where: List[str] = []
    if store is not None:
        rendered.handle = store.put(result)
        where.append("handle %s" % rendered.handle)
        if budget is not None and budget.spill:
            rendered.spill_path = store.spill(rendered.handle, text, budget.spill_dir)
            where.append("file %s" % rendered.spill_path)
    kept = "; the full result is kept as " + " and ".join(where) if where else ""
    shown = limit
    for _ in range(3):  # the marker counts against the budget; its length depends on the number in it
        marker = "\n[... truncated: showing %d of %d characters%s]" % (shown, len(text), kept)
        shown = max(0, limit - len(marker))
    marker = "\n[... truncated: showing %d of %d characters%s]" % (shown, len(text), kept)
    rendered.text = text[:shown] + marker
    rendered.truncated = True
    return rendered


def error_text(message: str) -> str:
    """An error message as the model sees it (prefixed ``Error:`` once)."""
    return message if message.lower().startswith("error") else "Error: " + message


def jsonable(value: Any) -> Dict[str, Any]:
    """``value`` when it is a dict, else ``{"result": value}`` (frameworks that want a mapping)."""
    return value if isinstance(value, dict) else {"result": value}
