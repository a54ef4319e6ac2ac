"""What `artemis mcp` gives a client's model, pinned exactly: the tool list, the instructions, the
``android_task`` prompt, and the two answer shapes (a screen, an action's outcome) on fixed sim
screens. ``ARTEMIS_UPDATE_GOLDEN=1`` rewrites them; review the diff."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from golden_files import assert_golden

from artemis_cli.config.profile import load_profile
from artemis_cli.device.select import resolve_device
from artemis_cli.engine.db import DataEngine
from artemis_cli.mcp_server.answers import StepAnswer, ViewAnswer
from artemis_cli.mcp_server.session import ClientInfo, DrivenSession, Policy
from artemis_cli.mcp_server.tools import android_task_prompt, instructions, mcp_tools

GOLDEN = Path(__file__).parent / "golden"


def test_tools_instructions_and_prompt_are_pinned() -> None:
    tools = [{"name": t.name, "description": t.description, "inputSchema": t.input_schema, "readOnly": t.read_only}
             for t in mcp_tools()]
    assert_golden(GOLDEN / "tools.json", json.dumps(tools, indent=2, ensure_ascii=False) + "\n")
    assert_golden(GOLDEN / "instructions.txt", instructions())
    assert_golden(GOLDEN / "instructions_read_only_apps.txt",
                  instructions(read_only=True, allow_apps=("com.android.contacts", "com.android.settings")))
    assert_golden(GOLDEN / "android_task.txt", android_task_prompt("Add the contact Sofia Ortega"))


def test_answers_are_pinned(tmp_path: Path) -> None:
    engine = DataEngine.open(tmp_path / "data")
    session = DrivenSession(engine, resolve_device("sim", sim_options={"popups": False}), load_profile("flash"),
                            policy=Policy(allow_apps=("com.android.contacts",)), real_time=False)
    try:
        session.start(ClientInfo("golden", "1"))
        session.observe()
        session.act("launch_app", {"app": "Contacts"})
        listing = session.observe()
        create = next(e.index for e in listing.obs.elements if e.label == "Create contact")
        session.act("tap", {"index": create, "intent": "open the new contact form"})
        field = next(e.index for e in session.observe().obs.elements if e.node.resource_id.endswith("first_name"))
        typed = session.act("type_text", {"index": field, "text": "Sofia", "intent": "type the first name"})
        assert isinstance(typed, StepAnswer)
        fixed = replace(typed, view=replace(typed.view, session_id="SESSION"))
        assert_golden(GOLDEN / "answer_step.txt", fixed.text() + "\n")
        view = ViewAnswer(typed.view.obs, step=4, session_id="SESSION", notes=['- "who" (step 3): "Sofia Ortega"'],
                          allow_apps=("com.android.contacts",), refused=None)
        assert_golden(GOLDEN / "answer_view.txt", view.text() + "\n")
    finally:
        session.interrupt("the test ended")
        engine.close()
