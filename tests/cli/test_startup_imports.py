"""Start-up stays cheap (issue 23 item 14): importing the CLI app, or the engine a read command
opens, must not pull the heavy libraries in; they load inside the commands that use them. A
regression guard on sys.modules, not a timing assertion (benchmarks/startup.py prints figures).
Each command's module loads only when that command runs or its help is asked for (issue 38)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from artemis_cli.cli.app import COMMANDS

HEAVY = ("pydantic", "google.genai", "openai", "PIL", "lxml", "adbutils", "uiautomator2", "numpy",
         "artemis_cli.config.task", "artemis_cli.config.profile")


@pytest.mark.parametrize("module", ["artemis_cli.cli.app", "artemis_cli.engine.db", "artemis_cli.config.issues"])
def test_importing_does_not_load_heavy_modules(module: str) -> None:
    code = f"import sys, json, {module}; print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []


def test_the_lazy_package_names_still_resolve() -> None:
    from artemis_cli import config, perception

    assert config.Task.__name__ == "Task" and perception.parse_hierarchy.__name__ == "parse_hierarchy"
    with pytest.raises(AttributeError):
        _ = config.NoSuchName


# --- issue 38 item 3: each command's --help and `sessions list` load only what they need ---------

#: never needed to show help (Rich is: Typer renders help with it)
HELP_HEAVY = (*HEAVY, "sqlite_utils", "artemis_cli.engine", "artemis_cli.api", "artemis_cli.runner", "yaml", "mcp",
              "httpx", "artemis_cli.sim")
#: modules a command's own module imports from a sibling command module on purpose
SHARED = {"resume": {"run_cmd"}, "sessions": {"prompt_cmd"}}
_PROBE = """
import json, runpy, sys
sys.argv = ["artemis", *sys.argv[1:]]
try:
    runpy.run_module("artemis_cli", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n")
"""


def loaded_modules(*argv: str, home: str) -> set[str]:
    """The modules ``artemis ARGV`` had imported when it exited (a fresh interpreter)."""
    proc = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "ARTEMIS_HOME": home, "COLUMNS": "80"})
    line = next(x for x in proc.stderr.splitlines() if x.startswith("MODULES "))
    return set(json.loads(line.removeprefix("MODULES ")))


def command_modules(modules: set[str]) -> set[str]:
    return {m.rsplit(".", 1)[1] for m in modules if m.startswith("artemis_cli.cli.") and m.endswith("_cmd")}


def test_the_root_help_loads_no_command() -> None:
    modules = loaded_modules("--help", home="/nonexistent-artemis-home")
    assert command_modules(modules) == set()
    assert [m for m in HELP_HEAVY if m in modules] == []


@pytest.mark.parametrize("path", [*([name] for name in COMMANDS), ["sessions", "list"], ["tasks", "validate"]],
                         ids=" ".join)
def test_a_commands_help_loads_only_its_module(path: list[str]) -> None:
    modules = loaded_modules(*path, "--help", home="/nonexistent-artemis-home")
    assert command_modules(modules) == {COMMANDS[path[0]][0], *SHARED.get(path[0], set())}
    assert [m for m in HELP_HEAVY if m in modules] == []


@pytest.mark.parametrize("seeded", [False, True], ids=["no data dir", "sessions"])
def test_sessions_list_loads_no_device_model_or_config_library(tmp_path: Path, seeded: bool) -> None:
    """Nothing of devices, models, images or task files; no pydantic (Typer 0.26+ would convert
    the option values with it: cli/plain_values.py takes the plain ones without it) and no
    sqlite-utils (the rows are read with the stdlib: ``DataEngine.open_read_only``)."""
    home = tmp_path / "home"
    if seeded:
        from artemis_cli.engine import DataEngine, SessionRecord

        with DataEngine.open(home) as engine:
            engine.create_session(SessionRecord(goal="g", task_id="t", status="succeeded"))
    modules = loaded_modules("sessions", "list", "--limit", "5", "--task", "t", home=str(home))
    assert command_modules(modules) == {"sessions_cmd", "prompt_cmd"}
    assert [m for m in (*HEAVY, "sqlite_utils") if m in modules] == []
    assert home.exists() == seeded  # nothing was created
