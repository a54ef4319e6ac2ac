"""Fault matrix: what the user sees when the device or the model misbehaves (issue 8, SPEC §7, §8).

For each fault, one seeded run of a short task on the simulated phone through the real CLI
(``python -m artemis_cli run TASK --model gemini --json --no-live`` as a subprocess) against a
FakeGeminiServer living in this process, which plays the task's reference solution. Device faults
go in through the task file's ``sim: {faults: …}``; model faults are queued on the fake server or
come from a policy that answers malformed function calls once.

The ``openai_*`` rows run the same task on the OpenAI-compatible provider: a FakeOpenAIServer
(the same reference-solution policy, through ``gemini_policy``) behind the real openai SDK, with
``--model profile`` and a profile that puts every role on that server (the operator's model with
a fallback, :data:`OPENAI_CHAIN`; the lenses on :data:`OPENAI_LENS_MODEL`, so faults queued for the
operator's models never land on a lens call). No Gemini key is in their environment.

Each run is classified from exactly what the user sees (exit code, stdout, stderr):

- ``crashed``: a Python traceback or an "unexpected" error on stderr, an exit code outside
  SPEC §2 (0, 1, 2, 3), a stop without a message saying what to do next, or a hang (timeout);
- ``stopped-resumable``: stopped with a message telling the user what to do next (``artemis
  resume <id>`` or a retry hint) and the session really is resumable: ``artemis resume`` on it
  (with the model fault gone) ends without a crash;
- ``finished``: exit 0, or a normal task failure (the JSON result says succeeded/failed, exit 1).

Usage: python benchmarks/fault_matrix.py [--seed N] [--only FAULT] [--json] [--timeout S]
Prints ``{"runs": [...], "crashed": N, "finished": N, "stopped_resumable": N}`` with --json,
else a table. Exits 1 when any run crashed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from artemis_cli.config.task import load_task  # noqa: E402
from artemis_cli.engine.db import DataEngine  # noqa: E402
from artemis_cli.errors import ArtemisError  # noqa: E402
from artemis_cli.models.fakes.gemini import FakeGeminiServer, FakeReply, FakeRequest  # noqa: E402
from artemis_cli.models.fakes.openai import FakeOpenAIServer  # noqa: E402
from artemis_cli.models.fakes.openai_policies import gemini_policy  # noqa: E402
from artemis_cli.models.fakes.openai_wire import FakeOpenAIRequest  # noqa: E402
from artemis_cli.models.offline.scripted import script_policy  # noqa: E402
from artemis_cli.models.registry import reference_script  # noqa: E402

BASE_TASK = REPO / "tasks" / "settings-dark-theme.yaml"
DOCUMENTED_EXIT_CODES = frozenset({0, 1, 2, 3})  # SPEC §2, artemis_cli/errors.py, RunResult.exit_code
SLOW_SIM = "latency_ms:600"  # scenarios that act on a run in flight slow the simulated phone down (a
# loaded machine can starve the poller for seconds: the run must not finish meanwhile)
OPERATOR_CHAIN = ("gemini-2.5-flash", "gemini-2.0-flash")  # profiles/flash.yaml operator + fallback
MODEL_TIMEOUT_S = 1.0  # ARTEMIS_GEMINI_TIMEOUT_S for the runs; the fake server holds 2 s
# the openai rows: the operator's model and its fallback, the lenses' model (names are just strings
# to the fake server), and the fake's Retry-After on a 429 (the client's own backoff starts at 1 s)
OPENAI_CHAIN = ("fake-vl-large", "fake-vl-small")
OPENAI_LENS_MODEL = "fake-vl-lens"
OPENAI_RETRY_AFTER_S = 0.2
NEXT_STEP_RE = re.compile(r"artemis resume \S+|\bretry\b|\btry again\b|^Hint: ", re.I | re.M)
RESUME_RE = re.compile(r"artemis resume (\S+)")


@dataclass(frozen=True)
class Fault:
    """One row of the matrix: device faults (task file) and/or model faults (fake server)."""

    name: str
    sim_faults: str | None = None
    popups: bool = False
    inject: tuple[tuple[str, int, str | None], ...] = ()  # (kind, count, model) for server.inject
    bad_call: str | None = None  # "unknown_tool" | "wrong_types" | "two_actions": answered once
    resume: bool = True  # resume a stopped session to prove it is resumable
    scenario: str | None = None  # "signal:SIGTERM" | "concurrent_resume" | "disk_full": see run_scenario
    expect_exit: int | None = None  # the exit code this fault must end with (checked, in "checks")
    expect_text: str | None = None  # words the user must be told (checked, in "checks")
    provider: str = "gemini"  # "openai": the run goes through FakeOpenAIServer and the openai SDK


FAULTS: tuple[Fault, ...] = (
    Fault("drop", sim_faults="drop:0.15"),
    Fault("drop_long", sim_faults="drop:0.9"),
    Fault("screencap_fail", sim_faults="screencap_fail:0.3"),
    Fault("idle_state", sim_faults="idle_state:0.5"),
    Fault("null_root", sim_faults="null_root:0.4"),
    Fault("stale_dump", sim_faults="stale_dump:0.4"),
    Fault("garbage_xml", sim_faults="garbage_xml:0.4"),
    Fault("empty_hierarchy", sim_faults="empty_hierarchy:0.4"),
    Fault("popup_storm", sim_faults="popup_storm", popups=True),
    Fault("gemini_429", inject=(("429", 2, OPERATOR_CHAIN[0]),)),
    # 3 attempts per model (max_retries=2): 6 exhaust the operator's chain, 4 fall back and recover
    Fault("gemini_503_exhausted", inject=(("503", 3, OPERATOR_CHAIN[0]), ("503", 3, OPERATOR_CHAIN[1]))),
    Fault("gemini_503_recovered", inject=(("503", 3, OPERATOR_CHAIN[0]), ("503", 1, OPERATOR_CHAIN[1]))),
    Fault("gemini_timeout", inject=(("timeout", 1, OPERATOR_CHAIN[0]),)),
    Fault("gemini_400", inject=(("400", 1, OPERATOR_CHAIN[0]),)),
    Fault("call_unknown_tool", bad_call="unknown_tool"),
    Fault("call_wrong_types", bad_call="wrong_types"),
    Fault("call_two_actions", bad_call="two_actions"),
    # issue 11: every stop is a clean stop; one owner per session; a full disk is resumable
    Fault("sigint_mid_run", sim_faults=SLOW_SIM, scenario="signal:SIGINT", expect_exit=130),
    Fault("sigterm_mid_run", sim_faults=SLOW_SIM, scenario="signal:SIGTERM", expect_exit=143),
    Fault("sighup_mid_run", sim_faults=SLOW_SIM, scenario="signal:SIGHUP", expect_exit=129),
    Fault("resume_while_running", sim_faults=SLOW_SIM, scenario="concurrent_resume", expect_exit=0),
    Fault("disk_full", scenario="disk_full", expect_exit=3),
    # issue 11: odd model replies are retried inside the turn, refusals and a bad key are named
    Fault("gemini_malformed_x1", inject=(("malformed_function_call", 1, OPERATOR_CHAIN[0]),), expect_exit=0),
    Fault("gemini_malformed_x2", inject=(("malformed_function_call", 2, OPERATOR_CHAIN[0]),), expect_exit=0),
    Fault("gemini_safety", inject=(("safety", 1, OPERATOR_CHAIN[0]),), expect_exit=1, expect_text="refused"),
    Fault("gemini_invalid_key", inject=(("invalid_key", 1, OPERATOR_CHAIN[0]),), expect_exit=2,
          expect_text="GEMINI_API_KEY"),
    # issue 11: redaction on structure; one-character passwords broke the stored turn
    Fault("password_A", scenario="password:A", expect_exit=143),
    Fault("password_7", scenario="password:7", expect_exit=143),
    # the OpenAI-compatible provider: the same faults through FakeOpenAIServer + the openai SDK.
    # 3 attempts per model (max_retries=2): 3 exhaust the first model (its fallback answers), 6 the chain
    Fault("openai_429", provider="openai", inject=(("429", 2, OPENAI_CHAIN[0]),), expect_exit=0),
    Fault("openai_503_storm", provider="openai", inject=(("503", 3, OPENAI_CHAIN[0]),), expect_exit=0),
    Fault("openai_503_exhausted", provider="openai",
          inject=(("503", 3, OPENAI_CHAIN[0]), ("503", 3, OPENAI_CHAIN[1])), expect_exit=3),
    Fault("openai_timeout", provider="openai", inject=(("timeout", 1, OPENAI_CHAIN[0]),), expect_exit=0),
    Fault("openai_malformed_arguments", provider="openai", inject=(("malformed_arguments", 1, OPENAI_CHAIN[0]),),
          expect_exit=0),
    Fault("openai_text_only", provider="openai", inject=(("text_only", 2, OPENAI_CHAIN[0]),), expect_exit=0),
    Fault("openai_no_usage", provider="openai", inject=(("no_usage", 2, OPENAI_CHAIN[0]),), expect_exit=0),
    Fault("openai_length", provider="openai", inject=(("length", 1, OPENAI_CHAIN[0]),), expect_exit=0),
)

BAD_CALLS: dict[str, FakeReply] = {
    "unknown_tool": FakeReply.call("teleport", {"to": "Display"}, thought_text=None),
    "wrong_types": FakeReply.call("tap", {"index": "seven", "x": [1, 2], "y": {"deep": True}}),
    "two_actions": FakeReply(parts=[{"functionCall": {"name": "tap", "args": {"index": 1}}},
                                    {"functionCall": {"name": "press_key", "args": {"key": "back"}}}]),
}


@dataclass
class Outcome:
    outcome: str  # finished | stopped-resumable | crashed
    reason: str  # why (for crashed: what gave it away)


@dataclass
class RunRecord:
    fault: str
    outcome: str
    exit_code: int | None
    message: str
    steps: int
    session_id: str | None
    events: dict[str, int] = field(default_factory=dict)
    reason: str = ""
    elapsed_s: float = 0.0
    resume: dict[str, Any] | None = None
    injected: int = 0  # faults that actually happened: device_fault events, or fake-server faults served
    checks: dict[str, Any] = field(default_factory=dict)  # what a scenario must show, and whether it did


# --- classification (pure: unit-tested) --------------------------------------------------------


def parse_result(stdout: str) -> dict[str, Any] | None:
    """The JSON result ``--json`` prints on stdout, or None."""
    text = stdout.strip()
    if not text:
        return None
    try:
        data = json.loads(text[text.find("{"):]) if "{" in text else None
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def user_message(stdout: str, stderr: str) -> str:
    """The last thing the user was told: the JSON result's message, else stderr's last lines."""
    result = parse_result(stdout)
    if result is not None and result.get("message"):
        return str(result["message"])
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    tail = [ln for ln in lines[-3:] if ln.startswith(("Error:", "Hint:"))] or lines[-2:]
    return "\n".join(tail)


def says_what_next(stdout: str, stderr: str) -> bool:
    return bool(NEXT_STEP_RE.search(user_message(stdout, stderr))) or bool(
        re.search(r"^Hint: ", stderr, re.M))


def classify(exit_code: int | None, stdout: str, stderr: str, *, timed_out: bool = False,
             resumable: bool | None = None, signalled: int | None = None) -> Outcome:
    """Classify one CLI run from what the user saw. ``resumable``: whether ``artemis resume``
    on the stopped session ended without a crash (None: not checked). ``signalled``: the stop
    signal sent to the run, whose 128 + signal exit code is then the documented one."""
    if timed_out or exit_code is None:
        return Outcome("crashed", "hang: the run did not end before the timeout")
    if "Traceback (most recent call last)" in stderr:
        return Outcome("crashed", "a Python traceback on stderr")
    if re.search(r"^Error: unexpected ", stderr, re.M):
        return Outcome("crashed", "an unexpected exception reached the CLI's catch-all")
    if signalled is not None and exit_code != 128 + signalled:
        return Outcome("crashed", f"stopped by signal {signalled} but exited {exit_code}, not {128 + signalled}")
    if exit_code not in DOCUMENTED_EXIT_CODES and exit_code != (128 + signalled if signalled else None):
        return Outcome("crashed", f"exit code {exit_code} is not in SPEC §2")
    if exit_code == 0:
        return Outcome("finished", "exit 0")
    result = parse_result(stdout)
    if exit_code == 1 and result is not None and result.get("status") in ("succeeded", "failed"):
        return Outcome("finished", "a normal task failure (exit 1)")
    if not says_what_next(stdout, stderr):
        return Outcome("crashed", f"stopped (exit {exit_code}) without saying what to do next")
    if resumable is False:
        return Outcome("crashed", "says it can be resumed, but `artemis resume` crashed")
    return Outcome("stopped-resumable", f"stopped (exit {exit_code}) with a next step")


# --- one run ----------------------------------------------------------------------------------


def bad_call_policy(base: Callable[[FakeRequest], FakeReply], kind: str, at_request: int = 2
                    ) -> Callable[[FakeRequest], FakeReply]:
    """``base``, except that the ``at_request``-th operator request (one declaring tools) gets the
    malformed reply ``kind`` — once; then the run continues normally."""
    seen = {"n": 0}

    def policy(request: FakeRequest) -> FakeReply:
        if request.tools:
            seen["n"] += 1
            if seen["n"] == at_request:
                request.fault = f"bad_call:{kind}"  # counted like an injected server fault
                return BAD_CALLS[kind]
        return base(request)

    return policy


def _write_task(dest: Path, fault: Fault, seed: int) -> Path:
    data = yaml.safe_load(BASE_TASK.read_text(encoding="utf-8"))
    data["id"] = f"fault-{fault.name.replace('_', '-')}"
    data["sim"] = {"world": "default", "seed": seed, "popups": fault.popups,
                   **({"faults": fault.sim_faults} if fault.sim_faults else {})}
    path = dest / f"{data['id']}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _cli(args: list[str], env: dict[str, str], timeout_s: float) -> tuple[int | None, str, str, bool]:
    try:
        done = subprocess.run([sys.executable, "-m", "artemis_cli", *args], cwd=REPO, env=env,
                              capture_output=True, text=True, timeout=timeout_s, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        def text(v: Any) -> str:
            return v.decode("utf-8", "replace") if isinstance(v, bytes) else (v or "")
        return None, text(exc.stdout), text(exc.stderr), True
    return done.returncode, done.stdout, done.stderr, False


def _session_facts(home: Path, session_id: str | None) -> tuple[str | None, int, dict[str, int], str | None]:
    """(session id, steps, event counts, status) from the run's DataEngine."""
    db = home / "artemis.db"
    if not db.exists():
        return session_id, 0, {}, None
    engine = DataEngine.open(home)
    try:
        if session_id is None:
            sessions = engine.list_sessions()
            if not sessions:
                return None, 0, {}, None
            session_id = sessions[0].id
        rec = engine.get_session(session_id)
        events = Counter(e.kind for e in engine.events(rec.id))
        return rec.id, engine.last_step_number(rec.id), dict(sorted(events.items())), rec.status
    except ArtemisError:
        return session_id, 0, {}, None
    finally:
        close = getattr(engine, "close", None)
        if close is not None:
            close()


