"""Artemis sees crashes (issue 25): a task on a world with ``crash:`` faults, run with the real
CLI; the crashing step's outcome is ``app_crashed`` with the exception line in ``sessions show
--json``, the HTML report (escaped), recall, the ledger line the model reads next and the
function reply that tells the model; an ``artemis test`` case names the crash in its failure."""

from __future__ import annotations

import json
import re
from pathlib import Path

from typer.testing import CliRunner

from artemis_cli.cli.app import app
from artemis_cli.engine.db import DataEngine
from artemis_cli.perception.logcat import parse_logcat

REPO = Path(__file__).resolve().parents[2]
#: seed 11 with crash:0.5: the tap on Display works, the tap on the switch makes Settings throw
TASK = (REPO / "tasks" / "settings-dark-theme.yaml").read_text().replace(
    "sim: {world: default, seed: 11, popups: false}", 'sim: {world: default, seed: 11, popups: false, faults: "crash:0.5"}')


def _cli(*args: str) -> str:
    res = CliRunner().invoke(app, list(args))
    assert res.exit_code in (0, 1), res.output
    return res.stdout


def _crash_run(tmp_path: Path) -> tuple[Path, str]:
    assert "crash:0.5" in TASK
    task = tmp_path / "crashing.yaml"
    task.write_text(TASK)
    data = tmp_path / "data"
    run = json.loads(_cli("run", str(task), "--device", "sim", "--model", "scripted", "--no-live", "--json",
                          "--data-dir", str(data)))
    return data, run["session_id"]


def test_the_crashing_step_is_app_crashed_with_its_exception_line_everywhere(tmp_path: Path) -> None:
    data, sid = _crash_run(tmp_path)
    shown = json.loads(_cli("sessions", "show", sid, "--json", "--data-dir", str(data)))
    statuses = [s["result"]["status"] for s in shown["steps"]]
    assert statuses[:2] == ["ok", "app_crashed"], statuses
    step = shown["steps"][1]
    fault = step["outcome"]["fault"]
    assert fault["package"] == "com.android.settings" and fault["kind"] == "crash"
    exception = fault["detail"]
    assert re.match(r"^java\.lang\.\w+(Exception|Error)\b", exception), exception
    assert step["result"]["detail"] == f"com.android.settings crashed: {json.dumps(exception)}"
    assert fault["frames"] and fault["frames"][0].startswith("at com.android.settings.")

    # what the phone's own logcat holds is what was recorded
    with DataEngine.open_for_reading(data) as engine:
        rec = engine.get_step(sid, 2)
    assert rec.result_status == "app_crashed"

    page = tmp_path / "r.html"
    _cli("report", sid, "-o", str(page), "--data-dir", str(data))
    html = page.read_text()
    escaped = exception.replace("&", "&amp;").replace("'", "&#x27;").replace("<", "&lt;").replace(">", "&gt;")
    assert f"class='result error'>app_crashed — com.android.settings crashed: &quot;{escaped}&quot;</p>" in html
    assert "'int java" not in html or "'" not in exception  # device text is escaped

    word = exception.split(":", 1)[0].rsplit(".", 1)[-1]  # e.g. NullPointerException
    found = _cli("recall", sid, word, "--data-dir", str(data))
    assert "1 match" in found and "Step 2" in found and "app_crashed: com.android.settings crashed:" in found


def test_the_model_is_told_and_the_ledger_says_it(tmp_path: Path) -> None:
    data, sid = _crash_run(tmp_path)
    with DataEngine.open_for_reading(data) as engine:
        steps = engine.get_steps(sid)
        calls = engine.llm_calls(sid)
    assert steps[1].result_status == "app_crashed"
    exception = (steps[1].outcome or {})["fault"]["detail"]
    prompt = _cli("sessions", "prompt", sid, "--step", "3", "--show", "--data-dir", str(data))
    assert '"status": "app_crashed"' in prompt, prompt[-3000:]
    assert json.dumps(exception)[1:-1] in prompt
    assert calls is not None


def test_an_artemis_test_case_names_the_crash_in_its_failure(tmp_path: Path) -> None:
    task = tmp_path / "crashing.yaml"
    task.write_text(TASK.replace("seed: 11,", "seed: 12,"))  # seed 12: the first tap crashes, the goal is missed
    junit = tmp_path / "junit.xml"
    res = CliRunner().invoke(app, ["test", str(task), "--model", "scripted", "--junit", str(junit),
                                   "--data-dir", str(tmp_path / "data")])
    assert res.exit_code == 1, res.output
    xml = junit.read_text()
    assert re.search(r"app crash: step 1: com\.android\.settings crashed: &quot;java\.lang\.", xml), xml
    assert re.search(r'<property name="app_faults" value="step 1: com\.android\.settings crashed: ', xml), xml


def test_the_sim_log_parses_as_a_phone_log() -> None:
    """The fixture formats and the sim's output agree (the watcher reads both the same way)."""
    from artemis_cli.sim.phone import SimPhone

    phone = SimPhone(popups=False)
    phone.launch("com.android.settings")
    phone.errors.crash("com.android.settings")
    [crash] = parse_logcat(phone.shell("logcat -d -v epoch -b crash")).faults
    assert crash.package == "com.android.settings" and crash.pid and crash.frames
