"""The client: :class:`Client` and :func:`connect` (:mod:`.client`), era negotiation (:mod:`.negotiate`), the request
funnel (:mod:`.core`), the 2026-07-28 features (:mod:`.modern`), tasks (:mod:`.tasks`), server-request handlers
(:mod:`.handlers`) and schema validation (:mod:`.schema`).

Besides :class:`Client` and :func:`connect` (also at the top level), this namespace holds what a client's
callers meet less often: the callback types for server requests (:data:`SamplingHandler`,
:data:`ElicitationHandler`), the queue of server notifications (:class:`NotificationQueue`), resource
subscriptions (:class:`Subscription`) and the completion references (:func:`prompt_ref`, :func:`resource_ref`).
"""

from .._dispatch import NotificationQueue
from .client import Client, connect, prompt_ref, resource_ref
from .handlers import ElicitationHandler, SamplingHandler
from .modern import Subscription

__all__ = [
    "Client",
    "ElicitationHandler",
    "NotificationQueue",
    "SamplingHandler",
    "Subscription",
    "connect",
    "prompt_ref",
    "resource_ref",
]
