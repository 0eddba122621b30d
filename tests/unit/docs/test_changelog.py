"""The changelog says each change in one line; the detail is in docs/ and the commits."""

from __future__ import annotations

from tests.support.paths import ROOT


def multi_line_bullets(text: str) -> list[str]:
    """The bullets of a Markdown list that run past their first line (an indented line right
    after a bullet, or after its continuation)."""
    found, current = [], None
    for line in text.splitlines():
        if line.startswith("- "):
            current = line
        elif current is not None and line.startswith(" ") and line.strip():
            found.append(current)
            current = None
        else:
            current = None
    return found


def test_every_changelog_bullet_is_one_line():
    """No bullet of CHANGELOG.md continues on a second line."""
    bullets = [line for line in (ROOT / "CHANGELOG.md").read_text().splitlines()
               if line.startswith("- ")]
    assert len(bullets) > 50  # a reading that found no bullets would pass below
    assert multi_line_bullets((ROOT / "CHANGELOG.md").read_text()) == []


def test_the_check_finds_a_bullet_that_runs_on():
    """A bullet with an indented continuation is named; one-line bullets and prose are not."""
    text = "## Added\n- one line\n- two\n  lines\n\nProse\n  indented prose\n- last\n"
    assert multi_line_bullets(text) == ["- two"]
