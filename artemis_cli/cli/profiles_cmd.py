"""``artemis profiles validate FILE…`` and ``artemis profiles list``: check profile files on their
own (``artemis tasks validate`` reads a file as a task) and see which profiles ``--profile NAME``
finds."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from artemis_cli.cli.tables import PlainOpt

app = typer.Typer(help="Work with profiles (the loop, the model of each role, memory settings).",
                  no_args_is_help=True)

#: Top-level keys only a task file has: a profile that holds them is probably a task.
TASK_KEYS = frozenset({"goal", "reference", "success", "setup", "inject"})


@dataclass
class ProfileCheck:
    """The outcome of loading one profile."""

    path: str
    profile: Any = None  # artemis_cli.config.profile.Profile when valid
    error: Any = None  # the ConfigError when not
    hint: str | None = None

    @property
    def ok(self) -> bool:
        return self.profile is not None

    def operator(self) -> str:
        role = self.profile.models.operator
        return f"{role.provider}:{role.model}"

    def issues(self) -> list[Any]:
        from artemis_cli.config.issues import issues_of

        return [] if self.error is None else issues_of(self.error)

    def lines(self) -> list[str]:
        """``ok: FILE (loop …, operator provider:model)``, or every error with file, line and
        field: one line for one error (``error: FILE:LINE: FIELD: message``), else a head line
        (``error: FILE: N errors``) and each error indented below it."""
        if self.ok:
            return [f"ok: {self.path} (loop {self.profile.loop}, operator {self.operator()})"]
        issues = self.issues()
        if len(issues) == 1:
            return [f"error: {issues[0]}"]
        return [f"error: {self.path}: {len(issues)} errors", *(f"  {i}" for i in issues)]

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"path": self.path, "ok": self.ok}
        if self.ok:
            data |= {"name": self.profile.name, "loop": self.profile.loop, "operator": self.operator(),
                     "files": [str(f) for f in self.profile.files]}
        data["errors"] = [{"path": i.path, "line": i.line, "field": i.field, "message": i.message}
                          for i in self.issues()]
        if self.hint:
            data["hint"] = self.hint
        return data


def _as_path(given: str) -> str:
    """What ``load_profile`` reads as a path: a bare existing file name (``my``) gets ``./``
    (``load_profile("my")`` would look for a profile *named* my)."""
    if "/" in given or given.endswith((".yaml", ".yml")) or not Path(given).is_file():
        return given
    return f"./{given}"


def _shown(path: Path) -> str:
    """``path`` relative to the current directory when it is inside it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _task_hint(given: str) -> str | None:
    """``this looks like a task: …`` when the file's top-level keys are a task's."""
    from artemis_cli.config.yaml_source import load_yaml_file
    from artemis_cli.errors import ConfigError

    try:
        data = load_yaml_file(given).data
    except ConfigError:
        return None
    if isinstance(data, dict) and TASK_KEYS & set(data) and "loop" not in data:
        return f"this looks like a task: artemis tasks validate {given}"
    return None


def check_profile(given: str) -> ProfileCheck:
    from artemis_cli.config.profile import load_profile
    from artemis_cli.errors import ConfigError

    try:
        return ProfileCheck(given, profile=load_profile(_as_path(given)))
    except ConfigError as exc:
        return ProfileCheck(given, error=exc, hint=_task_hint(given) or exc.hint)


@app.command("validate")
def validate(
    files: Annotated[list[str], typer.Argument(help="Profile files (or names such as flash, pro).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list of results.")] = False,
) -> None:
    """Check profile files (and their extends: parents). Exit 2 if any is invalid.

    Per profile: ok with its loop and operator model, or every error with file:line and field."""
    from artemis_cli.cli.console import out

    checks = [check_profile(f) for f in files]
    bad = sum(not c.ok for c in checks)
    if as_json:
        typer.echo(json.dumps([c.to_json() for c in checks], indent=2, ensure_ascii=False))
    else:
        from rich.text import Text

        console = out()
        for c in checks:
            for line in c.lines():
                console.print(Text(line, style="" if c.ok else "red"), soft_wrap=True)
            if c.hint:
                console.print(Text(f"  hint: {c.hint}", style="dim"), soft_wrap=True)
        if len(checks) > 1:
            console.print(f"{len(checks) - bad} valid, {bad} invalid", style="bold")
    if bad:
        raise typer.Exit(2)


@app.command("list")
def list_profiles(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    plain: PlainOpt = False,
) -> None:
    """List the profiles that --profile NAME finds: name, loop, operator model, file.

    Looked up in ./profiles, then in the source checkout's profiles/; a YAML file directly in
    either directory is listed only when it is written as a profile (loop: or extends:, nothing
    but a profile's keys).

    When stdout is not a terminal (or with --plain) each profile is one tab-separated line with no header, in that column order."""
    from artemis_cli.config.profile import available_profiles, resolve_profile_path

    rows = []
    for name in available_profiles():
        check = check_profile(name)
        path = resolve_profile_path(name)
        rows.append((name, check, _shown(path) if path is not None else ""))
    if as_json:
        typer.echo(json.dumps([{**c.to_json(), "path": name, "file": file} for name, c, file in rows],
                              indent=2, ensure_ascii=False))
        return
    from rich.text import Text

    from artemis_cli.cli.tables import Column, FitTable, note_console, print_table

    console = note_console(plain)
    if not rows:
        console.print("No profiles found (looked in ./profiles and the source checkout).")
        return
    table = FitTable.listing([Column("name", "id"), Column("loop"), Column("operator", "label", min_width=16),
                      Column("file", "path", min_width=16)])
    for name, c, file in rows:
        if c.ok:
            table.add_row(name, str(c.profile.loop), c.operator(), file)
        else:
            table.add_row(name, Text("invalid", style="red"), "—", file)
    print_table(table, plain=plain)
    if any(not c.ok for _, c, _ in rows):
        console.print("Check one with: artemis profiles validate FILE", soft_wrap=False)
