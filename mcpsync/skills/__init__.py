"""Agent skills served over MCP (the ``io.modelcontextprotocol/skills`` extension), composed on a client's public
API: :func:`list_skills`, :func:`get_skill`, :func:`load_skill` and :func:`read_skill_file` take the
:class:`mcpsync.Client` to ask (``mcpsync.skills.list_skills(client)``); they return :class:`Skill` (what a server
offers), :class:`LoadedSkill` (a verified ``SKILL.md``), :class:`SkillFile` and :class:`SkillResource`.
Verification failures raise :class:`mcpsync.SkillVerificationError`. Each function blocks its caller for its
requests and is thread-safe. See docs/guides/skills.md. Names load on first use (PyYAML, which reads the
frontmatter, on the first :func:`load_skill`).
"""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from .._lazy import exports as _exports
from .._lazy import table as _table

if _TYPE_CHECKING:  # what the lazy names are, for type checkers (nothing is imported at run time)
    from .skills import (
        LoadedSkill,
        Skill,
        SkillFile,
        SkillResource,
        get_skill,
        list_skills,
        load_skill,
        read_skill_file,
    )

__all__ = [
    "LoadedSkill",
    "Skill",
    "SkillFile",
    "SkillResource",
    "get_skill",
    "list_skills",
    "load_skill",
    "read_skill_file",
]

_LAZY = _table({".skills": __all__})

__getattr__, __dir__ = _exports(__name__, _LAZY, globals())
