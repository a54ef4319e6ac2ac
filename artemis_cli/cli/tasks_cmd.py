"""`artemis tasks validate FILE…` and `artemis tasks list [DIR]`."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from artemis_cli.cli.tables import Column, FitTable, PlainOpt, print_table
from artemis_cli.config.issues import ConfigIssue, issues_of
from artemis_cli.errors import ConfigError
from artemis_cli.paths import repo_root
from artemis_cli.plural import counted

if TYPE_CHECKING:  # the schemas are built and Rich is loaded on first use (start-up time)
    from rich.console import Console

    from artemis_cli.config.task import Task

app = typer.Typer(help="Work with task files.", no_args_is_help=True)

@dataclass
class TaskCheck:
    """The outcome of loading one task file."""

    path: str
    task: Task | None = None
    issues: list[ConfigIssue] = field(default_factory=list)
    hint: str | None = None
    warnings: list[ConfigIssue] = field(default_factory=list)  # a valid file that will fail at run time

    @property
    def ok(self) -> bool:
        return self.task is not None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "path": self.path,
            "ok": self.ok,
            "errors": [{"line": i.line, "field": i.field, "message": i.message} for i in self.issues],
        }
        if self.task is not None:
            out["id"] = self.task.id
            out["reference_steps"] = len(self.task.reference)
            out["warnings"] = [{"line": i.line, "field": i.field, "message": i.message} for i in self.warnings]
        if self.hint:
            out["hint"] = self.hint
        return out


def _console(stderr: bool = False) -> Console:
    from artemis_cli.cli.console import err, out

    return err() if stderr else out()


def expand_task_paths(paths: list[Path]) -> tuple[list[Path], list[ConfigIssue]]:
    """Files as given; directories become their task files (``config.task_files``: every
    *.yaml/*.yml inside them, recursively, hidden folders left out)."""
    from artemis_cli.config.task_files import task_files_in

    files: list[Path] = []
    problems: list[ConfigIssue] = []
    for path in paths:
        if path.is_dir():
            found = task_files_in(path)
            if not found:
                problems.append(ConfigIssue(str(path), None, None, "no task files (*.yaml) in this directory"))
            files.extend(found)
        else:
            files.append(path)
    return files, problems


#: Top-level keys of a profile that a task never has.
PROFILE_KEYS = frozenset({"loop", "models"})


def profile_hint(path: Path) -> str | None:
    """``this looks like a profile: …`` for a file with a profile's top-level keys (loop:, models:)."""
    from artemis_cli.config.yaml_source import load_yaml_file

    try:
        data = load_yaml_file(path).data
    except ConfigError:
        return None
    if isinstance(data, dict) and PROFILE_KEYS & set(data) and "goal" not in data:
        return f"this looks like a profile: artemis profiles validate {path}"
    return None


def check_task_file(path: Path, *, warnings: bool = False) -> TaskCheck:
    try:
        from artemis_cli.config.task import load_task

        task = load_task(path)
    except ConfigError as exc:
        return TaskCheck(str(path), issues=issues_of(exc), hint=profile_hint(path))
    if not warnings:
        return TaskCheck(str(path), task=task)
    from artemis_cli.config.task_warnings import task_warnings

    return TaskCheck(str(path), task=task, warnings=task_warnings(task, path))


def _print_warnings(check: TaskCheck) -> None:
    """Warnings go to stderr (results stay on stdout); the file stays valid, the exit code 0."""
    from rich.text import Text

    err = _console(stderr=True)
    for issue in check.warnings:
        err.print(Text(f"warning: {issue}", style="yellow"))


def _print_check(console: Console, check: TaskCheck) -> None:
    from rich.text import Text

    if check.task is not None:
        steps = len(check.task.reference)
        line = Text("✓ ", style="green")
        line.append(check.path)
        line.append(f" ({check.task.id}, {counted(steps, 'reference step')})", style="dim")
        console.print(line)
        return
    count = len(check.issues)
    header = Text("✗ ", style="red")
    header.append(check.path)
    header.append(f" ({counted(count, 'error')})", style="dim")
    console.print(header)
    for issue in check.issues:
        console.print(Text(f"  {issue}", style="red"))
    if check.hint:
        console.print(Text(f"  hint: {check.hint}"))


@app.command("validate")
def validate(
    files: Annotated[list[Path], typer.Argument(help="Task files or directories (searched recursively).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list of results.")] = False,
) -> None:
    """Check task files; print every error with file:line and field path. Exit 2 if any is invalid."""
    from rich.text import Text

    paths, problems = expand_task_paths(files)
    checks = [TaskCheck(p.path, issues=[p]) for p in problems]
    checks += [check_task_file(p, warnings=True) for p in paths]
    bad = sum(not c.ok for c in checks)
    if as_json:
        typer.echo(json.dumps([c.to_json() for c in checks], indent=2, ensure_ascii=False))
    else:
        console = _console()
        for check in checks:
            _print_check(console, check)
            _print_warnings(check)
        if len(checks) > 1:
            console.print(Text(f"{len(checks) - bad} valid, {bad} invalid", style="bold"))
    if bad:
        raise typer.Exit(2)


def _default_tasks_dir() -> Path:
    local = Path("tasks")
    if local.is_dir():
        return local
    root = repo_root()
    return root / "tasks" if root is not None else local


@app.command("list")
def list_tasks(
    directory: Annotated[Path | None, typer.Argument(help="Directory of task files (default: ./tasks).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    plain: PlainOpt = False,
) -> None:
    """List the task files in a directory: id, app, max steps, reference steps, tags, file.

    A narrow terminal leaves out tags first, then reference steps (ref), the app and max_steps; the id and the file stay. When stdout is not a terminal (or with --plain) each task is one tab-separated line with no header and every column: id, app, max_steps, reference steps, tags (comma-separated), file."""
    from rich.text import Text

    folder = directory if directory is not None else _default_tasks_dir()
    if not folder.is_dir():
        raise ConfigError(str(folder), None, None, "not a directory")
    paths, _ = expand_task_paths([folder])
    checks = [check_task_file(p) for p in paths]
    good = [c for c in checks if c.task is not None]
    bad = [c for c in checks if c.task is None]
    if as_json:
        rows = [
            {"path": c.path, "id": c.task.id, "app": c.task.app, "max_steps": c.task.max_steps,
             "reference_steps": len(c.task.reference), "tags": c.task.tags}
            for c in good if c.task is not None
        ]
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        table = FitTable.listing([
            # narrow: tags go first, then the reference count, the app and max_steps; the id and the
            # file (what `artemis run` takes) stay. File and package are cut at the front (their
            # end tells them apart: …/bench-notes.yaml, …android.deskclock)
            Column("id", "id"), Column("app", "path", drop=3, min_width=10),
            Column("max_steps", justify="right", drop=2), Column("ref", justify="right", drop=4),
            Column("tags", "label", drop=5), Column("file", "path", min_width=16),
        ], title=f"Tasks in {folder}", title_justify="left")
        for c in good:
            assert c.task is not None
            t = c.task
            table.add_row(t.id, t.app or "-", str(t.max_steps), str(len(t.reference)),
                          ", ".join(t.tags) or "-", c.path)
        print_table(table, plain=plain)
    if bad:
        err = _console(stderr=True)
        for c in bad:
            err.print(Text(f"✗ {c.issues[0]}", style="red"))
        err.print(Text(f"{len(bad)} invalid task file(s); run `artemis tasks validate {folder}` for details"))
        raise typer.Exit(2)
