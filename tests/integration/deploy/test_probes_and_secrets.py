"""Issue 31's deployment: every compose service that keeps running has a health check, the
Kubernetes containers have the probes that fit them (the API ready on /api/health), the MCP
server is deployed, the API is served over TLS only, the gate's settings reach the services,
and no secret is ever on a command line."""

from __future__ import annotations

import re
import shlex

import yaml

from rescind.runtime.settings import Settings
from tests.integration.deploy.test_deploy import (
    cluster_manifests,
    compose,
    env_of,
    manifests,
    runs_a_real_command,
)
from tests.support.paths import ROOT

# Options that take a secret as their value, in the programs the deployment runs.
SECRET_FLAGS = {"-a", "--pass", "--password", "--requirepass", "--masterauth", "--token",
                "--admin-token", "-p"}


def _workloads() -> list[dict]:
    return [d for d in manifests() + cluster_manifests()
            if d["kind"] in ("Deployment", "StatefulSet", "Job")]


def _containers(doc: dict) -> list[dict]:
    spec = doc["spec"]["template"]["spec"]
    return spec.get("initContainers", []) + spec["containers"]


def _secret_vars(container: dict) -> set[str]:
    """The environment variables a container takes from a Secret (and the compose ones)."""
    return {e["name"] for e in container.get("env", [])
            if "secretKeyRef" in e.get("valueFrom", {})}


def _argv_problems(argv: list[str], secret_vars: set[str]) -> list[str]:
    """What puts a secret on this argument list: a password-like option, a secret variable
    expanded by Kubernetes ($(X)) or compose (${X...}) into it, or a shell script that passes
    a secret variable to any command but the shell's own printf (which has no argv)."""
    problems = []
    words = list(argv)
    if len(argv) >= 3 and argv[0] in ("sh", "bash") and argv[1] == "-c":
        script = " ".join(argv[2:])
        words = shlex.split(script.replace("$$", "$"), posix=True)
        for step in re.split(r"&&|\|\||;|\|", script.replace("$$", "$")):
            named = {v for v in secret_vars if re.search(rf"\$\{{?{v}\b", step)}
            if named and not step.strip().startswith("printf "):
                problems.append(f"{sorted(named)} passed to {step.strip()!r}")
    for i, w in enumerate(words):
        if w.split("=", 1)[0] in SECRET_FLAGS:
            problems.append(f"option {w!r} in {argv}")
        for v in secret_vars:
            if f"$({v})" in w or "${" + v in w:
                problems.append(f"{v} expanded into argument {i} of {argv}")
    return problems


def _k8s_argvs() -> list[tuple[str, list[str], set[str]]]:
    """Every argument list a Kubernetes container runs: command + args, the exec probes, and
    redis-server's (REDIS_ARGS, FALKORDB_ARGS: the FalkorDB image puts them on its argv)."""
    found = []
    for doc in _workloads():
        for c in _containers(doc):
            where = f"{doc['kind']}/{doc['metadata']['name']}/{c['name']}"
            secrets = _secret_vars(c) | {"FALKORDB_PASSWORD", "RESCIND_ADMIN_TOKEN"}
            found.append((where, c.get("command", []) + c.get("args", []), secrets))
            for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
                if "exec" in c.get(probe, {}):
                    found.append((f"{where} {probe}", c[probe]["exec"]["command"], secrets))
            for e in c.get("env", []):
                if e["name"] in ("REDIS_ARGS", "FALKORDB_ARGS"):
                    found.append((f"{where} {e['name']}", e["value"].split(), secrets))
    return found


def _compose_argvs() -> list[tuple[str, list[str], set[str]]]:
    """Every argument list a compose service runs: entrypoint + command, its health check, and
    redis-server's (REDIS_ARGS, FALKORDB_ARGS)."""
    found = []
    secrets = {"FALKORDB_PASSWORD", "RESCIND_ADMIN_TOKEN", "REDISCLI_AUTH"}
    for name, svc in compose()["services"].items():
        command = svc.get("command", [])
        command = shlex.split(command) if isinstance(command, str) else command
        found.append((name, list(svc.get("entrypoint", [])) + command, secrets))
        test = svc.get("healthcheck", {}).get("test", [])
        if test[:1] == ["CMD"]:
            found.append((f"{name} healthcheck", test[1:], secrets))
        elif test[:1] == ["CMD-SHELL"]:
            found.append((f"{name} healthcheck", ["sh", "-c", test[1]], secrets))
        for key in ("REDIS_ARGS", "FALKORDB_ARGS"):
            if key in svc.get("environment", {}):
                found.append((f"{name} {key}", svc["environment"][key].split(), secrets))
    return found


