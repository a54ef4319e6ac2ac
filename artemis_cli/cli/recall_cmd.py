"""``artemis recall SESSION "query" [--steps a-b | --at T+mm:ss] [--package PKG]``: look back at
what a session recorded (SPEC §10.5): search results, ledger lines, and each asked-for step's
screen text and summary."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Annotated

import typer

from artemis_cli.cli.console import err, escape, out
from artemis_cli.cli.options import DataDirOpt


def _checked(parse_name: str) -> Callable[[str | None], str | None]:
    """A Typer callback that runs ``recall_args.<parse_name>`` on the value: a bad value is a
    usage error (exit 2) that says how to write it."""

    def check(value: str | None) -> str | None:
        if value is None or not value.strip():
            return value
        from artemis_cli.memory import recall_args

        try:
            getattr(recall_args, parse_name)(value, None)  # errors name the option, not the tool's argument
        except recall_args.RecallError as exc:
            if exc.did_you_mean:  # "--steps 50-10": one line, and the forward spelling
                raise typer.BadParameter(f"{recall_args.echo_repr(value.strip())} runs backwards; "
                                         f"did you mean {exc.did_you_mean}?") from None
            raise typer.BadParameter(f"{exc}" + (f" ({exc.hint})" if exc.hint else "")) from None
        return value

    return check


def recall(
    session: Annotated[str, typer.Argument(help="Session id (a unique prefix, or `latest`).")],
    query: Annotated[str, typer.Argument(help="Words to search for (any text; it is never FTS syntax).")] = "",
    steps: Annotated[str | None, typer.Option(
        "--steps", callback=_checked("parse_step_range"),
        help='Step range "a-b" (a ≤ b) or one step "n": its ledger lines, screen text and summaries.')] = None,
    at: Annotated[str | None, typer.Option(
        "--at", callback=_checked("parse_at"),
        help='Session time "T+mm:ss": the step at or just before it, with its neighbours.')] = None,
    package: Annotated[str | None, typer.Option(
        "--package", callback=_checked("parse_package"),
        help="Only steps whose foreground app is this package (alone: that app's latest steps).")] = None,
    details: Annotated[bool, typer.Option("--details", help="Show thoughts, verdicts and summaries.")] = False,
    max_results: Annotated[int, typer.Option("--max-results", min=1, max=20, help="Search hits to show at most.")] = 5,
    max_tokens: Annotated[int, typer.Option(
        "--max-tokens", min=100, max=100_000, help="Cap on the text shown (about 4 characters a token).")] = 2000,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    data_dir: DataDirOpt = None,
) -> None:
    """Search a session's steps, notes and chunks, or show steps by number, time or app; every
    result names its step and T+mm:ss."""
    from artemis_cli.engine.db import DataEngine
    from artemis_cli.memory.recall import Recall
    from artemis_cli.paths import data_dir as resolve

    if steps and at:
        raise typer.BadParameter("give --steps or --at, not both", param_hint="--at")
    if not any(v and v.strip() for v in (query, steps, at, package)):
        from artemis_cli.errors import UsageError

        raise UsageError("nothing to recall: give words to search for, --steps, --at or --package",
                         hint='e.g. artemis recall latest "wifi password", --steps 12-20, --at T+12:30 '
                              "or --package com.android.settings")
    with DataEngine.open_for_reading(resolve(data_dir)) as engine:
        session_id = engine.get_session(session).id
        recaller = Recall(engine)
        recaller.sync(session_id)  # one-time back-fill for sessions recorded before indexing
        t0 = time.perf_counter()
        result = recaller.recall(
            session_id, query, step_range=steps, at=at, package=package, include_details=details,
            max_results=max_results, max_text_tokens=max_tokens,
        )
        elapsed_ms = (time.perf_counter() - t0) * 1000
    if as_json:
        data = result.to_dict()
        data["elapsed_ms"] = round(elapsed_ms, 2)
        print(json.dumps(data, ensure_ascii=False))
        return
    console = out()
    console.print(f"[bold]{session_id}[/] · {escape(result.header())}")
    for line in result.lead:
        console.print(escape(line))
    for hit in result.hits:
        head, _, rest = hit.text().partition("\n")
        console.print(f"[cyan]{escape(hit.head)}[/]{escape(head[len(hit.head):])}")
        if rest:
            console.print(escape(rest), style="dim")
    heading = result.ledger_heading()
    if heading:
        console.print(f"[bold]{escape(heading.rstrip(':'))}[/]")
        for line in result.range_lines or ["(no steps recorded in this range)"]:
            console.print(escape(line))
    for view in result.views:
        head, _, rest = view.text().partition("\n")
        console.print(f"[bold cyan]{escape(head)}[/]")
        if rest:
            console.print(escape(rest))
    for notice in result.notices:
        err().print(escape(notice))
