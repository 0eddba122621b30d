"""Settings read from the environment (prefix ``RESCIND_``) when asked for, never at import."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from rescind.contract import layout


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="RESCIND_")

    url: str | None = Field(None, description="A running FalkorDB server; None starts the embedded one")
    data_dir: str | None = Field(None, description="Where the embedded server keeps its AOF files")
    # FalkorDB makes room in a graph's matrices for this many new nodes at a time, and resizes
    # every matrix when the nodes outgrow it. With its default (16,384) a tenant loaded to 1M
    # memories resized about 120 times, a fifth of the load's time (29,500 writes/s against
    # 37,500 with 131,072; fresh servers alternated, docs/performance.md).
    node_creation_buffer: int = Field(
        131_072, ge=128, description="The embedded server's room for new nodes in each graph "
        "(FalkorDB's NODE_CREATION_BUFFER): larger loads big tenants faster, and costs every "
        "tenant memory (an empty one 3.4 MB at the default, 1.1 MB at FalkorDB's 16,384)")
    partitions: int = Field(layout.PARTITIONS, ge=1, description="Event streams; the agents' "
                            "InterceptConfig.partitions must be the same")
    gate_threshold: float = Field(layout.GATE_THRESHOLD, description="Payments above this need "
                                  "gate_min_domains trust domains")
    gate_min_domains: int = Field(layout.GATE_MIN_DOMAINS, description="Trust domains that must "
                                  "fall to fake a large payment")
    gate_trusted_kinds: list[str] | None = Field(None, description="Source kinds whose "
                                                 "observations may count as a payment's "
                                                 "evidence; unset: every kind but user and agent")
    lineage_kinds: list[str] = Field(["iban", "account"], description="Identifiers the "
                                     "operator marks as high-value (`iban`, `account`): a note "
                                     "stating one that none of its premises states rests on "
                                     "the observations that state it (rule lineage), or is "
                                     "flagged as an ungrounded identifier; [] turns it off")
    gate_window_days: float = Field(30.0, gt=0, description="What the gate allowed to the same "
                                    "account or payee this many days back counts toward the "
                                    "threshold")
    gate_currency: str = Field("USD", description="The threshold's currency (ISO 4217)")
    gate_rates: dict[str, float] = Field(default_factory=dict, description="What one unit of "
                                         "each other currency is worth in gate_currency, e.g. "
                                         "{\"EUR\": 1.08}; a payment in a currency not listed is "
                                         "refused")
    gate_require_currency: bool = Field(False, description="Refuse an amount that names no "
                                        "currency (else it is in gate_currency)")
    # The writer is throughput work, the gate latency work: on a machine they share, a writer
    # at a lower CPU priority waits while the gate answers (docs/performance.md, issue 28).
    worker_nice: dict[str, int] = Field(
        {"writer": 10}, description="CPU niceness (0-19) by worker role: a `rescind worker` "
        "process lowers its CPU priority to the least of its roles' (a role not named is at 0, "
        "so a process that also answers the gate keeps its priority; `rescind up` runs every "
        "role in one process); {} turns it off")
    replica_wait_ms: int = Field(2_000, ge=0, description="On a cluster with replicas: how long a "
                                 "batch of writes waits for a replica to have it before it is "
                                 "acknowledged (else it is tried again); 0: no wait, and a "
                                 "failover may lose the latest writes")
    # `rescind up` restarts its embedded server when it dies (rescind.runtime.supervisor)
    restart_attempts: int = Field(5, ge=1, description="`rescind up` exits non-zero after this "
                                  "many failures of its embedded server within the window")
    restart_window_s: float = Field(300.0, gt=0, description="The window those failures are "
                                    "counted in, seconds")
    restart_backoff_s: float = Field(1.0, gt=0, description="Pause before the first restart, "
                                     "seconds; it doubles with each failure")
    restart_backoff_max_s: float = Field(30.0, gt=0, description="Longest pause between "
                                         "restarts, seconds")
    otel: Literal["none", "console", "otlp"] = Field("none", description="Where spans and "
                                                     "metrics go")
    otlp_endpoint: str = Field("http://127.0.0.1:4318", description="OTLP/HTTP collector base URL")
    metric_interval_ms: int = Field(10_000, description="How often metrics are exported")
    trace_url: str | None = Field(
        None, pattern=r"^https?://[^\s]*\{trace_id\}[^\s]*$",
        description="A trace UI's address for one trace, with {trace_id} where the id goes "
        "(e.g. http://localhost:16686/trace/{trace_id}); the console links each memory to the "
        "trace of the run that wrote it")
    retractions_data: str | None = Field(
        None, description="Where `rescind bench rules` reads the real retraction data, in place "
        "(relative to the current directory); unset: ../shared/data/retractions beside the repository")

    # The HTTP API and console (services/api) and the MCP server
    api_host: str = Field("127.0.0.1", description="Where `rescind up` and `rescind api serve` listen")
    api_port: int = Field(8765, ge=0, le=65535, description="API port; 0 lets `rescind up` skip it")
    admin_token: SecretStr | None = Field(
        None, description="Bootstrap admin token (RESCIND_ADMIN_TOKEN): creates tenants and tokens")
    api_max_body: int = Field(1_048_576, ge=1024, description="Largest request body, bytes (413)")
    api_max_list: int = Field(1000, ge=1, description="Largest page of a list endpoint")
    token: SecretStr | None = Field(None, description="The MCP server's token over stdio "
                                    "(RESCIND_TOKEN)")
    mcp_port: int = Field(8766, ge=0, le=65535, description="Where `rescind api mcp --http` "
                          "listens (on api_host)")
    audit_max_live: int = Field(layout.AUDIT_MAXLEN, ge=1, description="Entries each audit log "
                                "keeps live; older ones are moved to its monthly archive")

    @field_validator("worker_nice")
    @classmethod
    def _niceness(cls, value: dict[str, int]) -> dict[str, int]:
        wrong = {role: n for role, n in value.items() if not 0 <= n <= 19}
        if wrong:
            raise ValueError(f"a niceness is 0 (as started) to 19 (the lowest), not {wrong}")
        return value