def fake_server(policy: Callable[[FakeRequest], FakeReply]) -> FakeGeminiServer:
    """The matrix's fake Gemini server: short 429 delays, timeouts held past the client's."""
    return FakeGeminiServer(policy, retry_delay_s=0.2, timeout_hold_s=2 * MODEL_TIMEOUT_S)


class TimedOpenAIServer(FakeOpenAIServer):
    """The matrix's fake OpenAI server, noting when each request arrived (``arrivals``: monotonic
    time, model, the fault it got) so a row can check that a 429's Retry-After was waited."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.arrivals: list[tuple[float, str, str | None]] = []

    def _take_fault(self, req: FakeOpenAIRequest) -> str | None:  # called once per request
        fault = super()._take_fault(req)
        with self._lock:
            self.arrivals.append((time.monotonic(), req.model, fault))
        return fault


def openai_server(policy: Callable[[FakeRequest], FakeReply]) -> TimedOpenAIServer:
    """The matrix's fake OpenAI server playing ``policy`` (a fake-Gemini policy): short
    Retry-After, timeouts held past the client's."""
    return TimedOpenAIServer(gemini_policy(policy), retry_after_s=OPENAI_RETRY_AFTER_S,
                             timeout_hold_s=2 * MODEL_TIMEOUT_S)


