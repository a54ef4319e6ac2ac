"""``artemis bench run`` / ``artemis bench compare`` (SPEC §12): the frozen long-task benchmark."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from artemis_cli.cli.helptext import literal
from artemis_cli.errors import UsageError
from artemis_cli.plural import counted

app = typer.Typer(help="Frozen long-task benchmark: memory modes side by side.", no_args_is_help=True)


def _split(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [v.strip() for v in value.split(",") if v.strip()]


def default_jobs() -> int:
    """``--jobs`` by default: the cores this process may use, at most 4."""
    import os

    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, 4))


@app.command("run")
def run(
    suite: Annotated[Path, typer.Argument(help="Folder of frozen task files, e.g. tasks/bench.")],
    memory: Annotated[str, typer.Option("--memory", help="Comma list of memory modes.")] = "transcript,legacy,naive",
    model: Annotated[str, typer.Option("--model", "-m", help="scripted (reference solutions through the fake Gemini server) | heuristic.")] = "scripted",
    profile: Annotated[str, typer.Option("--profile", "-p", help="flash | pro | path to a profile.")] = "flash",
    tasks: Annotated[str | None, typer.Option("--tasks", help="Comma list of task ids to run (default: all).")] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Results JSON; the SVG chart is written next to it with .svg (--out r.json: r.svg).")] = Path("bench-results.json"),
    synthetic_steps: Annotated[int, typer.Option("--synthetic-steps", min=20, help="Length of the synthetic overhead run.")] = 1000,
    recall_steps: Annotated[int, typer.Option("--recall-steps", min=10, help="Size of the synthetic recall session.")] = 10_000,
    fresh: Annotated[bool, typer.Option("--fresh", help="Ignore finished pairs from an earlier run.")] = False,
    lens: Annotated[str, typer.Option("--lens", help="mechanical (default: step and chunk summaries from the mechanical lenses) | server (lens calls go to the fake server; its stub text is labelled stub-…).")] = "mechanical",
    devices: Annotated[str | None, typer.Option("--devices", help="Run the pairs concurrently, one worker process per device: a comma list of adb serials, sim (a fresh simulated phone per pair, with the task's world and seed) and sim*N (N of them), e.g. sim*2 or SERIAL,SERIAL. A device that drops has its pair re-queued once on another device.")] = None,
    jobs: Annotated[int | None, typer.Option("--jobs", "-j", min=1, max=64, help="Without --devices or --ray: run the pairs and the synthetic runs in N worker processes, each pair on its own simulated phone (default: the machine's cores, at most 4; 1: one at a time in this process).")] = None,
    ray_address: Annotated[str | None, typer.Option("--ray", metavar="ADDRESS", help=literal("Run the pairs on a Ray cluster, one actor per phone on the host that owns it: auto (the cluster this machine joined with `ray start`, or RAY_ADDRESS), local (start Ray here with this machine's phones) or the head's HOST:PORT. Needs pip install 'artemis-cli[ray]'; see docs/scale.md."))] = None,
    devices_file: Annotated[Path | None, typer.Option("--devices-file", help="With --ray: cluster.yaml naming each host's address, adb_port and phones (default: ask every node's adb server). See docs/scale.md.")] = None,
) -> None:
    """Run every task in every memory mode (resumable: finished pairs are kept and skipped)."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from artemis_cli.bench.output import print_results, svg_chart
    from artemis_cli.bench.runner import BenchConfig, run_bench
    from artemis_cli.bench.runner import Progress as BenchProgress
    from artemis_cli.bench.suite import load_suite
    from artemis_cli.bench.validate import validate_results
    from artemis_cli.cli.console import escape
    from artemis_cli.cli.console import out as console
    from artemis_cli.cli.output import check_output, write_output

    if out.suffix.lower() == ".svg":  # the chart goes beside the results, with .svg: the same file
        raise typer.BadParameter(f"{out} is an SVG name, where the chart would overwrite the results: --out takes "
                                 "the results JSON and the chart goes beside it (--out results.json: results.svg)",
                                 param_hint="'--out' / '-o'")
    check_output(out, option="--out")  # before the run, not after it
    config = BenchConfig(suite=suite, out=out, modes=_split(memory) or [], model=model, profile=profile,
                         tasks=_split(tasks), synthetic_steps=synthetic_steps, recall_steps=recall_steps, lens=lens,
                         devices=_split(devices) if devices is not None else None,
                         jobs=default_jobs() if jobs is None else jobs)
    if config.devices is not None and not config.devices:
        raise UsageError("--devices is empty", hint="e.g. --devices sim*2 or --devices SERIAL,SERIAL")
    config.check()
    if devices_file is not None and ray_address is None:
        raise UsageError("--devices-file needs --ray", hint="e.g. --ray auto --devices-file cluster.yaml (docs/scale.md)")
    if ray_address is not None and config.devices is not None:
        raise UsageError("--ray and --devices do not mix", hint="with --ray the phones come from the cluster (--devices-file)")
    if fresh and config.state_path.exists():
        config.state_path.unlink()
    n_pairs = len(load_suite(suite, only=config.tasks)) * len(config.modes)
    con = console()
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=con, transient=False) as bars:
        pairs_bar = bars.add_task("task × mode pairs", total=n_pairs)
        steps_bar = bars.add_task("steps", total=1)

        def pair_start(task_id: str, mode: str, max_steps: int) -> None:
            bars.reset(steps_bar, total=max_steps, description=escape(f"{task_id} · {mode}"))

        def pair_done(task_id: str, mode: str, row: dict[str, Any] | None) -> None:
            bars.advance(pairs_bar)
            if row is None:
                con.print(f"[dim]resumed: {escape(task_id)} · {mode} (kept from the earlier run)[/dim]")
            else:
                ok = "[green]ok[/green]" if row["success"] else "[red]FAILED[/red]"
                where = f"{escape(str(row['device']))}: " if row.get("device") else ""
                again = (f" [yellow](attempt {row['attempts']}, re-queued from {escape(str(row['requeued_from']))})"
                         "[/yellow]" if row.get("requeued_from") else "")
                con.print(f"{where}{escape(task_id)} · {mode}: {ok} {counted(row['steps'] or 0, 'step')} in {row['wall_s']} s{again}")

        device_hooks: dict[str, Any] = {}
        slots = config.local_devices() if ray_address is None else None
        if slots or ray_address is not None:  # one line per device: device, current pair, step
            from artemis_cli.bench.parallel import parse_devices

            names = [d.name for d in parse_devices(slots)] if slots else []  # Ray: as they start
            if con.is_terminal:
                bars.update(steps_bar, visible=False)
                dev_bars = {n: bars.add_task(escape(f"{n} · idle"), total=1) for n in names}

                def dev_bar(dev: str) -> Any:
                    if dev not in dev_bars:
                        dev_bars[dev] = bars.add_task(escape(f"{dev} · idle"), total=1)
                    return dev_bars[dev]

                def dev_start(dev: str, task_id: str, mode: str, max_steps: int) -> None:
                    bars.reset(dev_bar(dev), total=max_steps, description=escape(f"{dev} · {task_id} · {mode}"))

                def dev_step(dev: str, n: int) -> None:
                    bars.update(dev_bar(dev), completed=n)
            else:
                def dev_start(dev: str, task_id: str, mode: str, max_steps: int) -> None:
                    con.print(f"{escape(dev)}: {escape(task_id)} · {mode} started (max {counted(max_steps, 'step')})")

                def dev_step(dev: str, n: int) -> None:
                    pass

            def dev_note(dev: str, text: str) -> None:
                con.print(f"[yellow]{escape(dev)}: {escape(text)}[/yellow]")

            def synthetic_done(dev: str, label: str, row: dict[str, Any]) -> None:
                con.print(f"{escape(dev)}: {escape(label)}: done in {row.get('wall_s')} s")

            device_hooks = {"on_device_start": dev_start, "on_device_step": dev_step, "on_device_note": dev_note,
                            "on_synthetic_done": synthetic_done}

        def phase(text: str) -> None:
            bars.reset(steps_bar, total=synthetic_steps if "synthetic" in text and "recall" not in text else 1,
                       description=escape(text))

        def phase_shown(text: str) -> None:
            bars.update(steps_bar, visible=True)
            phase(text)

        bench_progress = BenchProgress(on_pair_start=pair_start, on_step=lambda n: bars.update(
            steps_bar, completed=n), on_pair_done=pair_done, on_phase=phase_shown, **device_hooks)
        if ray_address is not None:  # one actor per phone on a Ray cluster (docs/scale.md)
            from artemis_cli.bench.ray_backend import run_bench_ray

            results = run_bench_ray(config, ray_address, devices_file, bench_progress)
        else:
            results = run_bench(config, bench_progress)
    validate_results(results)
    write_output(out, json.dumps(results, indent=2), option="--out")
    chart = out.with_suffix(".svg")
    write_output(chart, svg_chart(results), option="--out")
    print_results(results, con)
    con.print(f"Results: {escape(str(out))} (schema-valid) · chart: {escape(str(chart))}")
    unfinished = results.get("unfinished") or []
    if unfinished:
        for u in unfinished:
            con.print(f"[red]not finished: {escape(u['task'])} · {u['mode']} ({escape(u['reason'])})[/red]")
        con.print(f"[red]{len(unfinished)} pair(s) did not finish; run the same command again to retry them "
                  "(finished pairs are kept).[/red]")
        raise typer.Exit(3)


def _load(path: Path) -> dict[str, Any]:
    from artemis_cli.bench.validate import validate_results

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise UsageError(f"no results file {path}") from exc
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path} is not JSON: {exc}") from exc
    validate_results(data)
    return dict(data)


@app.command("compare")
def compare(
    a: Annotated[Path, typer.Argument(help="Results JSON A (the baseline).")],
    b: Annotated[Path, typer.Argument(help="Results JSON B.")],
) -> None:
    """Print every figure of two bench runs side by side with the difference and the ratio B ÷ A."""
    from artemis_cli.bench.output import compare_table
    from artemis_cli.cli.console import out as console

    con = console()
    con.print(compare_table(_load(a), _load(b), str(a), str(b), con.width))
