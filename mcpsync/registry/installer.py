"""Install a server from an MCP Registry into a configuration file, with SEP-1024 consent.

:func:`install` does, in this order:

1. refuses at once (:class:`~.errors.ConsentRequired`) when there is no approval hook and ``yes`` is false --
   before any network request, prompt or process;
2. fetches the ``server.json`` (:class:`~.client.RegistryClient`) and resolves it (:func:`~.resolver.resolve`)
   with the answers known without asking (given values, the environment: an :class:`~.inputs.InputSource`'s
   ``known`` part); an input that would be asked shows as ``<NAME>``;
3. for an mcpb bundle: downloads it and verifies ``fileSha256`` (a mismatch stops here), then reads its
   manifest to build the command;
4. hands a :class:`ConsentRequest` -- the exact command with every argument, every environment variable with
   its value (a secret as ``<secret NAME>``; variables that make the program load other code flagged), the URL
   and headers, what runs at install time, the bundle's digest, the inputs still to be asked -- to the
   approval hook; anything but ``True`` stops here (:class:`~.errors.ConsentRefused`) and nothing was
   asked, installed, started, stored or written;
5. asks the inputs left open (the source's ``ask``: a terminal prompt, a dialog) and resolves again with them;
6. runs the install-time steps (a pypi virtualenv; unpacking a bundle), stores secrets in the credential store,
   and writes the configuration file.

Nothing is started: the configuration's next user (the Manager, ``mcpsync --config``) starts the server.
``postInstallInstructions`` are returned (and shown by the CLI); they are never executed.

Every function blocks (network, disk, the install-time commands); they may be called from any thread.
"""

from __future__ import annotations

import logging
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from .client import RegistryClient, RegistryEntry
from .errors import ConsentRefused, ConsentRequired, RegistryError
from .inputs import InputCallback, InputRequest, InputSource, Pending, inputs_from, reinstall_inputs
from .resolver import ResolvedServer, resolve

__all__ = [
    "ConsentRequest",
    "InstallResult",
    "Outdated",
    "install",
    "install_server",
    "outdated",
    "outdated_servers",
    "split_spec",
    "uninstall",
    "update",
    "update_servers",
]

log = logging.getLogger(__name__)

Approve = Callable[["ConsentRequest"], bool]
Runner = Callable[[List[str]], None]

#: Environment variables that make a program load code other than its own (a preload library, a module path, an
#: interpreter option that requires a file): the consent screen flags them, whatever their value.
CODE_LOADING_ENV = (
    "NODE_OPTIONS", "NODE_PATH", "PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "LD_PRELOAD", "LD_LIBRARY_PATH",
    "LD_AUDIT", "PERL5OPT", "PERL5LIB", "RUBYOPT", "RUBYLIB", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
    "JDK_JAVA_OPTIONS", "BASH_ENV",
)
#: Prefixes of such variables (macOS's dynamic loader: DYLD_INSERT_LIBRARIES, DYLD_LIBRARY_PATH, ...).
CODE_LOADING_PREFIXES = ("DYLD_",)


def loads_code(name: str) -> bool:
    """Whether the environment variable ``name`` makes a program load other code (see :data:`CODE_LOADING_ENV`)."""
    upper = name.upper()
    return upper in CODE_LOADING_ENV or upper.startswith(CODE_LOADING_PREFIXES)


def shown_value(text: str) -> str:
    """What a program receives for configuration text ``text``: ``$$`` is one ``$``, a stored secret shows as
    ``<secret NAME>`` (never its value)."""
    import re

    return re.sub(r"\$\$|\$\{secret:[^}/]*/([^}]*)\}",
                  lambda m: "$" if m.group(0) == "$$" else "<secret %s>" % m.group(1), text)


