"""The alert rules warn of server restarts, page on a crash loop and on a write FalkorDB died
applying, reading the series Rescind exports for them."""

import yaml

from tests.integration.deploy.test_deploy import exported_series
from tests.support.paths import ROOT


def _rules() -> dict[str, dict]:
    rules = yaml.safe_load((ROOT / "deploy" / "monitoring" / "alerts.yaml").read_text())
    return {r["alert"]: r for g in rules["groups"] for r in g["rules"]}


def test_restarts_a_crash_loop_and_a_quarantined_write_each_alert():
    """A restart warns, three deaths in ten minutes (restarts, or deaths the writer saw) are
    critical, and a write dead-lettered by the crash quarantine warns, naming its tenant."""
    rules, series = _rules(), exported_series()
    assert {"rescind_server_restarts_total", "rescind_writer_server_deaths_total",
            "rescind_writer_crash_quarantined_total"} <= series
    restarted = rules["RescindServerRestarted"]
    assert "rescind_server_restarts_total" in restarted["expr"]
    assert restarted["labels"]["severity"] == "warning"
    loop = rules["RescindServerCrashLoop"]
    assert "rescind_server_restarts_total[10m]" in loop["expr"] and ">= 3" in loop["expr"]
    assert "rescind_writer_server_deaths_total[10m]" in loop["expr"]
    assert loop["labels"]["severity"] == "critical"
    quarantined = rules["RescindCrashQuarantine"]
    assert "rescind_writer_crash_quarantined_total" in quarantined["expr"]
    assert "by (tenant)" in quarantined["expr"]
