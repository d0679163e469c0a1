"""Which proxy each URL takes, and netrc (what ``requests`` resolves from the environment), for the urllib3 pools.

* :func:`proxy_table` builds, once per server, the proxies a transport may use: ``HTTPOptions.proxies``
  when given (``requests``' keys: ``"https"``, ``"http"``, ``"all"``, ``"https://host"``, ``"all://host"``,
  plus an optional ``"no_proxy"``), else, with ``trust_env``, the environment (``HTTP_PROXY``,
  ``HTTPS_PROXY``, ``ALL_PROXY``, lower or upper case, ``NO_PROXY``) and, where no variable is set, the
  operating system's settings (``urllib.request.getproxies()``: the macOS System Configuration or the
  Windows registry, with their bypass lists).
* ``NO_PROXY``: comma-separated host names (a name matches itself and its subdomains, a leading dot
  optional), ``host:port``, IP addresses, CIDR networks (``10.0.0.0/8``, ``fd00::/8``), or ``*`` (no proxy
  at all).
* :class:`Proxy`: one proxy URL, parsed. ``http://`` and ``https://`` (TLS to the proxy): plain ``http`` requests
  go to it in absolute form, ``https`` through a ``CONNECT`` tunnel (urllib3's ``ProxyManager``; through an
  ``https://`` proxy that is TLS inside TLS), the URL's userinfo becomes ``Proxy-Authorization: Basic``.
  ``socks5://`` / ``socks5h://`` and ``socks4://`` / ``socks4a://``: urllib3's ``SOCKSProxyManager`` (PySocks, the
  ``socks`` extra). The connections themselves are :mod:`~mcpsync.transports.http.pool`'s.
* :func:`netrc_authorization`: ``Authorization: Basic`` for the server from ``NETRC`` / ``~/.netrc`` /
  ``~/_netrc`` (as ``requests`` reads it: the login, else the account, and the password).

Every proxy scheme ``requests`` speaks is spoken here (:data:`SCHEMES`); a URL of another scheme is refused with
a ``ConfigError`` naming it (:func:`mcpsync.transports.http.net.refuse_unknown_proxy`). Credentials never appear in
logs, errors or ``repr()``.
"""

from __future__ import annotations

import base64
import logging
import os
import sys
from types import MappingProxyType
from typing import Any, Dict, List, Mapping, Optional, Tuple
from urllib.parse import unquote, urlsplit


__all__ = ["Proxy", "ProxyTable", "bypass", "netrc_authorization", "proxy_table"]

logger = logging.getLogger(__name__)


#: The proxy URL schemes the pools speak (``https``: TLS to the proxy; ``socks5``/``socks4``: names resolved
#: here; ``socks5h``/``socks4a``: by the proxy). Every scheme ``requests`` (with PySocks) speaks.
SCHEMES = ("http", "https", "socks5", "socks5h", "socks4", "socks4a")
_DEFAULT_PROXY_PORTS = MappingProxyType(
    {"http": 80, "https": 443, **{kind: 1080 for kind in ("socks5", "socks5h", "socks4", "socks4a")}}
)