def _not_preflight(request: Any) -> bool:
    """Not the pre-flight check's one tiny request (``models.endpoint_check``: only its ping tool)."""
    from artemis_cli.models.endpoint_check import PING_TOOL

    return [t.get("function", {}).get("name") for t in getattr(request, "tools", None) or []] != [PING_TOOL]


def openai_profile(dest: Path, server: FakeOpenAIServer) -> Path:
    """A flash profile with every role on ``server``: the operator on :data:`OPENAI_CHAIN`."""
    def role(model: str, fallback: list[str]) -> dict[str, Any]:
        return {"provider": "openai", "model": model, "fallback": fallback, "base_url": server.base_url}

    models = {name: role(OPENAI_CHAIN[0], [OPENAI_CHAIN[1]]) for name in ("operator", "planner", "validator")}
    models.update({name: role(OPENAI_LENS_MODEL, []) for name in ("visual_lens", "chunk_lens")})
    path = dest / "fault-openai.yaml"
    path.write_text(yaml.safe_dump({"extends": "flash", "name": "fault-openai", "models": models}, sort_keys=False),
                    encoding="utf-8")
    return path


def openai_env(home: Path, server: FakeOpenAIServer, **extra: str) -> dict[str, str]:
    """The environment of a CLI run on the OpenAI provider (no Gemini or OpenAI key: the fake
    needs none, and a role left on Gemini would stop the run instead of passing unseen)."""
    env = {**os.environ, "ARTEMIS_HOME": str(home), "ARTEMIS_OPENAI_BASE_URL": server.base_url,
           "ARTEMIS_OPENAI_TIMEOUT_S": f"{MODEL_TIMEOUT_S:g}"}
    for key in ("ARTEMIS_DEBUG", "ARTEMIS_SECRET", "ARTEMIS_REPLAY_SECRET", "GEMINI_API_KEY", "GOOGLE_API_KEY",
                "OPENAI_API_KEY", "ARTEMIS_GEMINI_BASE_URL"):
        env.pop(key, None)
    return {**env, **extra}


