"""Agent skills served over MCP: :class:`Skill` (what a server offers), :class:`LoadedSkill` (a verified
skill with its files), :class:`SkillFile` and :class:`SkillResource`. Verification failures raise
:class:`mcpsync.SkillVerificationError`. See docs/guides/skills.md. Names load on first use.
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._lazy import exports as _exports
from .._lazy import table as _table

if _TYPE_CHECKING:  # what the lazy names are, for type checkers (nothing is imported at run time)
    from .skills import LoadedSkill, Skill, SkillFile, SkillResource

__all__ = [
    "LoadedSkill",
    "Skill",
    "SkillFile",
    "SkillResource",
]

_LAZY = _table({".skills": __all__})

__getattr__, __dir__ = _exports(__name__, _LAZY, globals())
