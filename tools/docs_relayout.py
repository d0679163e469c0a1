"""Move the flat docs/*.md pages into the docs tree and fix every reference to them. Idempotent.

Run from the repository root: ``python tools/docs_relayout.py``. A page still at its flat path is moved with
``git mv`` (so a concurrent edit merges by rename); a page present at both paths (a merge re-created the flat file)
is reported and left for a hand merge. Then every relative Markdown link in README.md, docs/, bench/ and examples/
that no longer resolves is recomputed from where the page used to live, and every plain ``docs/<page>.md``
mention in README.md, CHANGELOG.md, docs/, bench/, mcpsync/, tests/, examples/ and pyproject.toml is rewritten to
the new path.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Dict, List

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"

#: old flat name -> path under docs/
MOVES: Dict[str, str] = {
    "guide.md": "guides/client.md",
    "http.md": "guides/http.md",
    "oauth.md": "guides/oauth.md",
    "manager.md": "guides/manager.md",
    "production.md": "guides/production.md",
    "frameworks.md": "guides/frameworks.md",
    "apps.md": "guides/apps.md",
    "registry.md": "guides/registry.md",
    "cards.md": "guides/cards.md",
    "input.md": "guides/input.md",
    "skills.md": "guides/skills.md",
    "testing.md": "guides/testing.md",
    "cli.md": "guides/cli.md",
    "example-server.md": "guides/example-server.md",
    "platforms.md": "guides/platforms.md",
    "design.md": "internals/design.md",
    "reliability.md": "internals/reliability.md",
    "development.md": "internals/development.md",
}
OLD_DIR = {new: os.path.dirname(new) for new in MOVES.values()}
LINK = re.compile(r"(\]\()([^)\s]+)(\))")
MENTION = re.compile(r"\bdocs/(%s)\b" % "|".join(re.escape(name) for name in MOVES))


def move() -> List[str]:
    conflicts = []
    for old, new in MOVES.items():
        src, dst = DOCS / old, DOCS / new
        if src.exists() and dst.exists():
            conflicts.append("docs/%s and docs/%s both exist: merge the first into the second, git rm it" % (old, new))
        elif src.exists():
            dst.parent.mkdir(parents=True, exist_ok=True)
            subprocess.run(["git", "mv", str(src), str(dst)], cwd=str(ROOT), check=True)
    return conflicts


def fix_link(page: Path, target: str) -> str:
    if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
        return target
    path, _, anchor = target.partition("#")
    if (page.parent / path).exists():
        return target
    rel = page.relative_to(DOCS).as_posix() if DOCS in page.parents else None
    was = DOCS if rel in OLD_DIR else page.parent  # a moved page's links were written from docs/
    old = os.path.normpath(os.path.join(str(was), path))
    if os.path.dirname(old) == str(DOCS) and os.path.basename(old) in MOVES:
        old = str(DOCS / MOVES[os.path.basename(old)])
    if not os.path.exists(old):
        return target
    new = os.path.relpath(old, str(page.parent)).replace(os.sep, "/")
    return new + ("#" + anchor if anchor else "")


def rewrite(path: Path, links: bool) -> None:
    text = path.read_text(encoding="utf-8")
    new = MENTION.sub(lambda m: "docs/" + MOVES[m.group(1)], text)
    if links:
        new = LINK.sub(lambda m: m.group(1) + fix_link(path, m.group(2)) + m.group(3), new)
    if new != text:
        path.write_text(new, encoding="utf-8")


def main() -> int:
    conflicts = move()
    pages = [ROOT / "README.md"] + sorted(DOCS.rglob("*.md")) + sorted((ROOT / "bench").glob("*.md"))
    pages += sorted((ROOT / "examples").glob("*.md"))
    for page in pages:
        rewrite(page, links=True)
    others = [ROOT / "CHANGELOG.md", ROOT / "pyproject.toml"]
    for folder in ("mcpsync", "tests", "bench", "examples"):
        others += sorted((ROOT / folder).rglob("*.py"))
    for other in others:
        rewrite(other, links=False)
    for line in conflicts:
        print(line)
    return 1 if conflicts else 0


if __name__ == "__main__":
    sys.exit(main())
