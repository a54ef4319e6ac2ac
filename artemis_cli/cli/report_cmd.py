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
    from artemis_cli.cli.output import check_output, write_output
    from artemis_cli.engine.db import DataEngine
    from artemis_cli.paths import data_dir as resolve_data_dir
    from artemis_cli.report import build_report

    engine = DataEngine.open_for_reading(resolve_data_dir(data_dir))
    rec = engine.get_session(session)
    name = f"artemis-report-{rec.id}.html"
    path = output if output is not None else Path(name)
    if path.is_dir():  # -o DIR writes the default name inside it
        path = path / name
    check_output(path, option="-o")  # before the (slow) build
    write_output(path, build_report(engine, rec.id), option="-o")
    out().print(f"Report written to {escape(str(path))}")
