"""A screen that shows a 300-character text: the element list the model got holds all of it, as
`artemis sessions prompt --show` prints the re-rendered request (issue 22 "Whole text"), and the
empty field it was typed into was shown by its hint, never as if the hint were its text."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
LONG = (
    "Flat 4B, 221 Harbour View Road, Kingston upon Thames, KT2 6QL. Ring twice; the buzzer for 4A "
    "is broken and the concierge leaves at six. Parking: visitor bay 12, ticket from the machine by "
    "the lift. Wi-Fi: HarbourGuest, password written on the fridge. Call Mori on 07700 900123 if "
    "the door code 4417 does not work."
)


def artemis(*args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([sys.executable, "-m", "artemis_cli", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def test_a_300_character_text_is_whole_in_the_element_list(data_home: Path, tmp_path: Path) -> None:
    assert len(LONG) >= 300
    task = tmp_path / "notes-long.yaml"
    task.write_text(
        "id: notes-long-text\n"
        "goal: Write down the visitor instructions in a new note\n"
        "max_steps: 8\n"
        "sim: {world: default, seed: 1}\n"
        "reference:\n"
        "  - launch: com.artemis.notes\n"
        "  - tap: {id: new_note}\n"
        f"  - type: {{text: {json.dumps(LONG)}, into: {{id: body}}}}\n"
        "  - finish: {success: true, answer: written}\n",
        encoding="utf-8",
    )
    result = json.loads(artemis("run", str(task), "--model", "scripted", "--json").stdout)
    sid, steps = result["session_id"], result["steps"]
    assert steps == 4

    typing = artemis("sessions", "prompt", sid, "--step", "3", "--show").stdout
    assert "match" in typing and "MISMATCH" not in typing
    body_before = [line for line in typing.splitlines() if " id=body " in line]
    assert body_before and 'EditText hint="Note" id=body' in body_before[-1]  # the hint, not as content

    after = artemis("sessions", "prompt", sid, "--step", "4", "--show").stdout
    assert "MISMATCH" not in after
    body = [line for line in after.splitlines() if " id=body " in line][-1]
    assert f"EditText {json.dumps(LONG, ensure_ascii=False)} hint=\"Note\" id=body" in body  # whole, no "…"