@dataclass(frozen=True)
class ConsentRequest:
    """Everything a user approves before an installation (SEP-1024). Shown untruncated by :meth:`describe`.

    Attributes:
        server / version: the registry name and version.
        config_name / config_path: where it will be written.
        registry_url: the registry it came from.
        kind: ``stdio`` or ``remote``.
        command: the argv as written to the configuration (stdio): secrets as ``${secret:...}`` references, a
            literal ``$`` as ``$$``; :meth:`describe` shows what the program receives.
        env_names: the names of the environment variables it gets.
        env: ``(name, configuration text)`` of each environment variable (secrets as references).
        url / header_names / headers: for a remote (``headers`` as ``(name, configuration text)``).
        asked_after: the inputs that will be asked after approval (their values show as ``<NAME>``).
        install_steps: commands run now, at install time (a pypi virtualenv), each an exact argv.
        download_url / sha256: an mcpb bundle and its verified SHA-256.
        status / status_message: ``deprecated`` servers say so.
        post_install_instructions: shown after installing, never run.
    """

    server: str
    version: str
    config_name: str
    config_path: str
    registry_url: str
    kind: str
    command: Tuple[str, ...] = ()
    env_names: Tuple[str, ...] = ()
    url: Optional[str] = None
    header_names: Tuple[str, ...] = ()
    install_steps: Tuple[Tuple[str, ...], ...] = ()
    download_url: Optional[str] = None
    sha256: Optional[str] = None
    status: str = "active"
    status_message: Optional[str] = None
    post_install_instructions: Tuple[Mapping[str, Any], ...] = field(default=())
    env: Tuple[Tuple[str, str], ...] = ()
    headers: Tuple[Tuple[str, str], ...] = ()
    asked_after: Tuple[InputRequest, ...] = ()

    @property
    def code_loading_env(self) -> Tuple[str, ...]:
        """The environment variables given that make the program load other code (flagged by :meth:`describe`)."""
        return tuple(name for name in self.env_names if loads_code(name))

    def describe(self) -> str:
        """The full, untruncated text a user must read before approving (one item per line).

        Control characters and bidirectional overrides from the registry (which could rewrite or hide part of
        the line on a terminal) are shown escaped (``\\x1b``, ``\\u202e``); ``argv[i]`` lines show each argument
        as a Python literal.
        """
        import shlex

        from .._display import escape_controls

        lines = ["Install %s %s from %s as %r into %s" % (self.server, self.version, self.registry_url,
                                                           self.config_name, self.config_path)]
        if self.status != "active":
            lines.append("WARNING: this server is %s%s" % (self.status,
                                                         (": " + self.status_message) if self.status_message else ""))
        if self.kind == "stdio":
            lines.append("DANGER: this runs a program on your computer with your permissions. Review it:")
            for step in self.install_steps:
                lines.append("  now:     %s" % shlex.join(step))
            if self.download_url:
                lines.append("  bundle:  %s (sha256 %s, verified)" % (self.download_url, self.sha256))
            elif self.sha256:
                lines.append("  NOTE: the package declares fileSha256 %s; %s fetches it itself, so mcpsync cannot "
                             "check that hash" % (self.sha256, self.command[0] if self.command else "its runtime"))
            argv = [shown_value(arg) for arg in self.command]
            lines.append("  command: %s" % shlex.join(argv))
            for i, arg in enumerate(argv):
                lines.append("    argv[%d] = %r" % (i, arg))
            lines.append("  environment variables: %s" % (", ".join(self.env_names) or "(none)"))
            for name, value in self.env:
                lines.append("    %s=%s" % (name, shown_value(value)))
            for name in self.code_loading_env:
                lines.append("  DANGER: %s makes the program load other code: review its value above" % name)
        else:
            lines.append("  remote server: %s" % (shown_value(self.url) if self.url else self.url))
            lines.append("  headers: %s" % (", ".join(self.header_names) or "(none)"))
            for name, value in self.headers:
                lines.append("    %s: %s" % (name, shown_value(value)))
        if self.asked_after:
            lines.append("  asked after you approve (where <NAME> stands): %s" % ", ".join(
                r.name + (" (secret)" if r.secret else "") for r in self.asked_after))
        return "\n".join(
            line if line.lstrip().startswith("argv[") else escape_controls(line, one_line=True) for line in lines
        )


@dataclass
class InstallResult:
    """What :func:`install` did. ``consent`` is the request the hook approved, or, when inputs were asked after
    the approval, the same request with their values filled in (what was installed)."""

    config_name: str
    config_path: str
    format: str
    server: ResolvedServer
    consent: ConsentRequest
    post_install_instructions: List[Dict[str, Any]]


def split_spec(spec: str) -> Tuple[str, str]:
    """``NAME[@VERSION]`` -> (name, version or ``latest``)."""
    name, sep, version = spec.rpartition("@")
    if not sep or "/" not in name:
        return spec, "latest"
    return name, version or "latest"


def _run(argv: List[str]) -> None:
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=1800, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RegistryError("install step failed: %s: %s" % (argv[0], exc)) from None
    if proc.returncode != 0:
        tail = proc.stdout.decode("utf-8", "replace")[-2000:] if proc.stdout else ""
        raise RegistryError("install step %s exited with %d:\n%s" % (" ".join(argv[:4]), proc.returncode, tail))


