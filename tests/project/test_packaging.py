"""Packaging promises: the [all] extra covers every optional feature, the dependency floors are plain `>=` floors
(.ci/lowest installs exactly them), and the version, the changelog and the tag policy agree."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Dict, List

import mcpsync

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def _list(name: str) -> List[str]:
    block = re.search(r"^%s\s*=\s*\[(.*?)\]" % re.escape(name), PYPROJECT, re.S | re.M)
    assert block, name
    return re.findall(r"""["']([^"']+)["']""", block.group(1))


def _extras() -> Dict[str, List[str]]:
    section = PYPROJECT.split("[project.optional-dependencies]", 1)[1].split("\n[", 1)[0]
    return {m.group(1): _list(m.group(1)) for m in re.finditer(r"^([a-z0-9_-]+)\s*=\s*\[", section, re.M)}


def test_the_all_extra_is_every_optional_feature() -> None:
    extras = _extras()
    frameworks = (
        "langchain", "pydantic-ai", "smolagents", "openai-agents", "llamaindex", "crewai", "dspy", "haystack",
        "agent-framework", "strands", "google-adk",
    )
    not_features = ("all", "test", "interop", "frameworks-test") + frameworks
    features = [name for name in extras if name not in not_features]
    assert sorted(features) == ["desktop", "jwt", "keyring", "otel", "redis", "requests", "socks"]
    assert sorted(extras["all"]) == sorted(req for name in features for req in extras[name])


def test_every_runtime_dependency_has_a_plain_floor() -> None:
    deps = _list("dependencies")
    names = [re.split(r"[<>=!~ ;]", d, maxsplit=1)[0] for d in deps]
    assert names == ["urllib3", "jsonschema", "filelock", "python-dotenv", "PyYAML"]  # urllib3: all HTTP
    for dep in deps:
        assert re.fullmatch(r"[A-Za-z0-9_.\-]+>=\d+(\.\d+){2}", dep), dep  # what .ci/lowest turns into ==
    floors = dict(d.split(">=") for d in deps)
    assert _extras()["requests"] == ["requests>=2.32.2"]  # an extra, at the floor .ci/lowest tests
    assert floors["jsonschema"] == "4.18.0"  # the referencing registry


def test_version_changelog_and_tag_policy_agree() -> None:
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    versions = [v for v in re.findall(r"^## (\S+)", changelog, re.M) if v != "Versions"]  # "Versions and tags"
    assert versions[0] == "Unreleased" or versions[0] == mcpsync.__version__
    assert mcpsync.__version__ in versions
    assert "v%s" % mcpsync.__version__ in changelog or "vX.Y.Z" in changelog  # the tag policy names the tag form
    assert not re.search(r"\b(issue|defect) \d+", changelog, re.I), "internal issue numbers in CHANGELOG.md"


def test_the_readme_does_not_promise_an_index() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    # an extra is installed from a clone, a wheel or a git URL (`mcpsync[x] @ git+...`), never from an index
    assert not re.search(r"pip install ['\"]?mcpsync\[[^\]]*\]['\"]?(?!\s*@)", readme)
    assert "git+" in readme and ".whl" in readme
