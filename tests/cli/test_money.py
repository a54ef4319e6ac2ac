"""Money on the command line (issue 24): `artemis run --model gemini-2.5-flash` on the fake Gemini
server through the real google-genai SDK shows cost per role from genai-prices; `--max-cost 0.001`
stops it as interrupted (reason budget) and `artemis resume ID --max-cost 1` finishes it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from artemis_cli.config.task import load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.token_usage import session_costs
from artemis_cli.models.fakes.gemini import FakeGeminiServer
from artemis_cli.models.offline.scripted import script_policy
from artemis_cli.models.pricing import format_usd
from artemis_cli.models.registry import reference_script

REPO = Path(__file__).resolve().parents[2]


def _artemis(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "ARTEMIS_HOME": str(home), "COLUMNS": "100", "GEMINI_API_KEY": "fake-key", **env}
    for key in ("GOOGLE_API_KEY", "ARTEMIS_DEBUG"):
        environ.pop(key, None)
    return subprocess.run([sys.executable, "-m", "artemis_cli", *args], cwd=REPO, env=environ, capture_output=True,
                          text=True, timeout=300, stdin=subprocess.DEVNULL)


def test_max_cost_stops_before_the_call_then_resume_with_a_higher_limit_finishes(tmp_path: Path) -> None:
    task = load_task(REPO / "tasks" / "demo.yaml")
    home = tmp_path / "home"
    with FakeGeminiServer(script_policy(reference_script(task))) as server:
        url = {"ARTEMIS_GEMINI_BASE_URL": server.base_url}
        stopped = _artemis(home, "run", "tasks/demo.yaml", "--model", "gemini-2.5-flash", "--no-live",
                           "--max-cost", "0.001", "--json", **url)
        assert stopped.returncode == 130, stopped.stdout + stopped.stderr
        first = json.loads(stopped.stdout)
        assert first["status"] == "interrupted" and first["stop_reason"] == "budget"
        assert "limit of $0.001" in first["message"] and f"artemis resume {first['session_id']} --max-cost" \
            in first["message"]
        with DataEngine.open_for_reading(home) as reader:
            assert reader.get_session(first["session_id"]).status == "interrupted"
        resumed = _artemis(home, "resume", first["session_id"], "--max-cost", "1", "--no-live", **url)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    summary = resumed.stdout[resumed.stdout.index("┌"):]
    with DataEngine.open_for_reading(home) as reader:
        costs = session_costs(reader, first["session_id"])
    assert costs.total_usd is not None and 0 < costs.total_usd < 1
    assert set(costs.by_role) == {"operator", "lens"}
    cost_row = next(line for line in summary.splitlines() if "│ cost" in line)
    assert re.search(r"\$0\.\d+ total — operator \$0\.\d+ · visual lens \$0\.\d+", cost_row), cost_row
    sid = first["session_id"]
    shown = _artemis(home, "sessions", "show", sid)
    assert shown.returncode == 0, shown.stderr
    assert re.search(r"cost: \$0\.\d+ total — operator", shown.stdout), shown.stdout
    shown_json = json.loads(_artemis(home, "sessions", "show", sid, "--json").stdout)
    assert shown_json["cost"]["total_usd"] == round(costs.total_usd, 8)
    listed = json.loads(_artemis(home, "sessions", "list", "--json").stdout)
    assert listed[0]["cost"]["by_role"].keys() == {"operator", "lens"}
    table = _artemis(home, "sessions", "list", COLUMNS="160").stdout
    assert table.rstrip().endswith("\t" + format_usd(costs.total_usd)), table  # the cost column, last


def test_max_cost_with_an_unpriced_model_is_a_usage_error_before_any_session(tmp_path: Path) -> None:
    home = tmp_path / "home"
    proc = _artemis(home, "run", "tasks/demo.yaml", "--model", "scripted", "--max-cost", "1", "--no-live")
    # an offline model costs 0 and is priced: it runs
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bad = _artemis(home, "run", "tasks/demo.yaml", "--model", "openai:no-such-model-xyz", "--base-url",
                   "https://api.example.invalid/v1", "--max-cost", "1", "--no-live")
    assert bad.returncode == 2, bad.stdout + bad.stderr
    assert "--max-cost needs a price for no-such-model-xyz" in bad.stderr
    with DataEngine.open_for_reading(home) as reader:
        assert len(reader.list_sessions()) == 1  # the scripted run's only: none was created for the bad one
