"""``artemis sessions prompt``: re-render a past turn's request from the DataEngine and check it
against the hash recorded when it was sent (SPEC §5 invariant 4)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from artemis_cli.cli.console import escape, out
from artemis_cli.cli.options import DataDirOpt


def render_request_text(request: Any) -> str:
    """A readable dump of a request: zones in order, images and calls named, not inlined."""
    from artemis_cli.perception.png import png_size

    lines = ["=== SYSTEM ===", request.system, "=== TOOLS ===", ", ".join(t.name for t in request.tools)]
    for i, m in enumerate(request.messages):
        lines.append(f"=== [{i}] {m.role} ===")
        for p in m.parts:
            d = p.to_dict()
            if p.text is not None:
                lines.append(("(thought) " if p.thought else "") + p.text)
            elif "image_sha256" in d:
                size = png_size(p.image_png or b"")
                lines.append(f"[image {d['image_sha256'][:12]}" + (f" {size[0]}x{size[1]}]" if size else "]"))
            elif p.function_call is not None:
                lines.append(f"[call {p.function_call.name} {json.dumps(p.function_call.args, ensure_ascii=False)}]")
            elif p.function_response is not None:
                resp = json.dumps(p.function_response.response, ensure_ascii=False)
                lines.append(f"[response {p.function_response.name} {resp}]")
    return "\n".join(lines)


def prompt(
    session: Annotated[str, typer.Argument(help="Session id (a unique prefix, or 'latest').")],
    step: Annotated[int, typer.Option("--step", "-s", min=1, help="The step whose turn to re-render.")],
    show: Annotated[bool, typer.Option("--show", help="Print the re-rendered request.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object: session_id, step, match and each call's hashes.")] = False,
    data_dir: DataDirOpt = None,
) -> None:
    """Re-render step N's request(s) from stored records and compare with the recorded hashes."""
    from artemis_cli.engine.db import DataEngine
    from artemis_cli.paths import data_dir as resolve

    engine = DataEngine.open_for_reading(resolve(data_dir))
    rec = engine.get_session(session)
    from artemis_cli.engine.records import LIBRARY_LOOP

    if rec.loop == "mcp":  # an outside agent decided its steps: Artemis sent no model a prompt
        from artemis_cli.errors import UsageError

        raise UsageError(f"session {rec.id} was driven by an MCP client ({rec.model_label or 'unknown'}): "
                         "Artemis sent no model a prompt to re-render",
                         hint=f"its steps: artemis sessions show {rec.id}")
    from artemis_cli.memory.turn_check import ai_step_span, check_turn

    if rec.loop == LIBRARY_LOOP and ai_step_span(engine, rec.id, step) is None:
        from artemis_cli.errors import UsageError

        kind = engine.get_step(rec.id, step).action_type
        raise UsageError(f"step {step} of session {rec.id} was a Python API call ({kind}) or a replayed AI step: "
                         "no model was sent a prompt for it",
                         hint=f"the steps phone.act's model decided are listed by: artemis sessions show {rec.id}")
    check = check_turn(engine, rec.id, step)
    requests, rendered, recorded, rows, ok = check.requests, check.rendered, check.recorded, check.rows, check.match
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
            if "wire_recorded" in row:
                out().print(f"  wire (OpenAI-compatible body): rendered {row['wire_rendered'][:16]}  "
                            f"recorded {str(row['wire_recorded'] or '-')[:16]}")
        if len(recorded) != len(rendered):
            out().print(f"[red]{len(recorded)} recorded call(s), {len(rendered)} re-rendered[/]")
    raise typer.Exit(0 if ok else 1)
