"""docker-compose.yml and deploy/ are valid and say what the product needs. Docker and a cluster
cannot run here, so they are checked against their schemas (compose-spec; Kubernetes 1.32 in
strict mode) and against the code: every command is a real `rescind` command, every setting a
real setting, every manifest in the kustomization."""

import json
import re
import shutil
import subprocess
import sys
from urllib.parse import urlparse

import kubernetes_validate
import pytest
import typer
import yaml

from rescind.cli.main import app
from rescind.cli.run import ROLES
from rescind.runtime.settings import Settings
from tests.support.paths import ROOT

K8S = ROOT / "deploy" / "k8s"


def manifests() -> list[dict]:
    return [doc for path in sorted(K8S.glob("*.yaml")) if path.name != "kustomization.yaml"
            for doc in yaml.safe_load_all(path.read_text()) if doc]


def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def rescind_services(profile: str | None = None) -> dict[str, dict]:
    """The compose services that run Rescind's image (built from deploy/Dockerfile): those of
    the single server (no profile), or those of ``profile``."""
    return {name: svc for name, svc in compose()["services"].items()
            if svc.get("build", {}).get("dockerfile") == "deploy/Dockerfile"
            and svc.get("profiles", [None]) == [profile]}


def commands() -> list[list[str]]:
    """Every `rescind ...` argument list the deployment runs."""
    found = [svc["command"] for svc in rescind_services().values()]
    for doc in manifests():
        if doc["kind"] in ("Deployment", "StatefulSet"):
            for c in doc["spec"]["template"]["spec"]["containers"]:
                if c["image"].startswith("rescind"):
                    found.append(c["args"])
    return found


def test_compose_runs_falkordb_with_a_volume_and_persistence():
    """FalkorDB keeps its data in a named volume, with AOF on and the image's limits lifted."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    db = compose["services"]["falkordb"]
    assert db["image"].startswith("falkordb/")
    volume = db["volumes"][0].split(":")
    assert volume[1] == "/data" and volume[0] in compose["volumes"]
    assert "--appendonly yes" in db["environment"]["REDIS_ARGS"]
    assert "TIMEOUT 0" in db["environment"]["FALKORDB_ARGS"]


def test_deployed_servers_keep_the_aof_of_the_embedded_one():
    """An RDB base and rewrite thresholds keep a restart short (docs/operating.md); compose and
    Kubernetes pass the embedded server's AOF settings as they are."""
    from rescind.runtime.server import AOF

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    args = compose["services"]["falkordb"]["environment"]["REDIS_ARGS"]
    assert args.endswith(" " + " ".join(AOF))
    k8s = list(yaml.safe_load_all((ROOT / "deploy" / "k8s" / "falkordb.yaml").read_text()))
    env = [e for doc in k8s if doc and doc["kind"] == "StatefulSet"
           for c in doc["spec"]["template"]["spec"]["containers"] for e in c.get("env", [])]
    [args] = [e["value"] for e in env if e["name"] == "REDIS_ARGS"]
    assert args.endswith(" " + " ".join(AOF))


def test_deployed_servers_make_the_room_for_nodes_the_embedded_one_makes():
    """Compose and both Kubernetes deployments pass FalkorDB the NODE_CREATION_BUFFER the
    embedded server starts with by default (its load speed is measured with it)."""
    from rescind.runtime.settings import Settings

    want = f"NODE_CREATION_BUFFER {Settings.model_fields['node_creation_buffer'].default}"
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    found = [compose["services"]["falkordb"]["environment"]["FALKORDB_ARGS"],
             compose["x-falkordb-node"]["environment"]["FALKORDB_ARGS"]]
    for path in (ROOT / "deploy" / "k8s" / "falkordb.yaml",
                 ROOT / "deploy" / "k8s-cluster" / "falkordb-cluster.yaml"):
        docs = list(yaml.safe_load_all(path.read_text()))
        found += [e["value"] for doc in docs if doc and doc["kind"] == "StatefulSet"
                  for c in doc["spec"]["template"]["spec"]["containers"]
                  for e in c.get("env", []) if e["name"] == "FALKORDB_ARGS"]
    assert len(found) == 4 and all(want in args for args in found), found


def test_the_committed_asyncapi_document_is_current():
    """docs/asyncapi.json is what FastStream generates from the event contracts today."""
    from rescind.workers.spec import document

    assert (ROOT / "docs" / "asyncapi.json").read_text() == document()


