"""``python -m rescind.cli``: the `rescind` command, for when the script is not on PATH."""

from rescind.cli.main import app

app()
