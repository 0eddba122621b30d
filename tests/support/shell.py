"""What the `rescind` commands sign a shell decision with: the OS user, and `--by` as a note
beside it (docs/operating.md, "Who signs a decision at the shell")."""

from __future__ import annotations

import getpass


def signed(by: str | None = None) -> str:
    """The signature of a decision made at this shell with ``--by by`` (or without)."""
    me = getpass.getuser()
    return me if by in (None, me) else f"{me} (--by {by})"
