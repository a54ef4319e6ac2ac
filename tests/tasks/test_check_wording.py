"""How a success check's result reads (issue 23 item 7): a failed ``visible`` check says what was
NOT found, and the report shows a check's detail once ("got 'x'", never "got: got 'x'").

One real run through the CLI (the demo task with checks that fail on purpose, played by the
scripted model on the simulated phone), then its report; both renderings are golden-pinned."""

from __future__ import annotations

import json
import re
from pathlib import Path

from golden_files import assert_golden
from typer.testing import CliRunner

from artemis_cli.cli.app import app
from artemis_cli.engine.db import DataEngine
from artemis_cli.report.html import build_report

GOLDEN = Path(__file__).with_name("golden")
TASK = """id: wording
goal: Turn on Wi-Fi
sim: {world: default, seed: 1}
setup:
  - shell: settings put global wifi_on 0
success:
  - visible: Wi-Fi
  - visible: Thank you for your order!
  - not_visible: Wi-Fi
  - not_visible: Thank you for your order!
  - shell: settings get global wifi_on
    equals: "0"
reference:
  - launch: com.android.settings
  - tap: {text: "Network & internet"}
  - tap: {id: wifi_switch}
  - finish: {success: true, answer: Wi-Fi is on}
"""


def test_check_details_say_what_was_found_and_the_report_says_it_once(tmp_path: Path) -> None:
    task = tmp_path / "wording.yaml"
    task.write_text(TASK)
    data = tmp_path / "data"
    result = CliRunner().invoke(app, ["run", str(task), "--device", "sim", "--model", "scripted", "--no-live",
                                      "--json", "--data-dir", str(data)])
    assert result.exit_code == 1, result.output
    run = json.loads(result.stdout)
    lines = [f"{'✓' if c['passed'] else '✗'} {c['check']} ({c['detail']})" for c in run["checks"]]
    assert lines[1] == "✗ visible: 'Thank you for your order!' (not on the final screen)"
    assert lines[2] == "✗ not visible: 'Wi-Fi' (on the final screen)"
    assert_golden(GOLDEN / "check_lines.txt", "\n".join(lines) + "\n")

    engine = DataEngine.open(data)
    try:
        page = build_report(engine, run["session_id"])
    finally:
        engine.close()
    block = re.search(r"<ul class='checks' id='failed-checks'>.*?</ul>", page, re.S)
    assert block is not None
    assert "got: got" not in block.group(0) and "got &#x27;1&#x27;" in block.group(0)
    assert_golden(GOLDEN / "report_failed_checks.html", block.group(0).replace("</li>", "</li>\n") + "\n")
