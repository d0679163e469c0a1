"""Scope selection for authorization requests (MCP "scope selection strategy", SEP-835/SEP-2350).

Pure functions, thread-safe, no I/O.
"""

from __future__ import annotations

from typing import Any, Dict, Iterable, List, Optional

__all__ = ["select_scopes", "split_scope", "union"]


def split_scope(scope: Optional[str]) -> List[str]:
    """The scopes of a space-separated ``scope`` string (empty for None)."""
    return [s for s in (scope or "").split() if s]


def union(*groups: Iterable[str]) -> List[str]:
    """The scopes of every group, first occurrence order, no duplicates."""
    out: List[str] = []
    for group in groups:
        for item in group:
            if item not in out:
                out.append(item)
    return out


def select_scopes(
    cfg: Any, prm: Any, meta: Any, challenge: Optional[Dict[str, str]], extra: Iterable[str] = ()
) -> List[str]:
    """The scopes to request: ``extra`` (previously granted, for step-up) plus the challenge's
    ``scope``, else the protected resource's ``scopes_supported``, plus the configured scopes;
    ``offline_access`` is added for browser logins when the authorization server lists it."""
    if challenge and split_scope(challenge.get("scope")):
        base = split_scope(challenge.get("scope"))
    elif prm is not None and prm.scopes_supported:
        base = list(prm.scopes_supported)
    else:
        base = []
    scopes = union(extra, base, split_scope(cfg.scope))
    # offline_access asks for a refresh token: only for browser logins, only when the server lists it.
    if cfg.interactive and scopes and "offline_access" in meta.scopes_supported and "offline_access" not in scopes:
        scopes.append("offline_access")
    return scopes
