"""Issue 34 item 9: an offline model (scripted, heuristic, healer) records the model view a real
model would get — the screenshot scaled to ``screenshot.max_side`` and marked, the marks sentence
in the system text — so ``sessions prompt`` on a scripted run shows the real request."""

from __future__ import annotations

from artemis_cli.cli.prompt_cmd import render_request_text
from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import Task
from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.restore import SessionSpec
from artemis_cli.memory.turn_check import check_turn
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.operators.prompts import system_prompt
from artemis_cli.perception.png import png_size
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone

SCRIPT = [{"launch": "com.android.settings"}, {"tap": {"text": "Network & internet"}},
          {"finish": {"success": True, "answer": "done"}}]


def test_a_scripted_run_records_the_scaled_marked_view_a_real_model_gets(engine: DataEngine) -> None:
    profile = load_profile("flash")
    assert profile.screenshot.marks and profile.screenshot.max_side == 1152
    task = Task.model_validate({"id": "offline-view", "goal": "Open Network & internet", "max_steps": 5})
    result = run_task(task, profile, SimPhone(seed=3, popups=False), ScriptedModel(SCRIPT), engine,
                      real_time=False)
    spec = SessionSpec.load(engine, result.session_id)
    assert spec.profile.screenshot.max_side == 1152 and spec.profile.screenshot.marks  # stored as a real run's
    check = check_turn(engine, result.session_id, 2)
    assert check.match, check.rows
    request = check.requests[0]
    assert request.system == system_prompt(marks=True)  # with the sentence about marks
    images = [p.image_png for m in request.messages for p in m.parts if p.image_png is not None]
    assert images
    recorded = engine.get_step(result.session_id, 2)
    assert recorded.pre_screenshot
    raw = engine.blobs.get(recorded.pre_screenshot)
    for image in images:
        size = png_size(image)
        assert size is not None and max(size) == 1152, size  # scaled as a real model's would be
        assert image != raw  # scaled and marked, not the clean recorded screenshot
    text = render_request_text(request)
    assert f"x{png_size(images[-1])[1]}]" in text  # `sessions prompt --show` names each image's size
