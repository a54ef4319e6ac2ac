"""The Python API's cached AI steps: model calls of a first run, an unchanged second run, a healing
run on the drifted Shop and a fresh run there (prints figures; nothing is asserted).

A Python program drives the Shop: ``phone.launch("Shop")``, ``phone.act(login)`` and
``phone.act(order)`` with ``cache="office-order"`` on the simulated phone (seed 64, pop-ups on):

a. record: the default world, each AI step played by the offline scripted model (the task's
   reference, split at the login) — the first passing run is the baseline;
b. second: the same program again: every AI step is replayed from the baseline (goal: 0 calls);
c. drift: the same program on ``sim:drift``: replayed, and the stretches the Shop's update broke
   healed by the offline healer (no API key);
d. fresh: a fresh run of the same offline healing model on ``sim:drift`` (no cache), which must
   itself succeed for the ratio to mean anything.

e. the 9-step lamp test (launch, log in, buy a Desk Lamp: ``tests/library_support.py``'s flow) twice
   with Gemini through the real google-genai SDK against the fake Gemini server: the server's own
   count of requests shows the second run sent none; then on ``sim:drift``, healed from that
   baseline by the offline healer, beside a fresh run there.

Prints each run's success, steps (replayed / healed), model calls and wall time, and
``ratio`` = c / d (goal: at most 0.25). ``--task`` takes another Shop task with a login reference.

Usage: python benchmarks/library_cache.py [--task tasks/shop-office-order.yaml] [--json]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from artemis_cli import Phone, StepFailed
from artemis_cli.config.task import load_task
from artemis_cli.models.offline.healer import HealerModel
from artemis_cli.models.offline.scripted import GoalScriptedModel, ScriptedModel
from artemis_cli.models.registry import reference_script
from artemis_cli.sim.phone import SimPhone

REPO = Path(__file__).resolve().parent.parent
GOAL_RATIO = 0.25
LOGIN = "log in to the Shop with the demo account (username demo)"
SECRETS = {"shop_password": "artemis123"}


def _scripts(task: Any) -> dict[str, list[dict[str, Any]]]:
    steps = reference_script(task)[1:]  # the launch is the program's own step
    login = [*steps[:2], {"finish": {"success": True, "answer": "logged in"}}]
    return {LOGIN: login, task.goal: steps[2:]}


def _run(data: Path, world: str, seed: int, model: Any, goal: str, *, cache: bool = True) -> dict[str, Any]:
    t0 = time.perf_counter()
    error = ""
    phone = Phone(SimPhone(world=world, seed=seed, popups=True), _engine(data), _profile(), model=model,
                  cache="office-order" if cache else None, name="office order", real_time=False, secrets=SECRETS)
    try:
        with phone:
            phone.launch("Shop")
            phone.act(LOGIN)
            phone.act(goal, max_steps=120)
            placed = phone.device.shell("content query --uri content://com.artemis.shop/orders")
            if "order_number" not in placed:  # the acts said so; the Shop must agree
                raise StepFailed(f"no order was placed: {placed.strip()[:120]}")
    except StepFailed as exc:
        error = str(exc)
    finally:
        phone.engine.close()
    s = phone.stats()
    return {"success": s.status == "succeeded", "steps": s.steps, "replayed": s.replayed_steps,
            "healed": s.healed_steps, "model_calls": s.model_calls, "wall_s": round(time.perf_counter() - t0, 2),
            "session_id": s.session_id, "error": error}


def _engine(data: Path) -> Any:
    from artemis_cli.engine.db import DataEngine

    return DataEngine.open(data)


def _profile() -> Any:
    from artemis_cli.config.profile import load_profile

    return load_profile("flash")


def ten_steps() -> dict[str, Any]:
    """The 9-step lamp test twice through the real SDK: the fake server's request counts."""
    from artemis_cli.models.fakes.gemini import FakeGeminiServer
    from artemis_cli.models.gemini import GeminiModel
    from artemis_cli.models.offline.scripted import goal_policy

    buy = "add a Desk Lamp to the cart and check out"
    lamp = load_task(REPO / "tasks" / "shop-buy-one.yaml")
    steps = reference_script(lamp)[1:]
    scripts = {LOGIN: [*steps[:2], {"finish": {"success": True, "answer": "logged in"}}], buy: steps[2:]}
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="artemis-library-bench-") as tmp, FakeGeminiServer(goal_policy(scripts)) as srv:
        model = GeminiModel(["gemini-2.5-flash"], api_key="fake", base_url=srv.base_url, sleep=lambda s: None,
                            backoff_s=0.0)
        for run in ("first", "second"):
            before = len(srv.requests)
            with Phone.open(SimPhone(seed=57), data_dir=tmp, model=model, cache="lamp", secrets=SECRETS,
                            real_time=False) as phone:
                phone.launch("Shop")
                phone.act(LOGIN)
                phone.act(buy)
            s = phone.stats()
            out[run] = {"success": s.status == "succeeded", "steps": s.steps, "model_calls": s.model_calls,
                        "server_requests": len(srv.requests) - before, "replayed": s.replayed_steps}
        # the same test on the drifted Shop: healed from the cache (offline healer), and fresh
        for run, model, key in (("drift", "heuristic", "lamp"),
                                ("fresh", GoalScriptedModel(scripts, make=HealerModel), None)):
            try:
                with Phone.open(SimPhone(world="drift", seed=57), data_dir=tmp, model=model, cache=key,
                                secrets=SECRETS, real_time=False) as phone:
                    phone.launch("Shop")
                    phone.act(LOGIN)
                    phone.act(buy)
                    phone.wait_for("Thank you for your order!", timeout=0)
            except StepFailed:
                pass
            s = phone.stats()
            out[run] = {"success": s.status == "succeeded", "steps": s.steps, "model_calls": s.model_calls,
                        "server_requests": 0, "replayed": s.replayed_steps, "healed": s.healed_steps}
    return out


