"""The run behind docs/agent.md: ``tasks/demo.yaml`` on the simulated phone, a Gemini model through
the real google-genai SDK against the fake Gemini server, playing a fixed, intent-carrying script
(what a real model would send), so the request a real model gets can be shown and pinned."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.memory.turn_check import check_turn
from artemis_cli.models.conversation import view_from_rest
from artemis_cli.models.fakes.gemini import FakeGeminiServer
from artemis_cli.models.fakes.gemini_wire import FakeReply
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.offline.scripted import STUB_LENS_MODEL, StubReply, describe_request
from artemis_cli.perception.elements import parse_element_lines
from artemis_cli.runner import run_task
from artemis_cli.sim.phone import SimPhone

REPO = Path(__file__).resolve().parents[2]
STEP = 3  # the turn the document shows: two steps in the active window, the third in the tail


def _index(observation: str, short_id: str) -> int:
    return next(e.index for e in parse_element_lines(observation) if e.short_id == short_id)


def demo_policy(request: Any) -> Any:
    """Four turns, each with a short thought and one call carrying its intent."""
    if not request.tools:
        return StubReply(parts=[{"text": describe_request(request)}], model_version=STUB_LENS_MODEL)
    view = view_from_rest(request.contents)
    turn = len(view.model_calls)
    obs = view.observation_text
    plays: list[tuple[str, str, dict[str, Any]]] = [
        ("Wi-Fi lives in Settings.", "launch_app", {"app": "Settings", "intent": "Settings opens"}),
        ("Wi-Fi is under Network & internet.", "tap",
         {"index": _index(obs, "network_row") if turn == 1 else 0,
          "intent": "the Network & internet page opens"}),
        ("The Wi-Fi switch reads OFF.", "tap",
         {"index": _index(obs, "wifi_switch") if turn == 2 else 0, "intent": "the Wi-Fi switch turns ON"}),
        ("The switch reads ON: Wi-Fi is on.", "finish", {"success": True, "answer": "Wi-Fi is on"}),
    ]
    thought, name, args = plays[min(turn, len(plays) - 1)]
    return FakeReply(parts=[{"text": thought}, {"functionCall": {"name": name, "args": args}}])


def run_demo(data_dir: Path) -> tuple[Any, list[Any]]:
    """(check of step STEP's turn, the fake server's operator requests)."""
    task = load_task(REPO / "tasks" / "demo.yaml")
    assert task.sim is not None
    with FakeGeminiServer(demo_policy, min_cacheable_tokens=256) as server:
        model = GeminiModel(["gemini-2.5-flash"], api_key="test-key", base_url=server.base_url,
                            sleep=lambda s: None, backoff_s=0.0)
        engine = DataEngine.open(data_dir)
        result = run_task(task, load_profile("flash"), SimPhone(world=task.sim.world, seed=task.sim.seed),
                          model, engine, real_time=False, lenses="mechanical")
        assert result.success, result.message
        operator = [r for r in server.requests if r.tools]
    return check_turn(engine, result.session_id, STEP), operator
