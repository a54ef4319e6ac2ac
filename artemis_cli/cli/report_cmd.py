"""``artemis report SESSION``: an HTML report that reads like a story (summary, then the timeline)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from artemis_cli.cli.console import escape, out
from artemis_cli.cli.options import DataDirOpt

_HINT = "give {option} a {what} in a directory you can write to, on a disk with free space"


def report(
    session: Annotated[str, typer.Argument(help="Session id (a unique prefix, or 'latest').")],
    output: Annotated[Path | None, typer.Option("--output", "-o", help="HTML file to write (default artemis-report-<id>.html).")] = None,
    assets: Annotated[Path | None, typer.Option("--assets", help="Write screenshots (thumbnails and full size) into this directory and link them instead of embedding.")] = None,
    marks: Annotated[bool, typer.Option("--marks", help="Show each screenshot as the model saw it: scaled, with the element numbers (set-of-marks) it was sent; default: the clean recorded screenshot.")] = False,
    data_dir: DataDirOpt = None,
) -> None:
    """Write one HTML file: the session's summary, how full the model's context was, then every step
    with its screenshot, and the shorter summaries older steps were folded into."""
    from artemis_cli.cli.output import check_output
    from artemis_cli.engine.db import DataEngine
    from artemis_cli.errors import OutputError
    from artemis_cli.paths import data_dir as resolve_data_dir
    from artemis_cli.report import write_report
    from artemis_cli.report.images import AssetWriteError

    engine = DataEngine.open_for_reading(resolve_data_dir(data_dir))
    rec = engine.get_session(session)
    name = f"artemis-report-{rec.id}.html"
    path = output if output is not None else Path(name)
    if path.is_dir():  # -o DIR writes the default name inside it
        path = path / name
    check_output(path, option="-o")  # before the (slow) build
    if assets is not None:
        check_output(assets, option="--assets", folder=True)
    try:
        write_report(engine, rec.id, path, assets=assets, marks=marks)
    except AssetWriteError as exc:
        raise OutputError(str(exc.path), exc.exc.strerror or str(exc.exc),
                          hint=_HINT.format(option="--assets", what="directory")) from None
    except OSError as exc:
        raise OutputError(str(path), exc.strerror or type(exc).__name__,
                          hint=_HINT.format(option="-o", what="file")) from None
    where = f" (screenshots in {escape(str(assets))})" if assets is not None else ""
    out().print(f"Report written to {escape(str(path))}{where}")
