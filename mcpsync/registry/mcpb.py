"""MCP bundles (``.mcpb``, ``modelcontextprotocol/mcpb`` ``MANIFEST.md``): download, verify, plan, unpack.

The order is what keeps a bad bundle from ever running:

1. :func:`download` streams the bundle into a private temporary file (at most ``max_bytes``), hashing as it
   goes; a digest that differs from ``fileSha256`` raises :class:`~.errors.IntegrityError` and the file is
   deleted. Only ``https`` URLs are fetched (``http`` to a loopback address is allowed, for tests and local
   mirrors).
2. :func:`plan` reads ``manifest.json`` from the verified zip (without extracting anything) and builds the
   command from ``server.mcp_config`` (``command``, ``args``, ``env``, ``platform_overrides``), replacing
   ``${__dirname}`` (the install directory), ``${user_config.KEY}`` (answered through the input callback;
   ``sensitive`` keys are secrets), ``${HOME}``, ``${DESKTOP}``, ``${DOCUMENTS}``, ``${DOWNLOADS}`` and
   ``${/}`` / ``${pathSeparator}``. Without ``mcp_config``, ``server.type`` ``node``/``python``/``binary``
   runs ``server.entry_point``.
3. Consent is asked (by the installer) with that exact command.
4. :func:`unpack` extracts into a fresh directory: members with absolute paths, ``..``, drive letters or
   backslashes, symbolic links, more than ``max_files`` members or more than ``max_unpacked`` bytes in all are
   refused (:class:`~.errors.IntegrityError`) before anything is written; it extracts into a staging directory
   and renames it into place.

Everything blocks (network and disk); nothing here starts a process.
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
import os
import shutil
import stat
import sys
import tempfile
import zipfile
from typing import Any, Dict, List, Tuple
from urllib.parse import urlsplit

from .errors import IntegrityError, InvalidServerJson, RegistryError, RegistryUnavailable
from .resolver import ResolvedServer

__all__ = ["download", "plan", "unpack", "MAX_BUNDLE", "MAX_UNPACKED", "MAX_FILES"]

MAX_BUNDLE = 256 * 1024 * 1024
MAX_UNPACKED = 1024 * 1024 * 1024
MAX_FILES = 20000
MAX_MANIFEST = 1024 * 1024


def _allowed_url(url: str) -> bool:
    parts = urlsplit(url)
    if parts.scheme == "https" and parts.netloc:
        return True
    if parts.scheme != "http" or not parts.hostname:
        return False
    if parts.hostname == "localhost":
        return True
    try:
        return ipaddress.ip_address(parts.hostname).is_loopback
    except ValueError:
        return False


def download(url: str, sha256: str, *, timeout: float = 60.0, max_bytes: int = MAX_BUNDLE,
             session: Any = None, total_timeout: float = 600.0) -> str:
    """Download ``url`` into a new temporary file and check its SHA-256; returns the file's path (the caller
    deletes it). Raises IntegrityError (hash mismatch, too large) or RegistryUnavailable (network). Each network
    operation waits at most ``timeout`` seconds, the whole download ``total_timeout`` (every read, the status line
    and headers included, ends by then; no thread). Sent with mcpsync's urllib3 connections
    (:class:`~.net.RegistryNet`: proxies from the environment, ``https`` redirects only). ``session`` is no longer
    accepted (a ConfigError if given)."""
    if session is not None:
        from ..errors import ConfigError

        raise ConfigError("download(session=...) is gone: bundles are downloaded with mcpsync's urllib3 connections")
    from ..__version__ import __version__
    from .deadline import Deadline, read_body
    from .net import RegistryNet

    if not isinstance(sha256, str) or len(sha256) != 64:
        raise IntegrityError("an mcpb package needs a fileSha256 (64 hex digits); refusing to download %s" % url)
    if not _allowed_url(url):
        raise IntegrityError("an mcpb bundle is only downloaded over https, not from %r" % url)
    digest = hashlib.sha256()
    # made first: it resolves the proxies and TLS settings (a ConfigError for a missing CA bundle) and opens nothing
    http = RegistryNet({"User-Agent": "mcpsync/%s" % __version__, "Accept-Encoding": "gzip, deflate"})
    fd, path = tempfile.mkstemp(prefix="mcpsync-", suffix=".mcpb")
    ok = False
    try:
        deadline = Deadline(total_timeout, "downloading the bundle")
        try:
            with os.fdopen(fd, "wb") as fh:
                # every read, the status line and headers too, ends by the deadline; https redirects only
                resp = http.get(url, deadline, timeout, https_only=True, what="downloading %s" % url)
                try:
                    if resp.status_code != 200:
                        raise RegistryUnavailable("downloading %s: HTTP %d" % (url, resp.status_code),
                                                  status=resp.status_code, url=url)
                    for chunk in read_body(resp, deadline, timeout, url=url, max_bytes=max_bytes,
                                           too_large=lambda: IntegrityError(
                                               "the bundle at %s is larger than %d bytes" % (url, max_bytes))):
                        digest.update(chunk)
                        fh.write(chunk)
                finally:
                    resp.close()
        finally:
            http.close()
        got = digest.hexdigest()
        if got != sha256.lower():
            raise IntegrityError(
                "the bundle at %s does not match its fileSha256 (expected %s, got %s); it was deleted and nothing ran"
                % (url, sha256, got)
            )
        ok = True
        return path
    finally:
        if not ok:
            try:
                os.unlink(path)
            except OSError:
                pass


def _members(bundle: str, max_files: int, max_unpacked: int) -> Tuple[zipfile.ZipFile, List[zipfile.ZipInfo]]:
    try:
        zf = zipfile.ZipFile(bundle)
    except (zipfile.BadZipFile, OSError, ValueError) as exc:
        raise IntegrityError("the bundle is not a zip file: %s" % exc) from None
    infos = zf.infolist()
    if len(infos) > max_files:
        zf.close()
        raise IntegrityError("the bundle has %d files (at most %d are unpacked)" % (len(infos), max_files))
    total = 0
    for info in infos:
        name = info.filename
        parts = name.replace("\\", "/").split("/")
        mode = info.external_attr >> 16
        if (
            not name
            or "\\" in name
            or name.startswith("/")
            or ".." in parts
            or (len(name) > 1 and name[1] == ":")
            or "\x00" in name
            or stat.S_ISLNK(mode)
        ):
            zf.close()
            raise IntegrityError("the bundle has an unsafe member %r; nothing was unpacked" % name)
        total += info.file_size
        if total > max_unpacked:
            zf.close()
            raise IntegrityError("the bundle unpacks to more than %d bytes; nothing was unpacked" % max_unpacked)
    return zf, infos


def read_manifest(bundle: str) -> Dict[str, Any]:
    """The bundle's ``manifest.json`` (checked to be an object), read without extracting anything."""
    zf, _infos = _members(bundle, MAX_FILES, MAX_UNPACKED)
    with zf:
        try:
            info = zf.getinfo("manifest.json")
        except KeyError:
            raise InvalidServerJson("the bundle has no manifest.json") from None
        if info.file_size > MAX_MANIFEST:
            raise InvalidServerJson("the bundle's manifest.json is larger than %d bytes" % MAX_MANIFEST)
        try:
            data = json.loads(zf.read(info).decode("utf-8-sig"))
        except (ValueError, RecursionError, zipfile.BadZipFile, OSError) as exc:
            raise InvalidServerJson("the bundle's manifest.json is not valid JSON: %s" % exc) from None
    if not isinstance(data, dict):
        raise InvalidServerJson("the bundle's manifest.json is not an object")
    return data


