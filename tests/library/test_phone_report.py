"""The report of a Python API session: each AI step, query and check is a band before the steps it
made (with how they came about), cached steps carry their replay badges, and the program's and the
model's words are escaped."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from library_support import SHOP_SECRETS

from artemis_cli import Phone, StepFailed
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.offline.scripted import GoalScriptedModel
from artemis_cli.report.html import build_report

GOAL = "log in as <b>demo</b> & stay"
LOGIN = [{"type": {"text": "demo", "into": {"id": "username"}}},
         {"type": {"secret": "shop_password", "into": {"id": "password"}, "submit": True}},
         {"finish": {"success": True, "answer": "logged <i>in</i>"}}]


def _bands(html: str) -> list[str]:
    return [re.sub(r"<[^>]+>", " ", m) for m in re.findall(r"<section class='band call'>(.*?)</section>", html)]


def test_ai_steps_and_looks_are_bands_in_the_report(tmp_path: Path) -> None:
    model = GoalScriptedModel({GOAL: LOGIN})
    with Phone.open("sim", data_dir=tmp_path, model=model, cache="k", secrets=SHOP_SECRETS, real_time=False) as phone:
        phone.launch("Shop")
        phone.act(GOAL)  # passes: the baseline
    with pytest.raises(StepFailed), Phone.open("sim", data_dir=tmp_path, model=model, cache="k",
                                                secrets=SHOP_SECRETS, real_time=False) as phone:
        phone.launch("Shop")
        phone.act(GOAL)  # replayed from the cache
        phone.wait_for("<script>", timeout=0)
    with DataEngine.open_for_reading(tmp_path) as engine:
        html = build_report(engine, phone.session_id or "")
    assert "<b>demo</b>" not in html and "<script>\"" not in html and "&lt;b&gt;demo&lt;/b&gt;" in html
    bands = _bands(html)
    assert len(bands) == 2 and "steps 2–4" in bands[0] and "phone.wait_for" in bands[1] and "failed" in bands[1]
    assert "replayed from the baseline, no model call" in bands[0] and "0 model calls" in bands[0]
    assert html.count("class='replay replayed'") == 4  # the three replayed steps and the legend
