"""The HTTP stack of the remote transports: urllib3 under every request, one file per layer of a call's path.

One ``tools/call`` to a Streamable HTTP server goes down through:

* :mod:`.select` picks the transport for a URL (Streamable HTTP, the legacy HTTP+SSE one, or both in order);
  :mod:`.options` holds their settings (:class:`~mcpsync.transports.http.options.HTTPOptions`),
  :mod:`.endpoint` what both start from and their lifecycle state (``RemoteEndpoint``: URL, options, the
  server's connections, the sink, the lock, the ``closing`` event), :mod:`.remote` what both share besides
  (status and error mapping, the fallback policy).
* :mod:`.transport` (:class:`~mcpsync.transports.http.transport.StreamableHTTPTransport`) turns the message
  into a POST. It composes two collaborators: :mod:`.handshake` (``HandshakeSession``: the handshake era's
  session id, re-initialize on 404, the GET stream, the DELETE) and :mod:`.streams` (``EventStreams``: reads an
  event-stream answer, with its idle timeout, resuming or re-issuing it when it is cut). :mod:`.headers` adds
  the 2026-07-28 routing headers (``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-*``).
* :mod:`.calls` holds the call's state and reads a JSON answer.
* :mod:`.auth` runs an :class:`~mcpsync.httpauth.Auth` flow (OAuth, bearer, DPoP) or a ``requests`` auth
  around each request.
* :mod:`.net` builds each server's connections once (:func:`~mcpsync.transports.http.net.make_net`: headers,
  TLS settings, proxies from :mod:`.proxy`, netrc); :mod:`.request_check` refuses a request that cannot be written
  correctly before a byte is sent; :mod:`.pool` sends it on urllib3 (one pool manager per proxy, ``retries=False``:
  the no-resend rule, ``close()`` ending every connect, handshake and read at once, socket timeouts), and urllib3
  parses the answer. A call with an overall deadline (the registry client's, on a net made with
  ``deadlines=True``) reads its answer, status line and headers included, through :mod:`.deadline_reader`.
* :mod:`.contract` is what the layers agree on: the ``HTTPNet`` protocol a transport sends with, the errors a
  net raises (``NetError`` and its kinds), URL origins and redaction.
* :mod:`.oauth_route` sends the OAuth requests made for a server (probe, discovery, registration, token) on
  a :class:`~mcpsync.transports.http.pool.PoolNet` built from that server's settings: its proxies, ``no_proxy``,
  ``trust_env``, ``verify``, ``cert``; the auth package sees it only as an ``OAuthHTTPCall``.

The legacy HTTP+SSE transport (protocol 2024-11-05) is :mod:`.legacy_sse`. Nothing here is imported at
``import mcpsync`` time.
"""
