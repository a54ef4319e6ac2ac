"""Small context windows: the 60-step shop run with the default (flash) profile, fitted to the
server's window or clearly refused (SPEC §17 "Small windows"; prints figures, asserts nothing).

Three servers, each the fake OpenAI server with the task's scripted reference solution through
the real openai SDK, ``artemis run`` as a user runs it (``benchmarks/window_run.py``):

* vLLM ``--max-model-len 8192`` (``/v1/models`` says it; a request over it gets vLLM's 400);
* vLLM ``--max-model-len 16384``;
* Ollama's default context, 4,096 (``/api/show``; Ollama truncates silently: only the fake's
  ``overflows`` count knows).

For each: fitted or refused, the fitted settings, steps, success, requests over the window
(goal 0), the server's largest prompt. ``--no-fit`` adds the 8K run with fitting off (refused)::

    python benchmarks/small_window.py [--steps 60] [--json] [--no-fit]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "benchmarks"))

from window_run import run_window  # noqa: E402

CASES = (("vLLM 8,192", 8192, "vllm", ()), ("vLLM 16,384", 16384, "vllm", ()), ("Ollama default 4,096", 4096, "ollama", ()))


def one(name: str, n: int, kind: str, extra: tuple[str, ...], steps: int, data_dir: Path) -> dict[str, Any]:
    f = run_window(REPO / "tasks" / "shop-office-order.yaml", max_model_len=n, steps=steps, kind=kind,
                   profile="flash", data_dir=data_dir, extra=extra)
    budget = f.get("context_budget") or {}
    return {"server": name + (" --no-fit" if extra else ""), "outcome": "refused" if "error" in f else
            ("fitted" if budget.get("fitted") else "fits as is"),
            "fitted": budget.get("fitted"), "budget_tokens": budget.get("tokens"), "floor_tokens": budget.get("floor_tokens"),
            "measured_by": budget.get("measured_by"), "status": f.get("status"), "steps": f.get("steps"),
            "success": f.get("success"), "over_window_requests": f["overflows"], "refused_400": f["refused_400"],
            "server_max_prompt_tokens": f["server_max_prompt_tokens"], "header": f.get("budget_line_in_header"),
            "header_fitted": f.get("fitted_line_in_header"),
            "error": f.get("error"), "wall_s": f["wall_s"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-fit", action="store_true", help="also the 8K run with --no-fit")
    args = parser.parse_args()
    cases = list(CASES) + ([("vLLM 8,192", 8192, "vllm", ("--no-fit",))] if args.no_fit else [])
    rows = []
    for name, n, kind, extra in cases:
        rows.append(one(name, n, kind, extra, args.steps, Path(tempfile.mkdtemp(prefix="artemis-small-window-"))))
    if args.json:
        print(json.dumps(rows, indent=2, ensure_ascii=False))
    else:
        for row in rows:
            print(f"== {row.pop('server')}")
            for k, v in row.items():
                print(f"  {k:26} {v}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
