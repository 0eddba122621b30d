"""docs/wrapping.md and its examples stay true to the code: the configuration table is the one
generated from InterceptConfig, the TOML shown parses into a valid configuration, the Python
shown compiles, and docs/examples/rescind.toml fits the example's graph without a warning.
(tests/e2e/docs/test_wrap_example.py runs the example itself against a server.)"""

from __future__ import annotations

import importlib.util
import re
import tomllib

import pytest
from langgraph.store.memory import InMemoryStore

from rescind.middleware import InterceptConfig, checks
from rescind.views import config_schema
from tests.support.paths import ROOT

PAGE = ROOT / "docs" / "wrapping.md"
EXAMPLES = ROOT / "docs" / "examples"
BLOCK = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def _shown(where: str, language: str) -> list[str]:
    """The ``language`` code blocks of a page; of the README, its "Wrap your own agent"
    section's alone."""
    text = (ROOT / where).read_text(encoding="utf-8")
    if where == "README.md":
        text = text.split("## Wrap your own agent", 1)[1].split("\n## ", 1)[0]
    return [body for lang, body in BLOCK.findall(text) if lang == language]


def test_the_configuration_table_is_the_generated_one():
    """The table between the schema markers is what `rescind config-schema` generates from
    InterceptConfig today."""
    held = config_schema.between_markers(PAGE.read_text(encoding="utf-8"))
    assert held is not None, f"docs/wrapping.md lost its {config_schema.START} marker"
    assert held == config_schema.markdown(), (
        "docs/wrapping.md's configuration table differs from InterceptConfig (a field was "
        "added, removed or redescribed). Regenerate it: `.venv/bin/rescind config-schema "
        "--write docs/wrapping.md`, and review the diff.")


@pytest.mark.parametrize("where", ["docs/wrapping.md", "README.md"])
def test_every_toml_block_shown_is_a_valid_configuration(where):
    """What a reader copies loads: no unknown key, no missing tenant."""
    blocks = _shown(where, "toml")
    assert blocks, f"{where} shows no TOML configuration"
    for body in blocks:
        InterceptConfig.model_validate(tomllib.loads(body))


@pytest.mark.parametrize("where", ["docs/wrapping.md", "README.md"])
def test_every_python_block_shown_compiles(where):
    blocks = _shown(where, "python")
    assert blocks, f"{where} shows no Python"
    for body in blocks:
        compile(body, where, "exec")


def test_the_example_configuration_fits_the_example_graph_without_a_warning():
    """docs/examples/rescind.toml loads, and `instrument` would find nothing to warn about in
    the example's graph: every tool it names is in the graph, every template names arguments
    the tool takes or values of the run."""
    spec = importlib.util.spec_from_file_location("wrap_my_agent", EXAMPLES / "wrap_my_agent.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    config = InterceptConfig.load(EXAMPLES / "rescind.toml")
    assert example.CONFIG == EXAMPLES / "rescind.toml"
    assert set(config.sources) == {"lookup_order"} and set(config.actions) == {"issue_refund"}
    graph = example.build_agent(example.scripted_model(), InMemoryStore())
    assert checks.problems(graph, config) == []
    assert set(checks.graph_tools(graph)) == {"lookup_order", "issue_refund", "save_note"}
