"""``artemis sessions list|show|export|import|rm``: browse, inspect, export, import and remove recorded sessions."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path
from typing import Annotated, Any

import typer

from artemis_cli.cli.console import err, escape, out
from artemis_cli.cli.helptext import literal
from artemis_cli.cli.options import DataDirOpt
from artemis_cli.cli.tables import PlainOpt
from artemis_cli.plural import counted

app = typer.Typer(help="Browse and inspect recorded sessions.", no_args_is_help=True)



def _engine(data_dir: Path | None, *, write: bool = False, create: bool = False, rows_only: bool = False) -> Any:
    """The data dir's engine; read-only commands also work on a read-only data dir. Only
    ``create`` (import) makes a data dir; every other command refuses one without Artemis data.
    ``rows_only``: the command reads rows and nothing else (``DataEngine.open_read_only``)."""
    from artemis_cli.engine.db import DataEngine
    from artemis_cli.paths import data_dir as resolve

    if write:
        return DataEngine.open(resolve(data_dir), create=create)
    if rows_only:
        return DataEngine.open_read_only(resolve(data_dir))
    return DataEngine.open_for_reading(resolve(data_dir))


def step_to_dict(engine: Any, step: Any) -> dict[str, Any]:
    """A step as `sessions show --json` prints it (blob presence checked on disk)."""
    blobs = engine.blobs

    def blob(sha: str | None) -> dict[str, Any] | None:
        if not sha:
            return None
        return {"sha256": sha, "path": str(blobs.path(sha)), "exists": blobs.exists(sha)}

    return {
        "number": step.number,
        "started_at": step.started_at,
        "offset_ms": step.offset_ms,
        "thought": step.thought,
        "intent": step.intent,
        "action": {
            "type": step.action_type,
            "args": step.action_args,
            "x": step.x,
            "y": step.y,
            "x2": step.x2,
            "y2": step.y2,
        },
        "target": step.target,
        "target_end": step.target_end,
        "label_source": step.label_source,
        "result": {"status": step.result_status, "detail": step.result_detail},
        # what observably happened (SPEC §15; operators/outcome.py); null before migration 0006
        "outcome": step.outcome,
        "pre_screenshot": blob(step.pre_screenshot),
        "post_screenshot": blob(step.post_screenshot),
        "ui_xml": blob(step.ui_xml),
        "post_ui_xml": blob(step.post_ui_xml),
        "pre_dhash": step.pre_dhash,
        "post_dhash": step.post_dhash,
        "foreground_app": step.foreground_app,
        "user_instruction": step.user_instruction,
        "summary": {
            "text": step.summary,
            "status": step.summary_status,
            "source": step.summary_source,
            "version": step.summary_version,
        },
    }


_AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(value: str | None) -> str | None:
    """``--since``: an ISO-8601 time, or an age (``30m``, ``12h``, ``7d``, ``2w``) before now (UTC)."""
    import re
    from datetime import UTC, datetime, timedelta

    from artemis_cli.errors import UsageError

    if value is None:
        return None
    text = value.strip()
    m = re.fullmatch(r"(\d+)\s*([smhdw])", text)
    if m:
        start = datetime.now(UTC) - timedelta(seconds=int(m.group(1)) * _AGE_UNITS[m.group(2)])
        return start.isoformat(timespec="milliseconds")
    try:
        datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"invalid --since {value!r}", hint="use ISO-8601 (2024-05-01T09:30) or an age: 30m, 12h, 7d") from None
    return text


def resume_command(rec: Any) -> str | None:
    """How to continue a session that stopped before its end (None for ended or live ones)."""
    from artemis_cli.engine.records import continue_command

    return continue_command(rec.id, rec.loop) if rec.status in ("interrupted", "aborted") else None


def session_to_dict(rec: Any) -> dict[str, Any]:
    return {
        "id": rec.id,
        "task_id": rec.task_id,
        "goal": rec.goal,
        "status": rec.status,
        "resume": resume_command(rec),
        "profile": rec.profile,
        "loop": rec.loop,
        "device": {"serial": rec.device_serial, "kind": rec.device_kind,
                   "screen": [rec.screen_width, rec.screen_height]},
        "model": rec.models,
        "model_label": rec.model_label,
        "started_at": rec.started_at,
        "ended_at": rec.ended_at,
        "result": rec.result,
        "parent_session": rec.parent_session,
    }


@app.command("list")
def list_sessions(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="Show at most this many sessions.")] = 20,
    status: Annotated[str | None, typer.Option("--status", help="running, succeeded, failed, aborted or interrupted.")] = None,
    task: Annotated[str | None, typer.Option("--task", help="Only sessions of this task id.")] = None,
    suite: Annotated[str | None, typer.Option("--suite", help="Only sessions of this artemis test suite id.")] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="Only sessions started at or after this time: ISO-8601 (2024-05-01T09:30) or an age such as 30m, 12h, 7d.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list: each session's fields and its step count.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print only the session ids, one per line.")] = False,
    plain: PlainOpt = False,
    data_dir: DataDirOpt = None,
) -> None:
    """List recent sessions, newest first (filters: --task, --status, --since).

    When stdout is not a terminal (or with --plain) each session is one tab-separated line with no header: id, task, status, steps, model, device, started (ISO-8601, UTC), cost (USD).

    When --limit cuts the list, a note says so (`20 of 31 sessions; --limit 31 shows all`): beside the table, or on stderr beside plain rows, --json and --quiet."""
    from artemis_cli.engine.errors import NoArtemisData

    try:
        engine = _engine(data_dir, rows_only=True)
    except NoArtemisData:
        if data_dir is not None:  # a mistyped --data-dir is an error; nothing was created
            raise
        engine = None  # the default data dir before the first run: a fresh user, not an error
    since_iso = parse_since(since)
    # one more than asked for tells whether --limit cuts the list (then every match is counted)
    sessions = [] if engine is None else engine.list_sessions(limit=None if suite else limit + 1, status=status,
                                                              task_id=task, since=since_iso)
    matching = len(sessions)
    if engine is not None and not suite and matching > limit:
        matching = len(engine.list_sessions(limit=None, status=status, task_id=task, since=since_iso))
    if suite is not None:
        from artemis_cli.errors import UsageError
        from artemis_cli.suite.store import suite_sessions

        ids = None if engine is None else suite_sessions(engine, suite)
        if ids is None:
            raise UsageError(f"no suite {suite!r} in this data dir")
        sessions = [s for s in sessions if s.id in set(ids)]
        matching = len(sessions)
    sessions = sessions[:limit]
    cut = (f"{len(sessions)} of {counted(matching, 'session')}; --limit {matching} shows all"
           if matching > len(sessions) else "")
    from artemis_cli.engine.token_usage import sessions_costs

    costs = {} if engine is None else sessions_costs(engine, [s.id for s in sessions])
    if as_json:
        rows = [{**session_to_dict(s), "steps": engine.step_count(s.id), "cost": costs[s.id].to_dict()}
                for s in sessions]
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        if cut:
            err().print(cut, soft_wrap=True, markup=False)
        return
    if quiet:
        print("".join(f"{s.id}\n" for s in sessions), end="")
        if cut:
            err().print(cut, soft_wrap=True, markup=False)
        return
    from artemis_cli.cli.tables import note_console

    notes = note_console(plain)
    if not sessions:
        total = 0 if engine is None else engine.session_count()
        if total == 0:
            notes.print("No sessions yet. Try: artemis run tasks/demo.yaml")
            return
        wanted = [f"{name} {value}" for name, value in (("of task", task), ("with status", status),
                                                          ("since", since)) if value is not None]
        notes.print(escape(f"No sessions {' '.join(wanted)} ({counted(total, 'session')} in all)."),
                    soft_wrap=True)
        return
    from rich.text import Text

    from artemis_cli.cli.tables import Column, FitTable, print_table, wants_plain

    # The id already says when a session started (20240501-093012-…): "started" goes first,
    # then the device, the step count and the model label; id, task and status always stay.
    table = FitTable.listing([
        Column("session", "id"), Column("task", "id"), Column("status"),
        Column("steps", justify="right", drop=3), Column("model", "label", drop=2, min_width=12),
        Column("device", "label", drop=4, min_width=6), Column("started", drop=5),
        Column("cost", justify="right", drop=6),
    ])
    from artemis_cli.models.pricing import format_usd

    whole = wants_plain(plain)
    for s in sessions:
        colour = {"succeeded": "green", "failed": "red", "running": "yellow"}.get(s.status, "magenta")
        started = (s.started_at or "") if whole else (s.started_at or "")[:16].replace("T", " ")
        table.add_row(s.id, s.task_id or "", Text(s.status, style=colour), str(engine.step_count(s.id)),
                      s.model_label or "", s.device_serial or "", started, format_usd(costs[s.id].total_usd))
    print_table(table, plain=plain)
    if cut:
        notes.print(cut, soft_wrap=True, markup=False)
    stopped = [s for s in sessions if resume_command(s)]
    if stopped:
        notes.print(f"{len(stopped)} stopped before the end; continue one with: {resume_command(stopped[0])}",
                    soft_wrap=False)


@app.command("show")
def show(
    session: Annotated[str, typer.Argument(help="Session id (a unique prefix is enough).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object: the session and every step.")] = False,
    chunks: Annotated[
        bool, typer.Option("--chunks", help="Print the history chunks (newest version per range) as the transcript shows them.")
    ] = False,
    data_dir: DataDirOpt = None,
) -> None:
    """Show a session and every step."""
    engine = _engine(data_dir)
    rec = engine.get_session(session)
    rec = replace(rec, status=engine.derived_status(rec))
    if chunks:
        _show_chunks(engine, rec.id, as_json=as_json)
        return
    from artemis_cli.engine.segments import session_time, stops
    from artemis_cli.engine.token_usage import session_costs, token_usage
    from artemis_cli.operators.budget_floor import ContextBudget
    from artemis_cli.replay.kinds import step_kind
    from artemis_cli.replay.lineage import marks as replay_marks

    steps = engine.get_steps(rec.id)
    stored = replay_marks(engine, rec.id)
    # each replay step's kind (replay.kinds: replayed | retargeted | healed | diverged); none for runs
    marks = {s.number: kind for s in steps if (kind := step_kind(stored.get(s.number), s.meta))}
    usage = token_usage(engine, rec.id)
    cost = session_costs(engine, rec.id)
    timing = session_time(engine, rec, running=rec.status == "running")
    if as_json:
        data = session_to_dict(rec)
        data["time"] = timing.to_dict()
        data["steps"] = [{**step_to_dict(engine, s), "replay_mark": marks.get(s.number)} for s in steps]
        data["llm_calls"] = len(engine.llm_calls(rec.id))
        data["tokens"] = usage.to_dict()
        data["cost"] = cost.to_dict()
        data["context_budget"] = (rec.config or {}).get("context_budget")
        print(json.dumps(data, ensure_ascii=False, indent=2))
        return
    from rich.text import Text

    from artemis_cli.cli.tables import Column, FitTable, ellipsize

    console = out()
    width = console.width
    head = Text.assemble((rec.id, "bold"), f" · {rec.task_id or ''} · ", (rec.status, "bold"))
    model = rec.model_label or ""
    room = width - head.cell_len - 3
    if model and room >= 16:  # the model label on the id's line, cut to fit
        head.append(f" · {ellipsize(model, room)}")
        console.print(head)
    else:
        console.print(head)
        if model:
            console.print(Text(ellipsize(f"model: {model}", width)))
    console.print(Text(f"goal: {rec.goal or ''}"), soft_wrap=False)
    budget = ContextBudget.from_dict((rec.config or {}).get("context_budget"))
    if budget is not None:
        console.print(Text(f"context: {budget.text()}"), soft_wrap=False)
        if budget.fitted:  # wrapped, never cut: what the run changed to fit its window
            console.print(Text(f"context {budget.fitted_text()}"))
    if timing.segments:
        running = " so far" if rec.status == "running" else ""
        console.print(Text(f"time: {timing.text()}{running}"), soft_wrap=False)
    for stop in stops(timing):
        console.print(Text(stop.text(), style="yellow"), soft_wrap=False)
    intents = any(s.intent for s in steps)  # the column only for sessions whose model stated them
    table = FitTable([
        Column("#", justify="right"), Column("T+", justify="right", drop=2),
        Column("action", "label", min_width=14), Column("target", "label", min_width=18),
        *([Column("intent", "label", drop=5, min_width=14)] if intents else []),
        *([Column("replay", min_width=8)] if marks else []),
        Column("source", drop=4), Column("result", "label", min_width=8), Column("app", "path", drop=3, min_width=12),
    ])
    for s in steps:
        t = s.target or {}
        label = t.get("text") or t.get("content_desc") or t.get("resource_id") or ""
        where = f" ({s.x},{s.y})" if s.x is not None else ""
        intent = [(s.intent or "")[:60]] if intents else []
        table.add_row(str(s.number), f"{(s.offset_ms or 0) / 1000:.1f}s", f"{s.action_type}{where}",
                      label[:40], *intent, *([marks.get(s.number, "")] if marks else []), s.label_source or "", s.result_status or "", s.foreground_app or "")
    console.print(table.build(width))
    from artemis_cli.cli.token_table import print_tokens

    print_tokens(out(), usage, offline=bool((rec.config or {}).get("offline_model")))
    if cost.by_role:
        console.print(Text(f"cost: {cost.text()}"), soft_wrap=False)
    if rec.result:
        console.print(Text(f"result: {rec.result.get('message', '')}"), soft_wrap=False)
    if resume_command(rec):
        console.print(f"continue with: {resume_command(rec)}", soft_wrap=False)
    elif rec.status == "running" and (owner := engine.lease_owner(rec.id)) is not None:
        console.print(Text(f"in use by {owner.describe()}"), soft_wrap=False)


def _show_chunks(engine: Any, session_id: str, *, as_json: bool) -> None:
    import sys

    from artemis_cli.memory.chunk_store import frozen_chunk_from_row, newest_chunks

    rows = newest_chunks(engine, session_id)
    if as_json:
        data = [{**row.to_dict(), "text": frozen_chunk_from_row(engine, row, i).render()} for i, row in enumerate(rows, 1)]
        print(json.dumps(data, ensure_ascii=False, indent=2))
        return
    if not rows:
        out().print("No chunks yet (this session never compressed its history).")
        return
    for i, row in enumerate(rows, 1):
        sys.stdout.write(f"# chunk {row.start_step}-{row.end_step} · version {row.version} · {row.status} · {row.source}\n")
        sys.stdout.write(frozen_chunk_from_row(engine, row, i).render() + "\n\n")


#: One line per paragraph: Rich wraps them to the terminal (a hard line break would be kept).
_EXPORT_HELP = literal(
    "Export a session: --format jsonl, maestro or bundle.\n\n"
    "jsonl: one JSON object per step and line, in step order. Fields: session_id, task_id, number, "
    "started_at, ended_at, offset_ms, thought, intent, action {type, args, x, y, x2, y2} (pixels on the recorded "
    "screen; password text as [redacted]), target / target_end {text, content_desc, resource_id, "
    "class_name, bounds [l,t,r,b], label_source index|hit_test|none, element_index, password}, "
    "result {status, detail}, verdict, foreground_app, post_foreground_app, screen [w, h], "
    "pre_screenshot, post_screenshot, ui_xml, post_ui_xml (SHA-256 of blobs in the data dir), "
    "pre_dhash, post_dhash, user_instruction, summary {text, status, source, version}, replay "
    "(replay sessions: {status replayed|retargeted|diverged, the verdict when the step was replayed (a heal may "
    "relabel it: `sessions show` gives the final kind), source_step, how, detail, ...}, else null).\n\n"
    "maestro: a Maestro flow (appId, launchApp, tapOn by id or text, inputText, back, pressKey, "
    "swipe); actions without a Maestro equivalent are written as comments. Password text is "
    "${PASSWORD}.\n\n"
    "bundle: one file (a zip, -o required) holding the session's rows (session, steps, model calls, "
    "events, notes, history chunks) and every screenshot and UI dump they refer to, with a manifest "
    "of SHA-256 hashes. Hand it to a colleague: `artemis sessions import FILE` checks every hash and "
    "adds the session, with its id and timestamps, to their data dir (show, prompt, replay, report)."
)


@app.command("export", help=_EXPORT_HELP)
def export(
    session: Annotated[str, typer.Argument(help="Session id (a unique prefix, or 'latest').")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="jsonl | maestro | bundle")] = "jsonl",
    output: Annotated[Path | None, typer.Option("--output", "-o", help="File to write (default: stdout).")] = None,
    data_dir: DataDirOpt = None,
) -> None:
    import io
    import sys

    from artemis_cli.errors import UsageError
    from artemis_cli.export import FORMATS, maestro_flow
    from artemis_cli.export.jsonl import write_jsonl

    if fmt == "bundle":
        _export_bundle(session, output, data_dir)
        return
    if fmt not in FORMATS:
        raise UsageError(f"unknown export format {fmt!r}", hint=f"use --format {' or '.join((*FORMATS, 'bundle'))}")
    engine = _engine(data_dir)
    if fmt == "jsonl":
        buf = io.StringIO()
        n = write_jsonl(engine, session, buf)
        text, what = buf.getvalue(), counted(n, "step")
    else:
        flow = maestro_flow(engine, session)
        text, what = flow.to_yaml(), f"{len(flow.commands)} Maestro commands"
    if output is None:
        sys.stdout.write(text)
        return
    from artemis_cli.cli.console import err
    from artemis_cli.cli.output import write_output

    write_output(output, text, option="-o")

    err().print(f"Wrote {what} to {escape(str(output))}")


def _export_bundle(session: str, output: Path | None, data_dir: Path | None) -> None:
    from artemis_cli.cli.console import err
    from artemis_cli.cli.output import check_output
    from artemis_cli.engine.bundle import write_bundle
    from artemis_cli.errors import UsageError

    if output is None or str(output) == "-":
        raise UsageError("a bundle is a binary file: it is not written to stdout",
                         hint="pass -o FILE, e.g. -o run.artemis")
    check_output(output, option="-o")
    engine = _engine(data_dir)
    rec = engine.get_session(session)
    if engine.derived_status(rec) == "running":
        err().print(f"[yellow]session {rec.id} is still running: the bundle holds the steps recorded so far[/]")
    manifest = write_bundle(engine, rec.id, output)
    counts = manifest["counts"]["rows"]
    err().print(f"Wrote session {rec.id} ({counted(counts.get('steps', 0), 'step')}, {counted(manifest['counts']['blobs'], 'blob')}) "
                f"to {escape(str(output))}")


_IMPORT_HELP = literal(
    "Import a session bundle written by `artemis sessions export ID --format bundle -o FILE`.\n\n"
    "Every SHA-256 of the bundle is checked before anything is written; a damaged or altered bundle, "
    "an unknown bundle format or one written by a newer Artemis is refused (exit 2). The session keeps "
    "its id and timestamps. Importing the same bundle again changes nothing; a different session "
    "with the same id is never merged (exit 2)."
)


@app.command("import", help=_IMPORT_HELP)
def import_(
    bundle: Annotated[Path, typer.Argument(help="The bundle file (.artemis).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object: session_id, imported, rows, blobs.")] = False,
    data_dir: DataDirOpt = None,
) -> None:
    from artemis_cli.engine.bundle import import_bundle, read_manifest

    manifest = read_manifest(bundle)  # a file that is no bundle fails before the data dir is opened
    engine = _engine(data_dir, write=True, create=True)
    result = import_bundle(engine, bundle)
    parent = (manifest.get("session") or {}).get("parent_session")
    orphan = bool(parent) and not list(engine.db.query("SELECT 1 AS x FROM sessions WHERE id = ?", [parent]))
    if as_json:
        data = {**asdict(result), "already_present": not result.imported, "data_dir": str(engine.data_dir)}
        print(json.dumps(data, indent=2))
        return
    console = out()
    if not result.imported:
        console.print(f"Session {result.session_id} is already present in {escape(str(engine.data_dir))}: "
                      "nothing imported", soft_wrap=False)
        return
    console.print(f"Imported session {result.session_id}: {counted(result.rows, 'row')}, {counted(result.blobs, 'blob')} "
                  f"into {escape(str(engine.data_dir))}", soft_wrap=False)
    if orphan:
        console.print(f"its parent session {escape(str(parent))} is not in this data dir: the link was left empty",
                      soft_wrap=False)
    console.print(f"show it with: artemis sessions show {result.session_id}", soft_wrap=False)


@app.command("rm")
def rm(
    sessions: Annotated[list[str], typer.Argument(help="Session id(s) (unique prefixes are enough).")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")] = False,
    force: Annotated[bool, typer.Option("--force", help="Also remove a session still marked running.")] = False,
    keep_blobs: Annotated[bool, typer.Option("--keep-blobs", help="Keep screenshot/XML files even when unused.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list: per session its id, steps, blobs removed and kept.")] = False,
    data_dir: DataDirOpt = None,
) -> None:
    """Remove sessions: their steps, model calls, events, notes, and blobs no other session uses."""
    import sys

    from artemis_cli.errors import UsageError

    engine = _engine(data_dir, write=True)
    records = [engine.get_session(s) for s in sessions]
    for rec in records:
        if engine.derived_status(rec) == "running" and not force:
            raise UsageError(f"session {rec.id} is running (owned by a live process)",
                             hint="stop that process first, or pass --force to remove it anyway")
    if not yes:
        if not sys.stdin.isatty():
            raise UsageError("refusing to delete without confirmation", hint="pass --yes")
        names = ", ".join(r.id for r in records)
        if not typer.confirm(f"Delete {len(records)} session(s): {names}?"):
            raise typer.Exit(1)
    results = [asdict(engine.remove_session(r.id, delete_blobs=not keep_blobs)) for r in records]
    if as_json:
        print(json.dumps(results, indent=2))
        return
    for r in results:
        out().print(f"Removed {r['session_id']}: {counted(r['steps'], 'step')}, {counted(r['blobs_removed'], 'blob file')} "
                    f"({r['blobs_kept']} still used elsewhere)")


@app.command("promote")
def promote(
    session: Annotated[str, typer.Argument(help="A successful replay (e.g. a healed one) to make the baseline.")],
    data_dir: DataDirOpt = None,
) -> None:
    """Make a successful replay the baseline later replays of its source (and of itself) use."""
    from artemis_cli.replay.lineage import promote as promote_replay

    engine = _engine(data_dir, write=True)
    rec = engine.get_session(session)
    source = promote_replay(engine, replace(rec, status=engine.derived_status(rec)))
    out().print(f"promoted [bold]{rec.id}[/]: `artemis replay {source}` now replays it")


# `sessions prompt` lives in its own module (this one is long enough); registered last, as listed
from artemis_cli.cli import prompt_cmd  # noqa: E402

app.command("prompt")(prompt_cmd.prompt)
