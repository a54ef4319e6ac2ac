"""``artemis sessions list|show``: browse recorded sessions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from artemis_cli.cli.console import escape, out

app = typer.Typer(help="Browse and inspect recorded sessions.", no_args_is_help=True)

DataDirOpt = Annotated[Path | None, typer.Option("--data-dir", help="Data dir (default $ARTEMIS_HOME).")]


def _engine(data_dir: Path | None) -> Any:
    from artemis_cli.engine.db import DataEngine
    from artemis_cli.paths import data_dir as resolve

    return DataEngine.open(resolve(data_dir))


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


def session_to_dict(rec: Any) -> dict[str, Any]:
    return {
        "id": rec.id,
        "task_id": rec.task_id,
        "goal": rec.goal,
        "status": rec.status,
        "profile": rec.profile,
        "loop": rec.loop,
        "device": {"serial": rec.device_serial, "kind": rec.device_kind,
                   "screen": [rec.screen_width, rec.screen_height]},
        "model": rec.models,
        "model_label": rec.model_label,
        "started_at": rec.started_at,
        "ended_at": rec.ended_at,
        "result": rec.result,
    }


@app.command("list")
def list_sessions(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1)] = 20,
    status: Annotated[str | None, typer.Option("--status")] = None,
    task: Annotated[str | None, typer.Option("--task")] = None,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    data_dir: DataDirOpt = None,
) -> None:
    """List recent sessions, newest first."""
    engine = _engine(data_dir)
    sessions = engine.list_sessions(limit=limit, status=status, task_id=task)
    if as_json:
        rows = [{**session_to_dict(s), "steps": engine.step_count(s.id)} for s in sessions]
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    if not sessions:
        out().print("No sessions yet. Try: artemis run tasks/demo.yaml")
        return
    from rich.table import Table

    table = Table()
    for col in ("session", "task", "status", "steps", "model", "device", "started"):
        table.add_column(col)
    for s in sessions:
        colour = {"succeeded": "green", "failed": "red", "running": "yellow"}.get(s.status, "magenta")
        table.add_row(s.id, escape(s.task_id or ""), f"[{colour}]{s.status}[/]", str(engine.step_count(s.id)),
                      escape(s.model_label or ""), escape(s.device_serial or ""), (s.started_at or "")[:19])
    out().print(table)


@app.command("show")
def show(
    session: Annotated[str, typer.Argument(help="Session id (a unique prefix is enough).")],
    as_json: Annotated[bool, typer.Option("--json")] = False,
    data_dir: DataDirOpt = None,
) -> None:
    """Show a session and every step."""
    engine = _engine(data_dir)
    rec = engine.get_session(session)
    steps = engine.get_steps(rec.id)
    if as_json:
        data = session_to_dict(rec)
        data["steps"] = [step_to_dict(engine, s) for s in steps]
        data["llm_calls"] = len(engine.llm_calls(rec.id))
        print(json.dumps(data, ensure_ascii=False, indent=2))
        return
    from rich.table import Table

    out().print(f"[bold]{rec.id}[/] · {escape(rec.task_id or '')} · [bold]{rec.status}[/] · {escape(rec.model_label or '')}")
    out().print(f"goal: {escape(rec.goal or '')}")
    table = Table()
    for col in ("#", "T+", "action", "target", "source", "result", "app"):
        table.add_column(col)
    for s in steps:
        t = s.target or {}
        label = t.get("text") or t.get("content_desc") or t.get("resource_id") or ""
        where = f" ({s.x},{s.y})" if s.x is not None else ""
        table.add_row(str(s.number), f"{(s.offset_ms or 0) / 1000:.1f}s", escape(f"{s.action_type}{where}"),
                      escape(label[:40]), s.label_source or "", escape(s.result_status or ""),
                      escape(s.foreground_app or ""))
    out().print(table)
    if rec.result:
        out().print(f"result: {escape(str(rec.result.get('message', '')))}")
