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

# Everything against one embedded server, then the suites that talk to FalkorDB the most (the
# scenario stories, the randomised comparison with the reference, the workers, the API, tenant
# isolation, the demo week) against a local Redis Cluster of three masters.
test: $(STAMP)
	$(BIN)/python -m pytest -q
	$(MAKE) --no-print-directory test-cluster

CLUSTER_SUITES := tests/integration/scenario tests/integration/workers tests/integration/api \
	tests/integration/middleware tests/integration/graph tests/integration/gate \
	tests/integration/operator tests/integration/conformance tests/integration/engine \
	tests/e2e/demo
# Rewrite the console's screenshots under docs/console/ from a run of its browser tests.
screenshots: $(STAMP)
	RESCIND_UPDATE_SCREENSHOTS=1 $(BIN)/python -m pytest -q tests/e2e/api

test-cluster: $(STAMP)
	RESCIND_TEST_CLUSTER=3 $(BIN)/python -m pytest -q $(CLUSTER_SUITES)

# One kind at a time (markers applied by folder): unit needs no server and takes seconds.
test-unit: $(STAMP)
	$(BIN)/python -m pytest -q -m unit

test-integration: $(STAMP)
	$(BIN)/python -m pytest -q -m integration

test-e2e: $(STAMP)
	$(BIN)/python -m pytest -q -m e2e

bench: $(STAMP)
	$(BIN)/rescind bench engine

lint: $(STAMP)
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
