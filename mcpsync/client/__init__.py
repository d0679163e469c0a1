"""The client: :class:`Client` and :func:`connect` (:mod:`.client`), era negotiation (:mod:`.negotiate`), the request
funnel (:mod:`.core`), the 2026-07-28 features (:mod:`.modern`), tasks (:mod:`.tasks`), server-request handlers
(:mod:`.handlers`) and schema validation (:mod:`.schema`)."""

from .client import Client, connect, prompt_ref, resource_ref

__all__ = ["Client", "connect", "prompt_ref", "resource_ref"]
