"""Issue 34 item 3: the keyboard is one line, not 33 elements. With the sim's keyboard up, the
request a model reads says ``Keyboard: shown`` on the head line; no key is listed and no key is
marked on the screenshot — read from the recorded request, the way ``sessions prompt`` shows it."""

from __future__ import annotations

import re
from pathlib import Path

from artemis_cli.cli.prompt_cmd import render_request_text
from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import SimOptions, load_task
from artemis_cli.device.select import sim_for
from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.turn_check import check_turn
from artemis_cli.models.offline.scripted import ScriptedModel
from artemis_cli.models.registry import reference_script
from artemis_cli.perception.hierarchy import parse_hierarchy
from artemis_cli.perception.marks import marks_from_json
from artemis_cli.perception.types import Bounds
from artemis_cli.perception.windows import Layer, order_windows
from artemis_cli.runner import run_task

TASKS = Path(__file__).resolve().parents[2] / "tasks"


def _box(b: Bounds) -> tuple[int, int, int, int]:
    return (b.left, b.top, b.right, b.bottom)


def _key_boxes(xml: bytes) -> set[tuple[int, int, int, int]]:
    tree = parse_hierarchy(xml)
    return {_box(tree.nodes[i].bounds) for w in order_windows(tree) if w.layer == Layer.IME
            for i in range(w.root, w.end) if tree.nodes[i].depth > 0}


def test_a_shown_keyboard_is_the_head_line_alone(engine: DataEngine) -> None:
    task = load_task(TASKS / "contacts-add.yaml")
    assert task.sim is not None
    phone = sim_for(SimOptions(world=task.sim.world, seed=task.sim.seed, popups=False))
    result = run_task(task, load_profile("flash"), phone, ScriptedModel(reference_script(task)), engine,
                      real_time=False)
    assert result.success, result
    shown = 0
    for record in engine.get_steps(result.session_id):
        xml = engine.blobs.get(record.ui_xml) if record.ui_xml else None
        if not xml:
            continue
        keys = _key_boxes(xml)
        check = check_turn(engine, result.session_id, record.number)
        assert check.match, check.rows
        text = render_request_text(check.requests[0])
        current = text[text.rindex("Keyboard: "):]  # the current screen: the last head line
        if not keys:
            assert current.startswith("Keyboard: hidden"), record.step
            continue
        shown += 1
        assert current.startswith("Keyboard: shown"), record.step
        assert not re.search(r"id=key_pos_|\] FrameLayout \"[a-z]\"", current), current
        marks = marks_from_json((record.meta or {}).get("marks"))
        assert marks, "the flash profile marks the screenshot"
        assert not {m[1:] for m in marks} & keys, f"a key is marked at step {record.number}"
    assert shown >= 2, "the reference types into fields: the keyboard must have been up"
