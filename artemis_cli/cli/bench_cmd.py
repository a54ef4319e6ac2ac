"""``artemis bench run`` / ``artemis bench compare`` (SPEC §12): the frozen long-task benchmark."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from artemis_cli.errors import UsageError

app = typer.Typer(help="Frozen long-task benchmark: memory modes side by side.", no_args_is_help=True)


def _split(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [v.strip() for v in value.split(",") if v.strip()]


@app.command("run")
def run(
    suite: Annotated[Path, typer.Argument(help="Folder of frozen task files, e.g. tasks/bench.")],
    memory: Annotated[str, typer.Option("--memory", help="Comma list of memory modes.")] = "transcript,legacy,naive",
    model: Annotated[str, typer.Option("--model", "-m", help="scripted (reference solutions through the fake Gemini server) | heuristic.")] = "scripted",
    profile: Annotated[str, typer.Option("--profile", "-p", help="flash | pro | path to a profile.")] = "flash",
    tasks: Annotated[str | None, typer.Option("--tasks", help="Comma list of task ids to run (default: all).")] = None,
    out: Annotated[Path, typer.Option("--out", "-o", help="Results JSON (the SVG chart is written next to it).")] = Path("bench-results.json"),
    synthetic_steps: Annotated[int, typer.Option("--synthetic-steps", min=20, help="Length of the synthetic overhead run.")] = 1000,
    recall_steps: Annotated[int, typer.Option("--recall-steps", min=10, help="Size of the synthetic recall session.")] = 10_000,
    fresh: Annotated[bool, typer.Option("--fresh", help="Ignore finished pairs from an earlier run.")] = False,
    lens: Annotated[str, typer.Option("--lens", help="mechanical (default: step and chunk summaries from the mechanical lenses) | server (lens calls go to the fake server; its stub text is labelled stub-…).")] = "mechanical",
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

    check_output(out, option="--out")  # before the run, not after it
    config = BenchConfig(suite=suite, out=out, modes=_split(memory) or [], model=model, profile=profile,
                         tasks=_split(tasks), synthetic_steps=synthetic_steps, recall_steps=recall_steps, lens=lens)
    config.check()
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
                con.print(f"{escape(task_id)} · {mode}: {ok} {row['steps']} steps in {row['wall_s']} s")

        def phase(text: str) -> None:
            bars.reset(steps_bar, total=synthetic_steps if "synthetic" in text and "recall" not in text else 1,
                       description=escape(text))

        results = run_bench(config, BenchProgress(on_pair_start=pair_start, on_step=lambda n: bars.update(
            steps_bar, completed=n), on_pair_done=pair_done, on_phase=phase))
    validate_results(results)
    write_output(out, json.dumps(results, indent=2), option="--out")
    chart = out.with_suffix(".svg")
    write_output(chart, svg_chart(results), option="--out")
    print_results(results, con)
    con.print(f"Results: {escape(str(out))} (schema-valid) · chart: {escape(str(chart))}")


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
