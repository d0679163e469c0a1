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
from typing import Any, Callable, Dict, Mapping, Optional, Union

from ..registry.errors import ConsentRefused, ConsentRequired
from ..registry.inputs import InputCallback, inputs_from
from ..registry.installer import ConsentRequest, InstallResult
from .connection import _reveal, check_headers, check_remote_url, choose_remote, resolve_remote
from .connector import CardSource, fetcher_for, load_card
from .fetch import CardFetcher

__all__ = ["install_card"]

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
    from ..errors import ConfigError
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
            existing = writer._servers(doc, fmt or writer.detect_file_format(config_path, doc), create=True)
            if resolved.config_name in existing:
                raise ConfigError("%s already has a server named %r (choose another name, or replace=True)"
                                  % (config_path, resolved.config_name))
        request = ConsentRequest(
            server=card.name, version=card.version, config_name=resolved.config_name, config_path=config_path,
            registry_url=source_url or "(inline card)", kind="remote", url=resolved.url,
            header_names=tuple(sorted(resolved.headers)),
        )
        if approve is not None:
            try:
                approved = approve(request)
            except Exception as exc:  # noqa: BLE001 - a failing hook is a refusal
                raise ConsentRefused("the approval hook failed (%s); nothing was installed" % exc) from exc
            if approved is not True:
                raise ConsentRefused("installation of %s was not approved; nothing was installed" % card.name)
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
