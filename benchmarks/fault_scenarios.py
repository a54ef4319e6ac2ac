"""Fault-matrix rows that act on a run in flight or on its surroundings (issue 11), for
benchmarks/fault_matrix.py: a stop signal mid-run, a second process resuming a live session, a
disk that fills up. Each drives the real CLI as subprocesses against the matrix's fake Gemini
server and records, besides the usual outcome, the ``checks`` the issue asks for.
"""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from fault_matrix import (
    BASE_TASK,
    REPO,
    Fault,
    RunRecord,
    _cli,
    _resume,
    _session_facts,
    _write_task,
    classify,
    cli_env,
    fake_server,
    parse_result,
    user_message,
)

from artemis_cli.config.task import load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.health import missing_blobs
from artemis_cli.models.fakes.gemini import FakeGeminiServer
from artemis_cli.models.offline.scripted import script_policy
from artemis_cli.models.registry import reference_script


@contextmanager
def _world(fault: Fault, seed: int) -> Iterator[tuple[Path, Path, dict[str, str], FakeGeminiServer]]:
    """(temp dir, task file, CLI environment, fake server) for one scenario."""
    policy = script_policy(reference_script(load_task(BASE_TASK)))
    with tempfile.TemporaryDirectory(prefix="artemis-fault-") as tmp, fake_server(policy) as server:
        env = cli_env(Path(tmp) / "home", server)
        yield Path(tmp), _write_task(Path(tmp), fault, seed), env, server


def _start_run(task: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "artemis_cli", "run", str(task), "--model", "gemini", "--json",
                             "--no-live"], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, text=True)