def test_no_secret_is_on_a_command_line():
    """No container (Kubernetes, both kustomizations, init containers and exec probes included)
    and no compose service (command, entrypoint, health check, redis-server's arguments) puts a
    password or token on an argument list, where `ps` shows it to every user of the host."""
    everything = _k8s_argvs() + _compose_argvs()
    assert len(everything) > 40
    problems = [f"{where}: {p}" for where, argv, secrets in everything
                for p in _argv_problems(argv, secrets)]
    assert not problems, "\n".join(problems)


def test_the_secret_check_sees_the_ways_a_password_reaches_argv():
    """The check above flags -a, --requirepass with a Kubernetes or compose expansion, and a
    secret variable a script passes to a program; it lets printf (a shell builtin) write it."""
    pw = {"FALKORDB_PASSWORD"}
    assert _argv_problems(["redis-cli", "-a", "x", "PING"], pw)
    assert _argv_problems(["--requirepass", "$(FALKORDB_PASSWORD)"], pw)
    assert _argv_problems(["--include", "x", "--masterauth", "${FALKORDB_PASSWORD:?}"], pw)
    assert _argv_problems(["sh", "-c", 'redis-cli -a "$FALKORDB_PASSWORD" PING'], pw)
    assert _argv_problems(["sh", "-c", 'x && redis-cli --user u --pass "$$FALKORDB_PASSWORD"'], pw)
    assert not _argv_problems(["sh", "-c", "umask 077 && printf 'requirepass %s' "
                               '"$FALKORDB_PASSWORD" > /a/auth.conf'], pw)


# -- compose ---------------------------------------------------------------------------------
def _long_running(services: dict) -> dict:
    return {n: s for n, s in services.items() if s.get("restart") != "no"}


def test_every_compose_service_that_keeps_running_has_a_health_check():
    """Every service but the one-shot ones (the password file, the cluster bootstrap) has a
    health check; Rescind's run a real `rescind health` command: each worker reads the
    heartbeat file its command writes, the API and MCP checks ask the port they listen on."""
    services = compose()["services"]
    running = _long_running(services)
    assert {"falkordb", "api", "mcp", "writer", "retraction", "gate", "reaper",
            "otel-collector", "tls-proxy"} <= set(running)
    assert set(services) - set(running) == {"falkordb-auth", "cluster-bootstrap"}
    for name, svc in running.items():
        test = svc.get("healthcheck", {}).get("test")
        assert test and test[0] in ("CMD", "CMD-SHELL"), name
        argv = test[1:]
        if argv[0] != "rescind":
            continue
        runs_a_real_command(argv[1:])
        command = svc["command"]
        if command[0] == "worker":
            assert argv[1:3] == ["health", "worker"], name
            beat = command[command.index("--heartbeat") + 1]
            assert argv[argv.index("--heartbeat") + 1] == beat, name
        else:
            port = command[command.index("--port") + 1]
            kind = "mcp" if command[:2] == ["api", "mcp"] else "api"
            assert argv[1:3] == ["health", kind], name
            assert argv[argv.index("--url") + 1] == f"http://127.0.0.1:{port}", name
    # the collector's check asks the health_check extension its configuration enables
    conf = yaml.safe_load((ROOT / "deploy" / "otel-collector.yaml").read_text())
    port = conf["extensions"]["health_check"]["endpoint"].rsplit(":", 1)[1]
    assert "health_check" in conf["service"]["extensions"]
    assert running["otel-collector"]["healthcheck"]["test"][-1] == f"http://127.0.0.1:{port}/"
    dockerfile = ROOT / "deploy" / running["otel-collector"]["build"]["dockerfile"]
    assert "COPY --from=tools /bin/busybox /bin/busybox" in dockerfile.read_text()


