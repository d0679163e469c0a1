"""MCP Apps pages (``io.modelcontextprotocol/ui``, spec 2026-01-26): verifying a ``ui://`` resource and turning its
declared metadata into the Content-Security-Policy and the iframe ``allow`` attribute a host must apply.

:func:`verify_page` checks what a server sent for ``resources/read`` (the ``ui://`` scheme, the exact MIME type
``text/html;profile=mcp-app``, a text or base64 ``blob``, a size cap, contents for the URI asked) and returns an
:class:`AppResource`. :meth:`AppResource.csp_header` builds the policy from the spec's template: the restrictive
default when nothing is declared, and only declared origins otherwise. A server is not trusted: an entry that is
not a plain origin (``https://api.example.com``, ``https://*.example.com``, ``wss://host:8443``) is dropped and
logged, so a hostile ``"https://x; script-src *"`` can never add a directive.

Pure functions and an immutable dataclass: thread-safe, no I/O; :func:`app_for` alone reads, through the
:class:`mcpsync.Client` it is given (its public ``get_tool``, ``list_tools`` and ``read_resource``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import logging
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Tuple, Union

from ..errors import AppResourceError
from ..session import DEFAULT, Timeout
from ..types import Tool
from ..wire import protocol as P

if TYPE_CHECKING:
    from ..client.client import Client

__all__ = [
    "AppResource",
    "app_for",
    "DEFAULT_MAX_PAGE_BYTES",
    "PERMISSIONS",
    "clean_domains",
    "is_plain_origin",
    "verify_page",
]

logger = logging.getLogger("mcpsync.apps")

#: The default cap on a page's size (bytes of HTML); single-file App bundles are a few hundred KB.
DEFAULT_MAX_PAGE_BYTES = 8 * 1024 * 1024

#: ``_meta.ui.permissions`` key -> Permissions-Policy feature of the iframe ``allow`` attribute
PERMISSIONS: Mapping[str, str] = MappingProxyType({
    "camera": "camera",
    "microphone": "microphone",
    "geolocation": "geolocation",
    "clipboardWrite": "clipboard-write",
})

_CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
# an origin CSP can name, and nothing else: scheme, host (optionally a leading "*." wildcard), optional port.
# Always used with fullmatch: "$" alone would also match before a final newline ("https://a.example\n").
_ORIGIN = re.compile(
    r"(?:https|http|wss|ws)://(?:\*\.)?(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)*"
    r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?::[0-9]{1,5})?/?"
)
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST = re.compile(r"(?:%s\.)*%s" % (_LABEL, _LABEL))
# what a header value may hold: printable ASCII and the space (no CR, LF, NUL or any other control character)
_HEADER_SAFE = re.compile(r"[\x20-\x7e]*")


def is_plain_origin(value: Any) -> bool:
    """Whether ``value`` is a plain origin a CSP may name (the whole string; see the module docstring)."""
    return isinstance(value, str) and len(value) <= 255 and _ORIGIN.fullmatch(value) is not None


def clean_domains(values: Any, *, uri: str = "", key: str = "") -> Tuple[Tuple[str, ...], Tuple[str, ...]]:
    """Split a declared domain list into (kept origins, rejected entries). Only plain origins are kept (see the
    module docstring); anything else (a path, a quote, whitespace, ``;``, ``*`` alone, a non-string) is rejected
    and logged once per call."""
    if values is None:
        return (), ()
    if not isinstance(values, list):
        logger.warning("MCP App %s: _meta.ui.csp.%s is not a list; ignored", uri, key)
        return (), (repr(values)[:80],)
    kept: List[str] = []
    rejected: List[str] = []
    for value in values:
        if is_plain_origin(value):
            origin = value.rstrip("/")
            if origin not in kept:
                kept.append(origin)
        else:
            rejected.append(repr(value)[:80])
    if rejected:
        logger.warning("MCP App %s: dropped %d unsafe _meta.ui.csp.%s entr(ies): %s", uri, len(rejected), key, rejected)
    return tuple(kept), tuple(rejected)


@dataclass(frozen=True)
class AppResource:
    """A verified MCP Apps page: the HTML and what its server declared for it.

    Attributes:
        uri: the ``ui://`` URI.
        html: the page (a str; decoded from the ``blob`` when the server sent base64).
        server: the name of the server it came from.
        tool: the name of the tool that links it ("" when read by URI).
        csp: the declared ``_meta.ui.csp`` after cleaning: key -> tuple of origins, only keys the server
            declared (an empty dict means nothing was declared: the restrictive default applies).
        rejected_domains: entries dropped from ``csp`` because they were not plain origins.
        permissions: the declared ``_meta.ui.permissions`` keys the spec defines (``camera``, ``microphone``,
            ``geolocation``, ``clipboardWrite``), in that order.
        domain: the declared dedicated sandbox domain (a host name; None when absent or malformed).
        prefers_border: the declared ``prefersBorder`` (None: the host decides).
        sha256: the hex SHA-256 of the page's UTF-8 bytes (pin it with ``app_for(..., sha256=...)``).
        meta: the raw ``_meta.ui`` object as the server sent it (untrusted).
    """

    uri: str
    html: str
    server: str = ""
    tool: str = ""
    csp: Dict[str, Tuple[str, ...]] = field(default_factory=dict)
    rejected_domains: Tuple[str, ...] = ()
    permissions: Tuple[str, ...] = ()
    domain: Optional[str] = None
    prefers_border: Optional[bool] = None
    sha256: str = ""
    meta: Dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def csp_declared(self) -> bool:
        """Whether the server declared ``_meta.ui.csp`` at all."""
        return bool(self.csp)

    def csp_header(self) -> str:
        """The Content-Security-Policy value for this page (the spec's template, ``; ``-separated).

        With nothing declared it is the spec's restrictive default (no network, no external resources) plus
        ``frame-src 'none'``, ``object-src 'none'`` and ``base-uri 'self'``. Declared origins are added to the
        directives the spec maps them to and nowhere else; an undeclared origin never appears.

        Whatever built this ``AppResource`` (:func:`verify_page`, or your own code), only plain origins reach the
        policy: any other entry is dropped here and logged, and a policy that would still hold a control
        character (CR, LF, NUL...) or anything but printable ASCII raises :class:`~mcpsync.AppResourceError`
        (``reason="csp"``) instead of being returned, so it can always be sent as one HTTP header.
        """

        def origins(key: str) -> str:
            values = self.csp.get(key, ())
            kept = [v.rstrip("/") for v in values if is_plain_origin(v)]
            if len(kept) != len(values):
                logger.warning("MCP App %s: csp_header() dropped %s entries that are not plain origins", self.uri, key)
            return " ".join(kept)

        res = origins("resourceDomains")
        conn = origins("connectDomains")
        frame = origins("frameDomains")
        base = origins("baseUriDomains")

        def d(name: str, *parts: str) -> str:
            return " ".join([name] + [p for p in parts if p])

        directives = [
            "default-src 'none'",
            d("script-src", "'self' 'unsafe-inline'", res),
            d("style-src", "'self' 'unsafe-inline'", res),
            d("img-src", "'self' data:", res),
            d("media-src", "'self' data:", res),
        ]
        if res:
            directives.append(d("font-src", "'self'", res))
        directives += [
            d("connect-src", conn or "'none'"),
            d("frame-src", frame or "'none'"),
            "object-src 'none'",
            d("base-uri", base or "'self'"),
        ]
        header = "; ".join(directives)
        if _HEADER_SAFE.fullmatch(header) is None:  # unreachable through the filter above: a last line of defence
            raise AppResourceError(
                "the CSP of %s holds a control or non-ASCII character; refused" % self.uri,
                uri=self.uri,
                reason="csp",
                server=self.server or None,
            )
        return header

    def allow_attribute(self) -> str:
        """The iframe ``allow`` attribute for the declared permissions (``""`` when none), e.g.
        ``"camera; clipboard-write"``. Granting them is the host's choice; pass only what the user agreed to."""
        return "; ".join(PERMISSIONS[p] for p in self.permissions)

    def sandbox_resource(self) -> Dict[str, Any]:
        """The params of ``ui/notifications/sandbox-resource-ready`` for a sandbox proxy: the HTML, the built CSP
        (``csp``: the declared origins; ``cspHeader``: the policy to apply) and the ``allow`` value."""
        return {
            "html": self.html,
            "csp": {k: list(v) for k, v in self.csp.items()},
            "cspHeader": self.csp_header(),
            "permissions": {p: {} for p in self.permissions},
            "allow": self.allow_attribute(),
            "sandbox": "allow-scripts allow-forms",
        }


def verify_page(
    uri: str,
    result: Dict[str, Any],
    *,
    server: str = "",
    tool: str = "",
    max_bytes: int = DEFAULT_MAX_PAGE_BYTES,
    sha256: Optional[str] = None,
) -> AppResource:
    """Check a ``resources/read`` result for the page ``uri`` and build its :class:`AppResource`.

    Raises :class:`~mcpsync.AppResourceError` (with ``.reason``) when the URI is not ``ui://``, no content is for
    ``uri``, the MIME type is not exactly ``text/html;profile=mcp-app``, the content is missing or not UTF-8
    (a ``blob`` that is not base64), the page is over ``max_bytes``, or ``sha256`` is given and differs.
    """

    def fail(reason: str, message: str) -> AppResourceError:
        return AppResourceError(message, uri=uri, reason=reason, server=server or None, method="resources/read")

    if not isinstance(uri, str) or not uri.startswith("ui://"):
        raise fail("scheme", "an MCP Apps page must be a ui:// URI, not %r" % (uri,))
    contents = result.get("contents") if isinstance(result, dict) else None
    if not isinstance(contents, list):
        raise fail("content", "the resources/read result for %s has no contents" % uri)
    mine = [c for c in contents if isinstance(c, dict) and c.get("uri") == uri]
    if not mine:
        raise fail("origin", "the server returned no contents for %s (contents for another URI are not used)" % uri)
    item = mine[0]
    if item.get("mimeType") != P.UI_MIME_TYPE:
        raise fail(
            "mime", "%s has MIME type %r; an MCP App must be exactly %r" % (uri, item.get("mimeType"), P.UI_MIME_TYPE)
        )
    text, blob = item.get("text"), item.get("blob")
    if isinstance(text, str):
        if len(text) > max_bytes:  # cheap bound before encoding: a char is at least one byte
            raise fail("size", "%s is larger than %d bytes" % (uri, max_bytes))
        data = text.encode("utf-8", "surrogatepass")
    elif isinstance(blob, str):
        if len(blob) > (max_bytes * 4) // 3 + 4:
            raise fail("size", "%s is larger than %d bytes" % (uri, max_bytes))
        try:
            data = base64.b64decode(blob, validate=True)
        except (binascii.Error, ValueError):
            raise fail("content", "%s: the blob is not base64" % uri) from None
    else:
        raise fail("content", "%s has neither text nor a base64 blob" % uri)
    if len(data) > max_bytes:
        raise fail("size", "%s is %d bytes, over the %d-byte cap" % (uri, len(data), max_bytes))
    try:
        html = data.decode("utf-8")
    except UnicodeDecodeError:
        raise fail("content", "%s is not UTF-8 text" % uri) from None
    if not html.strip():
        raise fail("content", "%s is empty" % uri)
    digest = hashlib.sha256(data).hexdigest()
    if sha256 is not None and digest != sha256.strip().lower():
        raise fail("digest", "%s does not match its pinned SHA-256 (got %s)" % (uri, digest))
    meta = item.get("_meta")
    ui = meta.get("ui") if isinstance(meta, dict) else None
    ui = ui if isinstance(ui, dict) else {}
    csp: Dict[str, Tuple[str, ...]] = {}
    rejected: List[str] = []
    declared = ui.get("csp")
    if isinstance(declared, dict):
        for key in _CSP_KEYS:
            if key in declared:
                kept, bad = clean_domains(declared.get(key), uri=uri, key=key)
                csp[key] = kept
                rejected += bad
        if not csp:  # "csp": {} is a declaration of nothing: keep the marker so csp_declared is true
            csp = {"connectDomains": ()}
    perms = ui.get("permissions")
    permissions = tuple(p for p in PERMISSIONS if isinstance(perms, dict) and isinstance(perms.get(p), dict))
    domain = ui.get("domain")
    if domain is not None and not (isinstance(domain, str) and len(domain) <= 253 and _HOST.fullmatch(domain)):
        logger.warning("MCP App %s: ignoring malformed _meta.ui.domain %r", uri, repr(domain)[:80])
        domain = None
    border = ui.get("prefersBorder")
    page = AppResource(
        uri=uri,
        html=html,
        server=server,
        tool=tool,
        csp=csp,
        rejected_domains=tuple(rejected),
        permissions=permissions,
        domain=domain,
        prefers_border=border if isinstance(border, bool) else None,
        sha256=digest,
        meta=dict(ui),
    )
    logger.info("MCP App %s from %s: CSP %s", uri, server or "?", page.csp_header())  # the spec's audit trail
    return page


def app_for(
    client: "Client",
    tool: Union[Tool, str],
    *,
    sha256: Optional[str] = None,
    max_bytes: Optional[int] = None,
    timeout: Timeout = DEFAULT,
) -> "AppResource":
    """The verified MCP Apps page a tool links (``_meta.ui.resourceUri``, or the deprecated flat key).

    ``tool`` is a :class:`~mcpsync.Tool` ``client`` listed, or a tool name (the tools are listed once when not yet
    known). The page is read with ``resources/read`` from ``client``'s server (a Tool whose listing on this
    server differs is refused: a page is only taken from the server that offers the tool) and checked by
    :func:`verify_page` (``ui://``, the exact MIME type, text or base64 blob, at most ``max_bytes``, default
    8 MiB; ``sha256`` pins the page's digest).

    Blocks up to ``timeout`` per request (a listing, then the read). Keeps no state: any number of threads may
    call it on one client at once. Raises :class:`~mcpsync.AppResourceError` (``reason`` says which check
    failed) or the request's errors.
    """
    name = tool if isinstance(tool, str) else tool.name
    listed = client.get_tool(name)
    if listed is None:
        client.list_tools(timeout=timeout)
        listed = client.get_tool(name)
    if listed is None or (isinstance(tool, Tool) and listed.ui_resource_uri != tool.ui_resource_uri):
        raise AppResourceError(
            "tool %r is not offered by server %r as given; its page is not read" % (name, client.name),
            uri=(tool.ui_resource_uri or "") if isinstance(tool, Tool) else "",
            reason="origin",
            server=client.name,
        )
    uri = listed.ui_resource_uri
    if uri is None:
        raise AppResourceError(
            "tool %r links no ui:// page" % name, reason="link", server=client.name, method="resources/read"
        )
    result = client.read_resource(uri, timeout=timeout)
    return verify_page(
        uri,
        result.raw,
        server=client.name,
        tool=name,
        max_bytes=DEFAULT_MAX_PAGE_BYTES if max_bytes is None else max_bytes,
        sha256=sha256,
    )
