"""The README stays a front door, and the documentation's relative links lead somewhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.support.paths import ROOT

PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```.*?^```", re.S | re.M)
CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*$", re.M)


def _prose(text: str) -> str:
    """The text outside code blocks and code spans, where a link is a link."""
    return CODE.sub("", FENCE.sub("", text))


def _anchors(page: Path) -> set[str]:
    """The fragment ids a Markdown renderer gives the page's headings (GitHub's rule)."""
    ids = set()
    for title in HEADING.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
        slug = re.sub(r"[^\w\- ]", "", title.strip().lower().replace("`", ""))
        ids.add(slug.replace(" ", "-"))
    return ids


def _relative_links(page: Path) -> list[str]:
    return [t for t in LINK.findall(_prose(page.read_text(encoding="utf-8")))
            if not re.match(r"[a-z][a-z0-9+.-]*:", t)]


def test_the_readme_is_at_most_250_lines():
    """README.md is a front door: at most 250 lines; the rest lives in docs/."""
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 250, f"README.md has {lines} lines; move detail to docs/"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path):
    """Each relative link names a file or folder of the repository, and its #fragment (if any)
    a heading of that file."""
    broken = []
    for target in _relative_links(page):
        path, _, fragment = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in _anchors(dest):
            broken.append(f"{target}: no heading #{fragment}")
    assert not broken, f"{page.relative_to(ROOT)}: " + "; ".join(broken)


def test_the_link_check_sees_links_and_catches_a_broken_one(tmp_path: Path):
    """The checker finds links in prose (not in code) and a missing target is reported."""
    page = tmp_path / "page.md"
    page.write_text("# A title\n[ok](#a-title) [gone](missing.md) `[code](nowhere.md)`\n"
                    "```\n[block](nowhere.md)\n```\n[web](https://example.org)\n",
                    encoding="utf-8")
    assert _relative_links(page) == ["#a-title", "missing.md"]
    assert _anchors(page) == {"a-title"}
