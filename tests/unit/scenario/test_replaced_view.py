"""The people's replay report names the memories that are no longer current."""

from __future__ import annotations

from rich.console import Console

from rescind.views.replay import render


def _report(replaced: dict) -> dict:
    return {"memories": {"p1": {"status": "IN", "cause": None, "hops": None},
                         "p2": {"status": "IN", "cause": None, "hops": None}},
            "gates": [], "held": [], "recalls": [], "fragility": {}, "replaced": replaced}


def test_the_printed_report_lists_replaced_versions_with_why_and_omits_the_line_when_none():
    """p1 superseded is printed with its reason; with nothing replaced there is no such line."""
    console = Console(width=120, record=True)
    render(_report({"p1": "superseded"}), console)
    assert "No longer current (updated or deleted; status unchanged): p1 (superseded)" \
        in console.export_text()
    console = Console(width=120, record=True)
    render(_report({}), console)
    assert "No longer current" not in console.export_text()
