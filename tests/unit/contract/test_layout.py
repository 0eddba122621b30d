"""The Redis layout (rescind.contract.layout): names, the envelope, the defaults; no server."""

from __future__ import annotations

import inspect
import json
import zlib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from rescind.contract import events as ev
from rescind.contract import layout
from rescind.contract.errors import BadTenantName, Invalid, RescindError

AT = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
TRACE = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def as_redis(fields: dict[str, str]) -> dict[bytes, bytes]:
    """The fields as redis-py returns them (bytes, not str)."""
    return {k.encode(): v.encode() for k, v in fields.items()}


# -- names -----------------------------------------------------------------------------------
def test_the_names_on_the_wire_are_pinned():
    """Agents and workers of different versions meet on these names: renaming one is a
    migration, never a refactoring."""
    assert layout.event_stream(3) == "rescind:events:3"
    assert layout.event_streams(2) == ["rescind:events:0", "rescind:events:1"]
    assert (layout.GATE, layout.DEAD) == ("rescind:gate", "rescind:dead")
    assert layout.gate_reply_key("ab12") == "rescind:gate:reply:ab12"
    assert (layout.WRITER_GROUP, layout.RETRACTION_GROUP, layout.GATE_GROUP) == (
        "rescind-writer", "rescind-retraction", "rescind-gate")
    assert layout.graph_key("acme") == "rescind:{acme}"
    assert layout.lock_key("acme", "schema") == "rescind:{acme}:lock:schema"
    assert layout.tenant_tokens_key("acme") == "rescind:{acme}:api:tokens"
    assert layout.audit_key("acme") == "rescind:{acme}:audit"
    assert layout.status_stream("acme") == "rescind:{acme}:status"
    assert layout.token_key("a" * 64) == "rescind:api:token:" + "a" * 64
    assert (layout.ADMIN_TOKENS, layout.TENANTS) == ("rescind:api:admin-tokens",
                                                     "rescind:api:tenants")


def test_a_tenant_always_lands_on_one_partition_by_crc32():
    """partition = crc32(tenant) mod N, the same on the agents' side and the services'."""
    for tenant in ("acme", "demo", "t123-4"):
        p = zlib.crc32(tenant.encode()) % 7
        assert layout.partition_of(tenant, 7) == p
        assert layout.tenant_stream(tenant, 7) == f"rescind:events:{p}"
    assert layout.tenant_stream("acme") == layout.tenant_stream("acme", layout.PARTITIONS)


def test_every_key_of_a_tenant_carries_its_hash_tag():
    """On a cluster a tenant's graph, locks, token index and audit log share one slot."""
    for key in (layout.graph_key("acme"), layout.lock_key("acme"),
                layout.tenant_tokens_key("acme"), layout.audit_key("acme")):
        assert key.split("}")[0] == "rescind:{acme"


AUDIT_KEYS = (layout.audit_key, layout.audit_counts_key, layout.audit_refused_prefix,
              layout.audit_archives_key, lambda t: layout.audit_archive_key(t, "2026-11"))


@pytest.mark.parametrize("name", ["Acme", "", "a" * 65, "a}b", "a:b", "@server", None])
def test_a_bad_tenant_name_never_reaches_a_key(name):
    """Each per-tenant key refuses a name outside [a-z0-9_-]{1,64}, as an Invalid (None is the
    server's audit scope, for the audit keys alone)."""
    builds = [layout.graph_key, layout.lock_key, layout.tenant_tokens_key]
    for build in builds + ([] if name is None else list(AUDIT_KEYS)):
        with pytest.raises(BadTenantName, match="bad tenant name") as got:
            build(name)
        assert isinstance(got.value, Invalid)