def openai_checks(fault: Fault, server: TimedOpenAIServer) -> dict[str, Any]:
    """What an openai row must show besides its exit code: a 429's Retry-After waited (not the
    client's own 1 s backoff); after a 503 storm, the fallback model tried (and answering, when
    the storm spares it)."""
    checks: dict[str, Any] = {}
    kinds = {kind for kind, _, _ in fault.inject}
    if "429" in kinds:
        ops = [(t, f) for t, m, f in server.arrivals if m == OPENAI_CHAIN[0]]
        gaps = [round(b[0] - a[0], 2) for a, b in pairwise(ops) if a[1] == "429"]
        checks["retry_after_gaps_s"] = gaps
        checks["retry_after_honoured"] = bool(gaps) and all(OPENAI_RETRY_AFTER_S <= g < 1.0 for g in gaps)
    if "503" in kinds:  # the fallback is tried; it answers unless the storm covers it too (then exit 3)
        checks["fallback_tried"] = any(r.model == OPENAI_CHAIN[1] for r in server.requests)
        if fault.expect_exit == 0:
            checks["fallback_answered"] = any(r.model == OPENAI_CHAIN[1] and r.status == 200
                                              for r in server.requests)
    return checks


def cli_env(home: Path, server: FakeGeminiServer, **extra: str) -> dict[str, str]:
    """The environment of a CLI run against ``server``, recording into ``home`` (no debug, no
    secrets from the caller's shell)."""
    env = {**os.environ, "ARTEMIS_HOME": str(home), "GEMINI_API_KEY": "dummy",
           "ARTEMIS_GEMINI_BASE_URL": server.base_url, "ARTEMIS_GEMINI_TIMEOUT_S": f"{MODEL_TIMEOUT_S:g}"}
    for key in ("ARTEMIS_DEBUG", "ARTEMIS_SECRET", "ARTEMIS_REPLAY_SECRET"):
        env.pop(key, None)
    return {**env, **extra}


