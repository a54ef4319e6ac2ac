"""Start-up stays cheap (issue 23 item 14): importing the CLI app, or the engine a read command
opens, must not pull the heavy libraries in; they load inside the commands that use them. A
regression guard on sys.modules, not a timing assertion (benchmarks/startup.py prints figures)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

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
