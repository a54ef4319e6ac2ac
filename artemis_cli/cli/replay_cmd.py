"""``artemis replay SESSION``: re-execute a recorded session without a model."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from artemis_cli.cli.console import err, escape, out, write_out
from artemis_cli.cli.options import DataDirOpt
from artemis_cli.plural import counted


def replay(
    session: Annotated[str, typer.Argument(help="Session id to replay (a unique prefix, or 'latest').")],
    device: Annotated[
        str | None, typer.Option("--device", "-d", help="Serial, 'sim' or 'sim:<world>'. Default: where the replayed session was recorded — the recording's device and world, or after sessions promote its baseline's (a fresh simulated phone for sim sessions); said on stderr, as artemis test does.")
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the plan; touch no device, record nothing.")] = False,
    from_step: Annotated[int, typer.Option("--from-step", min=1, help="First recorded step to replay (the device must already show its screen; setup and app launch run only from step 1).")] = 1,
    continue_on_divergence: Annotated[bool, typer.Option("--continue-on-divergence", help="Keep going after a step diverges.")] = False,
    by: Annotated[str, typer.Option("--by", help="semantics: find each target by resource-id/text/content-desc/class, else scaled coordinates; coordinates: recorded coordinates only.")] = "semantics",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object: session_id, status, success, message, source_complete/source_incomplete, checks (check, passed, detail) and steps (number, status).")] = False,
    heal: Annotated[bool, typer.Option("--heal", help="At a divergence hand the stretch to the operator loop (the recording's remaining steps as its plan) and rejoin the recording when the screen matches a recorded one.")] = False,
    model: Annotated[str | None, typer.Option("--model", "-m", help="The healing model (with --heal): as for `artemis run`. Default: gemini with an API key, else the offline healer.")] = None,
    profile: Annotated[str | None, typer.Option("--profile", "-p", help="Profile of the healing loop (with --heal; heal.max_steps bounds each heal). Default: flash.")] = None,
    original: Annotated[bool, typer.Option("--original", help="Replay the recording itself, not the baseline `artemis sessions promote` made for it.")] = False,
    data_dir: DataDirOpt = None,
) -> None:
    """Replay a recorded session: no model calls; each step is replayed, retargeted, healed or diverged.

    replayed: {replayed}. retargeted: {retargeted}. healed: {healed}. diverged: {diverged}.

    A recording with a promoted baseline (`artemis sessions promote`) replays that baseline;
    --original replays the recording itself. Which one is replayed is said on stderr.

    After the last step the task's success checks run on the replay device: the replay succeeds
    only when no step diverged and they pass (with no checks: when the replayed finish said so).
    A source session that never finished (interrupted, aborted, no finish step) is reported as such.

    Text typed into password fields is not stored: it comes from $ARTEMIS_SECRET_<FIELD> (e.g.
    ARTEMIS_SECRET_PASSWORD), $ARTEMIS_SECRET (as for resume), or a prompt; the older
    ARTEMIS_REPLAY_SECRET[_<FIELD>] names are still read.
    """
    from artemis_cli.device.select import resolve_device
    from artemis_cli.engine.db import DataEngine
    from artemis_cli.errors import UsageError
    from artemis_cli.paths import data_dir as resolve_data_dir
    from artemis_cli.replay import (
        BY_CHOICES,
        ReplayOptions,
        ReplayStepResult,
        incomplete_reason,
        plan,
        replay_session,
    )

    if by not in BY_CHOICES:
        raise UsageError(f"unknown --by {by!r}", hint="use --by semantics or --by coordinates")
    root = resolve_data_dir(data_dir)  # the source session's: never created here
    engine = DataEngine.open_for_reading(root) if dry_run else DataEngine.open(root, create=False)
    opts = ReplayOptions(by=by, from_step=from_step, continue_on_divergence=continue_on_divergence)  # type: ignore[arg-type]
    if (model or profile) and not heal:
        raise UsageError("--model and --profile choose the healing model: they need --heal",
                         hint="add --heal, or drop them for a replay without a model")
    src = engine.get_session(session)
    from artemis_cli.replay.place import replay_place

    place = replay_place(engine, src, original=original)  # the one rule artemis test's session cases follow too
    source_id = src.id  # the replayer substitutes the baseline itself, so the result names both
    if original:
        opts.use_baseline = False
    if place.substituted:
        src = engine.get_session(place.replayed)
    err().print(escape(place.text(device)), highlight=False)
    if heal and not dry_run:
        opts.heal = True
        opts.model, opts.profile = _healing_model(model, profile, src)
    if dry_run:
        steps = plan(engine, src.id, opts)
        if as_json:
            write_out(json.dumps({"source_session": src.id, "dry_run": True, "by": by,
                                         "steps": [s.to_dict() for s in steps]}, ensure_ascii=False, indent=2) + "\n")
            return
        out().print(f"[bold]Replay plan[/] for {src.id} · {escape(src.task_id or '')} · {counted(len(steps), 'step')} · by {by}")
        for s in steps:
            secret = " [yellow](password: from env or prompt)[/]" if s.secret else ""
            out().print(f"{s.number:>4}  {escape(s.action):<11} {escape(s.locate)}{secret}")
        return
    progress = err()  # progress on stderr, the result on stdout (cli/console.py)
    dev = resolve_device(device or place.spec, sim_seed=place.seed, sim_options=place.sim_options,
                         sim_world=place.world)
    info = dev.info()
    progress.print(f"[bold]Replaying {src.id}[/] on {escape(info.serial)} ({info.kind}, {info.width}x{info.height}) by {by}")
    incomplete = incomplete_reason(engine, src)
    if incomplete:
        progress.print(f"[yellow]source session {src.id} was incomplete ({escape(incomplete)}): "
                       "only its recorded steps can be replayed[/]")
    from artemis_cli.replay.kinds import COLOURS as colours

    def on_step(r: ReplayStepResult) -> None:
        line = f"{r.source_step:>4}  [{colours[r.status]}]{r.status:<10}[/] {escape(r.action):<11} {r.how}"
        if r.detail:
            line += f"  [dim]{escape(r.detail)}[/]"
        progress.print(line)

    from artemis_cli.cli.run_cmd import stop_cleanly

    results: list[Any] = []
    try:
        stop_cleanly(lambda: results.append(replay_session(engine, dev, source_id, opts, on_step=on_step)), as_json)
    finally:
        dev.close()
    result = results[0]
    if as_json:
        write_out(json.dumps(result.to_dict(), ensure_ascii=False, indent=2) + "\n")
    else:
        for c in result.checks:
            mark = "[green]✓[/]" if c.passed else "[red]✗[/]"
            out().print(f"check {mark} {escape(c.check)} ({escape(c.detail)})")
        if result.answer:
            out().print(f"answer {escape(result.answer)}")
        colour = "green" if result.status == "succeeded" else "red"
        out().print(f"[{colour}]{result.status}[/]: {escape(result.message)} · replay session [bold]{result.session_id}[/]")
    raise typer.Exit(result.exit_code)


def _healing_model(name: str | None, profile: str | None, src: Any) -> tuple[Any, Any]:
    """(model, profile) a --heal replay heals with (``replay.heal.healing_model``), saying on
    stderr when that is the offline healer."""
    from artemis_cli.replay.heal import healing_model

    model, prof, offline = healing_model(name, profile, src)
    if offline:
        why = "--model scripted plays a task's reference, which a heal has none of" if name == "scripted" \
            else "no --model and no API key"
        err().print(f"[yellow]{why}: healing with the offline healer (follows the recording as a plan; not an LLM)[/]")
    return model, prof


def _fill_kinds() -> None:
    """``replay --help`` lists each step kind with its meaning from ``replay.kinds`` (the one
    vocabulary), not a copy of it."""
    from artemis_cli.replay.kinds import KINDS

    replay.__doc__ = (replay.__doc__ or "").format(**KINDS)


_fill_kinds()