def run_fault(fault: Fault, seed: int, timeout_s: float) -> RunRecord:
    if fault.scenario is not None:
        from fault_scenarios import run_scenario  # benchmarks/fault_scenarios.py

        return run_scenario(fault, seed, timeout_s)
    task_file = BASE_TASK
    script = reference_script(load_task(task_file))
    base = script_policy(script)
    policy = bad_call_policy(base, fault.bad_call) if fault.bad_call else base
    server: FakeGeminiServer | TimedOpenAIServer = (openai_server(policy) if fault.provider == "openai"
                                                    else fake_server(policy))
    with tempfile.TemporaryDirectory(prefix="artemis-fault-") as tmp, server:
        home = Path(tmp) / "home"
        task_path = _write_task(Path(tmp), fault, seed)
        if isinstance(server, TimedOpenAIServer):
            env = openai_env(home, server)
            model_args = ["--model", "profile", "--profile", str(openai_profile(Path(tmp), server))]
        else:
            env = cli_env(home, server)
            model_args = ["--model", "gemini"]
        for kind, count, model in fault.inject:
            # the run's requests, not the pre-flight check's ping (it runs before the session exists)
            server.inject(kind, count, model, match=_not_preflight)
        t0 = time.monotonic()
        code, out, err, hung = _cli(["run", str(task_path), *model_args, "--json", "--no-live"], env, timeout_s)
        elapsed = time.monotonic() - t0
        result = parse_result(out) or {}
        sid = result.get("session_id") or _session_from_stderr(err)
        sid, steps, events, status = _session_facts(home, sid)
        resume: dict[str, Any] | None = None
        resumable: bool | None = None
        first = classify(code, out, err, timed_out=hung)
        if first.outcome == "stopped-resumable" and fault.resume:
            resume = _resume(sid, status, env, timeout_s)
            resumable = resume["outcome"] != "crashed"
        verdict = classify(code, out, err, timed_out=hung, resumable=resumable)
        injected = events.get("device_fault", 0) + sum(1 for r in server.requests if r.fault)
        checks: dict[str, Any] = {} if fault.expect_exit is None else {"exit_as_expected": code == fault.expect_exit}
        if fault.expect_text is not None:
            checks["told_" + fault.expect_text.lower()] = fault.expect_text in (out + err)
        if isinstance(server, TimedOpenAIServer):
            checks.update(openai_checks(fault, server))
        return RunRecord(fault=fault.name, outcome=verdict.outcome, exit_code=code,
                         message=user_message(out, err), steps=int(result.get("steps", steps) or steps),
                         session_id=sid, events=events, reason=verdict.reason, elapsed_s=round(elapsed, 1),
                         resume=resume, injected=injected, checks=checks)