def measure(task_file: str) -> dict[str, Any]:
    task = load_task(REPO / task_file)
    scripts = _scripts(task)
    seed = task.sim.seed if task.sim is not None else 0
    with tempfile.TemporaryDirectory(prefix="artemis-library-bench-") as tmp:
        data, fresh_data = Path(tmp) / "data", Path(tmp) / "fresh"
        out: dict[str, Any] = {"task": task_file}
        out["record"] = _run(data, "default", seed, GoalScriptedModel(scripts, make=ScriptedModel), task.goal)
        out["second"] = _run(data, "default", seed, "heuristic", task.goal)
        out["drift"] = _run(data, "drift", seed, "heuristic", task.goal)
        out["fresh"] = _run(fresh_data, "drift", seed, GoalScriptedModel(scripts, make=HealerModel), task.goal,
                            cache=False)
    heal, fresh = out["drift"]["model_calls"], out["fresh"]["model_calls"]
    out["ratio"] = round(heal / fresh, 3) if fresh else None
    out["goal_ratio"] = GOAL_RATIO
    out["ten_steps_sdk"] = ten_steps()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="tasks/shop-office-order.yaml")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = measure(args.task)
    if args.json:
        print(json.dumps(out, indent=2))
        return
    for key in ("record", "second", "drift", "fresh"):
        row = out[key]
        print(f"{key:<7} {'ok    ' if row['success'] else 'FAILED'} {row['steps']} steps ({row['replayed']} replayed, "
              f"{row['healed']} healed); {row['model_calls']} model calls; {row['wall_s']:.1f} s"
              + (f" — {row['error']}" if row["error"] else ""))
    lamp = out["ten_steps_sdk"]
    for run in ("first", "second"):
        row = lamp[run]
        print(f"9-step lamp test through the google-genai SDK, {run} run: {row['steps']} steps ({row['replayed']} replayed); "
              f"{row['model_calls']} model calls recorded, {row['server_requests']} requests reached the server")
    for run in ("drift", "fresh"):
        row = lamp[run]
        print(f"9-step lamp test on sim:drift, {run}: {'ok' if row['success'] else 'FAILED'} {row['steps']} steps "
              f"({row['replayed']} replayed, {row['healed']} healed); {row['model_calls']} model calls")
    if lamp["fresh"]["model_calls"]:
        print(f"lamp test drift heal {lamp['drift']['model_calls']} vs fresh {lamp['fresh']['model_calls']}: ratio "
              f"{lamp['drift']['model_calls'] / lamp['fresh']['model_calls']:.3f} (goal <= {GOAL_RATIO})")
    failed = [k for k in ("drift", "fresh") if not out[k]["success"]]
    print(f"second-run model calls {out['second']['model_calls']} (goal 0); drift heal {out['drift']['model_calls']} "
          f"vs fresh {out['fresh']['model_calls']}: ratio {out['ratio']} (goal <= {GOAL_RATIO})"
          + (f" — not a result: the {' and '.join(failed)} run failed" if failed else ""))


if __name__ == "__main__":
    main()