@pytest.mark.parametrize("doc", manifests(), ids=lambda d: f"{d['kind']}/{d['metadata']['name']}")
def test_every_manifest_is_valid_kubernetes(doc):
    """Each resource validates against the Kubernetes 1.32 schema in strict mode (no unknown
    fields)."""
    kubernetes_validate.validate(doc, "1.32.0", strict=True)


def test_the_kustomization_applies_every_manifest():
    """No manifest is forgotten by `kubectl apply -k deploy/k8s`."""
    kust = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    assert sorted(kust["resources"]) == sorted(p.name for p in K8S.glob("*.yaml")
                                               if p.name != "kustomization.yaml")


def test_compose_is_valid_against_the_compose_spec():
    """check-jsonschema with the vendored compose-spec schema accepts docker-compose.yml."""
    res = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema",
                          "vendor.compose-spec", str(ROOT / "docker-compose.yml")],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout + res.stderr


def test_yaml_is_lint_clean():
    """yamllint (repository config) finds nothing in deploy/ and docker-compose.yml."""
    res = subprocess.run([sys.executable, "-m", "yamllint", "-c", str(ROOT / ".yamllint"),
                          str(ROOT / "deploy"), str(ROOT / "docker-compose.yml")],
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stdout


def test_every_command_deployed_is_a_real_rescind_command():
    """Compose services and Kubernetes containers run `rescind` commands that exist (through
    their groups: `api mcp --http`), with options those commands take and worker roles that
    exist; all four roles are deployed."""
    roles = set()
    for args in commands():
        runs_a_real_command(args)
        if args[0] == "worker":
            roles |= set(_roles(args))
    assert roles == set(ROLES)


def _roles(args: list[str]) -> list[str]:
    """The roles of a `worker` argument list: the words before its first option."""
    words = []
    for a in args[1:]:
        if a.startswith("-"):
            break
        words.append(a)
    return words


def test_every_setting_deployed_is_a_setting_the_code_reads():
    """RESCIND_* variables in compose and the ConfigMap are fields of rescind.runtime.settings (a typo
    would be silently ignored by pydantic-settings)."""
    fields = {f"RESCIND_{name.upper()}" for name in Settings.model_fields}
    env = dict(compose()["x-rescind"]["environment"])
    env.update(compose()["services"]["api"]["environment"])
    [config] = [d for d in manifests() if d["kind"] == "ConfigMap"
                and d["metadata"]["name"] == "rescind-settings"]
    env.update(config["data"])
    for doc in manifests():
        if doc["kind"] == "Deployment":
            for c in doc["spec"]["template"]["spec"]["containers"]:
                env.update({e["name"]: "" for e in c.get("env", [])})
    used = {k for k in env if k.startswith("RESCIND_")}
    assert used and used <= fields, used - fields


def test_workers_scale_within_their_groups_under_distinct_consumer_names():
    """Every worker Deployment names its consumer after its pod; compose relies on the default
    (host name and pid), so no two replicas share a consumer name."""
    workers = [d for d in manifests() if d["kind"] == "Deployment"
               and d["metadata"]["labels"].get("app.kubernetes.io/component") == "worker"]
    assert len(workers) == len(ROLES)
    for d in workers:
        [c] = d["spec"]["template"]["spec"]["containers"]
        assert c["args"][c["args"].index("--id") + 1] == "$(POD_NAME)"
        assert any(e["name"] == "POD_NAME" for e in c["env"])
    assert all("--id" not in svc["command"] for name, svc in compose()["services"].items()
               if svc.get("command", [""])[0] == "worker")


def test_the_collector_receives_what_the_settings_send():
    """The collector's OTLP/HTTP receiver listens on the port RESCIND_OTLP_ENDPOINT names, and
    every pipeline uses only components it defines."""
    endpoint = compose()["x-rescind"]["environment"]["RESCIND_OTLP_ENDPOINT"]
    [config] = [d for d in manifests() if d["kind"] == "ConfigMap"
                and d["metadata"]["name"] == "otel-collector"]
    for conf in (yaml.safe_load((ROOT / "deploy" / "otel-collector.yaml").read_text()),
                 yaml.safe_load(config["data"]["config.yaml"])):
        http = conf["receivers"]["otlp"]["protocols"]["http"]["endpoint"]
        assert http.rsplit(":", 1)[1] == str(urlparse(endpoint).port)
        for pipeline in conf["service"]["pipelines"].values():
            for part in ("receivers", "processors", "exporters"):
                assert set(pipeline[part]) <= set(conf[part])


# -- images, the FalkorDB password, the network ----------------------------------------------
def _images() -> list[str]:
    found = [svc["image"] for svc in compose()["services"].values()]
    for doc in manifests():
        if doc["kind"] in ("Deployment", "StatefulSet"):
            found += [c["image"] for c in doc["spec"]["template"]["spec"]["containers"]]
    return found


def test_every_image_is_pinned_and_rescinds_names_its_registry_by_a_variable():
    """No image floats (`:latest` or no tag); compose takes Rescind's image from RESCIND_IMAGE
    and the manifests from kustomization.yaml's images:, so a registry is set in one place."""
    for image in _images():
        if image == "rescind":  # the placeholder kustomize replaces
            continue
        name, _, tag = image.rpartition(":")
        assert name and tag and tag != "latest" and "/" not in tag, image
    for svc in rescind_services().values():
        assert svc["image"] == "${RESCIND_IMAGE:-rescind:0.1.0}"
    kust = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    [image] = kust["images"]
    assert image["name"] == "rescind" and image["newTag"] not in ("", "latest")
    assert "rescind" in [i for i in _images() if not i.startswith(("falkordb", "otel"))]
    assert ":latest" not in (ROOT / "deploy" / "Dockerfile").read_text()


def test_falkordb_is_internal_and_needs_the_password_rescind_sends():
    """Compose: FalkorDB publishes no port, sits on an internal network only, and requires the
    password that every Rescind service puts in RESCIND_URL. Kubernetes: the same password from
    one Secret, in FalkorDB's requirepass and in each Rescind container's RESCIND_URL (defined
    after the password, so $(FALKORDB_PASSWORD) expands), and a NetworkPolicy admitting only
    Rescind's pods."""
    c = compose()
    db = c["services"]["falkordb"]
    assert "ports" not in db and db["networks"] == ["backend"]
    assert c["networks"]["backend"]["internal"] is True
    assert db["environment"]["REDIS_ARGS"].startswith("--include /run/falkordb-auth/auth.conf ")
    assert "falkordb-auth:/run/falkordb-auth:ro" in db["volumes"]
    assert db["environment"]["REDISCLI_AUTH"] == "${FALKORDB_PASSWORD:?set FALKORDB_PASSWORD}"
    assert db["depends_on"]["falkordb-auth"]["condition"] == "service_completed_successfully"
    for name, svc in rescind_services().items():
        env = {**c["x-rescind"]["environment"], **svc.get("environment", {})}
        url = env["RESCIND_URL"]
        assert url == "redis://:${FALKORDB_PASSWORD:?set FALKORDB_PASSWORD}@falkordb:6379", name
        assert "backend" in svc["networks"], name
    published = {n for n, svc in c["services"].items() if svc.get("ports")}
    assert published == {"api", "otel-collector", "cluster-api", "tls-proxy"}
    for name in ("api", "otel-collector", "cluster-api"):  # the host's loopback alone
        assert all(p.startswith("127.0.0.1:") for p in c["services"][name]["ports"]), name

    [sts] = [d for d in manifests() if d["kind"] == "StatefulSet"]
    [db] = sts["spec"]["template"]["spec"]["containers"]
    [args] = [e["value"] for e in db["env"] if e["name"] == "REDIS_ARGS"]
    assert args.startswith("--include /run/falkordb-auth/auth.conf ")
    assert env_of(db)["REDISCLI_AUTH"]["valueFrom"]["secretKeyRef"] == {
        "name": "falkordb-auth", "key": "password"}
    [init] = sts["spec"]["template"]["spec"]["initContainers"]
    assert env_of(init)["FALKORDB_PASSWORD"]["valueFrom"]["secretKeyRef"] == {
        "name": "falkordb-auth", "key": "password"}
    secret_refs = set()
    for doc in manifests():
        if doc["kind"] not in ("Deployment", "StatefulSet"):
            continue
        for ctr in doc["spec"]["template"]["spec"]["containers"]:
            env = ctr.get("env", [])
            for e in env:
                ref = e.get("valueFrom", {}).get("secretKeyRef")
                if e["name"] == "FALKORDB_PASSWORD":
                    secret_refs.add((ref["name"], ref["key"]))
            if ctr["image"] == "rescind":
                names = [e["name"] for e in env]
                [url] = [e["value"] for e in env if e["name"] == "RESCIND_URL"]
                assert url == "redis://:$(FALKORDB_PASSWORD)@$(FALKORDB_ADDRESS)"
                assert names.index("FALKORDB_PASSWORD") < names.index("RESCIND_URL")
                assert ctr["envFrom"] == [{"configMapRef": {"name": "rescind-settings"}}]
    assert secret_refs == {("falkordb-auth", "password")}
    [config] = [d for d in manifests() if d["kind"] == "ConfigMap"
                and d["metadata"]["name"] == "rescind-settings"]
    assert "RESCIND_URL" not in config["data"] and config["data"]["FALKORDB_ADDRESS"]
    [policy] = [d for d in manifests() if d["kind"] == "NetworkPolicy"]
    assert policy["spec"]["podSelector"]["matchLabels"] == {"app.kubernetes.io/name": "falkordb"}
    [rule] = policy["spec"]["ingress"]
    assert rule["from"] == [{"podSelector": {"matchLabels": {"app.kubernetes.io/part-of":
                                                             "rescind"}}}]


def test_the_runtime_image_holds_no_tests_and_no_dev_dependencies():
    """The Dockerfile copies the package folders alone, installs no extra, and the runtime
    stage takes only the built virtualenv; .dockerignore keeps the rest out of the context."""
    text = (ROOT / "deploy" / "Dockerfile").read_text()
    steps = [line for line in text.splitlines() if line and not line.startswith("#")]
    copies = [line.split()[1] for line in steps if line.startswith("COPY") and "--from" not in line]
    assert sorted(copies) == ["agents", "middleware", "pyproject.toml", "services"]
    assert "pip install --no-cache-dir --disable-pip-version-check ." in text
    assert "[" not in " ".join(s for s in steps if "pip install" in s)  # no extra
    _, build, runtime = text.split("\nFROM ")
    assert build.endswith("\n") and "COPY --from=build /opt/rescind /opt/rescind" in runtime
    assert "pip install" not in runtime and "COPY --from" not in build
    ignored = [x for x in (ROOT / ".dockerignore").read_text().splitlines()
               if x and not x.startswith("#")]
    assert ignored[0] == "*" and not any("tests" in x for x in ignored)


# -- monitoring: the dashboard and the alert rules read metrics Rescind exports ---------------
MONITORING = ROOT / "deploy" / "monitoring"


def exported_series() -> set[str]:
    """Rescind's instruments (rescind.runtime.telemetry), as the collector's Prometheus exporter
    names their series: dots to underscores, the unit as a suffix, _total on counters, and
    _bucket/_sum/_count on histograms."""
    from opentelemetry.metrics import Counter, Histogram, ObservableGauge

    from rescind.runtime import telemetry

    units = {"ms": "milliseconds", "s": "seconds", "By": "bytes"}
    series = set()
    for value in vars(telemetry).values():
        if not isinstance(value, Counter | Histogram | ObservableGauge):
            continue
        name = getattr(value, "name", None) or value._name
        unit = getattr(value, "unit", None) if hasattr(value, "unit") else value._unit
        base = name.replace(".", "_") + (f"_{units[unit]}" if unit else "")
        if isinstance(value, Counter):
            series.add(base + "_total")
        elif isinstance(value, Histogram):
            series |= {base + "_bucket", base + "_sum", base + "_count"}
        else:
            series.add(base)
    return series


def _referenced(expr: str) -> set[str]:
    return set(re.findall(r"\brescind_[a-z_]+\b", expr))


def test_the_exported_series_are_known():
    """The translation above sees every instrument (a guard on the guard)."""
    series = exported_series()
    assert {"rescind_consumer_lag", "rescind_dead_letters", "rescind_gate_decisions_total",
            "rescind_retraction_duration_milliseconds_bucket",
            "rescind_events_applied_total"} <= series


def test_the_alert_rules_cover_lag_dead_letters_refusals_and_latency():
    """Every rule has an expression, a duration and a severity label, reads only series Rescind
    exports, and the four concerns each have an alert."""
    rules = yaml.safe_load((MONITORING / "alerts.yaml").read_text())
    alerts = [r for g in rules["groups"] for r in g["rules"]]
    series = exported_series()
    read = set()
    for rule in alerts:
        assert {"alert", "expr", "for", "labels", "annotations"} <= set(rule), rule
        assert re.fullmatch(r"\d+[smh]", rule["for"]), rule
        assert rule["labels"]["severity"] in {"info", "warning", "critical"}
        assert rule["annotations"]["summary"]
        used = _referenced(rule["expr"])
        assert used and used <= series, (rule["alert"], used - series)
        read |= used
    assert {"rescind_consumer_lag", "rescind_dead_letters", "rescind_gate_decisions_total",
            "rescind_retraction_duration_milliseconds_bucket"} <= read
    refusals = next(r for r in alerts if "rescind_gate_decisions_total" in r["expr"])
    assert 'decision="blocked"' in refusals["expr"]


def test_the_grafana_dashboard_reads_what_rescind_exports():
    """The dashboard parses, each panel queries Prometheus through the dashboard's datasource
    variable, and every series it reads is one Rescind exports."""
    dash = json.loads((MONITORING / "grafana-dashboard.json").read_text())
    assert dash["uid"] and dash["title"]
    [var] = [v for v in dash["templating"]["list"] if v["type"] == "datasource"]
    series, read = exported_series(), set()
    for panel in dash["panels"]:
        assert panel["targets"], panel["title"]
        for t in panel["targets"]:
            assert t["datasource"]["uid"] == "${" + var["name"] + "}"
            used = _referenced(t["expr"])
            assert used and used <= series, (panel["title"], used - series)
            read |= used
    assert {"rescind_consumer_lag", "rescind_dead_letters", "rescind_gate_decisions_total",
            "rescind_retraction_duration_milliseconds_bucket"} <= read


def test_the_collector_exposes_prometheus_metrics_where_the_monitoring_reads():
    """Both collector configurations send the metrics pipeline to the Prometheus exporter on
    :8889, which compose publishes on loopback and the Kubernetes Service exposes."""
    [config] = [d for d in manifests() if d["kind"] == "ConfigMap"
                and d["metadata"]["name"] == "otel-collector"]
    for conf in (yaml.safe_load((ROOT / "deploy" / "otel-collector.yaml").read_text()),
                 yaml.safe_load(config["data"]["config.yaml"])):
        assert conf["exporters"]["prometheus"]["endpoint"].endswith(":8889")
        assert "prometheus" in conf["service"]["pipelines"]["metrics"]["exporters"]
    assert compose()["services"]["otel-collector"]["ports"] == ["127.0.0.1:8889:8889"]
    [svc] = [d for d in manifests() if d["kind"] == "Service"
             and d["metadata"]["name"] == "otel-collector"]
    assert 8889 in {p["port"] for p in svc["spec"]["ports"]}


# -- a Redis Cluster: the overlay deploy/k8s-cluster and compose's profile `cluster` -----------
CLUSTER = ROOT / "deploy" / "k8s-cluster"


def cluster_manifests() -> list[dict]:
    return [doc for path in sorted(CLUSTER.glob("*.yaml")) if path.name != "kustomization.yaml"
            for doc in yaml.safe_load_all(path.read_text()) if doc]


def one(docs: list[dict], kind: str, name: str | None = None) -> dict:
    [doc] = [d for d in docs if d["kind"] == kind and name in (None, d["metadata"]["name"])]
    return doc


def runs_a_real_command(args: list[str]) -> None:
    """``args`` name a `rescind` command (through its groups; `api` takes options itself) and
    only options it takes."""
    cmd = typer.main.get_command(app)
    while hasattr(cmd, "commands") and args and not args[0].startswith("-"):
        cmd, args = cmd.commands[args[0]], args[1:]
    options = {o for p in cmd.params if p.param_type_name == "option" for o in p.opts}
    assert {a for a in args if a.startswith("--")} <= options, (args, options)


def env_of(container: dict) -> dict[str, dict]:
    return {e["name"]: e for e in container.get("env", [])}


def bootstrap_nodes(args: list[str]) -> tuple[list, int]:
    """The nodes and the replicas per master a `rescind cluster bootstrap` is given."""
    from rescind.runtime.bootstrap import parse_nodes

    return parse_nodes(args[args.index("--nodes") + 1]), int(args[args.index("--replicas") + 1])


def test_the_bootstraps_slots_cover_every_slot_once_in_equal_ranges():
    """Three masters (six nodes, one replica each) share 0..16383: each slot owned once, and
    no master holds more than one slot more than another."""
    from rescind.runtime.bootstrap import SLOTS, masters_of, slot_ranges

    for args in ([c["args"] for c in one(cluster_manifests(), "Job")["spec"]["template"]["spec"]
                  ["containers"]], [compose()["services"]["cluster-bootstrap"]["command"]]):
        [args] = args
        nodes, replicas = bootstrap_nodes(args)
        masters = masters_of(len(nodes), replicas)
        assert (masters, replicas) == (3, 1)
        owners = [0] * SLOTS
        for lo, hi in slot_ranges(masters):
            for slot in range(lo, hi + 1):
                owners[slot] += 1
        assert owners == [1] * SLOTS
        sizes = [hi - lo + 1 for lo, hi in slot_ranges(masters)]
        assert max(sizes) - min(sizes) <= 1


@pytest.mark.parametrize("doc", cluster_manifests(),
                         ids=lambda d: f"{d['kind']}/{d['metadata']['name']}")
def test_every_cluster_manifest_is_valid_kubernetes(doc):
    kubernetes_validate.validate(doc, "1.32.0", strict=True)


def test_the_cluster_overlay_is_the_base_with_a_cluster_for_its_server():
    """deploy/k8s-cluster lists the base and every manifest of its own; rendered (kubectl
    kustomize, when there is a kubectl), every resource is valid, the base's single server is
    gone, the Service `falkordb` that RESCIND_URL names selects the cluster's nodes, and as many
    writers run as there are partitions."""
    kust = yaml.safe_load((CLUSTER / "kustomization.yaml").read_text())
    assert kust["resources"][0] == "../k8s"
    assert sorted(kust["resources"][1:]) == sorted(p.name for p in CLUSTER.glob("*.yaml")
                                                   if p.name != "kustomization.yaml")
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("no kubectl here to render the overlay")
    res = subprocess.run([kubectl, "kustomize", str(CLUSTER)], capture_output=True, text=True,
                         timeout=120)
    assert res.returncode == 0, res.stderr
    docs = [d for d in yaml.safe_load_all(res.stdout) if d]
    for doc in docs:
        kubernetes_validate.validate(doc, "1.32.0", strict=True)
        assert doc["kind"] == "Namespace" or doc["metadata"]["namespace"] == "rescind"
    [sts] = [d for d in docs if d["kind"] == "StatefulSet"]
    assert sts["metadata"]["name"] == "falkordb-cluster"
    pods = sts["spec"]["template"]["metadata"]["labels"]
    config = one(docs, "ConfigMap", "rescind-settings")["data"]
    host, port = config["FALKORDB_ADDRESS"].split(":")
    service = one(docs, "Service", host)
    assert service["spec"]["selector"].items() <= pods.items()
    assert int(port) in {p["port"] for p in service["spec"]["ports"]}
    assert one(docs, "NetworkPolicy", "falkordb")["spec"]["podSelector"]["matchLabels"].items() \
        <= pods.items()
    writers = one(docs, "Deployment", "rescind-writer")
    assert writers["spec"]["replicas"] == int(config["RESCIND_PARTITIONS"]) == 4
    for doc in docs:  # every Rescind container sends the password to that address
        if doc["kind"] in ("Deployment", "Job"):
            for c in doc["spec"]["template"]["spec"]["containers"]:
                if c["image"].startswith("rescind"):
                    runs_a_real_command(c["args"])
                    assert env_of(c)["FALKORDB_PASSWORD"]["valueFrom"]["secretKeyRef"] == {
                        "name": "falkordb-auth", "key": "password"}


def test_the_cluster_nodes_are_six_with_their_state_on_their_volumes():
    """Six pods started together, cluster mode on, nodes.conf and the AOF on the volume, the
    password for clients and for replicas, each announcing its stable DNS name; the bus port is
    the one the bootstrap and the Services assume (port + 10000)."""
    from rescind.runtime.server import AOF

    docs = cluster_manifests()
    sts = one(docs, "StatefulSet")
    spec = sts["spec"]
    assert spec["replicas"] == 6 and spec["podManagementPolicy"] == "Parallel"
    [db] = spec["template"]["spec"]["containers"]
    assert db["image"] == "falkordb/falkordb:v4.16.3"
    env = env_of(db)
    names = list(env)
    assert names.index("POD_NAME") < names.index("REDIS_ARGS")
    assert env["REDISCLI_AUTH"]["valueFrom"]["secretKeyRef"] == {"name": "falkordb-auth",
                                                                 "key": "password"}
    assert env["POD_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    args = env["REDIS_ARGS"]["value"].split()
    opts = dict(zip(args[::2], args[1::2], strict=True))
    # requirepass and masterauth: in the file the init container writes from the Secret
    [init] = spec["template"]["spec"]["initContainers"]
    assert env_of(init)["FALKORDB_PASSWORD"]["valueFrom"]["secretKeyRef"] == {
        "name": "falkordb-auth", "key": "password"}
    script = init["command"][-1]
    assert "requirepass %s" in script and "masterauth %s" in script
    assert script.endswith("> " + opts["--include"])
    assert opts["--cluster-enabled"] == "yes" and opts["--appendonly"] == "yes"
    [mount, auth] = db["volumeMounts"]
    assert opts["--include"].startswith(auth["mountPath"] + "/") and auth["readOnly"]
    assert opts["--dir"] == mount["mountPath"]
    assert opts["--cluster-config-file"].startswith(mount["mountPath"] + "/")
    assert mount["name"] == spec["volumeClaimTemplates"][0]["metadata"]["name"]
    assert env["REDIS_ARGS"]["value"].endswith(" " + " ".join(AOF))
    assert opts["--cluster-announce-hostname"] == f"$(POD_NAME).{spec['serviceName']}"
    assert opts["--cluster-preferred-endpoint-type"] == "hostname"
    ports = {p["name"]: p["containerPort"] for p in db["ports"]}
    assert ports == {"redis": 6379, "bus": 6379 + 10_000}
    assert "cluster_state:ok" in " ".join(db["readinessProbe"]["exec"]["command"])

    pods = spec["template"]["metadata"]["labels"]
    assert spec["selector"]["matchLabels"].items() <= pods.items()
    assert pods["app.kubernetes.io/part-of"] == "rescind"
    headless = one(docs, "Service", spec["serviceName"])
    assert headless["spec"]["clusterIP"] == "None"
    assert headless["spec"]["publishNotReadyAddresses"] is True  # reached before it is ready
    assert headless["spec"]["selector"].items() <= pods.items()
    assert {p["port"] for p in headless["spec"]["ports"]} == set(ports.values())
    [term] = spec["template"]["spec"]["affinity"]["podAntiAffinity"][
        "preferredDuringSchedulingIgnoredDuringExecution"]
    assert term["podAffinityTerm"]["topologyKey"] == "kubernetes.io/hostname"
    assert term["podAffinityTerm"]["labelSelector"]["matchLabels"].items() <= pods.items()
    pdb = one(docs, "PodDisruptionBudget")
    assert pdb["spec"]["maxUnavailable"] == 1
    assert pdb["spec"]["selector"]["matchLabels"].items() <= pods.items()
    bus = one(docs, "NetworkPolicy")
    assert bus["spec"]["podSelector"]["matchLabels"].items() <= pods.items()
    [rule] = bus["spec"]["ingress"]
    assert rule["ports"] == [{"port": ports["bus"], "protocol": "TCP"}]
    assert rule["from"][0]["podSelector"]["matchLabels"].items() <= pods.items()


def test_the_bootstrap_job_names_every_pod_masters_first_and_reads_the_password():
    """The Job runs `rescind cluster bootstrap` over the StatefulSet's six pods by their DNS
    names, in ordinal order (0..2 masters, 3..5 their replicas), with the password from the
    Secret in its environment and never on its command line."""
    docs = cluster_manifests()
    sts, job = one(docs, "StatefulSet"), one(docs, "Job")
    [c] = job["spec"]["template"]["spec"]["containers"]
    assert c["image"] == "rescind" and c["args"][:2] == ["cluster", "bootstrap"]
    runs_a_real_command(c["args"])
    nodes, _ = bootstrap_nodes(c["args"])
    name, service = sts["metadata"]["name"], sts["spec"]["serviceName"]
    assert [(n.host, n.port, n.bus_port) for n in nodes] == [
        (f"{name}-{i}.{service}", 6379, 16379) for i in range(sts["spec"]["replicas"])]
    assert env_of(c)["FALKORDB_PASSWORD"]["valueFrom"]["secretKeyRef"] == {
        "name": "falkordb-auth", "key": "password"}
    assert not any("PASSWORD" in a for a in c["args"])
    assert job["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/part-of"] == "rescind"
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "OnFailure"


def test_compose_profile_cluster_runs_six_internal_nodes_with_a_password():
    """Profile `cluster`: six nodes of the pinned image, none published, on the internal
    network alone, each with its own volume, cluster mode, requirepass and masterauth (from the
    file falkordb-auth writes), its service name announced, and the embedded server's AOF."""
    from rescind.runtime.server import AOF

    c = compose()
    nodes = {n: s for n, s in c["services"].items()
             if s.get("profiles") == ["cluster"] and s["image"].startswith("falkordb/")}
    assert sorted(nodes) == [f"falkordb-node-{i}" for i in range(6)]
    volumes = set()
    for name, node in nodes.items():
        assert node["image"] == c["services"]["falkordb"]["image"] == "falkordb/falkordb:v4.16.3"
        assert "ports" not in node and node["networks"] == ["backend"]
        assert node["hostname"] == name
        args = node["environment"]["REDIS_ARGS"]
        assert args.startswith("--include /run/falkordb-auth/auth.conf ")
        assert "falkordb-auth:/run/falkordb-auth:ro" in node["volumes"]
        assert node["depends_on"]["falkordb-auth"]["condition"] == \
            "service_completed_successfully"
        assert "--cluster-enabled yes" in args and args.endswith(" " + " ".join(AOF))
        assert f"--cluster-announce-hostname {name} " in args
        assert "--cluster-config-file /data/nodes.conf" in args
        [volume, _auth] = node["volumes"]
        source, target = volume.split(":")
        assert target == "/data" and source in c["volumes"]
        volumes.add(source)
    assert len(volumes) == 6


def test_compose_profile_cluster_bootstraps_then_runs_rescind_on_the_cluster():
    """The bootstrap names the six nodes (masters first), waits for them, reads the password
    from its environment; the API and every worker role wait for it to finish, reach a node
    with the password, and run as many writers as partitions; only the API is published."""
    c = compose()
    boot = c["services"]["cluster-bootstrap"]
    runs_a_real_command(boot["command"])
    nodes, _ = bootstrap_nodes(boot["command"])
    assert [str(n) for n in nodes] == [f"falkordb-node-{i}:6379" for i in range(6)]
    assert set(boot["depends_on"]) == {n.host for n in nodes}
    assert boot["environment"] == {"FALKORDB_PASSWORD": "${FALKORDB_PASSWORD:?set FALKORDB_PASSWORD}"}
    assert boot["networks"] == ["backend"] and boot["restart"] == "no"

    services = rescind_services("cluster")
    roles = set()
    fields = {f"RESCIND_{name.upper()}" for name in Settings.model_fields}
    for name, svc in services.items():
        runs_a_real_command(svc["command"])
        if svc["command"][0] == "worker":
            roles |= set(_roles(svc["command"]))
        if name == "cluster-bootstrap":
            continue
        assert svc["depends_on"]["cluster-bootstrap"]["condition"] == \
            "service_completed_successfully"
        env = svc["environment"]
        assert {k for k in env if k.startswith("RESCIND_")} <= fields
        url = urlparse(env["RESCIND_URL"].replace("${FALKORDB_PASSWORD:?set FALKORDB_PASSWORD}",
                                                  "PASSWORD"))
        assert url.password == "PASSWORD" and f"{url.hostname}:{url.port}" in map(str, nodes)
        assert "backend" in svc["networks"]
    assert roles == set(ROLES) and "cluster-api" in services
    writer = services["cluster-writer"]
    assert writer["deploy"]["replicas"] == int(writer["environment"]["RESCIND_PARTITIONS"])
    published = {n for n, s in c["services"].items()
                 if s.get("profiles") == ["cluster"] and s.get("ports")}
    assert published == {"cluster-api"}
    assert c["services"]["cluster-api"]["ports"] != c["services"]["api"]["ports"]