def _refuse_batch_metacharacters(resolved: ResolvedServer, which: Callable[[str], Optional[str]]) -> None:
    """On Windows, refuse (ConfigError, nothing installed) a command that runs through a batch file (``npx`` ->
    ``npx.cmd``) with an argument ``cmd.exe`` would interpret: the server could never be started anyway."""
    from ..transports import stdio

    if not stdio.WINDOWS or not resolved.command or resolved.url:
        return
    executable = which(resolved.command[0]) or resolved.command[0]
    stdio.check_batch_arguments(executable, resolved.command[1:], server=resolved.config_name)


def _default_config_path() -> str:
    from ..manager.config import find_config

    found = find_config()
    if found is not None:
        return str(found)
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(xdg, "mcpsync", "config.json")


def _bundle_dir(resolved: ResolvedServer, data_dir: Optional[str]) -> str:
    import re

    if data_dir is None:
        from ..auth.store import user_data_dir

        data_dir = user_data_dir()
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", "%s-%s-%s" % (
        resolved.registry_name.replace("/", "__"), resolved.version, (resolved.sha256 or "")[:12]))
    return os.path.join(data_dir, "registry", "bundles", safe[:200])


def install(
    spec: Union[str, RegistryEntry, Mapping[str, Any]],
    *,
    config: Union[str, Path, None] = None,
    registry: Union[str, RegistryClient, None] = None,
    inputs: Union[InputCallback, Mapping[str, Any], None] = None,
    approve: Optional[Approve] = None,
    yes: bool = False,
    name: Optional[str] = None,
    prefer: str = "auto",
    registry_type: Optional[str] = None,
    replace: bool = False,
    fmt: Optional[str] = None,
    store: Any = None,
    data_dir: Optional[str] = None,
    which: Callable[[str], Optional[str]] = shutil.which,
    runner: Runner = _run,
) -> InstallResult:
    """Install ``spec`` (``NAME[@VERSION]``, a :class:`RegistryEntry`, or a ``server.json`` dict) into the
    configuration file ``config`` (default: the one mcpsync finds, else ``~/.config/mcpsync/config.json``).

    ``inputs`` answers open values (a callable, or a mapping for :func:`~.inputs.inputs_from`); ``approve``
    receives the :class:`ConsentRequest` and must return True; without it ``yes=True`` is required.
    ``store`` is the credential store for secrets (default :func:`mcpsync.auth.open_store`).
    See the module docstring for the order of events and the errors.
    """
    if approve is None and not yes:
        raise ConsentRequired(
            "installing runs programs on this computer: pass an approval hook (approve=...) or yes=True "
            "(CLI: answer the prompt, or --yes); nothing was installed"
        )
    callback: InputCallback = inputs if callable(inputs) else inputs_from(inputs or {})
    own_client = not isinstance(registry, RegistryClient)
    client = registry if isinstance(registry, RegistryClient) else None
    try:
        if isinstance(spec, RegistryEntry):
            entry = spec
        elif isinstance(spec, Mapping):
            from .client import parse_entry

            entry = parse_entry(dict(spec), "")
        else:
            client = client or RegistryClient(registry if isinstance(registry, str) else None)
            reg_name, version = split_spec(spec)
            entry = client.get(reg_name, version)
        registry_url = entry.registry_url or (client.base_url if client is not None else "")
        return _install(entry, registry_url, config, callback, approve, name, prefer, registry_type, replace,
                        fmt, store, data_dir, which, runner)
    finally:
        if own_client and client is not None:
            client.close()


