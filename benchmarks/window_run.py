"""A run against an OpenAI-compatible server with a small context window (prints figures).

The fake OpenAI server plays vLLM serving ``--max-model-len N`` (``/v1/models`` reports
``max_model_len``; a request whose prompt does not fit is refused with vLLM's 400) — or llama.cpp
(``/props``) or Ollama (``/api/show``, silent truncation) with ``--kind`` — and the scripted
reference solution of the task through the real openai SDK; ``artemis run`` (a subprocess, the
CLI as a user runs it) reads the window, binds its budget to it and must never send a request
over it::

    python benchmarks/window_run.py --json                      # shop-office-order, 60 steps, 8192
    python benchmarks/window_run.py --max-model-len 8192 --steps 60 --kind llamacpp --json

The default flash profile's floor at the fake's image pricing (OpenAI tiles: 1,105 tokens per
518x1152 screenshot) is above an 8K window less the reply reserve, so this run uses a profile
that extends flash with ``screenshot.max_side: 768`` and ``min_active_steps: 4`` (``--profile`` names another; ``--profile
flash`` shows the run fitted to the window: ``benchmarks/small_window.py``). Keys: returncode, status, steps, window_tokens, budget_line_in_header
(the header's budget line), sessions_show_budget_line, context_budget (``sessions show --json``),
server_requests, server_max_prompt_tokens, overflows (requests over the window: goal 0),
refused_400 (answers the server refused), wall_s.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from artemis_cli.config.task import load_task  # noqa: E402
from artemis_cli.models.fakes.openai import WINDOW_KINDS, FakeOpenAIServer, script_policy  # noqa: E402
from artemis_cli.models.registry import reference_script  # noqa: E402

SMALL_WINDOW_PROFILE = "extends: flash\nscreenshot: {max_side: 768}\nmemory:\n  transcript: {min_active_steps: 4}\n"


def artemis(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "artemis_cli", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=600, stdin=subprocess.DEVNULL, env=env)


def run_window(task_file: Path, *, max_model_len: int, steps: int, kind: str, profile: str | None,
               data_dir: Path, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    task = load_task(task_file)
    if profile is None:
        path = data_dir / "small-window.yaml"
        path.write_text(SMALL_WINDOW_PROFILE, encoding="utf-8")
        profile = str(path)
    env = {**os.environ, "ARTEMIS_SECRET": "artemis123", "COLUMNS": "200"}
    for var in ("OPENAI_API_KEY", "ARTEMIS_OPENAI_BASE_URL"):
        env.pop(var, None)
    t0 = time.perf_counter()
    with FakeOpenAIServer(script_policy(reference_script(task)), max_model_len=max_model_len, window_kind=kind,
                          keep_requests=4) as server:
        proc = artemis("run", str(task_file), "--model", "openai:local-vl", "--base-url", server.base_url,
                       "--max-steps", str(steps), "--no-live", "--json", "--data-dir", str(data_dir / "home"),
                       "--profile", profile, *extra, env=env)
        refused = sum(1 for r in server.requests if r.status == 400)
    wall = time.perf_counter() - t0
    header = next((ln.strip() for ln in proc.stderr.splitlines() if ln.strip().startswith("budget ")), None)
    figures: dict[str, Any] = {"returncode": proc.returncode, "window_tokens": max_model_len, "kind": kind,
                               "profile": profile, "budget_line_in_header": header,
                               "fitted_line_in_header": next((ln.strip() for ln in proc.stderr.splitlines()
                                                              if ln.strip().startswith("fitted to the budget: ")), None),
                               "server_max_prompt_tokens": server.max_prompt_tokens,
                               "overflows": len(server.overflows), "refused_400": refused,
                               "wall_s": round(wall, 1)}
    try:
        result = json.loads(proc.stdout)
    except ValueError:
        figures["error"] = (proc.stderr or proc.stdout).strip().splitlines()[-2:]
        return figures
    if "session_id" not in result:  # --json's error document: the run was refused before a session
        figures["error"] = result.get("error") or result
        return figures
    sid = result["session_id"]
    figures.update(status=result["status"], success=result.get("success"), steps=result["steps"], session_id=sid)
    shown = artemis("sessions", "show", sid, "--data-dir", str(data_dir / "home"), env=env)
    figures["sessions_show_budget_line"] = next((ln for ln in shown.stdout.splitlines() if ln.startswith("context:")),
                                                None)
    shown_json = artemis("sessions", "show", sid, "--json", "--data-dir", str(data_dir / "home"), env=env)
    figures["context_budget"] = json.loads(shown_json.stdout).get("context_budget")
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", type=Path, default=REPO / "tasks" / "shop-office-order.yaml")
    parser.add_argument("--max-model-len", type=int, default=8192)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--kind", choices=WINDOW_KINDS, default="vllm")
    parser.add_argument("--profile", default=None, help="default: flash with screenshot.max_side 768")
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="artemis-window-run-"))
    figures = run_window(args.task, max_model_len=args.max_model_len, steps=args.steps, kind=args.kind,
                         profile=args.profile, data_dir=data_dir)
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        for k, v in figures.items():
            print(f"{k:28} {v}")
    return 0 if figures.get("overflows") == 0 and "error" not in figures else 1


if __name__ == "__main__":
    raise SystemExit(main())
