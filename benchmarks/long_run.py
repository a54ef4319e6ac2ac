"""A long scripted run through the fake Gemini server and the real google-genai SDK (prints figures).

The operator and the visual lens are the gemini model; the fake server plays a deterministic
multi-app chore (settings toggles, notes, alarms) and accounts tokens and prefix caching like the
service. Prints one JSON object with the prompt-size bound, cache figures and S-zone stability:

    python benchmarks/long_run.py --profile flash --steps 150 --json

Keys: session_id, data_dir, steps, calls (operator calls), max_prompt_tokens_calls_20_30,
max_prompt_tokens_last_50, bound_ratio (last-50 max / calls-20-30 max; goal ≤ 1.3),
cache_hit_call_share (operator calls reporting cached tokens; goal ≥ 0.85), cached_token_share,
s_zone_hash_changes (goal 0), lens_calls, recall_word / recall_word_step (a word typed at step ~40);
and the compression figures: chunks, ledger_lines_match_steps (every chunk's band ③ has exactly
one line per step of its range), eras, period_paragraphs, snapshots, max_prompt_tokens_q2 and
max_prompt_tokens_q4 (goal: q4 ≤ 1.3 × q2).

    python benchmarks/long_run.py --profile pro --steps 120 --json [--max-chunks 2 --max-eras 1]
        [--budget 20000] [--inject 5:"Use dark mode" --inject 40:"…"]
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

from artemis_cli.bench.metrics import replay_frozen  # noqa: E402
from artemis_cli.config.profile import Profile, load_profile  # noqa: E402
from artemis_cli.config.task import Task  # noqa: E402
from artemis_cli.engine.db import DataEngine  # noqa: E402
from artemis_cli.memory.chunk_store import newest_chunks  # noqa: E402
from artemis_cli.models.fake_gemini import FakeGeminiServer  # noqa: E402
from artemis_cli.models.gemini import GeminiModel  # noqa: E402
from artemis_cli.models.scripted import script_policy  # noqa: E402
from artemis_cli.models.scripted_roles import pro_script_policy  # noqa: E402
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


def compression_figures(engine: DataEngine, session_id: str) -> dict[str, Any]:
    """Chunks, eras, period paragraphs and snapshots, from the recorded F operations and rows."""
    frozen, snapshots = replay_frozen(engine, session_id)
    rows = [r for r in newest_chunks(engine, session_id) if r.status == "ready"]
    match = all(
        [int(ln.split()[2]) for ln in (r.band3 or "").splitlines() if ln.startswith("- Step ")]
        == list(range(r.start_step, r.end_step + 1))
        for r in rows
    )
    return {
        "chunks": frozen.chunks_added,
        "chunk_rows_ready": len(rows),
        "ledger_lines_match_steps": bool(rows) and match,
        "eras": frozen.eras_made,
        "period_paragraphs": frozen.periods_made,
        "snapshots": snapshots,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="flash")
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--max-chunks", type=int, default=None, help="memory.chunking.max_chunks")
    parser.add_argument("--max-eras", type=int, default=None, help="memory.chunking.max_eras")
    parser.add_argument("--budget", type=int, default=None, help="memory.transcript.context_budget_tokens")
    parser.add_argument("--inject", action="append", default=[], metavar="STEP:TEXT",
                        help="a user instruction injected at a step (repeatable)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="artemis-long-run-"))
    settings = load_profile(args.profile).model_dump(mode="json")
    if args.max_chunks is not None:
        settings["memory"]["chunking"]["max_chunks"] = args.max_chunks
    if args.max_eras is not None:
        settings["memory"]["chunking"]["max_eras"] = args.max_eras
    if args.budget is not None:
        settings["memory"]["transcript"]["context_budget_tokens"] = args.budget
    profile = Profile.model_validate(settings)
    script, word_step = chore_script(args.steps)
    injections = []
    for item in args.inject:
        step, _, text = item.partition(":")
        injections.append({"at_step": int(step), "text": text})
    task = Task.model_validate({"id": f"long-run-{args.steps}", "goal": "Do the daily phone chores",
                                "max_steps": args.steps + 10, "inject": injections})
    t0 = time.perf_counter()
    policy = pro_script_policy(script) if profile.loop == "pro" else script_policy(script)
    with FakeGeminiServer(policy) as server:
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
    quarter = max(1, len(prompts) // 4)
    q2, q4 = prompts[quarter : 2 * quarter], prompts[3 * quarter :]
    compression = compression_figures(engine, result.session_id)
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
        **compression,
        "max_prompt_tokens_q2": max(q2) if q2 else None,
        "max_prompt_tokens_q4": max(q4) if q4 else None,
        "q4_over_q2": round(max(q4) / max(q2), 3) if q2 and q4 else None,
        "injected": injections,
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
