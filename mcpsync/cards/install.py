"""Install a Server Card's remote into a configuration file, with the consent and secret handling of registry
installs (:func:`install_card`).

In this order: without an approval hook and without ``yes`` nothing happens at all
(:class:`~mcpsync.registry.errors.ConsentRequired`, before any request); the card is fetched and checked; its
remote is resolved by the registry resolver (every required or secret header and URL variable is asked for
through ``inputs``; secrets become ``${secret:NAME/INPUT}`` references); the finished URL passes the card
policy; the approval hook gets a :class:`~mcpsync.registry.installer.ConsentRequest` (the URL, the header
names, never values) and anything but True stops here (:class:`~mcpsync.registry.errors.ConsentRefused`);
then secrets go to the credential store and the entry is written (atomically) with ``"registry": {"card": URL,
"name", "version", "inputs"}``. Nothing runs: a remote has no install step. Blocks on the network and disk.
"""

from __future__ import annotations

from pathlib import Path
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Tuple, Union

from ..errors import ConfigError, MCPError
from ..registry.errors import ConsentRequired
from ..registry.inputs import InputCallback, inputs_from, reinstall_inputs
from ..registry.installer import ConsentRequest, InstallResult, check_approval
from .connection import _reveal, check_headers, check_remote_url, choose_remote, resolve_remote
from .connector import CardSource, fetcher_for, load_card
from .fetch import CardFetcher

__all__ = ["OutdatedCard", "install_card", "installed_cards", "outdated_cards", "update_cards"]

Approve = Callable[[ConsentRequest], bool]


def install_card(
    source: CardSource,
    *,
    config: Union[str, Path, None] = None,
    remote: Union[None, int, str] = None,
    inputs: Union[InputCallback, Mapping[str, Any], None] = None,
    approve: Optional[Approve] = None,
    yes: bool = False,
    name: Optional[str] = None,
    replace: bool = False,
    fmt: Optional[str] = None,
    store: Any = None,
    fetcher: Optional[CardFetcher] = None,
    **fetch_options: Any,
) -> InstallResult:
    """Install the card ``source`` (a URL, a :class:`~.model.ServerCard` or a card document) into ``config``
    (default: the configuration mcpsync finds, else ``~/.config/mcpsync/config.json``) as ``name`` (default:
    the last part of the card's name). ``approve`` receives the ConsentRequest and must return True; without it
    ``yes=True`` is required. ``store`` is the credential store for secrets (default
    :func:`mcpsync.auth.open_store`). ``fetch_options`` are the fetch settings (``allow_local``,
    ``allow_other_domains``, ``cache``, ``pool``, ``verify``...). See the module docstring for the order."""
    from ..registry import writer
    from ..registry.installer import _default_config_path

    if approve is None and not yes:
        raise ConsentRequired("installing a server card writes your configuration: pass an approval hook "
                              "(approve=...) or yes=True (CLI: answer the prompt, or --yes); nothing was installed")
    callback: InputCallback = inputs if callable(inputs) else inputs_from(inputs or {})
    own = fetcher is None
    fetcher = fetcher or fetcher_for(fetch_options)
    try:
        card = load_card(source, fetcher)
        source_url = source if isinstance(source, str) else card.source_url
        index, chosen = choose_remote(card, remote)
        config_path = str(Path(config).expanduser()) if config is not None else _default_config_path()
        resolved = resolve_remote(card, index, callback, name)
        url = _reveal(resolved.url or "", resolved.secrets)
        check_headers({k: _reveal(v, resolved.secrets) for k, v in resolved.headers.items()},
                      source_url or "<inline>")
        check_remote_url(fetcher.policy, url, card.source_url, resolved.secrets)
        doc = writer.read_document(config_path)  # fails early on a file that cannot be rewritten
        if doc and not replace:
            writer.refuse_taken_name(config_path, doc, fmt, resolved.config_name,
                                     "choose another name, or replace=True")
        request = ConsentRequest(
            server=card.name, version=card.version, config_name=resolved.config_name, config_path=config_path,
            registry_url=source_url or "(inline card)", kind="remote", url=resolved.url,
            header_names=tuple(sorted(resolved.headers)),
        )
        check_approval(approve, request)
        # ---- approved
        if resolved.secrets:
            from ..auth.secrets import store_secrets

            store_secrets(resolved.secrets, store)
        meta: Dict[str, Any] = {"card": source_url or "", "cardName": card.name, "cardVersion": card.version}
        if resolved.answers:
            meta["inputs"] = dict(resolved.answers)
        written = writer.write_server(config_path, resolved, meta, fmt=fmt, replace=replace)
        return InstallResult(resolved.config_name, config_path, written, resolved, request, [])
    finally:
        if own:
            fetcher.close()


