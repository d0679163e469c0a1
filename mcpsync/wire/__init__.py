"""The wire format: JSON-RPC messages (:mod:`.jsonrpc`), stdio framing (:mod:`.framing`), the event-stream parser
(:mod:`.sse`), the protocol constants (:mod:`.protocol`) and the interface of one HTTP request read whole
(:mod:`.http_call`, what the OAuth requests are sent through). Standard library only; nothing here does I/O."""