def _install(
    entry: RegistryEntry,
    registry_url: str,
    config: Union[str, Path, None],
    callback: InputCallback,
    approve: Optional[Approve],
    name: Optional[str],
    prefer: str,
    registry_type: Optional[str],
    replace: bool,
    fmt: Optional[str],
    store: Any,
    data_dir: Optional[str],
    which: Callable[[str], Optional[str]],
    runner: Runner,
) -> InstallResult:
    from . import writer

    config_path = str(Path(config).expanduser()) if config is not None else _default_config_path()
    preview = _preview(callback)

    def resolve_with(answer: InputCallback) -> ResolvedServer:
        return resolve(entry.server, answer, config_name=name, prefer=prefer, registry_type=registry_type,
                       which=which, data_dir=data_dir)

    # The consent comes first: resolved with what is known without asking; the rest is asked after approval.
    resolved = resolve_with(preview if preview is not None else callback)
    doc = writer.read_document(config_path)  # fails early on a file that cannot be rewritten
    if doc and not replace:
        writer.refuse_taken_name(config_path, doc, fmt, resolved.config_name,
                                 "choose another name, or use mcpsync update")
    bundle: Optional[str] = None
    install_dir: Optional[str] = None
    download_url: Optional[str] = None
    try:
        if resolved.registry_type == "mcpb":
            from . import mcpb

            download_url = resolved.identifier
            bundle = mcpb.download(resolved.identifier or "", resolved.sha256 or "")
            install_dir = _bundle_dir(resolved, data_dir)
            mcpb.plan(resolved, bundle, install_dir)
        request = _consent(entry, resolved, registry_url, config_path, download_url)
        check_approval(approve, request)
        if resolved.pending:  # approved: now ask what the consent showed as <NAME>, and resolve with the answers
            resolved = resolve_with(callback)
            if bundle is not None and install_dir is not None:
                from . import mcpb

                mcpb.plan(resolved, bundle, install_dir)
            request = _consent(entry, resolved, registry_url, config_path, download_url)
        _refuse_batch_metacharacters(resolved, which)
        # ---- approved: from here on things are installed
        fresh_venv = resolved.venv is not None and not os.path.exists(resolved.venv)
        try:
            for step in resolved.install_steps:
                runner(list(step))
            if resolved.venv is not None and resolved.command and not os.path.exists(
                    resolved.command[0].replace("$$", "$")):
                raise RegistryError("%s was installed but has no %r program (the package's console script must be "
                                    "named like the package)" % (resolved.identifier,
                                                                 os.path.basename(resolved.command[0])))
        except BaseException:
            if fresh_venv and resolved.venv is not None:
                shutil.rmtree(resolved.venv, ignore_errors=True)  # leave no half-made virtualenv behind
            raise
        if bundle is not None and install_dir is not None:
            from . import mcpb

            mcpb.unpack(bundle, install_dir)
        if resolved.secrets:
            from ..auth.secrets import store_secrets

            store_secrets(resolved.secrets, store)
        meta: Dict[str, Any] = {"name": entry.name, "version": entry.version, "url": registry_url}
        if resolved.answers:
            meta["inputs"] = dict(resolved.answers)
        meta["registryType"] = resolved.registry_type or "remote"
        written = writer.write_server(config_path, resolved, meta, fmt=fmt, replace=replace)
    finally:
        if bundle is not None:
            try:
                os.unlink(bundle)
            except OSError:
                pass
    log.info("installed %s %s as %r into %s", entry.name, entry.version, resolved.config_name, config_path)
    return InstallResult(resolved.config_name, config_path, written, resolved, request, list(resolved.post_install))


def _preview(callback: InputCallback) -> Optional[InputCallback]:
    """The callback that builds the consent: an InputSource's known answers (None when it never asks, so one
    resolution serves both), or, for a plain callable that may ask, nothing known at all."""
    if isinstance(callback, InputSource):
        return callback.preview if callback.ask is not None else None
    return Pending.of


def check_approval(approve: Optional[Approve], request: "ConsentRequest") -> None:
    """Ask ``approve`` about ``request`` (None: the caller passed ``yes=True``). Anything but True, or a hook that
    raises, is a :class:`~.errors.ConsentRefused` and nothing is installed. Blocks for as long as the hook."""
    if approve is None:
        return
    try:
        approved = approve(request)
    except Exception as exc:  # noqa: BLE001 - a failing hook is a refusal
        raise ConsentRefused("the approval hook failed (%s); nothing was installed" % exc) from exc
    if approved is not True:
        raise ConsentRefused("installation of %s was not approved; nothing was installed" % request.server)


def _consent(entry: RegistryEntry, resolved: ResolvedServer, registry_url: str, config_path: str,
             download_url: Optional[str]) -> "ConsentRequest":
    return ConsentRequest(
        server=entry.name,
        version=entry.version,
        config_name=resolved.config_name,
        config_path=config_path,
        registry_url=registry_url,
        kind=resolved.kind,
        command=tuple(resolved.command),
        env_names=tuple(sorted(resolved.env)),
        url=resolved.url,
        header_names=tuple(sorted(resolved.headers)),
        install_steps=tuple(tuple(step) for step in resolved.install_steps),
        download_url=download_url,
        sha256=resolved.sha256,
        status=entry.status,
        status_message=entry.status_message,
        post_install_instructions=tuple(resolved.post_install),
        env=tuple(sorted(resolved.env.items())),
        headers=tuple(sorted(resolved.headers.items())),
        asked_after=tuple(resolved.pending),
    )


