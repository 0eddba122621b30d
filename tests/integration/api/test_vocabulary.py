"""One vocabulary over HTTP (issue 16): the window is `from`/`to` (the old `start`/`end` are
accepted for one release, marked deprecated in the OpenAPI document and answered with a
Deprecation header), a memory in a path is `{memory}`, and a compromise already in force is
not committed twice without `force`."""

from __future__ import annotations

from tests.support.api import COMPROMISE, WINDOW


def test_the_openapi_document_speaks_one_vocabulary(story):
    """The compromise bodies name the window from/to, with start/end flagged deprecated; every
    path that takes a memory calls it {memory}, none {ref}."""
    doc = story.client.get("/api/openapi.json").json()
    for model in ("Compromise", "CompromiseCommit"):
        props = doc["components"]["schemas"][model]["properties"]
        assert {"from", "to"} <= set(props) and "from_" not in props
        assert props["start"]["deprecated"] is True and props["end"]["deprecated"] is True
        assert not props["from"].get("deprecated") and not props["to"].get("deprecated")
    paths = [p for p in doc["paths"] if p.startswith("/api/v1/tenants/{tenant}/memories/")]
    assert paths and all(p.startswith("/api/v1/tenants/{tenant}/memories/{memory}")
                         for p in paths)
    assert not [p for p in doc["paths"] if "{ref}" in p]
    assert "/api/v1/tenants/{tenant}/recalls/{memory}/approve" in doc["paths"]


def test_the_old_window_names_still_work_and_say_they_are_deprecated(story):
    """start/end preview the same blast radius as from/to, with `Deprecation: true`; the new
    names carry no such header; both names at once are refused (422) naming the new one; the
    retractions list gives from/to (and start/end beside them, for one release)."""
    sec = story.as_("security")
    base = {k: v for k, v in COMPROMISE.items() if k not in WINDOW}
    new = story.client.post(f"{story.base}/retractions/preview", headers=sec,
                            json={**base, **WINDOW})
    old = story.client.post(f"{story.base}/retractions/preview", headers=sec,
                            json={**base, "start": WINDOW["from"], "end": WINDOW["to"]})
    assert new.status_code == old.status_code == 200
    assert old.json()["counts"] == new.json()["counts"] and sum(new.json()["counts"].values()) == 7
    assert old.headers.get("Deprecation") == "true" and "Deprecation" not in new.headers
    both = story.client.post(f"{story.base}/retractions/preview", headers=sec,
                             json={**base, **WINDOW, "start": WINDOW["from"]})
    assert both.status_code == 422 and "give `from` only" in both.json()["detail"]
    bad = story.client.post(f"{story.base}/retractions/preview", headers=sec,
                            json={**base, "from": "2026-11-01"})
    assert bad.status_code == 422 and "from '2026-11-01' has no zone" in bad.json()["detail"]
    story.client.post(f"{story.base}/retractions", headers=sec,
                      json={**base, **WINDOW, "rev": new.json()["rev"], "id": "r-1"})
    [row] = story.client.get(f"{story.base}/retractions", headers=story.as_("viewer")).json()
    assert (row["from"], row["to"]) == (row["start"], row["end"]) == (
        "2026-11-01T00:00:00Z", "2026-11-03T00:00:00Z")
    one = story.client.get(f"{story.base}/retractions/r-1", headers=story.as_("viewer")).json()
    assert (one["from"], one["to"]) == (row["from"], row["to"])


def test_a_duplicate_compromise_is_409_naming_the_one_in_force_unless_forced(story):
    """Committing the portal again over an overlapping window: 409 naming r-1 (in `detail` and
    `existing`), nothing changes, the refusal is audited; the preview names r-1 as a duplicate;
    with `force` it is recorded; a window touching r-1's at one instant overlaps; once both are
    reinstated, the same window needs no force."""
    sec = story.as_("security")
    url = f"{story.base}/retractions"

    def commit(rid: str, **window):
        rev = story.graph.revision()
        return story.client.post(url, headers=sec, json={**COMPROMISE, **window, "rev": rev,
                                                         "id": rid})

    assert commit("r-1").status_code == 200
    rev, before = story.graph.revision(), story.statuses()
    dup = commit("r-2", **{"from": "2026-11-02T00:00Z", "to": None})
    assert dup.status_code == 409 and dup.json()["existing"] == ["r-1"]
    assert "r-1" in dup.json()["detail"] and "force" in dup.json()["detail"]
    assert story.graph.revision() == rev and story.statuses() == before
    audit = story.client.get(f"{story.base}/audit", headers=sec).json()
    assert (audit[0]["action"], audit[0]["status"]) == ("retraction.commit", "409")
    p = story.client.post(f"{url}/preview", headers=sec, json=COMPROMISE).json()
    assert [d["id"] for d in p["duplicates"]] == ["r-1"]
    assert p["duplicates"][0]["from"] == "2026-11-01T00:00:00Z"
    assert commit("r-1").json()["repeated"] is True  # the same commit again is a repeat
    forced = story.client.post(url, headers=sec, json={**COMPROMISE, "rev": rev, "id": "r-2",
                                                       "force": True})
    assert forced.status_code == 200 and forced.json()["retraction"] == "r-2"
    apart = commit("r-3", **{"from": "2026-11-02T09:14:00Z", "to": "2026-11-02T09:14:00Z"})
    assert apart.status_code == 409  # one instant inside r-1's window still overlaps
    assert story.reinstate("r-1").status_code == 200
    assert story.reinstate("r-2").status_code == 200
    assert commit("r-4").status_code == 200