def test_compose_serves_the_api_and_mcp_over_tls_only():
    """The API and the MCP server listen in plain HTTP on the compose networks (the API also on
    the host's loopback); the TLS proxy is the only port on the host's interfaces, and its
    Caddyfile sends /mcp to the MCP server and the rest to the API, at their ports."""
    services = compose()["services"]
    proxy = services["tls-proxy"]
    assert proxy["ports"] == ["443:443"]
    assert "./deploy/Caddyfile:/etc/caddy/Caddyfile:ro" in proxy["volumes"]
    assert services["api"]["ports"] == ["127.0.0.1:8000:8000"]
    assert "ports" not in services["mcp"]
    assert services["mcp"]["command"][:3] == ["api", "mcp", "--http"]
    caddy = (ROOT / "deploy" / "Caddyfile").read_text()
    assert re.search(r"handle /mcp\* \{\s*reverse_proxy mcp:8766\s*\}", caddy)
    assert re.search(r"handle \{\s*reverse_proxy api:8000\s*\}", caddy)
    assert "8766" in services["mcp"]["command"] and "8000" in services["api"]["command"]
    for name in ("api", "mcp"):
        assert proxy["depends_on"][name]["condition"] == "service_healthy"
        assert set(services[name]["networks"]) & set(proxy["networks"])


def _defaults(env: dict) -> dict:
    """Compose's ${NAME:-default} values as the services would see them with nothing set."""
    return {k: re.sub(r"\$\{[A-Z_]+:-(.*)\}$", r"\1", str(v)) for k, v in env.items()}


def test_compose_passes_the_gate_settings_with_the_codes_defaults(monkeypatch):
    """Every Rescind service (API, MCP, workers, both profiles) is given RESCIND_GATE_* from the
    host's environment, each defaulting to the setting's own default; a value set on the host
    reaches the settings."""
    gate = {"RESCIND_GATE_THRESHOLD", "RESCIND_GATE_MIN_DOMAINS", "RESCIND_GATE_CURRENCY",
            "RESCIND_GATE_RATES", "RESCIND_GATE_REQUIRE_CURRENCY", "RESCIND_GATE_WINDOW_DAYS"}
    c = compose()
    for name, svc in c["services"].items():
        if svc.get("build", {}).get("dockerfile") == "deploy/Dockerfile" and \
                name != "cluster-bootstrap":
            assert gate <= set(svc["environment"]), name
    env = c["x-rescind"]["environment"]
    for key in gate:
        assert env[key].startswith("${" + key + ":-"), key
    for key in gate:
        monkeypatch.setenv(key, _defaults(env)[key])
    assert Settings().model_dump(include={k[8:].lower() for k in gate}) == \
        Settings.model_construct().model_dump(include={k[8:].lower() for k in gate})
    monkeypatch.setenv("RESCIND_GATE_RATES", '{"EUR": 1.08}')
    assert Settings().gate_rates == {"EUR": 1.08}


# -- Kubernetes ------------------------------------------------------------------------------
def _deployment(name: str) -> dict:
    [d] = [d for d in manifests() if d["kind"] == "Deployment" and d["metadata"]["name"] == name]
    return d


def test_the_api_is_ready_on_its_health_and_alive_without_falkordb():
    """The API's readiness asks /api/health (503 while FalkorDB is down: no traffic to a pod
    that cannot answer); its liveness asks a path that needs neither a token nor the graph, so
    a FalkorDB outage does not restart every API pod."""
    [c] = _deployment("rescind-api")["spec"]["template"]["spec"]["containers"]
    ready, alive = c["readinessProbe"]["httpGet"], c["livenessProbe"]["httpGet"]
    port = {p["name"]: p["containerPort"] for p in c["ports"]}
    assert ready["path"] == "/api/health" and ready["port"] in port
    assert alive["path"] == "/api/openapi.json" and alive["port"] in port
    assert "tcpSocket" not in c["readinessProbe"]


