"""A long scripted run through the fake Gemini server and the real google-genai SDK (prints figures).

The operator and the visual lens are the gemini model; the fake server plays a deterministic
multi-app chore (settings toggles, notes, alarms) and accounts tokens and prefix caching like the
service. Prints one JSON object with the prompt-size bound, cache figures and S-zone stability:

    python benchmarks/long_run.py --profile flash --steps 150 --json

Keys: session_id, data_dir, steps, calls (operator calls), max_prompt_tokens_calls_20_30,
max_prompt_tokens_last_50, bound_ratio (last-50 max / calls-20-30 max; goal ≤ 1.3),
cache_hit_call_share (operator calls reporting cached tokens; goal ≥ 0.85), cached_token_share,
s_zone_hash_changes (goal 0), lens_calls, recall_word / recall_word_step (a word typed at step ~40).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from artemis_cli.config.profile import load_profile  # noqa: E402
from artemis_cli.config.task import Task  # noqa: E402
from artemis_cli.engine.db import DataEngine  # noqa: E402
from artemis_cli.models.fake_gemini import FakeGeminiServer  # noqa: E402
from artemis_cli.models.gemini import GeminiModel  # noqa: E402
from artemis_cli.models.scripted import script_policy  # noqa: E402
from artemis_cli.runner import run_task  # noqa: E402
from artemis_cli.sim.phone import SimPhone  # noqa: E402

RECALL_WORD = "Pelican"


def chore_script(steps: int) -> tuple[list[dict[str, Any]], int]:
    """A deterministic chore of exactly ``steps`` actions; returns it and the step that types
    the recall word (about step 40)."""
    blocks = [
        lambda k: [
            {"launch": "com.android.settings"},
            {"tap": {"text": "Network & internet"}},
            {"tap": {"id": "wifi_switch"}},
            {"tap": {"id": "wifi_switch"}},
            {"key": "back"},
            {"key": "home"},
        ],
        lambda k: [
            {"launch": "com.artemis.notes"},
            {"tap": {"desc": "New note"}},
            {"type": {"text": f"Chore {k}", "into": {"id": "title"}}},
            {"type": {"text": f"Entry number {k}", "into": {"id": "body"}}},
            {"key": "back"},
            {"tap": {"desc": "Save note"}},
            {"key": "home"},
        ],
        lambda k: [
            {"launch": "com.android.deskclock"},
            {"tap": {"desc": "Add alarm"}},
            {"tap": {"desc": "Increase hour"}},
            {"tap": {"desc": "Increase minute"}},
            {"tap": {"text": "OK"}},
            {"key": "home"},
        ],
    ]
    script: list[dict[str, Any]] = []
    k = 0
    while len(script) < steps - 1:
        for block in blocks:
            script.extend(block(k))
        k += 1
    script = script[: steps - 1]
    script.append({"finish": {"success": True, "answer": "chores done"}})
    # the note title typed nearest to step 40 carries the word that recall must find
    titles = [i for i, a in enumerate(script) if "type" in a and a["type"].get("into") == {"id": "title"}]
    word_index = min(titles, key=lambda i: abs(i + 1 - 40))
    script[word_index]["type"]["text"] = f"{RECALL_WORD} note"
    return script, word_index + 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="flash")
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="artemis-long-run-"))
    profile = load_profile(args.profile)
    script, word_step = chore_script(args.steps)
    task = Task.model_validate({"id": f"long-run-{args.steps}", "goal": "Do the daily phone chores",
                                "max_steps": args.steps + 10})
    t0 = time.perf_counter()
    with FakeGeminiServer(script_policy(script)) as server:
        operator = profile.models.operator
        model = GeminiModel([operator.model, *operator.fallback], api_key="fake-key", base_url=server.base_url)
        engine = DataEngine.open(data_dir)
        result = run_task(task, profile, SimPhone(seed=7, popups=False), model, engine, real_time=False)
    wall = time.perf_counter() - t0
    calls = [c for c in engine.llm_calls(result.session_id) if c.role == "operator" and c.status == "ok"]
    lens = [c for c in engine.llm_calls(result.session_id) if c.role == "lens"]
    prompts = [c.prompt_tokens for c in calls]
    window = prompts[19:30]
    last = prompts[-50:]
    figures = {
        "session_id": result.session_id,
        "data_dir": str(data_dir),
        "profile": args.profile,
        "success": result.success,
        "steps": result.steps,
        "calls": len(calls),
        "max_prompt_tokens_calls_20_30": max(window) if window else None,
        "max_prompt_tokens_last_50": max(last) if last else None,
        "bound_ratio": round(max(last) / max(window), 3) if window and last else None,
        "cache_hit_call_share": round(sum(1 for c in calls if c.cached_tokens > 0) / len(calls), 3),
        "cached_token_share": round(sum(c.cached_tokens for c in calls) / max(1, sum(prompts)), 3),
        "s_zone_hash_changes": len({c.prefix_hash for c in calls}) - 1,
        "lens_calls": len(lens),
        "recall_word": RECALL_WORD,
        "recall_word_step": word_step,
        "wall_s": round(wall, 1),
        "goals": {"bound_ratio": "<= 1.3", "cache_hit_call_share": ">= 0.85", "s_zone_hash_changes": 0},
    }
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for k, v in figures.items():
            print(f"{k:32} {v}")
    return 0 if result.success else 1


if __name__ == "__main__":
    raise SystemExit(main())
