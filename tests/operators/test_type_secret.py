"""type_text(secret=NAME) end to end on the simulated phone and the real SQLite (issue 34 item 1).

The model is told a task's secret names and descriptions, never a value; the operator types the
value the resolver found ($ARTEMIS_SECRET_SHOP_PASSWORD, set for every test in conftest.py). The
Shop login is solved by a double that reads only the request (tests/request_double.py), and
nothing a user can make of the session -- the database file, the blobs, the JSONL and Maestro
exports, the HTML report -- holds the password; replay and resume type it again from the
environment.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from request_double import RequestReadingLogin, told_secrets
from typer.testing import CliRunner

from artemis_cli.cli.app import app
from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import Task, load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.errors import UsageError
from artemis_cli.models.base import FunctionCall, ModelRequest, ModelResponse
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.models.registry import reference_script
from artemis_cli.operators.act import plan_action
from artemis_cli.operators.observe import observe
from artemis_cli.operators.secrets import secret_label
from artemis_cli.operators.tools import ToolCallError, validate_call
from artemis_cli.replay import replay_session
from artemis_cli.resume import resume_session
from artemis_cli.runner import RunResult, run_task
from artemis_cli.sim.phone import SimPhone
from artemis_cli.stopping import SessionInterrupted

REPO = Path(__file__).resolve().parents[2]
SHOP_TASKS = [REPO / "tasks" / "shop-buy-one.yaml", REPO / "tasks" / "shop-office-order.yaml"]
SHOP_PASSWORD, SHOP_PASSWORD_ENV = "artemis123", "ARTEMIS_SECRET_SHOP_PASSWORD"  # as tests/conftest.py sets it
SECRETS = {"shop_password": SHOP_PASSWORD}


def _phone(task: Task) -> SimPhone:
    assert task.sim is not None
    return SimPhone(world=task.sim.world, seed=task.sim.seed, popups=task.sim.popups)


def _login_screen() -> tuple[SimPhone, Any]:
    phone = SimPhone(popups=False)
    phone.launch("com.artemis.shop")
    return phone, observe(phone, (1080, 2400), "pixels", sleep=lambda s: None)


def _index(obs: Any, short_id: str) -> int:
    return next(e.index for e in obs.elements if (e.node.resource_id or "").endswith("/" + short_id))


def _logged_in(phone: SimPhone) -> bool:
    return "logged_in=1" in phone.shell("content query --uri content://com.artemis.shop/session")


def _run(task: Task, model: Any, engine: DataEngine, phone: SimPhone | None = None, path: Path | None = None,
         max_steps: int | None = None) -> RunResult:
    run = {"task_file": str(path), "device": "sim", "sim": task.sim.model_dump(exclude_none=True)} if path else None
    return run_task(task, load_profile("flash"), phone or _phone(task), model, engine, real_time=False,
                    run_config=run, max_steps=max_steps)


# -- the call and its plan ---------------------------------------------------------------------


def test_type_text_takes_text_or_a_secret_never_both() -> None:
    call = validate_call(FunctionCall("type_text", {"secret": "shop_password", "index": 4}))
    assert call.args == {"secret": "shop_password", "clear": False, "submit": False, "index": 4}
    for args, says in (({"text": "a", "secret": "shop_password"}, "not both"), ({"index": 4}, "`text` is required")):
        with pytest.raises(ToolCallError, match=says):
            validate_call(FunctionCall("type_text", args))


def test_a_secret_is_planned_by_name_and_its_value_kept_off_the_record() -> None:
    _, obs = _login_screen()
    call = validate_call(FunctionCall("type_text", {"secret": "shop_password", "index": _index(obs, "password"),
                                                    "submit": True}))
    planned = plan_action(call, obs, secrets=SECRETS)
    assert planned.secret == SHOP_PASSWORD  # for the device only
    assert planned.recorded_args == {"text": secret_label("shop_password"), "secret": "shop_password",
                                     "clear": False, "submit": True, "index": _index(obs, "password"),
                                     "redacted": True}
    assert SHOP_PASSWORD not in planned.phrase() and "shop_password" in planned.phrase()


def test_an_unknown_secret_names_the_tasks_secrets_and_a_plain_field_is_refused() -> None:
    _, obs = _login_screen()
    unknown = validate_call(FunctionCall("type_text", {"secret": "admin_pin", "index": _index(obs, "password")}))
    with pytest.raises(ToolCallError, match="no secret named 'admin_pin'; this task's secrets are: shop_password"):
        plan_action(unknown, obs, secrets=SECRETS)
    with pytest.raises(ToolCallError, match="this task has no secrets"):
        plan_action(unknown, obs)  # an MCP session: no task secrets
    # into the username field the value would show on the screen, and so in the next request
    plain = validate_call(FunctionCall("type_text", {"secret": "shop_password", "index": _index(obs, "username")}))
    with pytest.raises(ToolCallError, match="is not a password field"):
        plan_action(plain, obs, secrets=SECRETS)


# -- the model is told, and a model reading the request logs in --------------------------------


@pytest.mark.parametrize("path", SHOP_TASKS, ids=lambda p: p.stem)
def test_a_double_reading_only_the_request_logs_in_to_the_shop(path: Path, tmp_path: Path) -> None:
    task = load_task(path)
    assert task.secrets == {"shop_password": "the demo account's password"}
    double = RequestReadingLogin()
    phone = _phone(task)
    with DataEngine.open(tmp_path / "data") as engine:
        result = _run(task, double, engine, phone)
        steps = engine.get_steps(result.session_id)
    assert _logged_in(phone), [s.result_detail for s in steps]
    assert steps[-1].action_type == "finish" and steps[-1].action_args["answer"] == "logged in"
    # it saw the logged-in catalogue before it finished
    assert "Add to cart" in (steps[-1].meta or {}).get("observation", "") or "Add to cart" in str(steps[-1].ui_xml)
    typed = [s.action_args for s in steps if s.action_type == "type_text"]
    assert [a.get("secret") for a in typed] == [None, "shop_password"] and typed[0]["text"] == "demo"
    # the typed-text check still counted what the password field holds (never quoting it)
    field = next(s for s in steps if s.action_args.get("secret")).outcome["field"]
    assert field["password"] and field["landed"] and field["length"] == len(SHOP_PASSWORD) and field["shows"] is None
    # what it was told: the secret by name and description, in every request; never the value
    assert all(told_secrets(r.system) == {"shop_password": "the demo account's password"} for r in double.requests)
    assert not any(SHOP_PASSWORD in r.canonical_json() for r in double.requests)


def test_a_task_whose_secret_nothing_supplies_is_refused_before_the_session(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SHOP_PASSWORD_ENV)
    task = load_task(SHOP_TASKS[0])
    with DataEngine.open(tmp_path / "data") as engine:
        with pytest.raises(UsageError, match=SHOP_PASSWORD_ENV):
            _run(task, RequestReadingLogin(), engine)
        assert engine.list_sessions() == []
    # the CLI: exit 2 (usage), the variable named, no prompt without a terminal, no session
    env = {k: v for k, v in os.environ.items() if k != SHOP_PASSWORD_ENV}
    res = subprocess.run([sys.executable, "-m", "artemis_cli", "run", str(SHOP_TASKS[0]), "--model", "scripted",
                          "--no-live", "--data-dir", str(tmp_path / "cli")], cwd=REPO, env=env,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=120)
    assert res.returncode == 2, res.stdout + res.stderr
    assert f"set {SHOP_PASSWORD_ENV}" in res.stderr
    with DataEngine.open(tmp_path / "cli") as engine:
        assert engine.list_sessions() == []


# -- nothing a user can make of it holds the value -----------------------------------------------


def test_no_artefact_of_a_secret_login_holds_the_password(tmp_path: Path) -> None:
    data, out = tmp_path / "data", tmp_path / "out"
    out.mkdir()
    task = load_task(SHOP_TASKS[0])
    with DataEngine.open(data) as engine:
        scripted = _run(task, ScriptedModel(reference_script(task)), engine)
        assert scripted.success, scripted.message
        double = _run(task, RequestReadingLogin(), engine)
    cli = CliRunner()
    for sid in (scripted.session_id, double.session_id):
        for fmt in ("jsonl", "maestro"):
            res = cli.invoke(app, ["sessions", "export", sid, "--format", fmt, "-o", str(out / f"{sid}.{fmt}"),
                                   "--data-dir", str(data)])
            assert res.exit_code == 0, res.output
        res = cli.invoke(app, ["report", sid, "-o", str(out / f"{sid}.html"), "--data-dir", str(data)])
        assert res.exit_code == 0, res.output
        shown = cli.invoke(app, ["sessions", "show", sid, "--data-dir", str(data)])
        assert shown.exit_code == 0 and SHOP_PASSWORD not in shown.output
    files = [p for p in [*data.rglob("*"), *out.rglob("*")] if p.is_file()]
    assert data / "artemis.db" in files and any("blobs" in p.parts for p in files)
    assert len([p for p in files if p.suffix == ".html"]) == 2
    leaked = [str(p.relative_to(tmp_path)) for p in files if SHOP_PASSWORD.encode() in p.read_bytes()]
    assert leaked == []
    # ... and the secret is named where the password was typed
    flow = (out / f"{double.session_id}.maestro").read_text(encoding="utf-8")
    assert "inputText: ${SHOP_PASSWORD}" in flow and "secret shop_password" in flow
    jsonl = (out / f"{double.session_id}.jsonl").read_text(encoding="utf-8")
    assert '"secret": "shop_password"' in jsonl and secret_label("shop_password") in jsonl


# -- replay and resume type it again from the environment ----------------------------------------


def test_replay_types_the_secret_again_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    task = load_task(SHOP_TASKS[0])
    with DataEngine.open(tmp_path / "data") as engine:
        source = _run(task, RequestReadingLogin(), engine)
        phone = _phone(task)
        replayed = replay_session(engine, phone, source.session_id)
        assert all(s.status != "diverged" for s in replayed.steps), replayed.steps
        assert _logged_in(phone)
        monkeypatch.delenv(SHOP_PASSWORD_ENV)
        before = len(engine.list_sessions())
        with pytest.raises(UsageError, match=f"secret shop_password .*set {SHOP_PASSWORD_ENV}"):
            replay_session(engine, _phone(task), source.session_id)
        assert len(engine.list_sessions()) == before  # refused before a replay session exists


class _StopAfter:
    """The double, stopped (Ctrl-C) at its ``calls``-th request: the session is interrupted."""

    offline = True
    name = "request-double"
    label = RequestReadingLogin.label

    def __init__(self, calls: int) -> None:
        self.inner, self.calls = RequestReadingLogin(), calls

    def generate(self, request: ModelRequest) -> ModelResponse:
        if len(self.inner.requests) + 1 >= self.calls:
            raise KeyboardInterrupt
        return self.inner.generate(request)


def test_resume_types_the_secret_again_on_a_fresh_phone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = SHOP_TASKS[0]
    task = load_task(path)
    with DataEngine.open(tmp_path / "data") as engine:
        # launch, username, password, log in: stopped before the fifth decision
        with pytest.raises(SessionInterrupted) as stopped:
            _run(task, _StopAfter(5), engine, path=path)
        sid = stopped.value.session_id
        assert [s.action_type for s in engine.get_steps(sid)][-2:] == ["type_text", "tap"]
        monkeypatch.delenv(SHOP_PASSWORD_ENV)
        with pytest.raises(UsageError, match=SHOP_PASSWORD_ENV):  # before the device is touched
            resume_session(sid, engine, model=RequestReadingLogin(), real_time=False)
        monkeypatch.setenv(SHOP_PASSWORD_ENV, SHOP_PASSWORD)
        resumed = resume_session(sid, engine, model=RequestReadingLogin(), real_time=False)
        ff = engine.events(sid, kind="fast_forward")
        steps = engine.get_steps(sid)
    # the fresh phone was logged in by the fast-forward: the restored screen is the recorded one,
    # and the first decision after it is to finish on the catalogue
    assert ff and ff[-1].payload["dhash_distance"] == 0
    assert steps[-1].action_type == "finish" and steps[-1].action_args["answer"] == "logged in"
    assert [s.action_type for s in steps].count("type_text") == 2
    assert resumed.steps == len(steps)


def test_a_heal_plans_a_secret_step_by_name_and_the_healer_types_it(tmp_path: Path) -> None:
    """A heal hands the recording's remaining steps to the loop as a plan: a step that typed a
    secret is planned by the secret's name (never its value), and the healer plays it as
    type_text(secret=NAME), which the loop types from the task's values."""
    from artemis_cli.models.offline.healer import HealerModel
    from artemis_cli.replay.heal import plan_action as heal_plan

    task = load_task(SHOP_TASKS[0])
    with DataEngine.open(tmp_path / "data") as engine:
        source = _run(task, RequestReadingLogin(), engine)
        recorded = engine.get_steps(source.session_id)
        plan = [a for s in recorded if (a := heal_plan(s, (1080, 2400), (1080, 2400))) is not None]
        assert {"type": {"secret": "shop_password", "into": {"text": "Password"}}} in plan, plan
        assert SHOP_PASSWORD not in str(plan)
        phone = _phone(task)
        healed = _run(task, HealerModel(plan), engine, phone)
        typed = [s.action_args for s in engine.get_steps(healed.session_id) if s.action_type == "type_text"]
    assert _logged_in(phone)
    assert typed[-1]["secret"] == "shop_password" and SHOP_PASSWORD not in str(typed)
