"""Transports: how frames reach a server. See :mod:`mcpsync.transports.base` for the contract."""

from .base import Transport, TransportSink

__all__ = ["Transport", "TransportSink"]
