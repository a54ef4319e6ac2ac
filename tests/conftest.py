"""Shared fixtures. Every test gets its own data dir (never the user's real one)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import cast

import pytest
from hypothesis import settings

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import SimOptions, Task, load_task
from artemis_cli.device.select import sim_for
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.models.registry import reference_script
from artemis_cli.runner import RunResult, run_task
from artemis_cli.sim.phone import SimPhone

REPO = Path(__file__).resolve().parent.parent
#: Where every test's adb clients look by default: nothing listens on port 1 (privileged, unused).
NO_ADB_PORT = "1"
SHARED = REPO.parent / "shared"
#: The simulated Shop's demo password (artemis_cli/sim/worlds/shop.py) and the variable the
#: shipped Shop tasks' secret ``shop_password`` is read from.
SHOP_PASSWORD = "artemis123"
SHOP_PASSWORD_ENV = "ARTEMIS_SECRET_SHOP_PASSWORD"
# set for the whole process too: module- and session-scoped fixtures run Shop tasks before any
# function-scoped fixture (below) has set it
os.environ[SHOP_PASSWORD_ENV] = SHOP_PASSWORD

# -- hypothesis profiles -----------------------------------------------------------------------
# Every @given test takes its example count from the active profile (no hard-coded max_examples),
# so ``--long`` really fuzzes everything harder.  "ci" (the default) keeps the suite fast;
# ``pytest --long`` loads "long"; an explicit ``--hypothesis-profile NAME`` wins over both.
# Settings objects resolve their defaults when they are built, so the profile is loaded in
# pytest_configure, before any test module is imported.
FUZZ_PROFILES = {"ci": 50, "long": 2000}
for _name, _examples in FUZZ_PROFILES.items():
    settings.register_profile(_name, max_examples=_examples, deadline=None, print_blob=True)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--long", action="store_true", default=False,
                     help="run fuzz tests with many more examples")


#: Workers when nobody chose a count: CI has two cores (.ci/run runs plain ``pytest``).
DEFAULT_WORKERS = 2


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    """Run on DEFAULT_WORKERS xdist workers unless told otherwise.

    Not in pyproject's ``addopts``: an ``-n`` there breaks ``pytest -p no:xdist`` (exit 4,
    unrecognized ``-n``). Registered after xdist, this tryfirst hook runs before xdist's own, which
    turns ``numprocesses`` into workers; nothing changes when xdist is not loaded, ``-n``/``--dist``/
    ``--tx`` was given, ``--pdb`` is on, or this process is itself a worker."""
    option = config.option
    if (not hasattr(option, "numprocesses") or hasattr(config, "workerinput")
            or option.numprocesses is not None or getattr(option, "dist", "no") != "no"
            or getattr(option, "tx", None) or getattr(option, "distload", False) or option.usepdb):
        return
    option.numprocesses = DEFAULT_WORKERS


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("hypothesis_profile", default=None):
        return
    settings.load_profile("long" if config.getoption("long") else "ci")


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[DataEngine]:
    """A DataEngine on a fresh data dir (tests/engine has its own, on ``data_dir``)."""
    with DataEngine.open(tmp_path / "data") as eng:
        yield eng


@pytest.fixture(autouse=True)
def _isolated_data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "artemis-home"
    monkeypatch.setenv("ARTEMIS_HOME", str(home))
    for key in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "ANDROID_SERIAL", "ARTEMIS_DEBUG", "OPENAI_API_KEY",
                "OPENAI_BASE_URL", "ARTEMIS_OPENAI_BASE_URL", "ARTEMIS_OPENAI_TIMEOUT_S", "ARTEMIS_GEMINI_BASE_URL"):
        monkeypatch.delenv(key, raising=False)
    # no test reaches the developer's adb server (5037) or a phone it did not start: adb clients
    # (in-process and in every child process) look at a port where nothing listens unless the
    # test points them at a server it started (tests/adbd, tests/device fixtures)
    monkeypatch.setenv("ANDROID_ADB_SERVER_HOST", "127.0.0.1")
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", NO_ADB_PORT)
    # the shipped Shop tasks type the demo account's password as secret shop_password: every test
    # supplies it as a user would (the variable), and nothing else of the developer's leaks in
    for key in [k for k in os.environ if k.startswith(("ARTEMIS_SECRET", "ARTEMIS_REPLAY_SECRET"))]:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv(SHOP_PASSWORD_ENV, SHOP_PASSWORD)
    return home


@pytest.fixture(autouse=True)
def _fresh_consoles() -> Iterator[None]:
    """Each test's in-process CLI calls get consoles made under their own environment, as a new
    process would: Rich fixes a console's width from $COLUMNS when it is created, so a console
    cached by an earlier test's ``CliRunner(env={"COLUMNS": ...})`` would keep that width."""
    from artemis_cli.cli import console

    console.out.cache_clear()
    console.err.cache_clear()
    yield
    console.out.cache_clear()
    console.err.cache_clear()


@pytest.fixture
def data_home(_isolated_data_dir: Path) -> Path:
    return _isolated_data_dir


@pytest.fixture(scope="session")
def real_dumps_dir() -> Path:
    """UI dumps from real apps: ../shared/fixtures/real-dumps (copied into fixtures/ too)."""
    local = REPO / "fixtures" / "real-dumps"
    return local if local.is_dir() else SHARED / "fixtures" / "real-dumps"


# -- recording sessions in-process (replay, report and export tests) ----------------------------
# ``record_task(engine, "clock-ten-alarms.yaml")`` records a task's reference solution with the
# scripted model; ``phone_for("clock-ten-alarms.yaml", world)`` builds a fresh simulated phone
# with the task's seed and options (in another world when asked).


def _task(task: str | Task) -> Task:
    return task if isinstance(task, Task) else load_task(REPO / "tasks" / task)


def _phone(task: str | Task, world: str | None = None) -> SimPhone:
    t = _task(task)
    sim = t.sim if t.sim is not None else SimOptions()
    # latency off: a device-latency profile wraps the phone (device.select); tests want the phone
    update: dict[str, object] = {"latency": "off", **({"world": world} if world else {})}
    return cast(SimPhone, sim_for(sim.model_copy(update=update)))


def _record(engine: DataEngine, task: str | Task) -> RunResult:
    t = _task(task)
    result = run_task(t, load_profile("flash"), _phone(t), ScriptedModel(reference_script(t)), engine,
                      real_time=False)
    assert result.success, result.message
    return result


@pytest.fixture(scope="session")
def record_task() -> Callable[[DataEngine, str | Task], RunResult]:
    return _record


@pytest.fixture(scope="session")
def phone_for() -> Callable[..., SimPhone]:
    return _phone
