"""Agent skills served over MCP: :class:`Skill` (what a server offers), :class:`LoadedSkill` (a verified
skill with its files), :class:`SkillFile` and :class:`SkillResource`. Verification failures raise
:class:`mcpsync.SkillVerificationError`. See docs/guides/skills.md. Names load on first use.
"""

from types import MappingProxyType as _MappingProxyType
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any
from typing import List as _List

from .._lazy import exports as _exports

if _TYPE_CHECKING:  # what the lazy names are, for type checkers (nothing is imported at run time)
    from ..client.skills import LoadedSkill, Skill, SkillFile, SkillResource

__all__ = [
    "LoadedSkill",
    "Skill",
    "SkillFile",
    "SkillResource",
]

_LAZY = _MappingProxyType(
    {
        "LoadedSkill": "..client.skills",
        "Skill": "..client.skills",
        "SkillFile": "..client.skills",
        "SkillResource": "..client.skills",
    }
)

_load, _names = _exports(__name__, _LAZY, globals())


def __getattr__(name: str) -> _Any:
    return _load(name)


def __dir__() -> _List[str]:
    return _names()