def _platform_key() -> str:
    return "win32" if sys.platform.startswith("win") else ("darwin" if sys.platform == "darwin" else "linux")


def plan(resolved: ResolvedServer, bundle: str, install_dir: str) -> Dict[str, Any]:
    """Fill ``resolved.command`` and ``resolved.env`` from the verified ``bundle``'s manifest, as it will run
    from ``install_dir``; returns the manifest. Asks ``user_config`` values through ``resolved.asker``."""
    manifest = read_manifest(bundle)
    server = manifest.get("server")
    if not isinstance(server, dict):
        raise InvalidServerJson("the bundle's manifest.json has no server object")
    config = server.get("mcp_config")
    if config is None:
        entry = server.get("entry_point")
        kind = server.get("type")
        if not isinstance(entry, str) or kind not in ("node", "python", "binary"):
            raise InvalidServerJson("the bundle's manifest.json has neither mcp_config nor a usable entry_point")
        program = {"node": ["node"], "python": ["python3" if os.name != "nt" else "python"], "binary": []}[kind]
        config = {"command": program[0] if program else "${__dirname}/" + entry,
                  "args": ["${__dirname}/" + entry] if program else []}
    if not isinstance(config, dict):
        raise InvalidServerJson("the bundle's server.mcp_config is not an object")
    overrides = config.get("platform_overrides")
    if isinstance(overrides, dict) and isinstance(overrides.get(_platform_key()), dict):
        config = dict(config, **overrides[_platform_key()])
    command, args, env = config.get("command"), config.get("args") or [], config.get("env") or {}
    if not isinstance(command, str) or not command:
        raise InvalidServerJson("the bundle's mcp_config.command must be a string")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args) or len(args) > 256:
        raise InvalidServerJson("the bundle's mcp_config.args must be a list of strings")
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise InvalidServerJson("the bundle's mcp_config.env must map names to strings")
    user_config = manifest.get("user_config") or {}
    if not isinstance(user_config, dict):
        raise InvalidServerJson("the bundle's user_config is not an object")
    home = os.path.expanduser("~")
    fixed = {
        "__dirname": install_dir,
        "HOME": home,
        "DESKTOP": os.path.join(home, "Desktop"),
        "DOCUMENTS": os.path.join(home, "Documents"),
        "DOWNLOADS": os.path.join(home, "Downloads"),
        "/": os.sep,
        "pathSeparator": os.sep,
    }
    asker = resolved.asker
    answered: Dict[str, Tuple[List[str], bool]] = {}

    def user_value(key: str) -> Tuple[List[str], bool]:
        if key not in answered:
            spec = user_config.get(key)
            if not isinstance(spec, dict):
                raise InvalidServerJson("the bundle's mcp_config uses ${user_config.%s}, which user_config lacks" % key)
            kind = spec.get("type")
            default = spec.get("default")
            mapped = {
                "description": spec.get("description") if isinstance(spec.get("description"), str) else None,
                "isRequired": bool(spec.get("required") is True),
                "isSecret": bool(spec.get("sensitive") is True),
                "format": {"number": "number", "boolean": "boolean", "directory": "filepath", "file": "filepath"}.get(
                    kind if isinstance(kind, str) else "", "string"),
                "default": default if isinstance(default, str) else (
                    json.dumps(default) if isinstance(default, (bool, int, float)) else None),
            }
            request = asker.request({k: v for k, v in mapped.items() if v is not None}, key, "user_config",
                                    "user_config.%s" % key, repeated=bool(spec.get("multiple") is True))
            answered[key] = (asker.ask(request), request.secret)
        return answered[key]

    def expand(text: str, name_hint: str) -> List[str]:
        """One template -> its expansions (a lone ``${user_config.X}`` with several values gives several)."""
        if text.startswith("${user_config.") and text.endswith("}") and text.count("${") == 1:
            key = text[len("${user_config."):-1]
            values, secret = user_value(key)
            return [asker.protect(v, key, secret) for v in values]
        out, pos = [], 0
        while True:
            start = text.find("${", pos)
            if start < 0:
                out.append(text[pos:].replace("$", "$$"))
                break
            end = text.find("}", start)
            if end < 0:
                out.append(text[pos:].replace("$", "$$"))
                break
            out.append(text[pos:start].replace("$", "$$"))
            var = text[start + 2:end]
            if var.startswith("user_config."):
                values, secret = user_value(var[len("user_config."):])
                out.append(asker.protect(" ".join(values), var[len("user_config."):], secret) if values else "")
            elif var in fixed:
                out.append(fixed[var].replace("$", "$$"))
            else:
                out.append(text[start:end + 1].replace("$", "$$"))
            pos = end + 1
        return ["".join(out)]

    argv = expand(command, "command")[:1] + [item for arg in args for item in expand(arg, "arg")]
    resolved.command = argv
    resolved.env = {}
    for key, value in env.items():
        expanded = expand(value, key)
        resolved.env[key] = expanded[0] if expanded else ""
    resolved.secrets = asker.secrets
    resolved.answers = asker.answers
    return manifest


