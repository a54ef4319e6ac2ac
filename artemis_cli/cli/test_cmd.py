"""``artemis test``: run a suite of tasks and recorded sessions across devices; JUnit XML,
retries, per-case reports with an index, --json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from artemis_cli.cli.console import err, escape, write_out
from artemis_cli.cli.options import DataDirOpt


def test(
    paths: Annotated[list[str], typer.Argument(help="Task folders (their *.yaml), task files, recorded session ids and session bundles.", show_default=False)],
    model: Annotated[str | None, typer.Option("--model", "-m", help="Model for every task case, as artemis run takes it (e.g. scripted), and the healing model of session cases (default: as replay --heal).")] = None,
    profile: Annotated[str | None, typer.Option("--profile", "-p", help="flash | pro | path to a profile. Default: each task's own.")] = None,
    devices: Annotated[str, typer.Option("--devices", help="SERIAL,… or sim*N: one worker per device.")] = "sim",
    ray: Annotated[str | None, typer.Option("--ray", help="Ray cluster address (with --devices-file).")] = None,
    devices_file: Annotated[Path | None, typer.Option("--devices-file", help="Cluster file of phones for --ray.")] = None,
    junit: Annotated[Path | None, typer.Option("--junit", help="Write the JUnit XML result to this file.")] = None,
    retries: Annotated[int, typer.Option("--retries", min=0, help="Re-run a failed case up to N times; a later pass is flaky.")] = 0,
    report_dir: Annotated[Path | None, typer.Option("--report-dir", help="Write each case's HTML report and an index.html linking them into this folder.")] = None,
    data_dir: DataDirOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the suite result as JSON on stdout.")] = False,
) -> None:
    """Run tasks (as artemis run) and recorded sessions (replayed with healing) as a test suite on
    one or more devices; exit 0 only when every case passed."""
    from artemis_cli.bench.parallel import parse_devices
    from artemis_cli.errors import UsageError
    from artemis_cli.paths import data_dir as resolve_data_dir
    from artemis_cli.suite.cases import discover
    from artemis_cli.suite.driver import run_suite
    from artemis_cli.suite.junit import write_junit

    if (ray is None) != (devices_file is None):
        raise UsageError("--ray and --devices-file go together", hint="--ray auto --devices-file cluster.yaml")
    home = resolve_data_dir(data_dir)
    cases = discover(paths, home)
    slots = None if ray else parse_devices(devices)
    progress = err()
    suite = run_suite(cases, model=model, profile=profile, devices=slots, data_dir=home,
                      retries=retries, ray_address=ray, devices_file=devices_file, report_dir=report_dir,
                      say=lambda text: progress.print(escape(text), highlight=False))
    if junit is not None:
        write_junit(suite, junit)
    if suite["status"] == "interrupted":
        progress.print("Interrupted: unfinished cases are listed as interrupted; resume a session with "
                       "artemis resume ID.", highlight=False)
    if as_json:
        write_out(json.dumps(suite, ensure_ascii=False, indent=2) + "\n")
    else:
        _print_table(suite)
    raise typer.Exit(0 if suite["status"] == "passed" else (130 if suite["status"] == "interrupted" else 1))


def _print_table(suite: dict[str, Any]) -> None:
    from artemis_cli.cli.tables import Column, FitTable, print_table
    from artemis_cli.models.pricing import format_usd

    table = FitTable([Column("case"), Column("status"), Column("device"), Column("steps"), Column("cost"),
                      Column("session"), Column("failure")], title=f"Suite {suite['id']}")
    for c in suite["cases"]:
        status = c["status"] + (" (flaky)" if c["flaky"] else "")
        cost = format_usd((c.get("cost") or {}).get("total_usd")) if c.get("cost") else "-"
        table.add_row(c["name"], status, c.get("device") or "-", str(c.get("steps") or 0), cost,
                      c.get("session_id") or "-", c.get("failure") or "")
    print_table(table)
    t = suite["totals"]
    err().print(f"{t['passed']}/{t['cases']} passed, {t['failed']} failed, {t['flaky']} flaky · cost "
                f"{format_usd(t.get('cost_usd'))}" + (f" · index: {suite['index']}" if suite.get("index") else ""),
                highlight=False)