def test_the_audit_keys_of_a_tenant_and_of_the_server_share_their_scopes_slot():
    """A tenant's audit keys carry its tag; the server's carry one no tenant can have, and the
    live log and archive index of each scope are read back to it."""
    for tenant, tag in (("acme", "rescind:{acme"), (None, "rescind:{@server")):
        keys = [build(tenant) for build in AUDIT_KEYS]
        assert {k.split("}")[0] for k in keys} == {tag}
        assert layout.audit_scope_of(layout.audit_key(tenant)) == (True, tenant)
        assert layout.audit_scope_of(layout.audit_archives_key(tenant)) == (True, tenant)
    assert layout.audit_archive_key("acme", "2026-11") == "rescind:{acme}:audit:archive:2026-11"
    for other in (layout.audit_counts_key("acme"), layout.graph_key("acme"), "rescind:{A}:audit"):
        assert layout.audit_scope_of(other) == (False, None)
    with pytest.raises(Invalid, match="YYYY-MM"):
        layout.audit_archive_key("acme", "2026-11}")


def test_a_token_key_needs_a_digest_never_the_token():
    """Only a SHA-256 hex digest names a token's record."""
    with pytest.raises(Invalid, match="SHA-256"):
        layout.token_key("rsc_not-a-digest")


def test_the_tenant_of_a_graph_is_read_back_from_its_key():
    """GRAPH.LIST names are mapped back to tenants; other graphs on the server are not ours."""
    assert layout.tenant_of_graph(layout.graph_key("acme-2")) == "acme-2"
    for other in ("rescind:{acme}:lock:write", "rescind:{Acme}", "social", "rescind:{}"):
        assert layout.tenant_of_graph(other) is None


# -- the envelope ----------------------------------------------------------------------------
def test_the_envelope_is_the_one_faststream_reads():
    """One field, __data__, holding {"data": <event JSON text>, "headers": {...}}."""
    fields = layout.encode('{"schema":1}', {"traceparent": TRACE})
    assert list(fields) == ["__data__"]
    assert json.loads(fields["__data__"]) == {"data": '{"schema":1}',
                                              "headers": {"traceparent": TRACE}}
    assert json.loads(layout.encode("x")["__data__"])["headers"] == {}


def test_an_event_survives_encode_then_decode_with_its_trace_headers():
    """encode_event -> decode gives back the event's own JSON and its trace context, whether
    the fields come back as bytes (redis-py) or str."""
    event = ev.MemoryWritten(event_id="e1", tenant="acme", at=AT, kind="belief",
                             text="Acme is paid to IBAN GB33 — ünïcode", premises=["m0"],
                             agent="ap", traceparent=TRACE, tracestate="k=v")
    fields = layout.encode_event(event)
    for got in (layout.decode(fields), layout.decode(as_redis(fields))):
        assert got.headers == {"traceparent": TRACE, "tracestate": "k=v"}
        assert got.data == event.model_dump_json(by_alias=True)
        assert ev.EVENT.validate_json(got.data) == event
        assert got.event()["text"] == event.text


def test_an_event_without_trace_context_has_no_headers():
    """No traceparent, no header (an empty string is not a trace)."""
    event = ev.ObservationRecorded(event_id="o", tenant="acme", at=AT, source="s", text="t")
    assert layout.decode(layout.encode_event(event)).headers == {}


@pytest.mark.parametrize(("fields", "why"), [
    ({b"body": b"{}"}, "no __data__ field"),
    ({}, "no __data__ field"),
    ({b"__data__": b"not json"}, "is not JSON"),
    ({b"__data__": b"[1, 2]"}, "must be an object"),
    ({b"__data__": b'{"headers": {}}'}, "must be an object whose data is a string"),
    ({b"__data__": b'{"data": {"schema": 1}}'}, "whose data is a string"),
    ({b"__data__": b'{"data": "{}", "headers": ["x"]}'}, "headers must map"),
    ({b"__data__": b'{"data": "{}", "headers": {"traceparent": 1}}'}, "headers must map"),
    ({"__data__": "\x00"}, "is not JSON"),
])
def test_a_malformed_entry_is_invalid_with_what_is_wrong(fields, why):
    """Anything but our envelope raises Invalid (a RescindError), never a KeyError."""
    with pytest.raises(Invalid, match=why) as got:
        layout.decode(fields)
    assert isinstance(got.value, RescindError) and not isinstance(got.value, KeyError)


