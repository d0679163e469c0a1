"""The client: :class:`Client` and :func:`connect` (:mod:`.client`: lifecycle, the request funnel and the typed
methods), era negotiation (:mod:`.negotiate`), the 2026-07-28 features (:mod:`.modern`), tasks (:mod:`.tasks`),
server-request handlers (:mod:`.handlers`) and schema validation (:mod:`.schema`).

Besides :class:`Client` and :func:`connect` (also at the top level), this namespace holds what a client's
callers meet less often: the option objects a client takes (:class:`StdioOptions` for a local server process,
:class:`HTTPOptions` for a remote one, :class:`Callbacks` for server events, :class:`ClientOptions` for the
protocol knobs), what clients learned about servers (:class:`ServerMemory`: a client's own, or shared by the
clients of a manager), the callback types for server requests (:data:`SamplingHandler`, :data:`ElicitationHandler`),
the queue of server notifications (:class:`NotificationQueue`), resource subscriptions (:class:`Subscription`)
and the completion references (:func:`prompt_ref`, :func:`resource_ref`). ``HTTPOptions`` loads on first use.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._dispatch import NotificationQueue
from .._lazy import exports as _exports
from .callbacks import Callbacks
from .client import Client, connect, prompt_ref, resource_ref
from .client_options import ClientOptions
from .handlers import ElicitationHandler, SamplingHandler
from .memory import ServerMemory
from .modern import Subscription
from .stdio_options import StdioOptions

if _TYPE_CHECKING:  # loaded on first use (it imports ssl)
    from ..transports.http.options import HTTPOptions

__all__ = [
    "Callbacks",
    "Client",
    "ClientOptions",
    "ElicitationHandler",
    "HTTPOptions",
    "NotificationQueue",
    "SamplingHandler",
    "ServerMemory",
    "StdioOptions",
    "Subscription",
    "connect",
    "prompt_ref",
    "resource_ref",
]

__getattr__, __dir__ = _exports(__name__, {"HTTPOptions": "..transports.http.options"}, globals())
