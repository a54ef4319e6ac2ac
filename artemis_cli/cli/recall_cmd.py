"""``artemis recall SESSION "query" [--steps a-b]``: search what a session recorded (SPEC §10.5)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer

from artemis_cli.cli.console import err, escape, out

DataDirOpt = Annotated[Path | None, typer.Option("--data-dir", help="Data dir (default $ARTEMIS_HOME).")]


def _check_steps(value: str | None) -> str | None:
    """``--steps a-b`` must be a forward range: ``50-10`` is a usage error, never reversed."""
    if value is None or not value.strip():
        return value
    import re

    from artemis_cli.memory.recall import RecallError, parse_step_range

    try:
        parse_step_range(value)
    except RecallError as exc:
        raise typer.BadParameter(f"{exc}" + (f" ({exc.hint})" if exc.hint else "")) from None
    first, *rest = (int(n) for n in re.findall(r"\d+", value))
    if rest and rest[0] < first:
        raise typer.BadParameter(f"{value!r} runs backwards; write the lower step first: {rest[0]}-{first}")
    return value


def recall(
    session: Annotated[str, typer.Argument(help="Session id (a unique prefix, or `latest`).")],
    query: Annotated[str, typer.Argument(help="Words to search for (any text; it is never FTS syntax).")] = "",
    steps: Annotated[str | None, typer.Option("--steps", callback=_check_steps, help='Step range "a-b" (a ≤ b): adds its ledger lines.')] = None,
    details: Annotated[bool, typer.Option("--details", help="Show thoughts, verdicts and summaries.")] = False,
    max_results: Annotated[int, typer.Option("--max-results", min=1, max=20)] = 5,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    data_dir: DataDirOpt = None,
) -> None:
    """Search a session's steps, notes and chunks; every result names its step and T+mm:ss."""
    from artemis_cli.engine.db import DataEngine
    from artemis_cli.memory.recall import Recall
    from artemis_cli.paths import data_dir as resolve

    with DataEngine.open_for_reading(resolve(data_dir)) as engine:
        session_id = engine.get_session(session).id
        recaller = Recall(engine)
        recaller.sync(session_id)  # one-time back-fill for sessions recorded before indexing
        t0 = time.perf_counter()
        result = recaller.recall(
            session_id, query, step_range=steps, include_details=details, max_results=max_results
        )
        elapsed_ms = (time.perf_counter() - t0) * 1000
    if as_json:
        data = result.to_dict()
        data["elapsed_ms"] = round(elapsed_ms, 2)
        print(json.dumps(data, ensure_ascii=False))
        return
    console = out()
    console.print(f"[bold]{session_id}[/] · {escape(result.render().splitlines()[0])}")
    for hit in result.hits:
        head, _, rest = hit.text().partition("\n")
        console.print(f"[cyan]{escape(hit.head)}[/]{escape(head[len(hit.head):])}")
        if rest:
            console.print(escape(rest), style="dim")
    if result.step_range:
        a, b = result.step_range
        console.print(f"[bold]Ledger of steps {a}-{b}[/]")
        for line in result.range_lines or ["(no steps recorded in this range)"]:
            console.print(escape(line))
    for notice in result.notices:
        err().print(escape(notice))
    err().print(f"[dim]{elapsed_ms:.1f} ms[/]")