def test_every_worker_has_a_liveness_probe_on_its_heartbeat():
    """Each worker role's container writes a heartbeat (--heartbeat) and its liveness probe is
    `rescind health worker` on the same file."""
    workers = [d for d in manifests() if d["kind"] == "Deployment"
               and d["metadata"]["labels"].get("app.kubernetes.io/component") == "worker"]
    assert len(workers) == 4
    for d in workers:
        [c] = d["spec"]["template"]["spec"]["containers"]
        probe = c["livenessProbe"]["exec"]["command"]
        assert probe[:3] == ["rescind", "health", "worker"], d["metadata"]["name"]
        runs_a_real_command(probe[1:])
        beat = c["args"][c["args"].index("--heartbeat") + 1]
        assert probe[probe.index("--heartbeat") + 1] == beat


def test_every_long_running_container_has_a_liveness_probe():
    """Every container of a Deployment or StatefulSet (both kustomizations) has a liveness
    probe; the servers (API, MCP, FalkorDB, the collector) a readiness probe too; exec probes
    that run `rescind` run a real command."""
    for doc in _workloads():
        if doc["kind"] == "Job":
            continue
        for c in doc["spec"]["template"]["spec"]["containers"]:
            where = f"{doc['metadata']['name']}/{c['name']}"
            assert "livenessProbe" in c, where
            if c.get("ports"):
                assert "readinessProbe" in c, where
            for probe in ("readinessProbe", "livenessProbe"):
                argv = c.get(probe, {}).get("exec", {}).get("command", [])
                if argv[:1] == ["rescind"]:
                    runs_a_real_command(argv[1:])


def test_the_mcp_server_is_deployed_with_a_service_behind_the_tls_ingress():
    """A Deployment runs `rescind api mcp --http` on 8766 with the API's settings and FalkorDB
    URL, probed by `rescind health mcp` on that port; a Service selects it; the Ingress
    terminates TLS and routes /mcp to it and the rest to the API's Service."""
    d = _deployment("rescind-mcp")
    [c] = d["spec"]["template"]["spec"]["containers"]
    args = c["args"]
    assert args[:3] == ["api", "mcp", "--http"]
    runs_a_real_command(args)
    port = int(args[args.index("--port") + 1])
    assert port == Settings.model_fields["mcp_port"].default == 8766
    assert [p["containerPort"] for p in c["ports"]] == [port]
    assert env_of(c)["RESCIND_URL"]["value"] == "redis://:$(FALKORDB_PASSWORD)@$(FALKORDB_ADDRESS)"
    assert c["envFrom"] == [{"configMapRef": {"name": "rescind-settings"}}]
    for probe in ("readinessProbe", "livenessProbe"):
        argv = c[probe]["exec"]["command"]
        assert argv[:3] == ["rescind", "health", "mcp"]
        assert argv[argv.index("--url") + 1] == f"http://127.0.0.1:{port}"
    pods = d["spec"]["template"]["metadata"]["labels"]
    assert pods["app.kubernetes.io/part-of"] == "rescind"  # admitted by FalkorDB's policy
    services = {s["metadata"]["name"]: s for s in manifests() if s["kind"] == "Service"}
    mcp = services["rescind-mcp"]
    assert mcp["spec"]["selector"].items() <= pods.items()
    assert mcp["spec"].get("type", "ClusterIP") == "ClusterIP"
    assert [p["targetPort"] for p in mcp["spec"]["ports"]] == [port]

    [ing] = [d for d in manifests() if d["kind"] == "Ingress"]
    [tls] = ing["spec"]["tls"]
    [rule] = ing["spec"]["rules"]
    assert tls["secretName"] and rule["host"] in tls["hosts"]
    routes = {p["path"]: p["backend"]["service"] for p in rule["http"]["paths"]}
    assert routes["/mcp"]["name"] == "rescind-mcp" and routes["/"]["name"] == "rescind-api"
    for svc in routes.values():
        names = {p["name"] for p in services[svc["name"]]["spec"]["ports"]}
        assert svc["port"]["name"] in names
    assert services["rescind-api"]["spec"].get("type", "ClusterIP") == "ClusterIP"