@pytest.mark.parametrize(("data", "why"), [("not json", "is not JSON"),
                                            ("[1]", "not a JSON object")])
def test_an_envelope_whose_data_is_no_event_object_is_invalid(data, why):
    """The envelope may be well formed and its data still not an event object."""
    with pytest.raises(Invalid, match=why):
        layout.decode(layout.encode(data)).event()


# -- defaults --------------------------------------------------------------------------------
def test_every_surface_takes_its_defaults_from_the_layout(monkeypatch):
    """Settings, the middleware's config, the publisher, the workers, the engine's gate and
    replay all default to the one value; the environment overrides the settings, and every
    surface judges with the one policy read from them."""
    from rescind.engine import gate
    from rescind.middleware.config import InterceptConfig
    from rescind.middleware.publisher import Publisher
    from rescind.runtime.settings import Settings
    from rescind.scenario.replay import Replay
    from rescind.workers.app import WorkerSettings

    for var in ("RESCIND_PARTITIONS", "RESCIND_GATE_THRESHOLD", "RESCIND_GATE_MIN_DOMAINS"):
        monkeypatch.delenv(var, raising=False)
    s, w = Settings(), WorkerSettings(url="redis://x")
    limits = (layout.GATE_THRESHOLD, layout.GATE_MIN_DOMAINS)
    assert (s.partitions, s.gate_threshold, s.gate_min_domains) == (layout.PARTITIONS, *limits)
    assert (w.partitions, w.gate.threshold, w.gate.min_domains) == (layout.PARTITIONS, *limits)
    assert gate.GatePolicy.from_settings(s) == gate.GatePolicy() == w.gate
    assert Replay(graph=None).policy == gate.GatePolicy()
    assert InterceptConfig(tenant="acme").partitions == layout.PARTITIONS
    assert inspect.signature(Publisher).parameters["partitions"].default == layout.PARTITIONS

    monkeypatch.setenv("RESCIND_PARTITIONS", "8")
    monkeypatch.setenv("RESCIND_GATE_THRESHOLD", "500")
    monkeypatch.setenv("RESCIND_GATE_MIN_DOMAINS", "3")
    monkeypatch.setenv("RESCIND_GATE_TRUSTED_KINDS", '["signed_contract", "bank"]')
    monkeypatch.setenv("RESCIND_GATE_WINDOW_DAYS", "7")
    monkeypatch.setenv("RESCIND_GATE_CURRENCY", "eur")
    monkeypatch.setenv("RESCIND_GATE_RATES", '{"usd": 0.92, "JPY": 0.0061}')
    monkeypatch.setenv("RESCIND_GATE_REQUIRE_CURRENCY", "true")
    s = Settings()
    assert (s.partitions, s.gate_threshold, s.gate_min_domains) == (8, 500, 3)
    p = gate.GatePolicy.from_settings(s)
    assert (p.threshold, p.min_domains, p.trusted_kinds, p.window_days) == (
        500, 3, frozenset({"signed_contract", "bank"}), 7.0)
    assert (p.currency, dict(p.rates), p.require_currency) == (
        "EUR", {"USD": 0.92, "JPY": 0.0061}, True)
    monkeypatch.setenv("RESCIND_GATE_RATES", '{"XQQ": 1.0}')
    with pytest.raises(Invalid, match="RESCIND_GATE_RATES: .* ISO 4217"):
        gate.GatePolicy.from_settings(Settings())
    monkeypatch.setenv("RESCIND_GATE_RATES", '{"GBP": 0}')
    with pytest.raises(Invalid, match="positive"):
        gate.GatePolicy.from_settings(Settings())


def test_the_middleware_spells_no_redis_name_of_its_own():
    """Stream names and the envelope reach the agents' side only through the layout."""
    import rescind.middleware

    for path in Path(rescind.middleware.__file__).parent.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert '"rescind:' not in text and "__data__" not in text, path.name
