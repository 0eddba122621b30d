# The two commands a newcomer needs: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo test test-unit test-integration test-e2e bench lint clean

$(STAMP): pyproject.toml
	# The console's browser test drives Debian's Chromium (Playwright cannot download browsers).
	command -v chromium >/dev/null || (apt-get update -qq && apt-get install -y -qq chromium)
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/rescind demo

test: $(STAMP)
	$(BIN)/python -m pytest -q

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
