"""``artemis report SESSION``: a self-contained HTML report."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from artemis_cli.cli.console import escape, out


def report(
    session: Annotated[str, typer.Argument(help="Session id (a unique prefix, or 'latest').")],
    output: Annotated[Path | None, typer.Option("--output", "-o", help="HTML file to write (default artemis-report-<id>.html).")] = None,
    data_dir: Annotated[Path | None, typer.Option("--data-dir", help="Data dir (default $ARTEMIS_HOME or the user data dir).")] = None,
) -> None:
    """Write one HTML file (images inlined) with the timeline, token chart and chunks of a session."""
    from artemis_cli.engine.db import DataEngine
    from artemis_cli.paths import data_dir as resolve_data_dir
    from artemis_cli.report import write_report

    engine = DataEngine.open(resolve_data_dir(data_dir))
    path = write_report(engine, session, output)
    out().print(f"Report written to {escape(str(path))}")
