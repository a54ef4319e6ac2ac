"""Command-line interface: one Typer sub-app per command group."""