def _session_from_stderr(stderr: str) -> str | None:
    m = re.search(r"^Session (\S+)", stderr, re.M) or RESUME_RE.search(stderr)
    return m.group(1) if m else None


def _resume(session_id: str | None, status: str | None, env: dict[str, str], timeout_s: float) -> dict[str, Any]:
    """Run ``artemis resume`` on a stopped session (the server's queued faults are used up)."""
    if session_id is None:
        return {"outcome": "crashed", "reason": "no session id to resume", "status_before": status}
    code, out, err, hung = _cli(["resume", session_id, "--json", "--no-live"], env, timeout_s)
    verdict = classify(code, out, err, timed_out=hung)
    return {"status_before": status, "exit_code": code, "outcome": verdict.outcome,
            "message": user_message(out, err)}


# --- output -----------------------------------------------------------------------------------


def summary(runs: list[RunRecord]) -> dict[str, Any]:
    counts = Counter(r.outcome for r in runs)
    failed_checks = [f"{r.fault}: {k}" for r in runs for k, v in r.checks.items() if v is False]
    return {"runs": [asdict(r) for r in runs], "crashed": counts["crashed"], "finished": counts["finished"],
            "stopped_resumable": counts["stopped-resumable"], "skipped": counts["skipped"],
            "failed_checks": failed_checks}


