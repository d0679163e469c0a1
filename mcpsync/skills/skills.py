"""The Skills extension (SEP-2640, ``io.modelcontextprotocol/skills``): list a server's skills, load one
on demand, read its files, and verify everything fetched before handing it out.

Each function takes the :class:`mcpsync.Client` to ask (built on its public :meth:`~mcpsync.Client.request`;
the client knows nothing of skills). Nothing is fetched ahead of need: :func:`list_skills` sends only
``skills/list`` (the entries carry each skill's frontmatter, so a registry needs nothing more);
:func:`load_skill` reads the skill's ``SKILL.md`` when asked; :func:`read_skill_file` reads one supporting file
when asked.

Blocking and threads: each function blocks its caller for the requests it sends, each up to ``timeout`` (the
client's default when not given); they keep no state of their own, so any number of threads may call them
on one client at once (the client is thread-safe). :class:`Skill`, :class:`LoadedSkill`, :class:`SkillFile`
and :class:`SkillResource` are immutable.

Every fetched file is checked against the skill's entry before its content is returned: its byte
length against the entry's ``size``, its SHA-256 against the entry's ``digest``, and, for ``SKILL.md``,
its YAML frontmatter field by field against the entry's ``frontmatter``. A file the entry does not
list is refused without a request. Any failure raises :class:`~mcpsync.SkillVerificationError` and the
content is dropped. Skills whose entry says ``"resources": "dynamic"`` publish no digests; they are
refused unless ``allow_dynamic=True`` (then only the frontmatter is checked).

A digest match proves the listing and the content agree, not that either is trustworthy: skill content
is untrusted input from the server.
"""

from __future__ import annotations

import hashlib
import logging
import math
import posixpath
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Union

from ..errors import CapabilityError, SkillVerificationError
from ..session import DEFAULT, Timeout

if TYPE_CHECKING:
    from ..client.client import Client

__all__ = [
    "EXTENSION",
    "LoadedSkill",
    "Skill",
    "SkillFile",
    "SkillResource",
    "get_skill",
    "list_skills",
    "load_skill",
    "read_skill_file",
]

logger = logging.getLogger(__name__)

#: the extension identifier servers declare under ``capabilities.extensions``
EXTENSION = "io.modelcontextprotocol/skills"
SKILL_FILE = "SKILL.md"
_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
JSON = Dict[str, Any]


@dataclass(frozen=True)
class SkillResource:
    """One file of a skill as its entry lists it: ``uri``, ``digest`` (``sha256:<hex>``) and ``size`` (bytes)."""

    uri: str
    digest: str
    size: int


