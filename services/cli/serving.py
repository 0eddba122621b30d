"""Which `rescind up` processes serve which data directories, so that a command never starts a
second server beside one a person already runs.

`rescind up` announces itself in a per-user directory ($RESCIND_RUN_DIR, else
$XDG_RUNTIME_DIR/rescind-up, else ~/.rescind/rescind-up): one file per process with its data
directory and URLs, removed when it stops. A command that would start an embedded server of
its own on the default data directory (no --url, no --data-dir, no RESCIND_DATA_DIR) while an
announced `up` serves another one is refused, with the exports that reach that one; an entry
whose process is gone, or no longer holds its directory's lock, is ignored (and removed).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path


def registry() -> Path:
    """$RESCIND_RUN_DIR; else $XDG_RUNTIME_DIR/rescind-up; else ~/.rescind/rescind-up."""
    if os.environ.get("RESCIND_RUN_DIR"):
        return Path(os.environ["RESCIND_RUN_DIR"])
    base = os.environ.get("XDG_RUNTIME_DIR") or str(Path.home() / ".rescind")
    return Path(base) / "rescind-up"


@contextlib.contextmanager
def announced(data_dir: Path | None, url: str, api: str | None) -> Iterator[dict]:
    """Announce this `rescind up` for the block; yields what it announced."""
    entry = {"pid": os.getpid(), "data_dir": str(data_dir.resolve()) if data_dir else None,
             "url": url, "api": api}
    path = registry() / f"{os.getpid()}.json"
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        path.write_text(json.dumps(entry), encoding="utf-8")
    except OSError:  # no writable home: nothing is announced, nothing else changes
        path = None
    try:
        yield entry
    finally:
        if path is not None:
            with contextlib.suppress(OSError):
                path.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def serving() -> list[dict]:
    """The `rescind up` processes of this user that run now, each holding its directory."""
    from rescind.runtime.readiness import owned

    found = []
    for path in sorted(registry().glob("*.json")):
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        data_dir = entry.get("data_dir")
        if _alive(int(entry.get("pid", 0))) and data_dir and owned(data_dir):
            found.append(entry)
        elif not _alive(int(entry.get("pid", 0))):
            with contextlib.suppress(OSError):
                path.unlink()
    return found


def exports(entry: dict) -> list[str]:
    """What another shell exports to use the server ``entry`` announces."""
    lines = []
    if entry.get("data_dir"):
        lines.append(f"export RESCIND_DATA_DIR={_quoted(entry['data_dir'])}")
    lines.append(f"export RESCIND_URL={entry['url']}")
    return lines


def _quoted(text: str) -> str:
    import shlex

    return shlex.quote(text)


def defaulted(data_dir: Path, default: Path) -> bool:
    """Whether ``data_dir`` is the default nobody chose: --data-dir's relative ``default``, with
    RESCIND_DATA_DIR unset (an absolute path, even to the same directory, is a choice)."""
    return data_dir == default and not os.environ.get("RESCIND_DATA_DIR")


def second_server(data_dir: Path, default: Path) -> str | None:
    """Why a command must not start a server of its own on ``data_dir`` (the default nobody
    chose) while `rescind up` serves another directory, naming it and what to export; None
    when it may."""
    if not defaulted(data_dir, default):
        return None
    mine = str(data_dir.resolve())
    others = [e for e in serving() if e["data_dir"] != mine]
    if not others:
        return None
    said = "; ".join(f"rescind up (pid {e['pid']}) serves {e['data_dir']}" for e in others)
    use = exports(others[0])
    return (f"{said}, not {mine}: this command would start a second server on {mine}. To use "
            f"the running one: {use[0]} (or {use[1]}, or --data-dir / --url); to use {mine} "
            f"anyway, say so: --data-dir {_quoted(mine)}.")