def print_table(runs: list[RunRecord]) -> None:
    print(f"{'fault':<22} {'outcome':<18} {'exit':>4} {'steps':>5} {'hits':>4} {'time':>6}  message")
    for r in runs:
        msg = " | ".join(r.message.splitlines())[:110]
        code = "-" if r.exit_code is None else str(r.exit_code)
        print(f"{r.fault:<22} {r.outcome:<18} {code:>4} {r.steps:>5} {r.injected:>4} {r.elapsed_s:>5.1f}s  {msg}")
        if r.outcome == "crashed":
            print(f"{'':<22} ^ {r.reason}")
        if r.resume is not None:
            print(f"{'':<22}   resume: {r.resume.get('outcome')} (exit {r.resume.get('exit_code')})"
                  f" {str(r.resume.get('message', '')).splitlines()[0][:90] if r.resume.get('message') else ''}")
        if r.checks:
            print(f"{'':<22}   checks: " + ", ".join(f"{k}={v}" for k, v in r.checks.items()))
    counts = Counter(r.outcome for r in runs)
    print(f"\ncrashed {counts['crashed']} · finished {counts['finished']} · "
          f"stopped-resumable {counts['stopped-resumable']} · skipped {counts['skipped']}")
    failed = summary(runs)["failed_checks"]
    if failed:
        print("failed checks: " + "; ".join(failed))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=11, help="sim seed for every run (default 11)")
    ap.add_argument("--only", action="append", metavar="FAULT",
                    help=f"run only this fault (repeatable): {', '.join(f.name for f in FAULTS)}")
    ap.add_argument("--json", action="store_true", help="print the JSON summary")
    ap.add_argument("--timeout", type=float, default=90.0, help="seconds before a run counts as a hang")
    args = ap.parse_args(argv)
    faults = list(FAULTS)
    if args.only:
        unknown = sorted(set(args.only) - {f.name for f in FAULTS})
        if unknown:
            ap.error(f"unknown fault(s) {', '.join(unknown)}; known: {', '.join(f.name for f in FAULTS)}")
        faults = [f for f in FAULTS if f.name in args.only]
    runs = [run_fault(f, args.seed, args.timeout) for f in faults]
    if args.json:
        print(json.dumps(summary(runs), indent=2, ensure_ascii=False))
    else:
        print_table(runs)
    return 1 if any(r.outcome == "crashed" for r in runs) or summary(runs)["failed_checks"] else 0


if __name__ == "__main__":
    sys.exit(main())