@dataclass
class Skill:
    """A skill entry from ``skills/list`` or ``skills/get`` (nothing of the skill has been fetched).

    Attributes:
        uri: the URI of the skill's ``SKILL.md``.
        name, description: from the entry's frontmatter.
        frontmatter: the entry's frontmatter, as the server rendered it.
        resources: every file of the skill (``SKILL.md`` included); None when the server marks the
            skill ``"dynamic"`` (no digests published).
        raw: the entry as received.
    """

    uri: str
    name: str
    description: str
    frontmatter: JSON
    resources: Optional[List[SkillResource]]
    raw: JSON = field(default_factory=dict, repr=False)

    @property
    def dynamic(self) -> bool:
        """True when the entry publishes no digests (``"resources": "dynamic"``)."""
        return self.resources is None

    @property
    def root(self) -> str:
        """The skill's directory URI (``uri`` without ``/SKILL.md``)."""
        return self.uri[: -len(SKILL_FILE) - 1]

    def resource(self, uri: str) -> Optional[SkillResource]:
        """The entry's record for ``uri``, or None when the entry does not list it."""
        for r in self.resources or ():
            if r.uri == uri:
                return r
        return None

    def resolve(self, path: str) -> str:
        """The URI of ``path``: a URI inside the skill as is, a relative path against the skill's root."""
        if path.startswith(self.root + "/"):
            return path
        if "://" in path:
            raise SkillVerificationError("%s is not a file of skill %s" % (path, self.uri), uri=path, reason="unlisted")
        norm = posixpath.normpath("/" + path.lstrip("/"))
        if norm in ("/", "/.") or ".." in norm.split("/"):
            raise SkillVerificationError(
                "%r is not a file path inside skill %s" % (path, self.uri), uri=path, reason="unlisted"
            )
        return self.root + norm

    @classmethod
    def from_dict(cls, d: Any) -> "Skill":
        """Validate and convert a skill entry; raises SkillVerificationError(reason="entry") when invalid."""

        def bad(why: str) -> SkillVerificationError:
            uri = str(d.get("uri")) if isinstance(d, dict) and isinstance(d.get("uri"), str) else ""
            return SkillVerificationError("invalid skill entry %s: %s" % (uri or "?", why), uri=uri, reason="entry")

        if not isinstance(d, dict):
            raise bad("not an object")
        uri = d.get("uri")
        if not isinstance(uri, str) or not uri.endswith("/" + SKILL_FILE) or "://" not in uri:
            raise bad("'uri' must be the URI of the skill's SKILL.md")
        fm = d.get("frontmatter")
        if not isinstance(fm, dict):
            raise bad("'frontmatter' must be an object")
        name, description = fm.get("name"), fm.get("description")
        if not isinstance(name, str) or not name or not isinstance(description, str):
            raise bad("the frontmatter needs string 'name' and 'description'")
        if uri[: -len(SKILL_FILE) - 1].rsplit("/", 1)[-1] != name:
            raise bad("the skill path must end in the skill's name %r" % name)
        raw_resources = d.get("resources")
        resources: Optional[List[SkillResource]]
        if raw_resources == "dynamic":
            resources = None
        elif isinstance(raw_resources, list):
            resources = []
            seen = set()
            root = uri[: -len(SKILL_FILE)]
            for item in raw_resources:
                if not isinstance(item, dict):
                    raise bad("a resources item is not an object")
                r_uri, digest, size = item.get("uri"), item.get("digest"), item.get("size")
                if not isinstance(r_uri, str) or not (r_uri == uri or r_uri.startswith(root)):
                    raise bad("resource %r is not inside the skill" % (r_uri,))
                if r_uri in seen:
                    raise bad("resource %s is listed twice" % r_uri)
                if not isinstance(digest, str) or not _DIGEST.match(digest):
                    raise bad("resource %s has no valid 'sha256:<64 hex>' digest" % r_uri)
                if not isinstance(size, int) or isinstance(size, bool) or size < 0:
                    raise bad("resource %s has no valid size" % r_uri)
                seen.add(r_uri)
                resources.append(SkillResource(r_uri, digest, size))
            if uri not in seen:
                raise bad("'resources' does not list the skill's SKILL.md")
        else:
            raise bad("'resources' must be an array or \"dynamic\"")
        return cls(uri=uri, name=name, description=description, frontmatter=fm, resources=resources, raw=d)


@dataclass
class SkillFile:
    """A verified file of a skill: ``data`` (bytes), ``text`` (UTF-8), ``mime_type``."""

    uri: str
    data: bytes
    mime_type: Optional[str] = None

    @property
    def text(self) -> str:
        return self.data.decode("utf-8")


@dataclass
class LoadedSkill:
    """A skill whose ``SKILL.md`` was fetched and verified.

    Attributes:
        skill: the entry it was verified against (use it for :meth:`Client.read_skill_file`).
        content: the whole ``SKILL.md`` text; ``frontmatter``: its parsed YAML header; ``body``: the rest.
    """

    skill: Skill
    content: str
    frontmatter: JSON
    body: str

    @property
    def uri(self) -> str:
        return self.skill.uri

    @property
    def name(self) -> str:
        return self.skill.name


# ---------------------------------------------------------------------------------------------- helpers


def _require(client: "Client", method: str) -> None:
    client.session  # noqa: B018 - not open: ClientClosed (a lazy client opens here), never a CapabilityError
    ext = client.server_capabilities.get("extensions")
    if not (isinstance(ext, dict) and isinstance(ext.get(EXTENSION), dict)):
        raise CapabilityError(
            "server %r did not declare the %s extension needed by %s" % (client.name, EXTENSION, method),
            server=client.name,
            method=method,
        )