# ---------------------------------------------------------------------------- updates


@dataclass(frozen=True)
class Outdated:
    """A server of a configuration file installed from a registry, and the registry's latest version."""

    config_name: str
    registry_name: str
    installed: str
    latest: Optional[str]
    registry_url: str
    status: str = "active"
    status_message: Optional[str] = None
    error: Optional[str] = None

    @property
    def outdated(self) -> bool:
        return self.latest is not None and self.latest != self.installed


def outdated(
    config: Union[str, Path, None] = None,
    *,
    registry: Union[str, RegistryClient, None] = None,
    include_current: bool = False,
) -> List[Outdated]:
    """The registry-installed servers of ``config`` whose registry has a newer version (every one with
    ``include_current``). A server whose registry cannot be asked is listed with ``error`` set."""
    from . import writer

    path = str(Path(config).expanduser()) if config is not None else _default_config_path()
    clients: Dict[str, RegistryClient] = {}
    out: List[Outdated] = []
    try:
        for config_name, meta in writer.installed_servers(path):
            url = registry.base_url if isinstance(registry, RegistryClient) else (
                registry or (meta.get("url") if isinstance(meta.get("url"), str) and meta.get("url") else None))
            try:
                if isinstance(registry, RegistryClient):
                    client = registry
                else:
                    key = url or ""
                    client = clients.get(key) or clients.setdefault(key, RegistryClient(url))
                latest = client.get(meta["name"], "latest", statuses=None, refresh=True)
            except RegistryError as exc:
                out.append(Outdated(config_name, meta["name"], meta["version"], None, url or "", error=exc.message))
                continue
            item = Outdated(config_name, meta["name"], meta["version"], latest.version, client.base_url,
                            latest.status, latest.status_message)
            if item.outdated or include_current or item.status != "active":
                out.append(item)
    finally:
        for c in clients.values():
            c.close()
    return out


def update(
    config: Union[str, Path, None] = None,
    names: Optional[Sequence[str]] = None,
    *,
    registry: Union[str, RegistryClient, None] = None,
    inputs: Union[InputCallback, Mapping[str, Any], None] = None,
    approve: Optional[Approve] = None,
    yes: bool = False,
    store: Any = None,
    data_dir: Optional[str] = None,
    which: Callable[[str], Optional[str]] = shutil.which,
    runner: Runner = _run,
) -> List[InstallResult]:
    """Update the outdated registry-installed servers of ``config`` (only ``names`` when given) to their latest
    version: each is resolved again, answering inputs from the previous installation first (secrets from the
    credential store), and needs consent again (the command changes)."""
    from . import writer

    if approve is None and not yes:
        raise ConsentRequired("updating runs programs on this computer: pass approve=... or yes=True")
    path = str(Path(config).expanduser()) if config is not None else _default_config_path()
    metas = dict(writer.installed_servers(path))
    results: List[InstallResult] = []
    for item in outdated(path, registry=registry):
        if not item.outdated or (names and item.config_name not in names):
            continue
        previous = metas.get(item.config_name, {})
        raw_inputs = previous.get("inputs")
        recorded: Dict[str, Any] = raw_inputs if isinstance(raw_inputs, dict) else {}
        answer = reinstall_inputs(inputs, recorded, item.config_name, store)

        target = previous.get("registryType") if isinstance(previous.get("registryType"), str) else None
        results.append(install(
            "%s@%s" % (item.registry_name, item.latest), config=path,
            registry=registry if registry is not None else item.registry_url, inputs=answer, approve=approve,
            yes=yes, name=item.config_name, replace=True, store=store, data_dir=data_dir, which=which,
            runner=runner, prefer="remote" if target == "remote" else "auto",
            registry_type=None if target in (None, "remote") else target,
        ))
    return results


def uninstall(config: Union[str, Path, None], name: str, *, store: Any = None) -> bool:
    """Remove the server ``name`` from the configuration file ``config`` and forget its stored secrets (its OAuth
    credentials, if any, stay). Returns whether the file had it. A virtualenv or unpacked bundle is left in the
    data directory (another configuration may use it)."""
    from ..auth.secrets import delete_secrets
    from . import writer

    path = str(Path(config).expanduser()) if config is not None else _default_config_path()
    removed = writer.remove_server(path, name)
    if removed:
        delete_secrets(name, store)
    return removed


#: The names ``mcpsync`` re-exports (``mcpsync.registry.install(...)``).
install_server = install
outdated_servers = outdated
update_servers = update
