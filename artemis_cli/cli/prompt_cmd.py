"""``artemis sessions prompt``: re-render a past turn's request from the DataEngine and check it
against the hash recorded when it was sent (SPEC §5 invariant 4)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Annotated, Any

import typer

from artemis_cli.cli.console import escape, out


def render_request_text(request: Any) -> str:
    """A readable dump of a request: zones in order, images and calls named, not inlined."""
    lines = ["=== SYSTEM ===", request.system, "=== TOOLS ===", ", ".join(t.name for t in request.tools)]
    for i, m in enumerate(request.messages):
        lines.append(f"=== [{i}] {m.role} ===")
        for p in m.parts:
            d = p.to_dict()
            if p.text is not None:
                lines.append(("(thought) " if p.thought else "") + p.text)
            elif "image_sha256" in d:
                lines.append(f"[image {d['image_sha256'][:12]}]")
            elif p.function_call is not None:
                lines.append(f"[call {p.function_call.name} {json.dumps(p.function_call.args, ensure_ascii=False)}]")
            elif p.function_response is not None:
                resp = json.dumps(p.function_response.response, ensure_ascii=False)
                lines.append(f"[response {p.function_response.name} {resp}]")
    return "\n".join(lines)


def recorded_request_hashes(engine: Any, session_id: str, step: int) -> list[str]:
    """The operator request hashes recorded for ``step``'s committed turn, in order.

    A turn cut off by a crash (its process killed after a model call, before the step was
    committed) is played again by ``artemis resume``: calls made before the resume that restarted
    this turn belong to the lost attempt, not to the committed step, and are left out."""
    restarts = [e.created_at or "" for e in engine.events(session_id, kind="resume")
                if (e.payload or {}).get("after_step") == step - 1]
    since = max(restarts, default="")
    recorded: list[str] = []
    for call in engine.llm_calls(session_id):
        # retries repeat the same request: count each distinct request once
        if (call.step == step and call.role == "operator" and call.request_hash
                and (call.created_at or "") >= since
                and (not recorded or recorded[-1] != call.request_hash)):
            recorded.append(call.request_hash)
    return recorded


def check_turn(engine: Any, session_id: str, step: int) -> tuple[list[Any], list[str], list[str], list[dict[str, Any]], bool]:
    """Re-render ``step``'s requests from stored records and compare them with the recorded hashes:
    (requests, rendered hashes, recorded hashes, one row per call, all match)."""
    from artemis_cli.memory.restore import SessionSpec, rebuild_ledger, turn_requests
    from artemis_cli.runner import new_ledger

    spec = SessionSpec.load(engine, session_id)
    record = engine.get_step(session_id, step)
    ledger = new_ledger(SimpleNamespace(goal=spec.goal, app=spec.app), spec.profile, engine, spec.max_steps)
    rebuild_ledger(engine, session_id, ledger, before_step=step)
    requests = turn_requests(engine, session_id, ledger, record)
    recorded = recorded_request_hashes(engine, session_id, step)
    rendered = [r.request_hash() for r in requests]
    rows = [
        {"call": i + 1, "rendered": h, "recorded": recorded[i] if i < len(recorded) else None,
         "match": i < len(recorded) and recorded[i] == h}
        for i, h in enumerate(rendered)
    ]
    ok = bool(rows) and len(rendered) == len(recorded) and all(r["match"] for r in rows)
    return requests, rendered, recorded, rows, ok


def prompt(
    session: Annotated[str, typer.Argument(help="Session id (a unique prefix, or 'latest').")],
    step: Annotated[int, typer.Option("--step", "-s", min=1, help="The step whose turn to re-render.")],
    show: Annotated[bool, typer.Option("--show", help="Print the re-rendered request.")] = False,
    as_json: Annotated[bool, typer.Option("--json")] = False,
    data_dir: Annotated[Path | None, typer.Option("--data-dir")] = None,
) -> None:
    """Re-render step N's request(s) from stored records and compare with the recorded hashes."""
    from artemis_cli.engine.db import DataEngine
    from artemis_cli.paths import data_dir as resolve

    engine = DataEngine.open(resolve(data_dir))
    rec = engine.get_session(session)
    requests, rendered, recorded, rows, ok = check_turn(engine, rec.id, step)
    if as_json:
        data: dict[str, Any] = {"session_id": rec.id, "step": step, "match": ok, "calls": rows}
        if show:
            data["requests"] = [render_request_text(r) for r in requests]
        print(json.dumps(data, indent=2, ensure_ascii=False))
    else:
        if show:
            for req in requests:
                out().print(escape(render_request_text(req)))
        for row in rows:
            mark = "[green]match[/]" if row["match"] else "[red]MISMATCH[/]"
            out().print(f"step {step} call {row['call']}: {mark}  rendered {str(row['rendered'])[:16]}  "
                        f"recorded {str(row['recorded'] or '-')[:16]}")
        if len(recorded) != len(rendered):
            out().print(f"[red]{len(recorded)} recorded call(s), {len(rendered)} re-rendered[/]")
    raise typer.Exit(0 if ok else 1)