def unpack(bundle: str, install_dir: str, *, max_files: int = MAX_FILES, max_unpacked: int = MAX_UNPACKED) -> None:
    """Extract the verified ``bundle`` into ``install_dir`` (replaced when it exists). Every member is checked
    before anything is written; extraction goes to a staging directory renamed into place."""
    zf, infos = _members(bundle, max_files, max_unpacked)
    parent = os.path.dirname(os.path.abspath(install_dir))
    os.makedirs(parent, mode=0o700, exist_ok=True)
    staging = tempfile.mkdtemp(prefix=".unpack-", dir=parent)
    try:
        with zf:
            root = os.path.realpath(staging)
            for info in infos:
                target = os.path.realpath(os.path.join(staging, info.filename))
                if target != root and not target.startswith(root + os.sep):
                    raise IntegrityError(
                        "the bundle member %r would land outside the install directory" % info.filename
                    )
                if info.is_dir():
                    os.makedirs(target, exist_ok=True)
                    continue
                os.makedirs(os.path.dirname(target), exist_ok=True)
                written = 0
                with zf.open(info) as src, open(target, "wb") as dst:
                    while True:
                        chunk = src.read(65536)
                        if not chunk:
                            break
                        written += len(chunk)
                        if written > info.file_size:
                            raise IntegrityError("the bundle member %r is larger than declared" % info.filename)
                        dst.write(chunk)
                mode = (info.external_attr >> 16) & 0o777
                if mode & 0o111:
                    os.chmod(target, 0o755)
        if os.path.exists(install_dir):
            shutil.rmtree(install_dir)
        os.replace(staging, install_dir)
    except (OSError, zipfile.BadZipFile) as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise RegistryError("cannot unpack the bundle into %s: %s" % (install_dir, exc)) from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