# ---------------------------------------------------------------------------- updates


@dataclass(frozen=True)
class OutdatedCard:
    """A server of a configuration file installed from a Server Card, and the card's current version."""

    config_name: str
    card_url: str
    card_name: str
    installed: str
    latest: Optional[str]
    error: Optional[str] = None

    @property
    def outdated(self) -> bool:
        return self.latest is not None and self.latest != self.installed


def installed_cards(config: Union[str, Path, None] = None) -> List[Tuple[str, Dict[str, Any]]]:
    """``(config name, card metadata)`` of every server of the file that was installed from a Server Card."""
    from ..registry import writer
    from ..registry.installer import _default_config_path

    path = Path(config).expanduser() if config is not None else Path(_default_config_path())
    data = writer.read_document(path)
    if not data:
        return []
    fmt = writer.detect_file_format(path, data)
    try:
        servers = writer._servers(data, fmt, create=False)
    except ConfigError:
        return []
    if fmt == "opencode":
        side = writer.read_document(writer._sidecar(path)) or {}
        metas = {k: v for k, v in side.items() if k in servers}
    else:
        metas = {k: v.get(writer.META_KEY) for k, v in servers.items() if isinstance(v, dict)}
    return [(name, meta) for name, meta in metas.items()
            if isinstance(meta, dict) and isinstance(meta.get("card"), str) and meta.get("card")
            and isinstance(meta.get("cardVersion"), str)]


def outdated_cards(
    config: Union[str, Path, None] = None,
    *,
    include_current: bool = False,
    fetcher: Optional[CardFetcher] = None,
    **fetch_options: Any,
) -> List[OutdatedCard]:
    """The card-installed servers of ``config`` whose card now has another version (every one with
    ``include_current``). A card that cannot be fetched or is refused is listed with ``error`` set."""
    own = fetcher is None
    fetcher = fetcher or fetcher_for(fetch_options)
    out: List[OutdatedCard] = []
    try:
        for name, meta in installed_cards(config):
            try:
                card = fetcher.fetch_card(meta["card"])
            except MCPError as exc:
                out.append(OutdatedCard(name, meta["card"], str(meta.get("cardName") or ""), meta["cardVersion"],
                                        None, exc.message))
                continue
            item = OutdatedCard(name, meta["card"], card.name, meta["cardVersion"], card.version)
            if item.outdated or include_current:
                out.append(item)
    finally:
        if own:
            fetcher.close()
    return out


def update_cards(
    config: Union[str, Path, None] = None,
    names: Optional[Sequence[str]] = None,
    *,
    inputs: Union[InputCallback, Mapping[str, Any], None] = None,
    approve: Optional[Approve] = None,
    yes: bool = False,
    store: Any = None,
    **fetch_options: Any,
) -> List[InstallResult]:
    """Install again, from its card, every card-installed server of ``config`` whose card changed version (only
    ``names`` when given). Inputs are answered from ``inputs``, then from the previous installation (secrets
    from the credential store), then ``inputs``' callback; each needs consent again (the URL may change)."""
    from ..registry.installer import _default_config_path

    if approve is None and not yes:
        raise ConsentRequired("updating rewrites your configuration: pass approve=... or yes=True")
    path = str(Path(config).expanduser()) if config is not None else _default_config_path()
    metas = dict(installed_cards(path))
    results: List[InstallResult] = []
    for item in outdated_cards(path, **fetch_options):
        if not item.outdated or (names and item.config_name not in names):
            continue
        raw = metas.get(item.config_name, {}).get("inputs")
        recorded: Dict[str, Any] = raw if isinstance(raw, dict) else {}
        answer = reinstall_inputs(inputs, recorded, item.config_name, store)
        results.append(install_card(item.card_url, config=path, name=item.config_name, replace=True, inputs=answer,
                                    approve=approve, yes=yes, store=store, **fetch_options))
    return results
