"""The Skills extension (SEP-2640) against a real stdio skill server (tests/peers/skillserver.py).

The server logs every message it receives, so each test can assert exactly what was fetched: nothing on
connect or listing, SKILL.md only when a skill is loaded, a supporting file only when it is read, and
nothing at all for a file the entry does not list. Tampered content (digest, size, frontmatter) raises
SkillVerificationError and is never handed out.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import Any, Dict, Iterator, List, Optional

import pytest

import mcpsync
from mcpsync.skills import Skill, get_skill, list_skills, load_skill, read_skill_file

from tests.conftest import write_atomic

HERE = os.path.dirname(os.path.abspath(__file__))
SERVER = os.path.join(os.path.dirname(HERE), "peers", "skillserver.py")

SKILL_URI = "skill://pdf-processing/SKILL.md"
FORMS_URI = "skill://pdf-processing/references/FORMS.md"
SKILL_MD = """---
name: pdf-processing
description: Extract, fill, and assemble PDF documents
license: Apache-2.0
metadata:
  version: "2.1.0"
  stable: true
allowed-tools: Read Bash
---

# PDF processing

See [the forms guide](references/FORMS.md).
"""
FRONTMATTER = {
    "name": "pdf-processing",
    "description": "Extract, fill, and assemble PDF documents",
    "license": "Apache-2.0",
    "metadata": {"version": "2.1.0", "stable": True},
    "allowed-tools": "Read Bash",
}
FORMS_MD = "Filling forms: ünïcödé content.\n"


def digest(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def entry(skill_md: str = SKILL_MD, forms: str = FORMS_MD, **override: Any) -> Dict[str, Any]:
    e: Dict[str, Any] = {
        "uri": SKILL_URI,
        "frontmatter": dict(FRONTMATTER),
        "resources": [
            {"uri": SKILL_URI, "digest": digest(skill_md), "size": len(skill_md.encode("utf-8"))},
            {"uri": FORMS_URI, "digest": digest(forms), "size": len(forms.encode("utf-8"))},
        ],
    }
    e.update(override)
    return e


class SkillServer:
    def __init__(self, tmp_path: Any, **config: Any) -> None:
        self.log_path = str(tmp_path / "requests.jsonl")
        config.setdefault("skills", [entry()])
        config.setdefault("files", {SKILL_URI: SKILL_MD, FORMS_URI: FORMS_MD})
        config["log"] = self.log_path
        self.config_path = str(tmp_path / "skills.json")
        write_atomic(self.config_path, json.dumps(config))

    @property
    def command(self) -> List[str]:
        return [sys.executable, SERVER, self.config_path]

    def requests(self, method: Optional[str] = None) -> List[Dict[str, Any]]:
        if not os.path.exists(self.log_path):
            return []
        with open(self.log_path, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f if line.strip()]
        return [r for r in rows if method is None or r["method"] == method]

    def reads(self) -> List[str]:
        return [r["params"]["uri"] for r in self.requests("resources/read")]


def open_client(server: SkillServer, **options: Any) -> mcpsync.Client:
    options.setdefault("timeout", 20)
    return mcpsync.connect(server.command, **options)


@pytest.fixture
def server(tmp_path: Any) -> Iterator[SkillServer]:
    yield SkillServer(tmp_path)


# ------------------------------------------------------------------------------------------ listing


def test_listing_returns_typed_entries_and_fetches_nothing(server: SkillServer) -> None:
    with open_client(server) as client:
        skills = list_skills(client)
        assert len(skills) == 1
        skill = skills[0]
        assert isinstance(skill, mcpsync.skills.Skill)
        assert skill.uri == SKILL_URI and skill.name == "pdf-processing"
        assert skill.description == FRONTMATTER["description"]
        assert skill.frontmatter == FRONTMATTER
        assert skill.root == "skill://pdf-processing"
        assert not skill.dynamic
        assert skill.resources is not None
        assert [r.uri for r in skill.resources] == [SKILL_URI, FORMS_URI]
        assert all(isinstance(r, mcpsync.skills.SkillResource) for r in skill.resources)
    methods = [r["method"] for r in server.requests()]
    assert "skills/list" in methods
    # nothing of any skill was fetched: not on connect, not on listing
    assert server.reads() == []


def test_listing_follows_cursors(tmp_path: Any) -> None:
    skills = []
    files = {}
    for i in range(5):
        name = "skill-%d" % i
        uri = "skill://%s/SKILL.md" % name
        text = "---\nname: %s\ndescription: number %d\n---\nbody\n" % (name, i)
        files[uri] = text
        skills.append(
            {
                "uri": uri,
                "frontmatter": {"name": name, "description": "number %d" % i},
                "resources": [{"uri": uri, "digest": digest(text), "size": len(text)}],
            }
        )
    server = SkillServer(tmp_path, skills=skills, files=files, page_size=2)
    with open_client(server) as client:
        names = [s.name for s in list_skills(client)]
        assert names == ["skill-%d" % i for i in range(5)]
        loaded = load_skill(client, list_skills(client)[3])
        assert loaded.body == "body\n"
    assert len(server.requests("skills/list")) == 6
    assert server.reads() == ["skill://skill-3/SKILL.md"]


def test_invalid_entries_are_skipped_and_valid_ones_kept(tmp_path: Any) -> None:
    bad_entries: List[Any] = [
        "not an object",
        entry(resources=None),  # no resources at all
        entry(resources="everything"),  # neither an array nor "dynamic"
        entry(uri="skill://other-name/SKILL.md"),  # path does not end in the name
        entry(resources=[{"uri": SKILL_URI, "digest": "md5:abc", "size": 1}]),
        entry(resources=[{"uri": FORMS_URI, "digest": digest(FORMS_MD), "size": 3}]),  # SKILL.md not listed
        entry(resources=[{"uri": "skill://elsewhere/x.md", "digest": digest("x"), "size": 1}]),
        entry(frontmatter={"name": "pdf-processing"}),  # no description
    ]
    server = SkillServer(tmp_path, skills=bad_entries + [entry()])
    with open_client(server) as client:
        skills = list_skills(client)
        assert [s.uri for s in skills] == [SKILL_URI]
        assert load_skill(client, skills[0]).name == "pdf-processing"


def test_a_server_without_the_extension_is_refused_before_sending(tmp_path: Any) -> None:
    server = SkillServer(tmp_path, extension=False)
    with open_client(server) as client:
        with pytest.raises(mcpsync.CapabilityError) as err:
            list_skills(client)
        assert "io.modelcontextprotocol/skills" in str(err.value)
        with pytest.raises(mcpsync.CapabilityError):
            get_skill(client, SKILL_URI)
    assert server.requests("skills/list") == [] and server.requests("skills/get") == []


# ------------------------------------------------------------------------------------------ loading


def test_load_skill_fetches_skill_md_only_and_verifies_it(server: SkillServer) -> None:
    with open_client(server) as client:
        skill = list_skills(client)[0]
        assert server.reads() == []
        loaded = load_skill(client, skill)
        assert isinstance(loaded, mcpsync.skills.LoadedSkill)
        assert loaded.content == SKILL_MD
        assert loaded.frontmatter == FRONTMATTER
        assert loaded.body.startswith("\n# PDF processing")
        assert server.reads() == [SKILL_URI]  # the supporting file is not prefetched
        forms = read_skill_file(client, loaded, "references/FORMS.md")
        assert isinstance(forms, mcpsync.skills.SkillFile)
        assert forms.text == FORMS_MD and forms.data == FORMS_MD.encode("utf-8")
        assert forms.mime_type == "text/markdown"
        assert server.reads() == [SKILL_URI, FORMS_URI]
        # a full URI inside the skill works the same way
        assert read_skill_file(client, skill, FORMS_URI).text == FORMS_MD


def test_load_by_uri_gets_the_entry_first(server: SkillServer) -> None:
    with open_client(server) as client:
        loaded = load_skill(client, SKILL_URI)
        assert loaded.skill.frontmatter == FRONTMATTER
    assert [r["method"] for r in server.requests() if r["method"] in ("skills/get", "resources/read")] == [
        "skills/get",
        "resources/read",
    ]


def test_get_skill_unknown_uri_is_invalid_params(server: SkillServer) -> None:
    with open_client(server) as client:
        with pytest.raises(mcpsync.errors.InvalidParams):
            get_skill(client, "skill://nope/SKILL.md")
        assert get_skill(client, SKILL_URI).name == "pdf-processing"  # the connection is still fine


def test_modern_era(tmp_path: Any) -> None:
    server = SkillServer(tmp_path, modern=True)
    with open_client(server) as client:
        assert client.era == "modern"
        skill = list_skills(client)[0]
        assert load_skill(client, skill).content == SKILL_MD
        assert read_skill_file(client, skill, "references/FORMS.md").text == FORMS_MD


# ------------------------------------------------------------------------------------- verification


def _refused(server: SkillServer, reason: str, **load: Any) -> mcpsync.SkillVerificationError:
    with open_client(server) as client:
        skill = list_skills(client)[0]
        with pytest.raises(mcpsync.SkillVerificationError) as err:
            load_skill(client, skill, **load)
        assert err.value.reason == reason
        assert isinstance(err.value, mcpsync.MCPError)
        # the connection stays usable after a refusal
        assert list_skills(client)[0].uri == SKILL_URI
    return err.value


def test_wrong_digest_is_refused(tmp_path: Any) -> None:
    tampered = SKILL_MD.replace("See", "Sea")  # same length, other bytes
    server = SkillServer(tmp_path, files={SKILL_URI: tampered, FORMS_URI: FORMS_MD})
    err = _refused(server, "digest")
    assert err.uri == SKILL_URI and err.server and err.method == "resources/read"
    assert server.reads() == [SKILL_URI]  # and nothing more was fetched


def test_wrong_size_is_refused(tmp_path: Any) -> None:
    server = SkillServer(tmp_path, files={SKILL_URI: SKILL_MD + "padding\n", FORMS_URI: FORMS_MD})
    err = _refused(server, "size")
    assert "bytes" in str(err)


def test_frontmatter_differing_from_the_entry_is_refused(tmp_path: Any) -> None:
    # the digest and size match the served file, but its frontmatter says something else
    evil = SKILL_MD.replace(
        "description: Extract, fill, and assemble PDF documents", "description: Exfiltrate credentials"
    )
    server = SkillServer(tmp_path, skills=[entry(skill_md=evil)], files={SKILL_URI: evil, FORMS_URI: FORMS_MD})
    err = _refused(server, "frontmatter")
    assert "description" in str(err)


def test_frontmatter_types_must_match_too(tmp_path: Any) -> None:
    # YAML says the string "2.1.0" and the boolean true; an entry with other types is a discrepancy
    fm = dict(FRONTMATTER, metadata={"version": "2.1.0", "stable": "true"})
    server = SkillServer(tmp_path, skills=[entry(frontmatter=fm)])
    _refused(server, "frontmatter")


def test_missing_or_unreadable_frontmatter_is_refused(tmp_path: Any) -> None:
    for text in ("# no frontmatter at all\n", "---\nname: [unclosed\n---\n", "---\nname: &anchor x\n---\n"):
        sub = tmp_path / digest(text)[7:15]
        sub.mkdir()
        server = SkillServer(sub, skills=[entry(skill_md=text)], files={SKILL_URI: text, FORMS_URI: FORMS_MD})
        _refused(server, "frontmatter")


def test_tampered_supporting_file_is_refused(tmp_path: Any) -> None:
    server = SkillServer(tmp_path, files={SKILL_URI: SKILL_MD, FORMS_URI: FORMS_MD.upper()})
    with open_client(server) as client:
        loaded = load_skill(client, list_skills(client)[0])
        with pytest.raises(mcpsync.SkillVerificationError) as err:
            read_skill_file(client, loaded, "references/FORMS.md")
        assert err.value.reason == "digest" and err.value.uri == FORMS_URI


def test_unlisted_files_are_refused_without_a_request(server: SkillServer) -> None:
    with open_client(server) as client:
        skill = list_skills(client)[0]
        for path in ("references/OTHER.md", "../other-skill/SKILL.md", "skill://other/SKILL.md", "/", ""):
            with pytest.raises(mcpsync.SkillVerificationError) as err:
                read_skill_file(client, skill, path)
            assert err.value.reason == "unlisted"
    assert server.reads() == []


def test_dynamic_skills_need_allow_dynamic(tmp_path: Any) -> None:
    server = SkillServer(tmp_path, skills=[entry(resources="dynamic")])
    with open_client(server) as client:
        skill = list_skills(client)[0]
        assert skill.dynamic and skill.resources is None
        with pytest.raises(mcpsync.SkillVerificationError) as err:
            load_skill(client, skill)
        assert err.value.reason == "dynamic"
        with pytest.raises(mcpsync.SkillVerificationError):
            read_skill_file(client, skill, "references/FORMS.md")
        assert server.reads() == []
        loaded = load_skill(client, skill, allow_dynamic=True)  # the frontmatter is still compared
        assert loaded.frontmatter == FRONTMATTER
        assert read_skill_file(client, skill, "references/FORMS.md", allow_dynamic=True).text == FORMS_MD


def test_dynamic_skill_frontmatter_is_still_checked(tmp_path: Any) -> None:
    server = SkillServer(tmp_path, skills=[entry(resources="dynamic", frontmatter=dict(FRONTMATTER, license="MIT"))])
    _refused(server, "frontmatter", allow_dynamic=True)


def test_skill_from_dict_accepts_nested_paths() -> None:
    text = "---\nname: refunds\ndescription: d\n---\n"
    uri = "skill://acme/billing/refunds/SKILL.md"
    skill = Skill.from_dict(
        {
            "uri": uri,
            "frontmatter": {"name": "refunds", "description": "d"},
            "resources": [{"uri": uri, "digest": digest(text), "size": len(text)}],
        }
    )
    assert skill.root == "skill://acme/billing/refunds"
    assert skill.resolve("examples/email.md") == "skill://acme/billing/refunds/examples/email.md"
