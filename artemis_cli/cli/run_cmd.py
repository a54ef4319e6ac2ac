"""``artemis run``: run a task (file or --goal) on a device and record every step."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from artemis_cli.cli.console import err, escape, json_on_error, out, write_out
from artemis_cli.cli.options import DataDirOpt
from artemis_cli.models.choices import models_help


def run(
    task_file: Annotated[Path | None, typer.Argument(help="Task YAML file.", show_default=False)] = None,
    goal: Annotated[str | None, typer.Option("--goal", "-g", help="Run an ad-hoc goal instead of a file.")] = None,
    device: Annotated[
        str | None, typer.Option("--device", "-d", help="Serial, 'sim' or 'sim:<world>'. Default: sim for a task written for the simulated phone (device: sim, or a sim: block); otherwise $ANDROID_SERIAL, the one attached device, else sim.")
    ] = None,
    profile: Annotated[str | None, typer.Option("--profile", "-p", help="flash | pro | path to a profile.")] = None,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help=models_help() + ". Default: the profile's OpenAI-compatible operator if it names one, else gemini with an API key, else heuristic.")
    ] = None,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="Endpoint of an OpenAI-compatible server for --model openai:NAME, e.g. http://127.0.0.1:8000/v1. Default: $ARTEMIS_OPENAI_BASE_URL. Key: $OPENAI_API_KEY (none for local servers).")
    ] = None,
    max_steps: Annotated[int | None, typer.Option("--max-steps", min=1, help="Override the task's step budget.")] = None,
    data_dir: DataDirOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON on stdout.")] = False,
    no_live: Annotated[bool, typer.Option("--no-live", help="Plain progress lines instead of the live display.")] = False,
    seed: Annotated[int | None, typer.Option("--seed", help="Simulated phone seed (overrides the task's).")] = None,
    backend: Annotated[str, typer.Option("--backend", help="Real devices: auto (u2, else adb) | adb | u2.")] = "auto",
    max_cost: Annotated[float | None, typer.Option(
        "--max-cost", min=0, help="Stop cleanly before the model call that would pass this many USD (priced from "
                                  "genai-prices and the profile's prices:); the session is interrupted, reason budget, "
                                  "and `artemis resume ID --max-cost N` continues it (the limit is the whole "
                                  "session's: what was spent so far counts). Default: the profile's max_cost.")] = None,
    no_fit: Annotated[bool, typer.Option(
        "--no-fit", help="Refuse a context budget below the profile's floor instead of fitting the run to it "
                         "(a smaller screenshot, fewer active steps, the short know-how; the header says what "
                         "changed).")] = False,
) -> None:
    """Run a task on a phone, an emulator or the simulated phone."""
    with json_on_error(as_json):  # --json: one JSON document, also when the run cannot start
        stop_cleanly(lambda: _run(task_file, goal, device, profile, model, max_steps, data_dir, as_json, no_live,
                                  seed, backend, base_url, max_cost, not no_fit), as_json)


def _run(task_file: Path | None, goal: str | None, device: str | None, profile: str | None, model: str | None,
         max_steps: int | None, data_dir: Path | None, as_json: bool, no_live: bool, seed: int | None,
         backend: str, base_url: str | None = None, max_cost: float | None = None, fit: bool = True) -> None:
    from artemis_cli.config.profile import load_profile
    from artemis_cli.config.task import load_task, task_from_goal
    from artemis_cli.device.select import resolve_device
    from artemis_cli.engine.db import DataEngine
    from artemis_cli.errors import UsageError
    from artemis_cli.models.registry import build_model, default_model_name
    from artemis_cli.paths import data_dir as resolve_data_dir
    from artemis_cli.runner import run_task

    if (task_file is None) == (goal is None):
        raise UsageError("give a task file or --goal (exactly one)", hint="artemis run tasks/demo.yaml")
    task = load_task(task_file) if task_file is not None else task_from_goal(goal or "")
    prof = load_profile(profile or task.profile)
    model_name = model or default_model_name(prof)
    if model is None and model_name == "heuristic":
        from artemis_cli.models.registry import NO_KEY_REASON

        err().print(f"[yellow]{NO_KEY_REASON}: using the offline heuristic baseline (not an LLM).[/]")
    mdl = build_model(model_name, task=task, profile=prof, base_url=base_url)
    from artemis_cli.budget import check_priced
    from artemis_cli.models.preflight import check_model

    check_priced(mdl, prof, max_cost if max_cost is not None else prof.max_cost)  # unknown price: exit 2 here
    check_model(mdl)  # a wrong name or a dead endpoint: exit 2 before a session exists
    sim_opts = task.sim.model_dump() if task.sim is not None else {}
    world = sim_opts.pop("world", "default")
    sim_seed = seed if seed is not None else sim_opts.pop("seed", 0)
    sim_opts.pop("seed", None)
    dev = resolve_device(device, backend=backend, sim_seed=sim_seed, sim_options=sim_opts,  # type: ignore[arg-type]
                         sim_world=world, sim_task=task.id if task.written_for_sim else None,
                         notice=lambda text: err().print(f"[yellow]{escape(text)}[/]"))
    engine = DataEngine.open(resolve_data_dir(data_dir))
    try:  # closed here, not left to interpreter exit (which may never free the connection):
        # the last close checkpoints the WAL into artemis.db and removes -wal/-shm
        info = dev.info()
        run_config = {
            "task_file": str(task_file.resolve()) if task_file is not None else None,
            "model": model_name,
            "base_url": getattr(mdl, "base_url", None),  # an OpenAI-compatible endpoint (never a key)
            "device": device if device is not None else (info.serial if info.kind != "sim" else "sim"),
            "backend": backend,
            "sim": {"world": world, "seed": sim_seed, **sim_opts} if info.kind == "sim" else {},
        }
        header = (
            f"task [cyan]{escape(task.id)}[/] · device {escape(info.serial)} ({info.kind}, {info.width}x{info.height})"
            f" · model {escape(mdl.label)}"
        )
        from artemis_cli.cli.stdin_inbox import StdinInbox

        inbox = StdinInbox().start()  # lines typed during the run reach the operator at the next step
        budget: list[str] = []  # the context budget line, once the run planned it (before the session)
        try:
            result = with_progress(
                lambda cb: run_task(task, prof, dev, mdl, engine, max_steps=max_steps, run_config=run_config,
                                    user_inbox=inbox.take, max_cost=max_cost, fit=fit,
                                    on_budget=lambda b: budget.extend(filter(None, (b.text(), b.fitted_text()))), **cb),
                header=lambda: header + "".join(f"\n  {escape(line)}" for line in budget),
                as_json=as_json, no_live=no_live,
            )
        finally:
            dev.close()
        finish_command(result, as_json, engine)
    finally:
        engine.close()


def stop_cleanly(command: Callable[[], None], as_json: bool) -> None:
    """Run a session command so that SIGINT/SIGTERM/SIGHUP end it as a clean stop: the session
    is marked interrupted (the runner does that), the user is told how to continue, and the
    exit code is 128 + the signal (130, 143, 129). ``--json`` still prints the result object."""
    from artemis_cli.stopping import SessionInterrupted, catch_stop_signals

    with catch_stop_signals():
        try:
            command()
        except SessionInterrupted as exc:
            if as_json and exc.result is not None:
                write_out(json.dumps(exc.result.to_dict(), ensure_ascii=False, indent=2) + "\n")
            print(exc.message(), file=sys.stderr)
            raise typer.Exit(exc.exit_code) from None


def with_progress(start: Callable[[dict[str, Any]], Any], *, header: str | Callable[[], str], as_json: bool,
                  no_live: bool) -> Any:
    """Run ``start(callbacks)`` with per-step progress on stderr (stdout is kept for the result,
    so ``artemis run … | head -1`` or ``--json | jq`` read only that). ``as_json`` is kept for the
    callers: progress is on stderr either way."""
    progress = err()
    plain = no_live or not progress.is_terminal

    def on_start(session_id: str) -> None:
        progress.print(f"[bold]Session {session_id}[/] · {header() if callable(header) else header}")

    def on_step(rep: object) -> None:
        from artemis_cli.operators.flash import StepReport

        assert isinstance(rep, StepReport)
        progress.print(step_line(rep, progress.width), overflow="ellipsis", no_wrap=True)

    def on_notice(text: str) -> None:
        progress.print(f"[yellow]  ! {escape(text)}[/]")

    callbacks = {"on_start": on_start, "on_step": on_step, "on_notice": on_notice}
    if plain:
        return start(callbacks)
    with progress.status("running…", spinner="dots"):
        return start(callbacks)


#: The status cell is as wide as the longest status, so every phrase starts in one column.
_STATUS_WIDTH = len("no_change")
#: Columns of a progress line around the action phrase: "NNNN  TTTTT.Ts  status___ " (and one
#: spare) and
#: " tok NNNNNN cache NNN%"; below ``_TOKENS_FROM`` columns the token figures are left out.
_LEAD, _TOKENS, _TOKENS_FROM = 16 + _STATUS_WIDTH + 2, 22, 72
_STATUS_STYLE = {"ok": "green", "finished": "blue", "no_change": "yellow"}
#: Statuses shown by another word in the status cell (within its width).
_STATUS_LABEL = {"finished": "finish", "app_crashed": "crashed", "app_not_responding": "anr"}


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def step_line(rep: Any, width: int) -> str:
    """One progress line that fits ``width`` columns (Rich markup; device text escaped): number,
    time, status (padded to the longest, so every phrase starts in one column), the action phrase
    and, for a step that did not work, why — both cut to the room — then the token figures."""
    from artemis_cli.cli.tables import one_line
    from artemis_cli.engine.records import APP_FAULT_STATUSES

    label = _STATUS_LABEL.get(rep.status, rep.status)
    status = f"[{_STATUS_STYLE.get(rep.status, 'red')}]{escape(label)}[/]" + " " * max(0, _STATUS_WIDTH - len(label))
    tokens = width >= _TOKENS_FROM
    room = max(10, width - _LEAD - (_TOKENS if tokens else 0))
    why = one_line(rep.detail) if rep.detail and rep.status in ("error", "failed", "no_change", *APP_FAULT_STATUSES) else ""
    # the phrase keeps at least half the room when there is a reason to show beside it
    phrase = _cut(rep.phrase, max(room - 2 - len(why), room // 2) if why else room)
    why = _cut(why, room - len(phrase) - 2) if why and room - len(phrase) - 2 >= 4 else ""
    shown = len(phrase) + (2 + len(why) if why else 0)
    line = f"{rep.number:>4}  {rep.elapsed_s:7.1f}s  {status} {escape(phrase)}"
    if why:
        line += f"  [red]{escape(why)}[/]"
    line += " " * (room - shown)
    if tokens:
        cache = f"{100 * rep.cached_tokens / rep.prompt_tokens:.0f}%" if rep.prompt_tokens else "-"
        line += f" tok {rep.prompt_tokens:>6} cache {cache:>4}"
    return line


def finish_command(result: Any, as_json: bool, engine: Any = None) -> None:
    """Print the result (``--json``: the result object plus ``tokens`` by role) and exit with its
    code. ``engine`` is the run's DataEngine; without one the result's data dir is opened."""
    usage = _token_usage(result, engine)
    if as_json:
        data = result.to_dict()
        if usage is not None:
            data["tokens"] = usage.to_dict()
        write_out(json.dumps(data, ensure_ascii=False, indent=2) + "\n")
    else:
        print_summary(result, usage)
    raise typer.Exit(result.exit_code)


def _token_usage(result: Any, engine: Any) -> Any:
    """The session's tokens by role (every recorded model call), or None when the data dir
    cannot be read any more (a full or vanished disk must not hide the result)."""
    from artemis_cli.engine.token_usage import token_usage

    try:
        if engine is not None:
            return token_usage(engine, result.session_id)
        from artemis_cli.engine.db import DataEngine

        with DataEngine.open_for_reading(result.data_dir) as reader:
            return token_usage(reader, result.session_id)
    except Exception:
        return None


def cost_line(cost: dict[str, Any]) -> str:
    """A ``cost`` dict (``CostSummary.to_dict``) as one line: total, then each role."""
    from artemis_cli.engine.token_usage import CostSummary

    return CostSummary.from_dict("", cost).text()


def print_summary(result: object, usage: Any = None) -> None:
    from rich.table import Table

    from artemis_cli.cli.tables import ellipsize, ellipsize_front
    from artemis_cli.cli.token_table import no_billed_line, print_table, total_line
    from artemis_cli.runner import RunResult

    assert isinstance(result, RunResult)
    # fits the terminal: the values wrap between words, the model label and the data dir are cut
    # (with an ellipsis; the dir at the front) to one line; the id in the title is never cut
    room = max(out().width - 7 - len("result"), 16)  # 7: the borders and the padding of two columns
    table = Table(title=f"Session {result.session_id}", show_header=False, min_width=len(f"Session {result.session_id}"))
    table.add_column("", style="bold", no_wrap=True)
    table.add_column("", max_width=room)
    colour = "green" if result.success else "red"
    table.add_row("result", f"[{colour}]{result.status}[/] — {escape(result.message)}")
    table.add_row("model", escape(ellipsize(result.model_label, room)))
    table.add_row("steps", str(result.steps))
    if result.answer:
        table.add_row("answer", escape(result.answer))
    for c in result.checks:
        mark = "[green]✓[/]" if c.passed else "[red]✗[/]"
        table.add_row("check", f"{mark} {escape(c.check)} ({escape(c.detail)})")
    if usage is None and result.offline_model:  # nothing an offline model does is billed
        from artemis_cli.engine.token_usage import TokenUsage

        usage = TokenUsage(result.session_id)
    if usage is None:  # the data dir could not be read: the operator's own figures
        cached = f" ({100 * result.cached_tokens / result.prompt_tokens:.0f}% cached)" if result.prompt_tokens else ""
        table.add_row("tokens", f"{result.prompt_tokens:,} prompt{cached}, {result.completion_tokens:,} completion"
                                " (every role)")
    elif usage.billed:
        table.add_row("tokens", total_line(usage))
    else:
        table.add_row("tokens", no_billed_line(usage, offline=result.offline_model))
    if result.cost:
        table.add_row("cost", cost_line(result.cost))
    from artemis_cli.engine.segments import time_text

    table.add_row("time", time_text(result.elapsed_s, result.wall_s, result.interruptions))
    table.add_row("data", escape(ellipsize_front(str(result.data_dir), room)))
    out().print(table)
    if usage is not None and usage.billed:
        print_table(out(), usage)
    if result.stop_reason == "storage_full":
        out().print(f"[yellow]{escape(result.message)}[/]")
    elif result.exit_code == 3:
        out().print("[yellow]The session stopped because the device or model became unavailable; its steps are saved.[/]")
