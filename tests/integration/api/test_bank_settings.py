"""A tenant's bank-file settings against the real server: an admin sets who the organisation is
and which bank a recall goes to (API and shell); a camt.056 names them, valid against the ISO
schema; while they are missing the export refuses to write placeholders unless asked."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rescind.cli.main import app
from rescind.graph import tenant_settings
from tests.support.api import forget, make_story
from tests.support.recalls import (
    COMPROMISE,
    NS,
    check_camt056,
    finance_story_text,
    record_receipts,
)

SETTINGS = {"organisation_name": "Harbor & Finch Ltd", "organisation_id": "HF-0042",
            "organisation_lei": "5493001KJTIIGC8Y1R12", "bank_bic": "HBUKGB4B",
            "bank_name": "HSBC UK Bank plc"}


@pytest.fixture
def day(falkordb, tenant_name):
    """The finance story with no bank settings, the portal compromised, pay-1041 approved."""
    s = make_story(falkordb, tenant_name, text=finance_story_text())
    record_receipts(falkordb, tenant_name)
    tenant_settings.update(s.graph.server, tenant_name, dict.fromkeys(SETTINGS))  # none set
    sec = s.as_("security")
    p = s.client.post(f"{s.base}/retractions/preview", json=COMPROMISE, headers=sec).json()
    assert s.client.post(f"{s.base}/retractions", json={**COMPROMISE, "rev": p["rev"]},
                         headers=sec).status_code == 200
    ok = s.client.post(f"{s.base}/recalls/pay-1041/approve", headers=s.as_("finance"))
    assert ok.status_code == 200, ok.text
    yield s
    forget(falkordb, tenant_name)


def _assignment(xml: str):
    from xml.etree import ElementTree as ET

    check_camt056(xml)  # the ISO 20022 XSD, and what a bank needs
    return ET.fromstring(xml).find("c:FIToFIPmtCxlReq/c:Assgnmt", NS)


def test_a_camt056_with_placeholders_is_refused_unless_asked(day):
    """No settings: the camt.056 export answers 409 naming both placeholders and how to set
    them, and marks nothing; CSV needs none; with allow_placeholders the file names the
    tenant and NOTPROVIDED, and is schema-valid."""
    fin, c, base = day.as_("finance"), day.client, day.base
    r = c.post(f"{base}/recalls/pay-1041/export", json={"format": "camt.056"}, headers=fin)
    assert r.status_code == 409
    why = r.json()["detail"]
    for part in ("placeholders", "organisation's name", "bank's BIC", "rescind tenant settings",
                 f"/api/v1/tenants/{day.tenant}/settings", "--allow-placeholders"):
        assert part in why, part
    assert c.get(f"{base}/recalls/pay-1041", headers=fin).json()["state"] == "approved"
    assert c.post(f"{base}/recalls/pay-1041/export", json={"format": "csv"},
                  headers=fin).status_code == 200
    forced = c.post(f"{base}/recalls/pay-1041/export", headers=fin,
                    json={"format": "camt.056", "allow_placeholders": True})
    assert forced.status_code == 200
    a = _assignment(forced.text)
    assert a.find("c:Assgnr/c:Pty/c:Nm", NS).text == day.tenant
    assert a.find("c:Assgne/c:Agt/c:FinInstnId/c:Othr/c:Id", NS).text == "NOTPROVIDED"


def test_the_admin_sets_the_bank_file_and_the_camt056_names_it(day):
    """Only the admin reads and sets the settings; a bad BIC is refused naming the field; once
    set, the camt.056 names the organisation (name, LEI, id) and the bank (BIC, name), is
    schema-valid and holds no placeholder; the change is audited; clearing one brings back its
    placeholder and the refusal."""
    c, url = day.client, f"/api/v1/tenants/{day.tenant}/settings"
    admin, fin = day.as_("admin"), day.as_("finance")
    assert c.get(url, headers=fin).status_code == 403
    before = c.get(url, headers=admin).json()
    assert before["bank_bic"] is None and len(before["placeholders"]) == 2
    bad = c.patch(url, json={"bank_bic": "not a bic"}, headers=admin)
    assert bad.status_code == 422 and "bank_bic" in bad.text
    r = c.patch(url, json=SETTINGS, headers=admin)
    assert r.status_code == 200 and r.json()["placeholders"] == []
    assert c.get("/api/v1/tenants/nobody-here/settings", headers=admin).status_code == 404
    xml = c.post(f"{day.base}/recalls/pay-1041/export", json={"format": "camt.056"},
                 headers=fin)
    assert xml.status_code == 200, xml.text
    a = _assignment(xml.text)
    assert a.find("c:Assgnr/c:Pty/c:Nm", NS).text == "Harbor & Finch Ltd"
    assert a.find("c:Assgnr/c:Pty/c:Id/c:OrgId/c:LEI", NS).text == SETTINGS["organisation_lei"]
    assert a.find("c:Assgnr/c:Pty/c:Id/c:OrgId/c:Othr/c:Id", NS).text == "HF-0042"
    assert a.find("c:Assgne/c:Agt/c:FinInstnId/c:BICFI", NS).text == "HBUKGB4B"
    assert a.find("c:Assgne/c:Agt/c:FinInstnId/c:Nm", NS).text == "HSBC UK Bank plc"
    assert "NOTPROVIDED" not in xml.text
    [entry] = [e for e in c.get(f"{day.base}/audit", headers=day.as_("security")).json()
               if e["action"] == "tenant.settings" and e["result"] == "ok"]
    assert entry["who"] == "admin" and entry["detail"]["changed"]["bank_bic"] == "HBUKGB4B"
    cleared = c.patch(url, json={"bank_bic": None}, headers=admin).json()
    assert cleared["bank_bic"] is None and cleared["organisation_name"] == "Harbor & Finch Ltd"
    assert len(cleared["placeholders"]) == 1
    assert c.post(f"{day.base}/recalls/pay-1041/export", json={"format": "camt.056"},
                  headers=fin).status_code == 409


def test_the_shell_sets_the_settings_and_exports(day, tmp_path):
    """`rescind tenant settings` shows and sets them (a bad LEI refused, exit 2); `rescind
    recalls export --format camt.056` is refused with placeholders and writes a valid file
    with --allow-placeholders or once the settings are set."""
    on = ["--url", day.url]
    run = CliRunner().invoke
    shown = run(app, ["tenant", "settings", day.tenant, *on, "--json"])
    assert shown.exit_code == 0 and len(json.loads(shown.stdout)["placeholders"]) == 2
    export = ["recalls", "export", "pay-1041", "--format", "camt.056", *on, "--tenant",
              day.tenant, "--out"]
    refused = run(app, [*export, str(tmp_path / "a.xml")])
    assert refused.exit_code == 2 and "--allow-placeholders" in refused.stderr
    assert not (tmp_path / "a.xml").exists()
    forced = run(app, [*export, str(tmp_path / "b.xml"), "--allow-placeholders"])
    assert forced.exit_code == 0, forced.stderr
    check_camt056((tmp_path / "b.xml").read_text())
    bad = run(app, ["tenant", "settings", day.tenant, *on, "--organisation-lei", "123"])
    assert bad.exit_code == 2 and "organisation_lei" in bad.stderr
    done = run(app, ["tenant", "settings", day.tenant, *on, "--organisation-name",
                     "Harbor & Finch Ltd", "--bank-bic", "hbukgb4bxxx"])
    assert done.exit_code == 0, done.stderr
    assert "bank bic: HBUKGB4BXXX" in done.stdout
    ok = run(app, [*export, str(tmp_path / "c.xml")])
    assert ok.exit_code == 0, ok.stderr
    a = _assignment((tmp_path / "c.xml").read_text())
    assert a.find("c:Assgne/c:Agt/c:FinInstnId/c:BICFI", NS).text == "HBUKGB4BXXX"
