"""The docs tree holds together: every relative Markdown link in README.md, docs/ and bench/ reaches a file that exists
(and, when it names one, a heading of that file), and the user-facing pages (README.md, docs/guides/,
docs/reference/) speak to users: no internal issue numbers, no test ledgers."""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from typing import Dict, Iterator, List, Set, Tuple

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md"] + sorted(DOCS.rglob("*.md")) + sorted((ROOT / "bench").glob("*.md"))
USER_PAGES = [ROOT / "README.md"] + sorted((DOCS / "guides").rglob("*.md")) + sorted((DOCS / "reference").rglob("*.md"))
FENCE = re.compile(r"^\s*(```|~~~)")
LINK = re.compile(r"(?<!!)\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
EXPLICIT_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")


def prose(path: Path) -> Iterator[Tuple[int, str]]:
    """(line number, line) for every line of ``path`` outside fenced code blocks."""
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield number, line


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: markup dropped, lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").replace("*", "")
    text = text.strip().lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")


def anchors(path: Path, cache: Dict[Path, Set[str]]) -> Set[str]:
    if path not in cache:
        found: Set[str] = set()
        seen: Dict[str, int] = {}
        for _, line in prose(path):
            found.update(EXPLICIT_ANCHOR.findall(line))
            m = HEADING.match(line)
            if not m:
                continue
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else "%s-%d" % (base, n))
        cache[path] = found
    return cache[path]


def links() -> List[Tuple[str, Path, str]]:
    found = []
    for page in PAGES:
        for number, line in prose(page):
            for target in LINK.findall(line):
                if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                    continue  # https:, mailto:...
                found.append(("%s:%d" % (page.relative_to(ROOT).as_posix(), number), page, target))
    return found


LINKS = links()


def test_the_docs_tree_has_links() -> None:
    assert len(LINKS) > 50
    assert (DOCS / "README.md").exists()


def test_the_docs_tree_is_guides_reference_internals() -> None:
    flat = sorted(p.name for p in DOCS.glob("*.md") if p.name != "README.md")
    where = "docs/guides/, docs/reference/ or docs/internals/"
    assert not flat, "a page belongs in %s: %s" % (where, flat)
    index = (DOCS / "README.md").read_text(encoding="utf-8")
    for page in sorted(DOCS.rglob("*.md")):
        if page.name != "README.md":
            assert "(%s)" % page.relative_to(DOCS).as_posix() in index, "docs/README.md does not link %s" % page


@pytest.mark.parametrize("where, page, target", LINKS, ids=[w + " " + t for w, _, t in LINKS])
def test_relative_link_resolves(where: str, page: Path, target: str) -> None:
    path, _, anchor = target.partition("#")
    dest = (page.parent / path).resolve() if path else page
    assert dest.exists(), "%s: %s does not exist" % (where, target)
    if ROOT not in dest.parents and dest != ROOT:
        pytest.fail("%s: %s leaves the repository" % (where, target))
    if anchor and dest.suffix == ".md":
        assert anchor in anchors(dest, {}), "%s: %s has no heading #%s" % (where, path or page.name, anchor)


ISSUE_TALK = re.compile(r"\b(issues?|defects?|bugs?)\s*#?\d+|(?<![\w&/])#\d+\b|\btests/test_\w+\.py", re.I)


@pytest.mark.parametrize("page", USER_PAGES, ids=[p.relative_to(ROOT).as_posix() for p in USER_PAGES])
def test_user_pages_carry_no_issue_numbers_or_test_ledgers(page: Path) -> None:
    bad = ["%d: %s" % (n, line.strip()) for n, line in prose(page) if ISSUE_TALK.search(line)]
    assert not bad, "%s speaks of internal issues or test files (move evidence to docs/internals/):\n%s" % (
        page.relative_to(ROOT),
        "\n".join(bad),
    )