class Proxy:
    """One proxy (see :data:`SCHEMES`): where it listens and the credentials of its URL's userinfo."""

    __slots__ = ("kind", "host", "port", "authorization", "user", "password", "shown", "tls")

    def __init__(
        self, host: str, port: int, authorization: Optional[str], kind: str = "http", user: str = "", password: str = ""
    ) -> None:
        self.kind = kind
        self.host = host
        self.port = port
        self.authorization = authorization  # Proxy-Authorization for an http:// proxy
        self.user = user  # RFC 1929 credentials for a SOCKS5 proxy
        self.password = password
        self.shown = "%s://%s:%d" % (kind, "[%s]" % host if ":" in host else host, port)  # never the userinfo
        self.tls: Any = None  # the ssl.SSLContext an https:// proxy is verified with (set by the ProxyTable)

    @classmethod
    def parse(cls, url: str) -> "Proxy":
        """A proxy URL (``http://user:pass@host:port``, ``socks5h://...``; without a scheme: ``http://``)."""
        if "://" not in url:
            url = "http://" + url
        parts = urlsplit(url)
        kind = parts.scheme.lower()
        if kind not in SCHEMES:
            raise ValueError("%s:// is not a proxy scheme mcpsync speaks (%s)" % (kind, ", ".join(SCHEMES)))
        if not parts.hostname:
            raise ValueError("a %s:// proxy URL without a host" % kind)
        port = parts.port or _DEFAULT_PROXY_PORTS[kind]
        authorization = None
        user = unquote(parts.username or "")
        password = unquote(parts.password or "")
        if parts.username is not None and kind in ("http", "https"):
            pair = "%s:%s" % (user, password)
            authorization = "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")
        return cls(parts.hostname, port, authorization, kind, user, password)

    @property
    def address(self) -> Tuple[str, int]:
        return self.host, self.port

    def forwards(self, scheme: str) -> bool:
        """True when requests for ``scheme`` go to the proxy in absolute form (an http(s) proxy, plain http);
        otherwise each connection is a tunnel (:meth:`tunnel`)."""
        return self.kind in ("http", "https") and scheme == "http"

    def __repr__(self) -> str:
        return "<Proxy %s%s>" % (self.shown, " (with credentials)" if self.authorization else "")


class ProxyTable:
    """The proxies of one transport: ``requests``' key order per URL, then the bypass list. Immutable."""

    def __init__(self, mapping: Mapping[str, str], no_proxy: Optional[str], system_bypass: bool = False) -> None:
        self._mapping = {k.lower(): v for k, v in mapping.items() if v}
        self._no_proxy = no_proxy
        self._system_bypass = system_bypass
        self.tls: Any = None  # the ssl.SSLContext for https:// proxies (see needs_tls)

    def needs_tls(self) -> bool:
        """True when one of the proxies is an ``https://`` proxy (its TLS settings must be set in ``tls``)."""
        return any(v.lower().startswith("https://") for v in self._mapping.values())

    def __bool__(self) -> bool:
        return bool(self._mapping)

    def url_for(self, url: str) -> Optional[str]:
        """The proxy URL for ``url`` (with its credentials), or None for a direct connection."""
        parts = urlsplit(url)
        scheme, host = parts.scheme.lower(), (parts.hostname or "").lower()
        try:
            port = parts.port
        except ValueError:
            port = None
        if bypass(host, port or {"http": 80, "https": 443}.get(scheme, 0), self._no_proxy):
            return None
        if self._system_bypass and self._no_proxy is None and _os_bypass(host):
            return None
        for key in (scheme + "://" + host, scheme, "all://" + host, "all"):
            proxy = self._mapping.get(key)
            if proxy:
                return proxy
        return None

    def for_url(self, url: str) -> Optional[Proxy]:
        """The :class:`Proxy` for ``url``, or None (a ``ValueError`` for a proxy whose scheme is not in
        :data:`SCHEMES`)."""
        found = self.url_for(url)
        if found is None:
            return None
        proxy = Proxy.parse(found)
        proxy.tls = self.tls
        return proxy


def proxy_table(options: object) -> ProxyTable:
    """The proxies of a transport under ``options`` (an ``HTTPOptions``), resolved now, once."""
    given = getattr(options, "proxies", None)
    if given is not None:
        mapping = dict(given)
        return ProxyTable(mapping, mapping.pop("no_proxy", None) or mapping.pop("no", None))
    if not getattr(options, "trust_env", True):
        return ProxyTable({}, None)
    found = environment_proxies()
    system = not found
    if system:
        found = _os_proxies()
    no_proxy = found.pop("no", None)
    return ProxyTable(found, no_proxy, system_bypass=system and bool(found))


