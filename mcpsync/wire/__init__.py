"""The wire format: JSON-RPC messages (:mod:`.jsonrpc`), stdio framing (:mod:`.framing`), the event-stream parser
(:mod:`.sse`) and the protocol constants (:mod:`.protocol`). Standard library only; nothing here does I/O."""