def _same(a: Any, b: Any) -> bool:
    """JSON equality that keeps booleans, numbers and strings apart (True != 1, "1" != 1)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
            return True
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and bool(a == b)


def _fetch(client: "Client", uri: str, timeout: Timeout) -> SkillFile:
    result = client.request("resources/read", {"uri": uri}, timeout=timeout)
    contents = result.get("contents") if isinstance(result, dict) else None
    items = [c for c in contents or [] if isinstance(c, dict)]
    match = [c for c in items if c.get("uri") == uri] or items
    if len(match) != 1:
        raise SkillVerificationError(
            "resources/read of %s returned %d contents, expected one" % (uri, len(match)),
            uri=uri,
            reason="size",
            server=client.name,
            method="resources/read",
        )
    item = match[0]
    if isinstance(item.get("text"), str):
        data = item["text"].encode("utf-8")
    elif isinstance(item.get("blob"), str):
        import base64
        import binascii

        try:
            data = base64.b64decode(item["blob"], validate=True)
        except (binascii.Error, ValueError):
            raise SkillVerificationError(
                "resources/read of %s returned a blob that is not base64" % uri,
                uri=uri,
                reason="digest",
                server=client.name,
            ) from None
    else:
        data = b""
    mime = item.get("mimeType")
    return SkillFile(uri=uri, data=data, mime_type=mime if isinstance(mime, str) else None)


def _verify(client: "Client", skill: Skill, file: SkillFile) -> None:
    entry = skill.resource(file.uri)
    if entry is None:  # pragma: no cover - callers check before fetching
        raise SkillVerificationError(
            "%s is not listed by skill %s" % (file.uri, skill.uri), uri=file.uri, reason="unlisted"
        )
    ctx = {"server": client.name, "method": "resources/read"}
    if len(file.data) != entry.size:
        raise SkillVerificationError(
            "%s is %d bytes, its skill entry says %d: content refused" % (file.uri, len(file.data), entry.size),
            uri=file.uri,
            reason="size",
            **ctx,
        )
    digest = "sha256:" + hashlib.sha256(file.data).hexdigest()
    if digest != entry.digest:
        raise SkillVerificationError(
            "%s does not match its skill entry's digest: content refused" % file.uri,
            uri=file.uri,
            reason="digest",
            **ctx,
        )


def _entry_for(client: "Client", skill: Union[Skill, str], timeout: Timeout) -> Skill:
    return skill if isinstance(skill, Skill) else get_skill(client, skill, timeout=timeout)


# ---------------------------------------------------------------------------------------------- the API


def list_skills(client: "Client", *, timeout: Timeout = DEFAULT) -> List[Skill]:
    """The server's skill entries (``skills/list``, following each cursor, at most the client's ``max_pages``).
    Fetches no skill file; an invalid entry is skipped with a warning. Blocks up to ``timeout`` per page.

    Raises CapabilityError when the server did not declare ``io.modelcontextprotocol/skills``.
    """
    _require(client, "skills/list")
    max_pages = client.max_pages
    skills: List[Skill] = []
    cursor: Optional[str] = None
    seen_cursors = set()
    for _ in range(max_pages):
        params: JSON = {} if cursor is None else {"cursor": cursor}
        result = client.request("skills/list", params, timeout=timeout)
        entries = result.get("skills") if isinstance(result, dict) else None
        for entry in entries if isinstance(entries, list) else []:
            try:
                skills.append(Skill.from_dict(entry))
            except SkillVerificationError as exc:
                logger.warning("server %s: skipping %s", client.name, exc.message)
        nxt = result.get("nextCursor") if isinstance(result, dict) else None
        if not isinstance(nxt, str) or nxt in seen_cursors:
            break
        seen_cursors.add(nxt)
        cursor = nxt
    return skills


def get_skill(client: "Client", uri: str, *, timeout: Timeout = DEFAULT) -> Skill:
    """The current entry of the skill whose ``SKILL.md`` is at ``uri`` (``skills/get``). Blocks up to
    ``timeout``. Raises CapabilityError (no skills extension) or SkillVerificationError (an invalid entry)."""
    _require(client, "skills/get")
    result = client.request("skills/get", {"uri": uri}, timeout=timeout)
    entry = result.get("skill") if isinstance(result, dict) else None
    try:
        skill = Skill.from_dict(entry)
    except SkillVerificationError as exc:
        raise exc.with_context(server=client.name, method="skills/get")
    if skill.uri != uri:
        raise SkillVerificationError(
            "skills/get for %s answered with skill %s" % (uri, skill.uri),
            uri=uri,
            reason="entry",
            server=client.name,
            method="skills/get",
        )
    return skill


def load_skill(
    client: "Client", skill: Union[Skill, str], *, allow_dynamic: bool = False, timeout: Timeout = DEFAULT
) -> LoadedSkill:
    """Fetch a skill's ``SKILL.md`` now and verify it (size, digest, frontmatter) against its entry.

    ``skill`` is an entry from :func:`list_skills` / :func:`get_skill`, or a ``SKILL.md`` URI (then ``skills/get``
    fetches the entry first). Raises :class:`~mcpsync.SkillVerificationError` on any mismatch, and for a skill
    with ``"resources": "dynamic"`` unless ``allow_dynamic=True``. Blocks up to ``timeout`` per request.
    """
    from .frontmatter import FrontmatterError, parse_yaml, split_frontmatter

    entry = _entry_for(client, skill, timeout)
    if entry.dynamic and not allow_dynamic:
        raise SkillVerificationError(
            "skill %s publishes no digests (resources: dynamic); pass allow_dynamic=True to load it" % entry.uri,
            uri=entry.uri,
            reason="dynamic",
            server=client.name,
        )
    file = _fetch(client, entry.uri, timeout)
    if not entry.dynamic:
        _verify(client, entry, file)
    try:
        text = file.text
        header, body = split_frontmatter(text)
        parsed = parse_yaml(header)
    except (UnicodeDecodeError, FrontmatterError) as exc:
        raise SkillVerificationError(
            "%s has no readable frontmatter (%s): skill refused" % (entry.uri, exc),
            uri=entry.uri,
            reason="frontmatter",
            server=client.name,
            method="resources/read",
        ) from None
    if not isinstance(parsed, dict) or not _same(parsed, entry.frontmatter):
        fields = sorted(
            k
            for k in set(parsed if isinstance(parsed, dict) else {}) | set(entry.frontmatter)
            if not isinstance(parsed, dict)
            or k not in parsed
            or k not in entry.frontmatter
            or not _same(parsed[k], entry.frontmatter[k])
        )
        raise SkillVerificationError(
            "%s frontmatter differs from its skill entry (%s): skill refused"
            % (entry.uri, ", ".join(fields) or "not a mapping"),
            uri=entry.uri,
            reason="frontmatter",
            server=client.name,
            method="resources/read",
        )
    return LoadedSkill(skill=entry, content=text, frontmatter=parsed, body=body)


def read_skill_file(
    client: "Client",
    skill: Union[Skill, LoadedSkill],
    path: str,
    *,
    allow_dynamic: bool = False,
    timeout: Timeout = DEFAULT,
) -> SkillFile:
    """Fetch one file of a skill now (a URI inside it, or a path relative to its root) and verify it.

    A file the skill's entry does not list raises :class:`~mcpsync.SkillVerificationError` without a request
    (refresh the entry with :func:`get_skill`). Blocks up to ``timeout``.
    """
    entry = skill.skill if isinstance(skill, LoadedSkill) else skill
    uri = entry.resolve(path)
    if entry.dynamic:
        if not allow_dynamic:
            raise SkillVerificationError(
                "skill %s publishes no digests (resources: dynamic); pass allow_dynamic=True" % entry.uri,
                uri=uri,
                reason="dynamic",
                server=client.name,
            )
        return _fetch(client, uri, timeout)
    if entry.resource(uri) is None:
        raise SkillVerificationError(
            "%s is not listed by skill %s (refresh the entry with get_skill)" % (uri, entry.uri),
            uri=uri,
            reason="unlisted",
            server=client.name,
        )
    file = _fetch(client, uri, timeout)
    _verify(client, entry, file)
    return file
