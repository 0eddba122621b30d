"""docker-compose.yml and deploy/ are valid and say what the product needs. Docker and a cluster
cannot run here, so they are checked against their schemas (compose-spec; Kubernetes 1.32 in
strict mode) and against the code: every command is a real `rescind` command, every setting a
real setting, every manifest in the kustomization."""

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


def commands() -> list[list[str]]:
    """Every `rescind ...` argument list the deployment runs."""
    found = [svc["command"] for svc in compose()["services"].values()
             if svc.get("image", "").startswith("rescind")]
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
    assert compose["services"]["falkordb"]["environment"]["REDIS_ARGS"] == " ".join(AOF)
    k8s = list(yaml.safe_load_all((ROOT / "deploy" / "k8s" / "falkordb.yaml").read_text()))
    env = [e for doc in k8s if doc and doc["kind"] == "StatefulSet"
           for c in doc["spec"]["template"]["spec"]["containers"] for e in c.get("env", [])]
    assert {"name": "REDIS_ARGS", "value": " ".join(AOF)} in env


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
    """Compose services and Kubernetes containers run `rescind` commands that exist, with
    options those commands take and worker roles that exist; all four roles are deployed."""
    group = typer.main.get_command(app)
    roles = set()
    for args in commands():
        cmd = group.commands[args[0]]
        options = {o for p in cmd.params if p.param_type_name == "option" for o in p.opts}
        given = [a for a in args[1:] if a.startswith("--")]
        assert set(given) <= options, (args, options)
        if args[0] == "worker":
            roles |= {a for a in args[1:] if not a.startswith("-") and not a.startswith("$")}
    assert roles == set(ROLES)


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
