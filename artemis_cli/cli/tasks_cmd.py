"""`artemis tasks …` (filled in by the config work)."""

import typer

app = typer.Typer(help="Work with task files.", no_args_is_help=True)
