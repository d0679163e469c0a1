"""From a ``server.json`` to a server configuration: the exact command (or URL), environment and headers.

Local packages (``packages[]``), by ``registryType``; the command is ``runtimeHint`` when that runtime is on
``PATH``, else the type's default runtime:

==========  ==================================================  =============================================
type        command                                              notes
==========  ==================================================  =============================================
npm         ``npx -y <runtimeArguments> id@version <args>``
pypi        ``uvx <runtimeArguments> id@version <args>``        without ``uvx``: a virtualenv per server and
                                                                 version (``python -m venv`` + ``pip install
                                                                 id==version``, run at install time, after
                                                                 consent), running its ``id`` console script
oci         ``docker run -i --rm <runtimeArguments> -e NAME...   the image reference gets ``:version`` when it
            image <args>``                                       has no tag or digest
nuget       ``dnx <runtimeArguments> id@version --yes -- <args>``
mcpb        from the bundle's ``manifest.json`` (see :mod:`.mcpb`)
==========  ==================================================  =============================================

Arguments: a positional argument adds its value; a named one adds ``--name=value`` (``-n value`` for a
single-dash flag), or the bare flag for a ``boolean`` without a fixed value when the answer is ``true``;
``isRepeated`` arguments add one entry per value. A fixed ``value`` has its ``{variables}`` replaced by the
answers for the ``variables`` it declares (unknown ones stay as written). Environment variables become the
server's environment (for ``oci``, ``-e NAME`` hands them to the container).

Remotes (``remotes[]``): ``streamable-http`` (``http``) or ``sse``; ``{variables}`` in the URL template are
answered and URL-quoted (a value at the very start of the URL, the draft's ``{baseUrl}/mcp``, is inserted as
is and the result must be an http(s) URL); ``headers`` are answered like environment variables.

Secrets (``isSecret``) never appear in the result's command, environment, URL or headers: those hold a
reference ``${secret:CONFIG_NAME/INPUT}`` and the value is in :attr:`ResolvedServer.secrets`, for the
credential store. A literal ``$`` from a ``server.json`` is written as ``$$`` so that no registry entry can
make mcpsync expand ``${...}`` references of its own choosing (say, ``${env:AWS_SECRET_ACCESS_KEY}``).

Everything here is pure computation except ``which`` (a PATH lookup); it raises
:class:`~.errors.InvalidServerJson`, :class:`~.errors.MissingInput` or :class:`~.errors.InvalidInput`.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple
from urllib.parse import quote, urlsplit

from .errors import InvalidServerJson, RegistryError
from .inputs import InputCallback, InputRequest, Pending, ask_all

__all__ = ["ResolvedServer", "choose_target", "config_name_for", "resolve", "secret_reference"]

#: Bounds on what a server.json may ask for (a hostile entry cannot build an absurd command).
MAX_ITEMS = 256
MAX_TEXT = 64 * 1024

Which = Callable[[str], Optional[str]]

_RUNTIMES: Mapping[str, Tuple[str, Tuple[str, ...]]] = MappingProxyType({
    "npm": ("npx", ("-y",)),
    "pypi": ("uvx", ()),
    "oci": ("docker", ("run", "-i", "--rm")),
    "nuget": ("dnx", ()),
})
_HINT_PREFIX: Mapping[str, Tuple[str, ...]] = MappingProxyType({
    "npx": ("-y",),
    "docker": ("run", "-i", "--rm"),
    "podman": ("run", "-i", "--rm"),
})
_VAR = re.compile(r"\{([A-Za-z0-9_.-]+)\}")


@dataclass
class ResolvedServer:
    """What installing one server writes and runs (secrets only as references).

    Attributes:
        registry_name / version: the server's registry name and the version resolved.
        config_name: the name it gets in the configuration file.
        kind: ``stdio`` or ``remote``.
        command: the exact argv (stdio).
        env: environment variables (stdio); values may be ``${secret:...}`` references.
        url / headers / transport: for a remote (``http`` or ``sse``).
        secrets: reference key (``CONFIG_NAME/INPUT``) -> value, for the credential store only.
        answers: the non-secret answers by input name (kept with the registry metadata, for ``update``).
        install_steps: commands run at install time, after consent (a pypi virtualenv).
        registry_type / identifier: the package chosen (None for a remote).
        sha256: the package's ``fileSha256``, when it has one.
        post_install: the draft's ``postInstallInstructions`` (shown, never run).
        venv: the virtualenv directory (pypi without uvx).
        asker: asks further inputs (an mcpb bundle's ``user_config``) the same way.
        pending: for a consent preview (an :class:`~.inputs.InputSource`'s ``preview`` as the callback), the
            inputs left to ask after approval; their values show as ``<NAME>``.
    """

    registry_name: str
    version: str
    config_name: str
    kind: str
    command: List[str] = field(default_factory=list)
    env: Dict[str, str] = field(default_factory=dict)
    url: Optional[str] = None
    headers: Dict[str, str] = field(default_factory=dict)
    transport: str = "http"
    secrets: Dict[str, str] = field(default_factory=dict, repr=False)
    answers: Dict[str, Any] = field(default_factory=dict)
    install_steps: List[List[str]] = field(default_factory=list)
    registry_type: Optional[str] = None
    identifier: Optional[str] = None
    sha256: Optional[str] = None
    post_install: List[Dict[str, Any]] = field(default_factory=list)
    venv: Optional[str] = None
    asker: Any = field(default=None, repr=False, compare=False)
    pending: List[InputRequest] = field(default_factory=list, repr=False, compare=False)


def secret_reference(config_name: str, input_name: str) -> str:
    """The configuration text that stands for a stored secret: ``${secret:CONFIG_NAME/INPUT}``."""
    return "${secret:%s/%s}" % (config_name, input_name)


def _escape(value: str) -> str:
    return value.replace("$", "$$")


def _substitute(template: str, fill: Callable[["re.Match[str]"], str]) -> str:
    """``template`` with each ``{var}`` replaced by ``fill(match)`` (which escapes what it returns), in order,
    and the text around them escaped (``$`` -> ``$$``)."""
    pieces: List[str] = []
    pos = 0
    for match in _VAR.finditer(template):
        pieces.append(_escape(template[pos:match.start()]))
        pieces.append(fill(match))
        pos = match.end()
    pieces.append(_escape(template[pos:]))
    return "".join(pieces)


def config_name_for(registry_name: str) -> str:
    """A configuration name from a registry name: its last part, reduced to letters, digits, ``-`` and ``_``."""
    tail = registry_name.rsplit("/", 1)[-1]
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", tail).strip("-_")[:64]
    return name or "server"


# ---------------------------------------------------------------------------- checked access


def _where(where: str, key: Any) -> str:
    return "%s[%d]" % (where, key) if isinstance(key, int) else ("%s.%s" % (where, key) if where else str(key))


def _text(obj: Mapping[str, Any], key: str, where: str, *, required: bool = False) -> Optional[str]:
    value = obj.get(key)
    if value is None:
        if required:
            raise InvalidServerJson("server.json %s is missing" % _where(where, key))
        return None
    if not isinstance(value, str) or len(value) > MAX_TEXT or "\x00" in value:
        raise InvalidServerJson("server.json %s must be a string" % _where(where, key))
    return value


def _flag(obj: Mapping[str, Any], key: str, where: str) -> bool:
    value = obj.get(key, False)
    if not isinstance(value, bool):
        raise InvalidServerJson("server.json %s must be true or false" % _where(where, key))
    return value


def _items(obj: Mapping[str, Any], key: str, where: str) -> List[Dict[str, Any]]:
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list) or len(value) > MAX_ITEMS:
        raise InvalidServerJson("server.json %s must be a list (of at most %d)" % (_where(where, key), MAX_ITEMS))
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            raise InvalidServerJson("server.json %s must be an object" % _where(_where(where, key), i))
    return value


# ---------------------------------------------------------------------------- inputs


class _Protected(str):
    """A value already written as configuration text (escaped, secrets as references): protect() keeps it."""

    __slots__ = ()


class _Answers:
    """Asks the callback for each input (once per name and kind) and turns secrets into references."""

    def __init__(self, server: str, config_name: str, callback: InputCallback) -> None:
        self.server, self.config_name, self.callback = server, config_name, callback
        self.secrets: Dict[str, str] = {}
        self.answers: Dict[str, Any] = {}
        self.pending: List[InputRequest] = []  # inputs a consent preview left to ask after approval

    def request(self, spec: Mapping[str, Any], name: str, kind: str, where: str, *, aliases: Tuple[str, ...] = (),
                repeated: bool = False) -> InputRequest:
        fmt = _text(spec, "format", where) or "string"
        if fmt not in ("string", "number", "boolean", "filepath"):
            fmt = "string"
        choices = spec.get("choices")
        if choices is not None and (not isinstance(choices, list) or len(choices) > MAX_ITEMS
                                    or not all(isinstance(c, str) for c in choices)):
            raise InvalidServerJson("server.json %s must be a list of strings" % _where(where, "choices"))
        return InputRequest(
            name=name,
            kind=kind,
            server=self.server,
            description=_text(spec, "description", where) or "",
            required=_flag(spec, "isRequired", where),
            secret=_flag(spec, "isSecret", where),
            format=fmt,
            default=_text(spec, "default", where),
            choices=tuple(choices or ()),
            placeholder=_text(spec, "placeholder", where),
            repeated=repeated,
            aliases=aliases,
        )

    def ask(self, request: InputRequest) -> List[str]:
        values = ask_all(self.callback, request)
        if values and isinstance(values[0], Pending):
            if all(p.name != request.name for p in self.pending):
                self.pending.append(request)
            return values
        if values and not request.secret:
            self.answers[request.name] = values if request.repeated else values[0]
        elif values and len(values) == 1:
            # kept (in the credential store only) under the input's own name, so that an update can answer it
            # again even when it was a {variable} of a larger value
            self.secrets["%s/%s" % (self.config_name, request.name)] = values[0]
        return values

    def protect(self, value: str, name: str, secret: bool) -> str:
        """The text written for ``value``: escaped, or a reference to the stored secret."""
        if isinstance(value, _Protected):
            return str(value)
        if not secret:
            return _escape(value)
        self.secrets["%s/%s" % (self.config_name, name)] = value
        return secret_reference(self.config_name, name)

    def value(self, spec: Mapping[str, Any], name: str, kind: str, where: str, *,
              aliases: Tuple[str, ...] = (), repeated: bool = False) -> Tuple[List[str], bool]:
        """The values of an input (its fixed ``value`` with ``{variables}`` answered, else the answer), and
        whether any part is secret. Raw values, not yet protected."""
        fixed = _text(spec, "value", where)
        request = self.request(spec, name, kind, where, aliases=aliases, repeated=repeated)
        if fixed is None:
            return self.ask(request), request.secret
        variables = spec.get("variables")
        if variables is None:
            return [fixed], request.secret
        if not isinstance(variables, dict) or len(variables) > MAX_ITEMS:
            raise InvalidServerJson("server.json %s must be an object" % _where(where, "variables"))
        answers: Dict[str, str] = {}
        secret_vars = set()
        for var in _VAR.findall(fixed):
            if var in answers or var not in variables:
                continue
            var_spec = variables[var]
            if not isinstance(var_spec, dict):
                raise InvalidServerJson("server.json %s must be an object" % _where(_where(where, "variables"), var))
            var_request = self.request(var_spec, var, "variable", _where(_where(where, "variables"), var))
            got = self.ask(var_request)
            answers[var] = got[0] if got else ""
            if var_request.secret:
                secret_vars.add(var)
        if request.secret or not secret_vars:  # a secret as a whole, or no secret at all: the raw text
            return [_VAR.sub(lambda m: answers.get(m.group(1), m.group(0)), fixed)], request.secret

        # Secret variables inside a public value ("Bearer {token}"): only the variable is a secret, stored once
        # under its own name and referenced in place ("Bearer ${secret:NAME/token}"); the rest stays readable.
        def fill(match: "re.Match[str]") -> str:
            var = match.group(1)
            if var in secret_vars:
                return secret_reference(self.config_name, var)
            return _escape(answers.get(var, match.group(0)))

        return [_Protected(_substitute(fixed, fill))], False


# ---------------------------------------------------------------------------- packages


def _arguments(answers: _Answers, args: List[Dict[str, Any]], where: str) -> List[str]:
    argv: List[str] = []
    for i, arg in enumerate(args):
        at = _where(where, i)
        kind = _text(arg, "type", at, required=True)
        repeated = _flag(arg, "isRepeated", at)
        if kind == "positional":
            hint = _text(arg, "valueHint", at)
            if hint is None and arg.get("value") is None:
                raise InvalidServerJson("server.json %s needs a valueHint or a value" % at)
            values, secret = answers.value(arg, hint or "arg%d" % i, "argument", at, repeated=repeated)
            argv += [answers.protect(v, hint or "arg%d" % i, secret) for v in values]
        elif kind == "named":
            flag = _text(arg, "name", at, required=True) or ""
            if not flag or flag.startswith("$") or any(c.isspace() for c in flag):
                raise InvalidServerJson("server.json %s is not a flag name: %r" % (_where(at, "name"), flag))
            bare = flag.lstrip("-") or flag
            values, secret = answers.value(arg, flag, "argument", at, aliases=(bare,), repeated=repeated)
            fmt = arg.get("format")
            for v in values:
                if fmt == "boolean" and arg.get("value") is None:
                    if v == "true":
                        argv.append(_escape(flag))
                    continue
                shown = answers.protect(v, bare, secret)
                if flag.startswith("--"):
                    argv.append("%s=%s" % (_escape(flag), shown))
                else:
                    argv += [_escape(flag), shown]
        else:
            raise InvalidServerJson("server.json %s must be positional or named, not %r" % (_where(at, "type"), kind))
    return argv


def _key_values(answers: _Answers, items: List[Dict[str, Any]], kind: str, where: str) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for i, item in enumerate(items):
        at = _where(where, i)
        name = _text(item, "name", at, required=True) or ""
        if not name or "=" in name or any(c.isspace() or ord(c) < 32 for c in name):
            raise InvalidServerJson("server.json %s is not a valid %s name: %r" % (_where(at, "name"), kind, name))
        values, secret = answers.value(item, name, kind, at)
        if values:
            out[name] = answers.protect(values[0], name, secret)
    return out


def _runtime(package: Mapping[str, Any], rtype: str, which: Which, where: str) -> Tuple[str, Tuple[str, ...]]:
    hint = _text(package, "runtimeHint", where)
    default = _RUNTIMES.get(rtype)
    if hint and (which(hint) or default is None or not which(default[0])):
        if os.path.basename(hint) != hint:
            raise InvalidServerJson("server.json %s must be a program name, not a path" % _where(where, "runtimeHint"))
        return hint, _HINT_PREFIX.get(hint, default[1] if default and default[0] == hint else ())
    if default is None:
        supported = ", ".join(sorted(_RUNTIMES) + ["mcpb"])
        raise RegistryError("%s packages are not supported (supported: %s)" % (rtype, supported))
    return default


def runtime_available(package: Mapping[str, Any], which: Which = shutil.which) -> bool:
    """Whether the runtime a package needs is on PATH (pypi always counts: mcpsync can make a virtualenv)."""
    rtype = package.get("registryType")
    if rtype in ("pypi", "mcpb"):
        return True
    hint = package.get("runtimeHint")
    if isinstance(hint, str) and hint and which(hint):
        return True
    default = _RUNTIMES.get(rtype) if isinstance(rtype, str) else None
    return bool(default and which(default[0]))


def _venv_dir(registry_name: str, version: str, data_dir: Optional[str]) -> str:
    if data_dir is None:
        from ..auth.store import user_data_dir

        data_dir = user_data_dir()
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", "%s-%s" % (registry_name.replace("/", "__"), version))
    return os.path.join(data_dir, "registry", "venvs", safe[:200])


def _package(
    answers: _Answers,
    out: ResolvedServer,
    package: Dict[str, Any],
    where: str,
    which: Which,
    data_dir: Optional[str],
) -> None:
    rtype = _text(package, "registryType", where, required=True) or ""
    identifier = _text(package, "identifier", where, required=True) or ""
    if not identifier or identifier.startswith("-") or any(c.isspace() for c in identifier):
        raise InvalidServerJson(
            "server.json %s is not a package identifier: %r" % (_where(where, "identifier"), identifier)
        )
    version = _text(package, "version", where)
    if version is not None and (not version or version.startswith("-") or any(c.isspace() for c in version)):
        raise InvalidServerJson("server.json %s is not a version: %r" % (_where(where, "version"), version))
    raw_transport = package.get("transport")
    transport: Dict[str, Any] = raw_transport if isinstance(raw_transport, dict) else {}
    if transport.get("type", "stdio") != "stdio":
        raise RegistryError(
            "%s: packages that serve %r (a local HTTP server) are not supported yet; use a stdio package or a remote"
            % (out.registry_name, transport.get("type"))
        )
    sha = _text(package, "fileSha256", where)
    if sha is not None and not re.match(r"^[a-f0-9]{64}$", sha):
        raise InvalidServerJson("server.json %s is not a SHA-256 hex digest" % _where(where, "fileSha256"))
    out.registry_type, out.identifier, out.sha256 = rtype, identifier, sha
    for item in _items(package, "postInstallInstructions", where):
        out.post_install.append(
            {k: item[k] for k in ("description", "command", "documentation", "optional") if k in item
             and isinstance(item[k], (str, bool))}
        )
    if rtype == "mcpb":
        return  # the command comes from the bundle's manifest (mcpb.py), after download and verification
    runtime_args = _arguments(answers, _items(package, "runtimeArguments", where), _where(where, "runtimeArguments"))
    env_items = _items(package, "environmentVariables", where)
    env = _key_values(answers, env_items, "env", _where(where, "environmentVariables"))
    package_args = _arguments(answers, _items(package, "packageArguments", where), _where(where, "packageArguments"))
    ident = _escape(identifier)
    if rtype == "pypi" and not which("uvx") and not (package.get("runtimeHint") and which(str(package["runtimeHint"]))):
        venv = _venv_dir(out.registry_name, version or "latest", data_dir)
        bindir = os.path.join(venv, "Scripts" if sys.platform.startswith("win") else "bin")
        python = os.path.join(bindir, "python.exe" if sys.platform.startswith("win") else "python")
        spec = "%s==%s" % (identifier, version) if version else identifier
        pip = [python, "-m", "pip", "install", "--disable-pip-version-check", "--no-input", spec]
        base = _text(package, "registryBaseUrl", where)
        if base and urlsplit(base).netloc not in ("pypi.org", "www.pypi.org"):
            pip[4:4] = ["--index-url", base.rstrip("/") + "/simple"]
        out.install_steps = [[sys.executable, "-m", "venv", venv], pip]
        out.venv = venv
        script = os.path.join(bindir, identifier + (".exe" if sys.platform.startswith("win") else ""))
        out.command = [_escape(script)] + runtime_args + package_args
        out.env = env
        return
    program, prefix = _runtime(package, rtype, which, where)
    argv = [program] + list(prefix) + runtime_args
    if rtype == "oci" or program in ("docker", "podman"):
        for name in env:
            argv += ["-e", name]
        image = ident
        last = image.rsplit("/", 1)[-1]
        if version and ":" not in last and "@" not in last:
            image = "%s:%s" % (image, _escape(version))
        argv.append(image)
    elif rtype == "pypi":
        base = _text(package, "registryBaseUrl", where)
        if base and urlsplit(base).netloc not in ("pypi.org", "www.pypi.org"):
            argv += ["--index-url", _escape(base.rstrip("/") + "/simple")]
        argv.append("%s@%s" % (ident, _escape(version)) if version else ident)
    elif rtype == "nuget":
        argv += ["%s@%s" % (ident, _escape(version)) if version else ident, "--yes", "--"]
    else:
        argv.append("%s@%s" % (ident, _escape(version)) if version else ident)
    out.command = argv + package_args
    out.env = env


# ---------------------------------------------------------------------------- remotes


def _remote(answers: _Answers, out: ResolvedServer, remote: Dict[str, Any], where: str) -> None:
    rtype = _text(remote, "type", where, required=True)
    if rtype not in ("streamable-http", "sse"):
        raise RegistryError("%s: remote type %r is not supported" % (out.registry_name, rtype))
    template = _text(remote, "url", where, required=True) or ""
    variables = remote.get("variables") or {}
    if not isinstance(variables, dict) or len(variables) > MAX_ITEMS:
        raise InvalidServerJson("server.json %s must be an object" % _where(where, "variables"))

    def fill(match: "re.Match[str]") -> str:
        var = match.group(1)
        spec = variables.get(var)
        if spec is None:
            return _escape(match.group(0))
        if not isinstance(spec, dict):
            raise InvalidServerJson("server.json %s must be an object" % _where(_where(where, "variables"), var))
        request = answers.request(spec, var, "url", _where(_where(where, "variables"), var))
        values = answers.ask(request)
        value = values[0] if values else ""
        raw = value if match.start() == 0 or isinstance(value, Pending) else quote(value, safe="/")
        return answers.protect(raw, var, request.secret)

    url = _substitute(template, fill)
    check = url.replace("$$", "$")
    if "${secret:" not in check and not answers.pending:  # a consent preview checks the URL after asking
        parts = urlsplit(check)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise InvalidServerJson(
                "server.json %s is not an http(s) URL after substitution: %r" % (_where(where, "url"), check)
            )
    out.kind, out.url = "remote", url
    out.transport = "sse" if rtype == "sse" else "http"
    out.headers = _key_values(answers, _items(remote, "headers", where), "header", _where(where, "headers"))


# ---------------------------------------------------------------------------- choosing and resolving


def choose_target(
    server: Mapping[str, Any],
    *,
    prefer: str = "auto",
    registry_type: Optional[str] = None,
    which: Which = shutil.which,
) -> Tuple[str, int]:
    """Which part of ``server.json`` to install: ``("package", i)`` or ``("remote", i)``.

    ``prefer``: ``auto`` (the first package whose runtime is on PATH, else the first remote, else the first
    package), ``package`` or ``remote``. ``registry_type`` keeps only packages of that type.
    """
    if prefer not in ("auto", "package", "remote"):
        raise RegistryError("prefer must be auto, package or remote, not %r" % prefer)
    packages = _items(server, "packages", "")
    remotes = _items(server, "remotes", "")
    candidates = [i for i, p in enumerate(packages) if registry_type is None or p.get("registryType") == registry_type]
    if prefer == "remote" or (prefer == "auto" and registry_type is None and not any(
            runtime_available(packages[i], which) for i in candidates) and remotes):
        if remotes:
            return "remote", 0
        if prefer == "remote":
            raise RegistryError("%s has no remote" % server.get("name"))
    if candidates:
        for i in candidates:
            if runtime_available(packages[i], which):
                return "package", i
        return "package", candidates[0]
    if remotes and registry_type is None:
        return "remote", 0
    raise RegistryError("%s has no %s to install" % (
        server.get("name"), "%s package" % registry_type if registry_type else "package or remote"))


def resolve(
    server: Mapping[str, Any],
    inputs: InputCallback,
    *,
    config_name: Optional[str] = None,
    prefer: str = "auto",
    registry_type: Optional[str] = None,
    which: Which = shutil.which,
    data_dir: Optional[str] = None,
) -> ResolvedServer:
    """Resolve ``server`` (a ``server.json`` document) into a :class:`ResolvedServer`, asking ``inputs`` for
    every open value. An mcpb package is returned without a command (see :func:`mcpsync.registry.mcpb.plan`).
    Nothing is run or written."""
    if not isinstance(server, Mapping):
        raise InvalidServerJson("server.json must be an object")
    name = _text(server, "name", "", required=True) or ""
    version = _text(server, "version", "", required=True) or ""
    if "/" not in name:
        raise InvalidServerJson("server.json name must look like namespace/name, not %r" % name)
    config_name = config_name or config_name_for(name)
    if not re.match(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$", config_name):
        raise RegistryError("a configuration name uses letters, digits, '.', '-' and '_', not %r" % config_name)
    out = ResolvedServer(registry_name=name, version=version, config_name=config_name, kind="stdio")
    answers = _Answers(name, config_name, inputs)
    what, index = choose_target(server, prefer=prefer, registry_type=registry_type, which=which)
    if what == "remote":
        _remote(answers, out, _items(server, "remotes", "")[index], "remotes[%d]" % index)
    else:
        _package(answers, out, _items(server, "packages", "")[index], "packages[%d]" % index, which, data_dir)
    out.secrets, out.answers, out.asker, out.pending = answers.secrets, answers.answers, answers, answers.pending
    return out