def environment_proxies() -> Dict[str, str]:
    """``{scheme: proxy URL, "no": ...}`` from ``<scheme>_proxy`` variables, as ``urllib.request`` reads them
    (lower case wins over upper case; under CGI, where ``REQUEST_METHOD`` is set, ``HTTP_PROXY`` in upper
    case is ignored: a client's ``Proxy:`` header would set it). Without importing ``urllib.request``."""
    found: Dict[str, str] = {}
    for name, value in os.environ.items():
        if name[-6:].lower() == "_proxy" and value:
            found[name[:-6].lower()] = value
    if "REQUEST_METHOD" in os.environ:
        found.pop("http", None)
    for name, value in os.environ.items():  # lower case last: it wins
        if name[-6:] == "_proxy":
            scheme = name[:-6].lower()
            if value:
                found[scheme] = value
            else:
                found.pop(scheme, None)
    return found


def _os_proxies() -> Dict[str, str]:
    """The operating system's proxy settings (macOS System Configuration, the Windows registry), or {}."""
    if sys.platform not in ("darwin", "win32"):
        return {}  # elsewhere proxies come from the environment only
    import urllib.request

    try:
        return dict(urllib.request.getproxies())
    except Exception:  # noqa: BLE001 - the OS settings are advisory
        logger.debug("reading the operating system's proxy settings failed", exc_info=True)
        return {}


def bypass(host: str, port: int, no_proxy: Optional[str]) -> bool:
    """True when ``NO_PROXY``-style ``no_proxy`` says ``host`` (at ``port``) is reached directly."""
    if not no_proxy:
        return False
    import ipaddress

    host = host.strip("[]").lower()
    try:
        address: Optional[ipaddress._BaseAddress] = ipaddress.ip_address(host)
    except ValueError:
        address = None
    for raw in no_proxy.replace(" ", ",").split(","):
        entry = raw.strip().lower()
        if not entry:
            continue
        if entry == "*":
            return True
        name, entry_port = entry, ""
        if _has_port(entry):
            name, _, entry_port = entry.rpartition(":")
        if entry_port and entry_port != str(port):
            continue
        name = name.strip("[]")
        if address is not None:
            try:
                if address in ipaddress.ip_network(name, strict=False):
                    return True
            except ValueError:
                pass
            continue
        name = name.lstrip(".")
        if name and (host == name or host.endswith("." + name)):
            return True
    return False


def _has_port(entry: str) -> bool:
    """``host:port``, ``1.2.3.4:port`` or ``[v6]:port`` (a bare IPv6 address has colons but no port)."""
    head, sep, tail = entry.rpartition(":")
    return bool(sep) and tail.isdigit() and (":" not in head or (head.startswith("[") and head.endswith("]")))


def _os_bypass(host: str) -> bool:
    import urllib.request

    try:
        return bool(urllib.request.proxy_bypass(host))
    except Exception:  # noqa: BLE001 - the OS settings are advisory
        return False


def netrc_authorization(url: str) -> Optional[str]:
    """``Basic ...`` for ``url``'s host from the netrc file (``NETRC``, else ``~/.netrc`` or ``~/_netrc``),
    or None. A missing or malformed file is no credentials (as ``requests`` treats it); never raises."""
    host = (urlsplit(url).hostname or "").lower()
    if not host:
        return None
    candidates: List[str] = []
    if os.environ.get("NETRC"):
        candidates.append(os.path.expanduser(os.environ["NETRC"]))
    else:
        home = os.path.expanduser("~")
        candidates.extend(os.path.join(home, name) for name in (".netrc", "_netrc"))
    for path in candidates:
        if not os.path.exists(path):
            continue
        import netrc

        try:
            found = netrc.netrc(path).authenticators(host)
        except (netrc.NetrcParseError, OSError) as exc:
            logger.debug("ignoring the netrc file %s: %s", path, type(exc).__name__)
            return None
        if not found:
            return None
        login, account, password = found
        pair = "%s:%s" % (login or account or "", password or "")
        return "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")
    return None


def netrc_present() -> bool:
    """True when a netrc file exists where :func:`netrc_authorization` looks."""
    if os.environ.get("NETRC"):
        return True
    home = os.path.expanduser("~")
    return any(os.path.exists(os.path.join(home, name)) for name in (".netrc", "_netrc"))
