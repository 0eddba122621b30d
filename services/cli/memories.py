"""`rescind memories list|search`: the tenant's memories, filtered by kind, status and text,
a page at a time (the API's listing, ``GET /memories``, from the shell)."""

from __future__ import annotations

from pathlib import Path

import typer

from rescind.cli.common import DataDirOpt, JsonOpt, TenantOpt, UrlOpt, checked, emit, operator_graph
from rescind.contract.kinds import MemoryKind, MemoryStatus

memories_app = typer.Typer(help="The tenant's memories: list them, search their text.",
                           no_args_is_help=True)

KindOpt = typer.Option(None, "--kind", help="Only this kind", case_sensitive=False)
StatusOpt = typer.Option(None, "--status", help="Only IN or only OUT", case_sensitive=False)
SkipOpt = typer.Option(0, "--skip", min=0, max=10**9, help="Skip this many (the next page)")
LimitOpt = typer.Option(50, "--limit", min=1, max=1000, help="At most this many")


def _page(url, data_dir, tenant, as_json, kind, status, text, skip, limit, title) -> None:
    from rescind.api import ops
    from rescind.views import operator as views

    with operator_graph(url, data_dir, tenant) as graph:
        page = ops.memories(graph, kind.value if kind else None,
                            status.value if status else None, text, skip, limit)
    emit(page, as_json, lambda p, c: views.memories(p, c, title), "memories")  # the API's


@memories_app.command("list")
def memories_list(
    kind: MemoryKind | None = KindOpt, status: MemoryStatus | None = StatusOpt,
    skip: int = SkipOpt, limit: int = LimitOpt,
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Memories in the order they were written, with their status and what caused an OUT."""
    _page(url, data_dir, tenant, as_json, kind, status, None, skip, limit, "Memories")


@memories_app.command("search")
def memories_search(
    text: str = typer.Argument(..., help="A fragment of the text (case-insensitive)",
                               callback=checked(200)),
    kind: MemoryKind | None = KindOpt, status: MemoryStatus | None = StatusOpt,
    skip: int = SkipOpt, limit: int = LimitOpt,
    url: str | None = UrlOpt, data_dir: Path = DataDirOpt, tenant: str = TenantOpt,
    as_json: bool = JsonOpt,
) -> None:
    """Memories whose text contains TEXT (case-insensitive), IN and OUT unless --status."""
    if not text.strip():
        raise typer.BadParameter("say what to search for", param_hint="TEXT")
    _page(url, data_dir, tenant, as_json, kind, status, text.strip(), skip, limit,
          f"Memories containing {text.strip()!r}")
