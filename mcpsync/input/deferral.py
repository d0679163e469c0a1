"""One client's input deferral: the hooks :class:`~mcpsync.input.DeferInput` attaches to a client.

:class:`InputDeferral` is a :class:`~mcpsync.client.hooks.ClientExtension`: the client calls it at its fixed hook
points and knows nothing else of it. It holds the per-thread setting (:func:`mcpsync.input.deferring`), the call
being resumed on this thread (:func:`mcpsync.input.resume`), and in the handshake era the parked questions
(:class:`~mcpsync.input.ParkedInputs`). It reads only public members of its client (``name``,
``elicitation_handler``, ``roots``).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from typing import TYPE_CHECKING, Any, Dict, Iterator, Optional

from ..client.hooks import ClientExtension
from ..client.middleware import Next, RequestInfo
from ..errors import MCPError
from ..wire import protocol as P
from .deferred import INPUT_METHODS, InputExpired, InputRequired, strip_envelope
from .parked import ParkedInputs

if TYPE_CHECKING:  # pragma: no cover
    from ..client.client import Client
    from ..session import RequestContext

__all__ = ["InputDeferral"]

logger = logging.getLogger(__name__)


def _elicitation() -> Dict[str, Any]:
    """The ``elicitation`` capability a deferring client declares (a fresh dict): the host answers both modes."""
    return {"form": {}, "url": {}}


class _Resuming:
    """The call :func:`mcpsync.input.resume` continues on this thread: what its wire request carries again."""

    __slots__ = ("ir", "responses")

    def __init__(self, ir: InputRequired, responses: Dict[str, Any]) -> None:
        self.ir = ir
        self.responses = responses

    def matches(self, request: RequestInfo) -> bool:
        """Whether ``request`` is the resumed call itself (not a listing made on the way)."""
        if request.method != self.ir.method:
            return False
        key = "uri" if request.method == "resources/read" else "name"
        return (request.params or {}).get(key) == self.ir.params.get(key)


class InputDeferral(ClientExtension):
    """The deferral of one client (see the module documentation). Thread-safe: the per-call state is
    thread-local, the counters sit under a lock, the parked questions are a :class:`ParkedInputs`.

    Args:
        client: the client it is attached to (still being built: read lazily).
        timeout: seconds a parked handshake-era question waits for its answer (None: no limit).
        every_call: every call defers unless :func:`~mcpsync.input.deferring` turns it off; False: only the
            calls inside ``deferring(client)`` do.
    """

    def __init__(self, client: "Client", timeout: Optional[float], every_call: bool) -> None:
        self._client = client
        self.timeout = timeout
        self.every_call = every_call
        self._local = threading.local()
        self._calls = 0  # open deferring blocks, on a client that does not defer every call (handshake era)
        self._lock = threading.Lock()
        self._parked: Optional[ParkedInputs] = None
        self._closed = False

    # --- the state of this thread's call ------------------------------------------------------

    @contextlib.contextmanager
    def scope(self, flag: Optional[bool], resuming: Optional[_Resuming] = None) -> Iterator[None]:
        """Run the calls of this thread in the block with their own setting (None: the client's), and, for
        :func:`~mcpsync.input.resume`, the call it continues. Nests; restores the outer setting on exit."""
        local = self._local
        saved = (getattr(local, "flag", None), getattr(local, "resuming", None))
        local.flag, local.resuming = flag, resuming
        counted = bool(flag) and not self.every_call
        if counted:
            with self._lock:
                self._calls += 1
        try:
            yield
        finally:
            local.flag, local.resuming = saved
            if counted:
                with self._lock:
                    self._calls -= 1

    def deferring(self) -> bool:
        """True when calls on this thread defer input now (the innermost ``deferring()``, else ``every_call``)."""
        flag = getattr(self._local, "flag", None)
        return self.every_call if flag is None else bool(flag)

    @property
    def parked(self) -> ParkedInputs:
        """The handshake era's parked questions (made on first use: the client's name is known by then)."""
        with self._lock:
            if self._parked is None:
                # the session answers server requests on 4 threads (Session handler_workers): parked questions
                # may hold 3 of them, so pings and other server requests always have one
                self._parked = ParkedInputs(self._client.name, maxsize=3)
                if self._closed:
                    self._parked.close()
            return self._parked

    # --- ClientExtension hooks ----------------------------------------------------------------

    def capabilities(self, caps: Dict[str, Any]) -> None:
        """A client that defers every call declares ``elicitation`` (form and URL): the host answers them."""
        if self.every_call:
            caps.setdefault("elicitation", _elicitation())

    def handle(self, request: RequestInfo, next: Next) -> Any:  # noqa: A002 - the middleware protocol's name
        """A resumed call's wire request (each time it is sent) carries the answers and the server's state."""
        resuming: Optional[_Resuming] = getattr(self._local, "resuming", None)
        if resuming is not None and resuming.matches(request):
            params = dict(request.params or {})
            params["inputResponses"] = resuming.responses
            state = resuming.ir.request_state
            if state is not None:
                params["requestState"] = state
            user_meta = resuming.ir.params.get("_meta")
            if isinstance(user_meta, dict) and "_meta" not in params:
                params["_meta"] = dict(user_meta)
            request.params = params
        return next(request)

    def input_rounds_before(self) -> int:
        resuming: Optional[_Resuming] = getattr(self._local, "resuming", None)
        return resuming.ir.round if resuming is not None else 0

    def stamped(self, params: Dict[str, Any]) -> None:
        """2026-07-28: a deferring call on a client that does not defer every call and has no elicitation
        handler declares the elicitation capability on this request (the host will answer)."""
        if not self.deferring() or self.every_call or self._client.elicitation_handler is not None:
            return
        meta = params["_meta"]  # a fresh dict; the capabilities dict in it is shared: copy it
        caps = dict(meta.get(P.META_CLIENT_CAPABILITIES) or {})
        caps["elicitation"] = _elicitation()
        meta[P.META_CLIENT_CAPABILITIES] = caps

    def input_required(
        self, method: str, params: Dict[str, Any], result: Dict[str, Any], rounds: int
    ) -> Optional[BaseException]:
        """The :class:`InputRequired` to raise when this call defers the result's questions, else None."""
        return self._deferred(method, params, result, rounds) if self._defers(result.get("inputRequests")) else None

    def takes_server_request(self, method: str) -> bool:
        """Handshake era: park this server request for another thread (every call defers, or a ``deferring()``
        block is open; the roots are answered from configuration when the client has them)."""
        if method not in INPUT_METHODS or (method == "roots/list" and self._client.roots is not None):
            return False
        return self.every_call or self._calls > 0

    def server_request(self, method: str, params: Dict[str, Any], ctx: "RequestContext") -> Any:
        """Park a handshake-era question until :func:`~mcpsync.input.resume` answers it or ``timeout`` passes.
        Runs on a handler thread, never the reader; blocks at most ``timeout`` seconds (or until close)."""
        name = self._client.name
        ir = InputRequired(
            "the server asks %s and waits for the answer" % method,
            server=name,
            method=method,
            input_requests={"r%s" % (ctx.request_id,): {"method": method, "params": params}},
            era="legacy",
            request_id=ctx.request_id,
        )
        parked_inputs = self.parked
        parked = parked_inputs.park(ir)
        if parked is not None:
            try:
                return parked_inputs.wait(parked, self.timeout)
            except InputExpired:
                logger.info("[%s] no answer to the parked %s within %ss", name, method, self.timeout)
        else:
            logger.warning("[%s] too many questions waiting for an answer; %s declined", name, method)
        if method == "elicitation/create":
            return {"action": "cancel"}
        raise MCPError("the user did not answer %s in time" % method, server=name, method=method)

    def close(self) -> None:
        """Expire every parked question (their waits end at once) and refuse new ones."""
        with self._lock:
            self._closed = True
            parked = self._parked
        if parked is not None:
            parked.close()

    # --- helpers ------------------------------------------------------------------------------

    def _defers(self, requests: Any) -> bool:
        """Stop on these ``inputRequests``? Yes when deferring, unless only the configured roots are asked."""
        if not self.deferring() or not isinstance(requests, dict) or not requests:
            return False
        only_roots = all(isinstance(r, dict) and r.get("method") == "roots/list" for r in requests.values())
        return not (only_roots and self._client.roots is not None)

    def _deferred(self, method: str, params: Dict[str, Any], result: Dict[str, Any], rounds: int) -> InputRequired:
        """The :class:`InputRequired` for a 2026-07-28 ``input_required`` result."""
        requests: Dict[str, Any] = result["inputRequests"]
        state = result.get("requestState")
        asked = sorted("%s (%s)" % (k, r.get("method") if isinstance(r, dict) else "?") for k, r in requests.items())
        return InputRequired(
            "the server needs input to complete this call: %s" % ", ".join(asked),
            server=self._client.name,
            method=method,
            params=strip_envelope(params),
            input_requests=requests,
            request_state=state if isinstance(state, str) else None,
            era="modern",
            round=rounds,
        )
