# The two commands a newcomer needs: `make demo` and `make test`.
# `make demo` installs the runtime alone (what `pip install rescind` brings: no test tools, no
# browser driver, no torch); `make test` and the other developer targets install the `dev` extra.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUNTIME := $(VENV)/.runtime
STAMP := $(VENV)/.installed

.PHONY: install install-runtime demo shell test test-cluster screenshots test-unit test-integration test-e2e bench lint \
        clean

$(BIN)/python:
	$(PY) -m venv $(VENV)

# pip's own lines (Collecting…, Installing collected packages…) are the progress.
$(RUNTIME): pyproject.toml | $(BIN)/python
	@echo "Installing Rescind's runtime into $(VENV) (the first time takes about a minute)…"
	$(BIN)/python -m pip install --disable-pip-version-check --progress-bar on -e .
	touch $(RUNTIME)

$(STAMP): pyproject.toml | $(BIN)/python
	# The console's browser test drives Debian's Chromium (Playwright cannot download browsers).
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)
	@echo "Installing Rescind with its dev extra into $(VENV) (tests, linters, benchmarks)…"
	$(BIN)/python -m pip install --disable-pip-version-check --quiet --upgrade pip
	$(BIN)/python -m pip install --disable-pip-version-check --progress-bar on -e '.[dev]'
	touch $(STAMP) $(RUNTIME)

install-runtime: $(RUNTIME)

install: $(STAMP)

# The demo's story ends with the commands to explore the week (with this venv's rescind).
demo: $(RUNTIME)
	$(BIN)/rescind demo

# A shell with this venv's `rescind` (and python) first on PATH; `exit` leaves it.
shell: $(RUNTIME)
	@echo "rescind is on your PATH ($(CURDIR)/$(BIN)); type exit to leave this shell."
	@VIRTUAL_ENV="$(CURDIR)/$(VENV)" PATH="$(CURDIR)/$(BIN):$$PATH" $${SHELL:-/bin/sh}

# Everything against one embedded server, then what a Redis Cluster changes (keys routed by
# hash slot, streams spread over masters, scripts and transactions on one master) against a
# local cluster of three masters. Every log ends with its 25 slowest tests.
# Each half runs on WORKERS processes (pytest-xdist, whole files to a worker), each with its
# own server or cluster; `make test WORKERS=0` runs in one process (docs/testing.md).
DURATIONS := --durations=25
WORKERS ?= 2
CLUSTER_WORKERS ?= 2
test: $(STAMP)
	$(BIN)/python -m pytest -q $(DURATIONS) -n $(WORKERS)
	$(MAKE) --no-print-directory test-cluster

# The cluster half (docs/testing.md, "On a Redis Cluster", says why each is here): the tests
# whose keys, streams, consumer groups, scripts or client connections a cluster routes
# differently, a sample of the engine's comparison with the reference, and the demo week.
# Not here: pure tests (no server), tests that start a server of their own (the same run in
# both halves), and the API's and commands' validation, fuzz, permission and poison tests,
# which send the same requests to the same engine whatever the server is.
CLUSTER_SUITES := \
	tests/integration/scenario/test_stories.py tests/integration/scenario/test_versions.py \
	tests/integration/scenario/test_properties.py tests/integration/scenario/test_via_streams.py \
	tests/integration/workers/test_workers.py tests/integration/workers/test_every_write_kind.py \
	tests/integration/workers/test_lineage.py tests/integration/workers/test_waiting.py \
	tests/integration/workers/test_close.py tests/integration/workers/test_migrate_on_open.py \
	tests/integration/middleware/test_interception.py tests/integration/middleware/test_status.py \
	tests/integration/middleware/test_refusals_in_the_agent.py \
	tests/integration/graph/test_tenants.py tests/integration/graph/test_cypher.py \
	tests/integration/graph/test_cone.py \
	tests/integration/gate/test_kept_facts.py tests/integration/gate/test_gate_log.py \
	tests/integration/gate/test_red_team.py tests/integration/gate/test_gate_without_writer.py \
	tests/integration/gate/test_judged_on_what_it_saw.py \
	tests/integration/operator/test_operator.py tests/integration/operator/test_audit.py \
	tests/integration/engine/test_engine.py tests/integration/engine/test_bulk.py \
	tests/integration/engine/test_concurrency.py tests/integration/engine/test_settle.py \
	tests/integration/api/test_api.py \
	tests/e2e/demo
# The engine's comparison with the reference, direct and through the streams: a sample again.
CLUSTER_SAMPLE := RESCIND_PROPERTY_EXAMPLES=20 RESCIND_STREAM_EXAMPLES=20
# Rewrite the console's screenshots under docs/console/ from a run of its browser tests.
screenshots: $(STAMP)
	RESCIND_UPDATE_SCREENSHOTS=1 $(BIN)/python -m pytest -q tests/e2e/api

test-cluster: $(STAMP)
	RESCIND_TEST_CLUSTER=3 $(CLUSTER_SAMPLE) $(BIN)/python -m pytest -q $(DURATIONS) \
		-n $(CLUSTER_WORKERS) $(CLUSTER_SUITES)

# One kind at a time (markers applied by folder): unit needs no server and takes seconds.
# With no path named, tests/conftest.py spreads them over a worker per core. The unit half alone
# draws a sample of each property test (tests/support/examples.py); `make test` the full counts.
test-unit: $(STAMP)
	$(BIN)/python -m pytest -q $(DURATIONS) -m unit

test-integration: $(STAMP)
	$(BIN)/python -m pytest -q $(DURATIONS) -m integration

test-e2e: $(STAMP)
	$(BIN)/python -m pytest -q $(DURATIONS) -m e2e

bench: $(STAMP)
	$(BIN)/rescind bench engine

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
