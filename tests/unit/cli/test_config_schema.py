"""`rescind config-schema`: the configuration reference generated from InterceptConfig."""

from __future__ import annotations

import json

from pydantic import BaseModel
from typer.testing import CliRunner

from rescind.cli.main import app
from rescind.middleware.config import InterceptConfig
from rescind.views import config_schema as schema


def _models(model: type[BaseModel]) -> list[type[BaseModel]]:
    found = [model]
    for field in model.model_fields.values():
        nested, _ = schema._nested(field.annotation)
        if nested is not None:
            found += _models(nested)
    return found


def test_every_key_of_the_configuration_says_what_it_is_for():
    """A field without a description would be an empty cell in docs/wrapping.md: give it one
    (``Field(..., description=...)``)."""
    missing = [f"{m.__name__}.{name}" for m in _models(InterceptConfig)
               for name, field in m.model_fields.items() if not field.description]
    assert missing == []


def test_rows_name_nested_keys_as_toml_spells_them_with_types_and_defaults():
    """Per-tool tables are keyed ``sources.<tool>.…``; the user source ``users.…``; defaults
    are TOML text or a word saying there is none."""
    rows = {r["key"]: r for r in schema.rows()}
    assert list(rows)[:5] == ["tenant", "url", "partitions", "sources", "sources.<tool>.source"]
    assert rows["tenant"]["default"] == "required"
    assert rows["tenant"]["constraints"] == {"pattern": "^[a-z0-9_-]{1,64}$"}
    assert rows["partitions"]["constraints"] == {"ge": 1}
    assert rows["sources.<tool>.kind"]["default"] == '"tool"'
    assert rows["actions.<tool>.stage"]["type"] == '"both" | "propose" | "execute"'
    assert rows["users"] | {"description": ""} == {
        "key": "users", "type": "UserSource | None", "constraints": {}, "default": "defaults",
        "description": ""}
    assert rows["users.domain"]["default"] == "unset"
    assert rows["strict"]["default"] == "false"
    assert rows["run_keys"]["default"] == '["user_id", "thread_id", "assistant_id"]'


def test_the_markdown_table_escapes_pipes_inside_cells():
    """A union type's `|` would end the cell: it is written `\\|`."""
    table = schema.markdown()
    assert "| `sources.<tool>.domain` | `str \\| None` | unset |" in table
    lines = table.splitlines()
    assert lines[:2] == ["| key | type | default | description |", "|---|---|---|---|"]
    assert len(lines) == 2 + len(schema.rows())


def test_write_regenerates_only_what_is_between_the_markers(tmp_path):
    """--write replaces the table between the markers and nothing else; run again, it says
    nothing changed."""
    doc = tmp_path / "page.md"
    doc.write_text(f"# Page\nbefore\n{schema.START}\n| stale |\n{schema.END}\nafter\n")
    res = CliRunner().invoke(app, ["config-schema", "--write", str(doc), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout) == {"file": str(doc), "changed": True}
    text = doc.read_text()
    assert text == f"# Page\nbefore\n{schema.START}\n{schema.markdown()}{schema.END}\nafter\n"
    assert schema.between_markers(text) == schema.markdown()
    res = CliRunner().invoke(app, ["config-schema", "--write", str(doc)])
    assert res.exit_code == 0 and "unchanged" in res.stdout


def test_write_refuses_a_file_without_markers_and_changes_nothing(tmp_path):
    doc = tmp_path / "page.md"
    doc.write_text("# Page\nno markers here\n")
    res = CliRunner().invoke(app, ["config-schema", "--write", str(doc)])
    assert res.exit_code == 2 and "schema:start" in res.output
    assert doc.read_text() == "# Page\nno markers here\n"


def test_without_write_it_prints_the_table_or_the_rows():
    res = CliRunner().invoke(app, ["config-schema"])
    assert res.exit_code == 0 and res.stdout == schema.markdown()
    res = CliRunner().invoke(app, ["config-schema", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout) == schema.rows()