def _wait_for_step(home: Path, at_least: int, proc: subprocess.Popen[str], timeout_s: float) -> str | None:
    """The session id once its run has recorded ``at_least`` steps (None if the run ended first)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and proc.poll() is None:
        if (home / "artemis.db").exists():
            with DataEngine.open(home) as engine:
                latest = engine.latest_session()
                if latest is not None and engine.last_step_number(latest.id) >= at_least:
                    return latest.id
        time.sleep(0.05)
    return None


def _finish(proc: subprocess.Popen[str], timeout_s: float) -> tuple[int | None, str, str, bool]:
    try:
        out, err = proc.communicate(timeout=timeout_s)
        return proc.returncode, out, err, False
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return None, out, err, True


def _record(fault: Fault, code: int | None, out: str, err: str, hung: bool, home: Path, t0: float, *,
            signalled: int | None = None, resume: dict[str, Any] | None = None,
            checks: dict[str, Any] | None = None, injected: int = 1) -> RunRecord:
    result = parse_result(out) or {}
    sid, steps, events, _ = _session_facts(home, result.get("session_id"))
    resumable = None if resume is None else resume["outcome"] != "crashed"
    verdict = classify(code, out, err, timed_out=hung, resumable=resumable, signalled=signalled)
    checks = dict(checks or {})
    if fault.expect_exit is not None:
        checks["exit_as_expected"] = code == fault.expect_exit
    return RunRecord(fault=fault.name, outcome=verdict.outcome, exit_code=code, message=user_message(out, err),
                     steps=int(result.get("steps", steps) or steps), session_id=sid, events=events,
                     reason=verdict.reason, elapsed_s=round(time.monotonic() - t0, 1), resume=resume,
                     injected=injected, checks=checks)


def signal_mid_run(fault: Fault, seed: int, timeout_s: float, sig: signal.Signals) -> RunRecord:
    """Send ``sig`` once the run has recorded a step: the session must be ``interrupted`` with
    whole steps only, the exit code 128 + sig, and ``artemis resume`` must finish it."""
    with _world(fault, seed) as (tmp, task, env, _server):
        home = tmp / "home"
        t0 = time.monotonic()
        proc = _start_run(task, env)
        sid = _wait_for_step(home, 1, proc, timeout_s)
        if sid is not None:
            proc.send_signal(sig)
        code, out, err, hung = _finish(proc, timeout_s)
        checks: dict[str, Any] = {"signal_landed_mid_run": sid is not None}
        with DataEngine.open(home) as engine:
            if sid is not None:
                steps = engine.get_steps(sid)
                checks["status_interrupted"] = engine.get_session(sid).status == "interrupted"
                checks["whole_steps"] = [s.number for s in steps] == list(range(1, len(steps) + 1)) and \
                    missing_blobs(engine) == []
                checks["lease_released"] = engine.lease_owner(sid) is None
                checks["says_continue_with"] = f"Continue with: artemis resume {sid}" in err
        resume = _resume(sid, "interrupted", env, timeout_s) if sid is not None else None
        if resume is not None:
            checks["resume_finished"] = resume.get("exit_code") == 0
        return _record(fault, code, out, err, hung, home, t0, signalled=int(sig), resume=resume, checks=checks)


def concurrent_resume(fault: Fault, seed: int, timeout_s: float) -> RunRecord:
    """``artemis resume ID`` while the run that owns ID is alive: refused (exit 2, naming the
    owner) before it touches a device. A resume that got past the lease would first record a
    ``fast_forward`` (its simulated phone) and a ``resume`` event; the refused one records none."""
    with _world(fault, seed) as (tmp, task, env, _server):
        home = tmp / "home"
        t0 = time.monotonic()
        proc = _start_run(task, env)
        sid = _wait_for_step(home, 1, proc, timeout_s)
        checks: dict[str, Any] = {"second_process_started_mid_run": sid is not None}
        if sid is not None:
            with DataEngine.open(home) as engine:
                before = len(engine.events(sid))
            code2, _out2, err2, _ = _cli(["resume", sid, "--json", "--no-live"], env, timeout_s)
            with DataEngine.open(home) as engine:
                later = [e.kind for e in engine.events(sid)[before:]]
            checks["second_exit"] = code2
            checks["second_refused"] = code2 == 2 and f"is in use by process {proc.pid}" in err2
            checks["second_process_device_actions"] = sum(k in ("fast_forward", "resume") for k in later)
            checks["second_no_device_actions"] = checks["second_process_device_actions"] == 0
        code, out, err, hung = _finish(proc, timeout_s)
        return _record(fault, code, out, err, hung, home, t0, checks=checks)


def disk_full(fault: Fault, seed: int, timeout_s: float) -> RunRecord:
    """The data dir on a 2 MB tmpfs (a private mount namespace): the run must stop as
    ``interrupted``, exit 3, with one line and a resume hint and its --json result; after the
    file system grows, ``artemis resume`` finishes. Skipped where root cannot mount."""
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs tmpfs /mnt"], capture_output=True)
    if probe.returncode != 0:
        reason = probe.stderr.decode(errors="replace").strip() or "unshare/mount not permitted"
        return RunRecord(fault=fault.name, outcome="skipped", exit_code=None, message="", steps=0,
                         session_id=None, reason=f"cannot mount a small tmpfs here: {reason}")
    with _world(fault, seed) as (tmp, _task, env, _server):
        mnt = tmp / "small"
        mnt.mkdir()
        home = mnt / "home"
        task = REPO / "tasks" / "clock-ten-alarms.yaml"  # 63 steps: fills 2 MB within a few
        py = f"{shlex.quote(sys.executable)} -m artemis_cli"
        script = f"""
            mount -t tmpfs -o size=2m tmpfs {mnt}
            {py} run {task} --model scripted --json --no-live --data-dir {home} > {tmp}/run.out 2> {tmp}/run.err
            echo $? > {tmp}/run.rc
            cp -a {home} {tmp}/after-full
            mount -o remount,size=64m {mnt}
            {py} resume latest --json --no-live --data-dir {home} > {tmp}/resume.out 2> {tmp}/resume.err
            echo $? > {tmp}/resume.rc
        """
        t0 = time.monotonic()
        subprocess.run(["unshare", "-m", "sh", "-c", script], cwd=REPO, env=env, capture_output=True,
                       timeout=timeout_s * 4)

        def read(name: str) -> str:
            path = tmp / name
            return path.read_text() if path.exists() else ""

        code = int(read("run.rc") or -1)
        out, err = read("run.out"), read("run.err")
        result = parse_result(out) or {}
        resume_code = int(read("resume.rc") or -1)
        resumed = parse_result(read("resume.out")) or {}
        checks = {
            "json_result_printed": bool(result),
            "status_interrupted": result.get("status") == "interrupted",
            "one_line_disk_full": str(result.get("message", "")).startswith("disk full at ")
            and "artemis resume" in str(result.get("message", "")),
            "no_thread_traceback": "Traceback" not in err,
            "resume_finished": resume_code == 0 and resumed.get("status") == "succeeded",
        }
        resume = {"exit_code": resume_code, "outcome": "finished" if resume_code == 0 else "crashed",
                  "message": str(resumed.get("message", ""))}
        return _record(fault, code, out, err, False, tmp / "after-full", t0, resume=resume, checks=checks)


PASSWORD_ENV = "ARTEMIS_FAULT_SHOP_PASSWORD"
PASSWORD_STEP = 3  # launch, username, password, ...


def _password_task(dest: Path, password: str, seed: int) -> Path:
    """The Shop login-and-buy task with the account password ``password`` (taken by the sim from
    ``$ARTEMIS_FAULT_SHOP_PASSWORD``); the password is in the reference solution only."""
    doc = {
        "id": "fault-password", "goal": "Log in to the Shop with the demo account and buy a Desk Lamp",
        "max_steps": 15,
        "sim": {"world": "default", "seed": seed, "popups": False, "faults": "latency_ms:150",
                "shop_password_env": PASSWORD_ENV},
        "setup": [{"shell": "am force-stop com.artemis.shop"}],
        "success": [{"visible": "Thank you for your order!"}],
        "reference": [
            {"launch": "com.artemis.shop"},
            {"type": {"text": "demo", "into": {"id": "username"}}},
            {"type": {"text": password, "into": {"id": "password"}, "submit": True}},
            {"swipe": {"from": [540, 2100], "to": [540, 700]}},
            {"tap": {"desc": "Add Desk Lamp to cart"}},
            {"tap": {"id": "cart_button"}},
            {"tap": {"text": "Checkout"}},
            {"finish": {"success": True, "answer": "Ordered one Desk Lamp"}},
        ],
    }
    path = dest / "fault-password.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def password_run_and_resume(fault: Fault, seed: int, timeout_s: float, password: str) -> RunRecord:
    """A session whose password is ``password`` (``A`` and ``7`` broke the old blind redaction):
    stopped by SIGTERM after the password step, resumed with $ARTEMIS_SECRET; both must succeed
    and every request of every step must re-render hash-identical (``sessions prompt``)."""
    from artemis_cli.memory.turn_check import check_turn

    with tempfile.TemporaryDirectory(prefix="artemis-fault-") as tmp_name:
        tmp = Path(tmp_name)
        task = _password_task(tmp, password, seed)
        policy = script_policy(reference_script(load_task(task)))
        with fake_server(policy) as server:
            home = tmp / "home"
            env = cli_env(home, server, **{PASSWORD_ENV: password})
            t0 = time.monotonic()
            proc = _start_run(task, env)
            sid = _wait_for_step(home, PASSWORD_STEP + 1, proc, timeout_s)
            if sid is not None:
                proc.send_signal(signal.SIGTERM)
            code, out, err, hung = _finish(proc, timeout_s)
            checks: dict[str, Any] = {"stopped_after_the_password": sid is not None}
            resume = _resume(sid, "interrupted", {**env, "ARTEMIS_SECRET": password}, timeout_s) if sid else None
            if resume is not None:
                checks["resume_finished"] = resume.get("exit_code") == 0
            if sid is not None:
                with DataEngine.open(home) as engine:
                    numbers = [s.number for s in engine.get_steps(sid)]
                    mismatched = [n for n in numbers if not check_turn(engine, sid, n).match]
                checks["steps_rerendered"] = len(numbers)
                checks["hash_mismatches"] = len(mismatched)
                checks["hashes_match"] = not mismatched
            checks["requests_refused"] = sum(1 for r in server.requests if r.status == 400)
            return _record(fault, code, out, err, hung, home, t0, signalled=int(signal.SIGTERM), resume=resume,
                           checks=checks)


def run_scenario(fault: Fault, seed: int, timeout_s: float) -> RunRecord:
    kind, _, arg = (fault.scenario or "").partition(":")
    if kind == "password":
        return password_run_and_resume(fault, seed, timeout_s, arg)
    if kind == "signal":
        return signal_mid_run(fault, seed, timeout_s, signal.Signals[arg])
    if kind == "concurrent_resume":
        return concurrent_resume(fault, seed, timeout_s)
    if kind == "disk_full":
        return disk_full(fault, seed, timeout_s)
    raise ValueError(f"unknown scenario {fault.scenario!r}")


if __name__ == "__main__":  # a scenario alone: python benchmarks/fault_scenarios.py NAME
    import fault_matrix

    rows = [run_scenario(f, 11, 90.0) for f in fault_matrix.FAULTS if f.name in sys.argv[1:]]
    print(json.dumps([r.__dict__ for r in rows], indent=2, default=str))
