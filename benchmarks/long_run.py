"""A long scripted run through the fake Gemini server and the real google-genai SDK (prints figures).

The operator and the visual lens are the gemini model; the fake server plays a deterministic
multi-app chore (settings toggles, notes, alarms) and accounts tokens and prefix caching like the
service. Prints one JSON object with the prompt-size bound, cache figures and S-zone stability:

    python benchmarks/long_run.py --profile flash --steps 150 --json

``--provider openai`` plays the same chore through FakeOpenAIServer and the real openai SDK (every
role of the profile moved to ``provider: openai`` at the fake's URL, model names kept); it prints
the same keys. Two of them are counted in the provider's own unit:

* ``image_tokens_per_screenshot`` / ``image_tokens_full_size``: Gemini's pricing (258 tokens per
  768-pixel tile, or the media resolution) vs. the fake OpenAI server's tiled pricing (85 + 170
  per 512-pixel tile of the image scaled into 2048 / 768);
* ``divergence_blocks_from_end``: for Gemini, request *parts* from the end; for OpenAI, uncached
  16-token KV *blocks* at the end of the prompt (``blocks - shared_blocks`` of the fake's
  ``cache_log``, as vLLM's prefix cache counts them), so the two are not comparable.

    python benchmarks/long_run.py --provider openai --profile flash --steps 150 --json

Keys: session_id, data_dir, steps, calls (operator calls), max_prompt_tokens (goal at 1000 steps:
≤ 20,000), max_prompt_tokens_calls_20_30, max_prompt_tokens_last_50, bound_ratio (last-50 max /
calls-20-30 max; goal ≤ 1.3), cache_hit_call_share (operator calls reporting cached tokens; goal
≥ 0.9), cached_token_share (operator; goal ≥ 0.70) and cached_token_share_all_calls,
s_zone_hash_changes (goal 0), lens_calls, lens_prompt_tokens / lens_cached_tokens (visual and chunk
lens), pro_roles_prompt_tokens, operator_prompt_tokens, image_tokens_per_screenshot (as sent, per
the profile's screenshot setting) and image_tokens_full_size, divergence_blocks_from_end (per
operator call: where its prefix left everything sent before, in request parts from the end; 6 =
only this step's new parts; for openai in uncached 16-token blocks, see above), divergence_p50 / divergence_max, recall_word / recall_word_step (a
word typed at step ~40);
the budget: budget_tokens / budget_source (profile | server), budget_floor_tokens (the floor a
budget below which is refused before any model call; ``--budget`` one below it prints the
refusal as JSON and exits 2) with budget_floor_parts, budget_floor_events (turns the hard limit
had to go below the minimum active window: 0 when the floor is honest), prompts_over_budget;
and the compression figures: chunks, ledger_lines_match_steps (every chunk's band ③ has exactly
one line per step of its range), eras, period_paragraphs, snapshots, max_prompt_tokens_q2 and
max_prompt_tokens_q4 (goal: q4 ≤ 1.3 × q2), f_rewrites (F texts that do not start with the previous
one: each breaks the cached prefix) and chunk_resends (failed chunk segments re-sent).

    python benchmarks/long_run.py --profile pro --steps 150 --fail-chunk 2   # segment 2's first dispatch fails

(With ``--provider openai`` the failing dispatch gets ``length`` replies: like Gemini's empty
candidate, an output error the model does not retry itself, so one lens attempt = one request.)

    python benchmarks/long_run.py --profile pro --steps 120 --json [--max-chunks 2 --max-eras 1]
        [--budget 20000] [--inject 5:"Use dark mode" --inject 40:"…"]
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from artemis_cli.bench.metrics import replay_frozen  # noqa: E402
from artemis_cli.config.profile import Profile, load_profile  # noqa: E402
from artemis_cli.config.task import Task  # noqa: E402
from artemis_cli.engine.db import DataEngine  # noqa: E402
from artemis_cli.errors import UsageError  # noqa: E402
from artemis_cli.memory.chunk_lens import nth_segment_match  # noqa: E402
from artemis_cli.memory.chunk_store import newest_chunks  # noqa: E402
from artemis_cli.models import registry  # noqa: E402
from artemis_cli.models.fakes.gemini import FakeGeminiServer, image_tokens_for  # noqa: E402
from artemis_cli.models.fakes.openai import FakeOpenAIServer  # noqa: E402
from artemis_cli.models.fakes.openai_policies import as_rest_request, gemini_policy  # noqa: E402
from artemis_cli.models.fakes.openai_wire import image_tokens as openai_image_tokens  # noqa: E402
from artemis_cli.models.gemini import GeminiModel  # noqa: E402
from artemis_cli.models.offline.scripted import script_policy  # noqa: E402
from artemis_cli.models.offline.scripted_roles import pro_script_policy  # noqa: E402
from artemis_cli.models.openai_provider import OpenAIModel  # noqa: E402
from artemis_cli.operators.budget_floor import plan_budget  # noqa: E402
from artemis_cli.operators.compression import BUDGET_FLOOR_EVENT, RESEND_EVENT, session_f_rewrites  # noqa: E402
from artemis_cli.perception.model_image import scale_for_model  # noqa: E402
from artemis_cli.runner import run_task  # noqa: E402
from artemis_cli.sim.phone import SimPhone  # noqa: E402

RECALL_WORD = "Pelican"
PROVIDERS = ("gemini", "openai")
ROLES = ("operator", "planner", "validator", "visual_lens", "chunk_lens")


def chore_script(steps: int) -> tuple[list[dict[str, Any]], int]:
    """A deterministic chore of exactly ``steps`` actions; returns it and the step that types
    the recall word (about step 40)."""
    blocks: list[Callable[[int], list[dict[str, Any]]]] = [
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
        "f_rewrites": session_f_rewrites(engine, session_id),
        "chunk_resends": len(engine.events(session_id, kind=RESEND_EVENT)),
    }


def openai_settings(settings: dict[str, Any], base_url: str) -> dict[str, Any]:
    """Profile settings with every role on ``provider: openai`` at ``base_url`` (names kept)."""
    for role in ROLES:
        settings["models"][role].update(provider="openai", base_url=base_url)
    return settings


def image_tokens_per_screenshot(engine: DataEngine, session_id: str, profile: Profile,
                                provider: str = "gemini") -> dict[str, Any]:
    """What one recorded screenshot costs the operator model as sent (scaled per the profile),
    in the provider's pricing (for openai, the fake OpenAI server's)."""
    step = engine.get_step(session_id, 1)
    png = engine.blobs.get(step.pre_screenshot) if step is not None and step.pre_screenshot else b""
    sent = scale_for_model(png, profile.screenshot.max_side)
    if provider == "openai":  # the ledger's image, then the role's own max_image_side (openai_wire.image_part)
        sent = scale_for_model(sent, profile.models.operator.max_image_side)

        def url(data: bytes) -> str:
            return "data:image/png;base64," + base64.b64encode(data).decode("ascii")

        return {"image_tokens_per_screenshot": openai_image_tokens(url(sent), "auto"),
                "image_tokens_full_size": openai_image_tokens(url(png), "auto")}
    inline = {"mimeType": "image/png", "data": base64.b64encode(sent).decode("ascii")}
    full = {"mimeType": "image/png", "data": base64.b64encode(png).decode("ascii")}
    model = profile.models.operator.model
    resolution = f"MEDIA_RESOLUTION_{profile.screenshot.media_resolution.upper()}" if profile.screenshot.media_resolution else None
    return {"image_tokens_per_screenshot": image_tokens_for(inline, model, resolution),
            "image_tokens_full_size": image_tokens_for(full, model, None)}


def divergence_figures(server: FakeGeminiServer | FakeOpenAIServer) -> dict[str, Any]:
    """Where each operator call's prefix diverged from everything sent before. Gemini: counted in
    request blocks (parts) from the end: 2-3 means only this step's new parts were uncached.
    OpenAI: uncached 16-token KV blocks at the end (``blocks - shared_blocks``); the operator's
    records are those declaring tools (all records when the operator sends none: text mode)."""
    if isinstance(server, FakeOpenAIServer):
        log = list(server.cache_log)
        ops = [r for r in log if r.tools] or log
        ends = [r.blocks - r.shared_blocks for r in ops]
    else:
        ends = [r.diverged_from_end for r in server.cache_log if r.tools]
    ordered = sorted(ends)
    return {
        "divergence_blocks_from_end": ends,
        "divergence_p50": ordered[len(ordered) // 2] if ordered else None,
        "divergence_max": max(ends) if ends else None,
    }


def floor_of(profile: Profile, model: Any) -> int:
    """The run's budget floor (``operators.budget_floor``) on the simulated phone's screen."""
    info = SimPhone(seed=7, popups=False).info()
    return plan_budget(profile, (info.width, info.height), model).floor_tokens


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="flash")
    parser.add_argument("--provider", choices=PROVIDERS, default="gemini",
                        help="the fake server and SDK the run goes through (every role moves to it)")
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--max-chunks", type=int, default=None, help="memory.chunking.max_chunks")
    parser.add_argument("--max-eras", type=int, default=None, help="memory.chunking.max_eras")
    parser.add_argument("--budget", type=int, default=None, help="memory.transcript.context_budget_tokens")
    parser.add_argument("--inject", action="append", default=[], metavar="STEP:TEXT",
                        help="a user instruction injected at a step (repeatable)")
    parser.add_argument("--fail-chunk", type=int, default=None, metavar="N",
                        help="the Nth chunk-lens segment fails every attempt of its first dispatch (re-sends succeed)")
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
    script, word_step = chore_script(args.steps)
    injections = []
    for item in args.inject:
        step, _, text = item.partition(":")
        injections.append({"at_step": int(step), "text": text})
    task = Task.model_validate({"id": f"long-run-{args.steps}", "goal": "Do the daily phone chores",
                                "max_steps": args.steps + 10, "inject": injections})
    t0 = time.perf_counter()
    policy = pro_script_policy(script) if settings["loop"] == "pro" else script_policy(script)
    server: FakeGeminiServer | FakeOpenAIServer
    if args.provider == "openai":
        server = FakeOpenAIServer(gemini_policy(policy), keep_requests=2)
    else:
        server = FakeGeminiServer(policy, keep_requests=2)
    with server:
        if args.provider == "openai":
            settings = openai_settings(settings, server.base_url)
        profile = Profile.model_validate(settings)
        # one dispatch = retry_limit attempts on the lens, then as many on its fallback; each attempt
        # is one request (an output fault: neither SDK wrapper retries it within the call)
        attempts = profile.memory.runtime.retry_limit * (1 + bool(profile.models.chunk_lens.fallback))
        operator = profile.models.operator
        model: GeminiModel | OpenAIModel
        if isinstance(server, FakeOpenAIServer):
            if args.fail_chunk:
                nth = nth_segment_match(args.fail_chunk)
                server.inject("length", attempts, match=lambda r: nth(as_rest_request(r)[0]))
            model = OpenAIModel(operator.chain, base_url=server.base_url, options=registry.wire_options(operator))
        else:
            if args.fail_chunk:
                server.inject("empty_candidate", attempts, match=nth_segment_match(args.fail_chunk))
            model = GeminiModel([operator.model, *operator.fallback], api_key="fake-key", base_url=server.base_url)
        engine = DataEngine.open(data_dir)
        planned: list[Any] = []
        try:
            result = run_task(task, profile, SimPhone(seed=7, popups=False), model, engine, real_time=False,
                              on_budget=planned.append)
        except UsageError as exc:  # a budget below the floor: refused before any model call
            calls_made = len(server.requests)
            refused = {"refused": str(exc), "hint": exc.hint, "budget_floor_tokens": floor_of(profile, model),
                       "budget_tokens": args.budget, "model_requests": calls_made,
                       "sessions": len(engine.list_sessions())}
            print(json.dumps(refused, indent=2) if args.json else f"refused: {exc}\n  {exc.hint}")
            return 2
    divergence = divergence_figures(server)
    wall = time.perf_counter() - t0
    calls = [c for c in engine.llm_calls(result.session_id) if c.role == "operator" and c.status == "ok"]
    lens = [c for c in engine.llm_calls(result.session_id) if c.role == "lens"]
    aux = [c for c in engine.llm_calls(result.session_id) if c.role != "operator"]
    lens_all = [c for c in aux if c.role in ("lens", "chunk_lens")]
    everything = calls + aux
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
        "provider": args.provider,
        "success": result.success,
        "steps": result.steps,
        "calls": len(calls),
        "max_prompt_tokens": max(prompts) if prompts else None,
        "max_prompt_tokens_calls_20_30": max(window) if window else None,
        "max_prompt_tokens_last_50": max(last) if last else None,
        "bound_ratio": round(max(last) / max(window), 3) if window and last else None,
        "cache_hit_call_share": round(sum(1 for c in calls if c.cached_tokens > 0) / len(calls), 3),
        "cached_token_share": round(sum(c.cached_tokens for c in calls) / max(1, sum(prompts)), 3),
        "s_zone_hash_changes": len({c.prefix_hash for c in calls}) - 1,
        "lens_calls": len(lens),
        "lens_prompt_tokens": sum(c.prompt_tokens for c in lens_all),
        "lens_cached_tokens": sum(c.cached_tokens for c in lens_all),
        "pro_roles_prompt_tokens": sum(c.prompt_tokens for c in aux if c not in lens_all),
        "operator_prompt_tokens": sum(prompts),
        "cached_token_share_all_calls": round(sum(c.cached_tokens for c in everything)
                                              / max(1, sum(c.prompt_tokens for c in everything)), 3),
        **image_tokens_per_screenshot(engine, result.session_id, profile, args.provider),
        **compression,
        "max_prompt_tokens_q2": max(q2) if q2 else None,
        "max_prompt_tokens_q4": max(q4) if q4 else None,
        "q4_over_q2": round(max(q4) / max(q2), 3) if q2 and q4 else None,
        "injected": injections,
        "recall_word": RECALL_WORD,
        "recall_word_step": word_step,
        "wall_s": round(wall, 1),
        "budget_tokens": planned[0].tokens if planned else None,
        "budget_source": planned[0].source if planned else None,
        "budget_floor_tokens": planned[0].floor_tokens if planned else None,
        "budget_floor_parts": planned[0].floor_parts if planned else None,
        "budget_floor_events": len(engine.events(result.session_id, kind=BUDGET_FLOOR_EVENT)),
        "prompts_over_budget": sum(1 for p in prompts if planned and p > planned[0].tokens),
        "goals": {"bound_ratio": "<= 1.3", "cache_hit_call_share": ">= 0.9", "cached_token_share": ">= 0.70",
                  "s_zone_hash_changes": 0},
        **divergence,
    }
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for k, v in figures.items():
            print(f"{k:32} {v}")
    return 0 if result.success else 1


if __name__ == "__main__":
    raise SystemExit(main())
