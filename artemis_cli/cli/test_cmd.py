"""``artemis test``: run a suite of tasks and recorded sessions across devices; JUnit XML,
retries, per-case reports with an index, --json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from artemis_cli.cli.console import err, escape, json_on_error, write_out
from artemis_cli.cli.options import DataDirOpt

#: The JUnit testsuite name and every testcase's classname, unless --name says otherwise.
DEFAULT_SUITE_NAME = "artemis"


def test(
    paths: Annotated[list[str], typer.Argument(help="Task folders (their *.yaml/*.yml task files, recursively, as tasks validate finds them), task files, recorded session ids and session bundles.", show_default=False)],
    model: Annotated[str | None, typer.Option("--model", "-m", help="Model for every task case, as artemis run takes it (e.g. scripted), and the healing model of session cases (default: as replay --heal). Without --model and without an API key the suite is refused (exit 2) rather than run on the heuristic baseline: pass --model heuristic to run it on purpose.")] = None,
    profile: Annotated[str | None, typer.Option("--profile", "-p", help="flash | pro | path to a profile. Default: each task's own.")] = None,
    devices: Annotated[str, typer.Option("--devices", help="SERIAL,…, sim*N or sim:WORLD (e.g. sim:drift: every case on it runs in that world): one worker per device.")] = "sim",
    ray: Annotated[str | None, typer.Option("--ray", help="Ray cluster address (with --devices-file).")] = None,
    devices_file: Annotated[Path | None, typer.Option("--devices-file", help="Cluster file of phones for --ray.")] = None,
    junit: Annotated[Path | None, typer.Option("--junit", help="Write the JUnit XML result to this file. Its directory must exist (none is created); checked before any case runs.")] = None,
    retries: Annotated[int, typer.Option("--retries", min=0, help="Re-run a failed case up to N times; a later pass is flaky.")] = 0,
    report_dir: Annotated[Path | None, typer.Option("--report-dir", help="Write each case's HTML report and an index.html linking them into this folder (created inside an existing directory; checked before any case runs).")] = None,
    data_dir: DataDirOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the suite result as JSON on stdout (one document, also when the suite cannot start: status error, error, hint).")] = False,
    strict: Annotated[bool, typer.Option("--strict", help="An invalid task file stops the suite before anything runs (exit 2), instead of failing as its own case.")] = False,
    name: Annotated[str, typer.Option("--name", help="Suite name: the JUnit testsuite name and every testcase's classname.")] = DEFAULT_SUITE_NAME,
) -> None:
    """Run tasks (as artemis run) and recorded sessions (replayed with healing) as a test suite on
    one or more devices; exit 0 only when every case passed."""
    with json_on_error(as_json):  # --json: one JSON document, also when the suite cannot start
        _test(paths, model, profile, devices, ray, devices_file, junit, retries, report_dir, data_dir, as_json,
              strict, name)


def _test(paths: list[str], model: str | None, profile: str | None, devices: str, ray: str | None,
          devices_file: Path | None, junit: Path | None, retries: int, report_dir: Path | None,
          data_dir: Path | None, as_json: bool, strict: bool, name: str) -> None:
    from artemis_cli.bench.parallel import parse_devices
    from artemis_cli.cli.output import check_output
    from artemis_cli.errors import UsageError
    from artemis_cli.paths import data_dir as resolve_data_dir
    from artemis_cli.suite.cases import discover, suite_models
    from artemis_cli.suite.driver import run_suite
    from artemis_cli.suite.junit import write_junit

    if (ray is None) != (devices_file is None):
        raise UsageError("--ray and --devices-file go together", hint="--ray auto --devices-file cluster.yaml")
    if junit is not None:  # every output path before any work: one rule (cli/output.check_output)
        check_output(junit, option="--junit")
    if report_dir is not None:
        check_output(report_dir, option="--report-dir", folder=True)
    home = resolve_data_dir(data_dir)
    cases = discover(paths, home, strict=strict)
    slots = None if ray else parse_devices(devices, worlds=True)
    models = suite_models(cases, model, profile)
    progress = err()
    for line in models.lines():
        progress.print(escape(line), highlight=False)
    suite = run_suite(cases, model=model, profile=profile, devices=slots, data_dir=home,
                      retries=retries, ray_address=ray, devices_file=devices_file, report_dir=report_dir,
                      say=lambda text: progress.print(escape(text), highlight=False))
    suite = {"id": suite["id"], "name": name, "model": models.to_dict(), **suite}
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


def results_table(suite: dict[str, Any]) -> Any:
    """The results as a :class:`~artemis_cli.cli.tables.FitTable`: case, status and device always
    whole; the failure is cut to the room left (its whole text is in --json, the JUnit file and
    the case's report); session, cost and steps are left out, in that order, when the terminal is
    too narrow for them (cli/tables)."""
    from artemis_cli.cli.tables import Column, FitTable
    from artemis_cli.models.pricing import format_usd

    table = FitTable([Column("case", "id"), Column("status"), Column("device", "id"),
                      Column("steps", justify="right", drop=1), Column("cost", drop=2),
                      Column("session", "id", drop=3), Column("failure", "label", min_width=12)],
                     title=f"Suite {suite['id']}")
    for c in suite["cases"]:
        status = c["status"] + (" (flaky)" if c["flaky"] else "")
        cost = format_usd((c.get("cost") or {}).get("total_usd")) if c.get("cost") else "-"
        table.add_row(c["name"], status, c.get("device") or "-", str(c.get("steps") or 0), cost,
                      c.get("session_id") or "-", c.get("failure") or "")
    return table


def _print_table(suite: dict[str, Any]) -> None:
    from artemis_cli.cli.tables import print_table
    from artemis_cli.models.pricing import format_usd

    print_table(results_table(suite))
    t = suite["totals"]
    err().print(f"{t['passed']}/{t['cases']} passed, {t['failed']} failed, {t['flaky']} flaky · cost "
                f"{format_usd(t.get('cost_usd'))}" + (f" · index: {suite['index']}" if suite.get("index") else ""),
                highlight=False)
