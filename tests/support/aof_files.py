"""Reading and extending the multi-part AOF of a stopped server's data directory (Redis 7+): a
manifest naming a base (an RDB preamble, or commands) and incremental files of commands."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

AOF_DIR = "appendonlydir"
MANIFEST = "appendonly.aof.manifest"


def resp(*args: str | bytes) -> bytes:
    """One command as Redis writes it to the AOF (a RESP array of bulk strings)."""
    parts = [a if isinstance(a, bytes) else a.encode() for a in args]
    return b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)


def manifest(data_dir: Path) -> list[dict[str, str]]:
    """The manifest's lines in order, each as its key/value pairs (``file``, ``seq``, ``type``:
    ``b`` base, ``i`` incremental, ``h`` history, no longer loaded)."""
    text = (Path(data_dir) / AOF_DIR / MANIFEST).read_text()
    entries = []
    for line in text.splitlines():
        tokens = line.split()
        if tokens:
            entries.append(dict(zip(tokens[::2], tokens[1::2], strict=True)))
    return entries


def loaded_files(data_dir: Path) -> list[Path]:
    """The files a restart loads, in the order it loads them: the base, then each incremental."""
    entries = manifest(data_dir)
    ordered = [e for e in entries if e["type"] == "b"] + [e for e in entries if e["type"] == "i"]
    return [Path(data_dir) / AOF_DIR / e["file"] for e in ordered]


def commands(data_dir: Path) -> Iterator[list[bytes]]:
    """Every command a restart replays, in order (an RDB base holds data, not commands, and is
    passed over)."""
    for path in loaded_files(data_dir):
        data = path.read_bytes()
        if data.startswith(b"REDIS"):  # an RDB preamble
            continue
        yield from parse(data, path.name)


def parse(data: bytes, name: str = "AOF") -> Iterator[list[bytes]]:
    """The commands of an AOF file's text (RESP arrays; ``#`` lines are annotations)."""
    at = 0
    while at < len(data):
        if data.startswith(b"#", at):
            at = data.index(b"\r\n", at) + 2
            continue
        if not data.startswith(b"*", at):
            raise ValueError(f"{name}: no command at byte {at}: {data[at:at + 20]!r}")
        end = data.index(b"\r\n", at)
        count, at = int(data[at + 1:end]), end + 2
        args = []
        for _ in range(count):
            end = data.index(b"\r\n", at)
            if not data.startswith(b"$", at):
                raise ValueError(f"{name}: no bulk string at byte {at}")
            size, at = int(data[at + 1:end]), end + 2
            args.append(data[at:at + size])
            at += size + 2
        yield args


def append(data_dir: Path, commands: Iterable[bytes]) -> Path:
    """Append RESP ``commands`` to the last incremental file of a stopped server's AOF, after a
    SELECT 0 (the database every command of the product uses); returns the file."""
    last = [e for e in manifest(data_dir) if e["type"] == "i"][-1]
    path = Path(data_dir) / AOF_DIR / last["file"]
    with path.open("ab") as out:
        out.write(resp("SELECT", "0"))
        for command in commands:
            out.write(command)
    return path


def graph_commands_in_transactions(data_dir: Path) -> list[list[bytes]]:
    """Every GRAPH.* command a restart would replay between a MULTI and its EXEC (FalkorDB
    4.16 may abort replaying one: it yields while loading, and a client's command arriving
    then meets ``server.in_exec``)."""
    found, open_ = [], False
    for command in commands(data_dir):
        name = command[0].upper()
        if name == b"MULTI":
            open_ = True
        elif name in (b"EXEC", b"DISCARD"):
            open_ = False
        elif open_ and name.startswith(b"GRAPH."):
            found.append(command)
    return found
