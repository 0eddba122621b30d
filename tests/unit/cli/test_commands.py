"""The shape of the `rescind` command tree."""


SERVING = {"worker", "up", "api serve", "api mcp", "api"}  # long-running: they serve, not answer


def _commands(cmd, prefix=()):
    subs = getattr(cmd, "commands", None)
    if subs:
        for name, sub in subs.items():
            yield from _commands(sub, (*prefix, name))
    else:
        yield " ".join(prefix), cmd


def test_every_command_that_answers_takes_json():
    """Scripts can ask any command for JSON; only the long-running services (which print logs)
    are exempt. A new command without --json fails here."""
    import typer

    from rescind.cli.main import app

    missing = [name for name, cmd in _commands(typer.main.get_command(app))
               if name not in SERVING
               and "--json" not in {o for p in cmd.params for o in getattr(p, "opts", [])}]
    assert missing == []
