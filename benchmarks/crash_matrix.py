"""Crash matrix (SPEC §5 invariants, §10.6): SIGKILL a long run at many seeded points, resume each time.

One long task runs as ``artemis run`` with the gemini operator (the real google-genai SDK) against
the fake Gemini server, which lives in *this* process and so survives every kill. At each of
``--points`` seeded points the runner (``artemis run`` or ``artemis resume``) is killed with
SIGKILL and then ``artemis resume SESSION`` continues it. A point is either

* a *step* point: wait until the DB shows a seeded target number of steps (always at least one
  more than when that process started), then a seeded 0–400 ms delay, so the kill lands anywhere
  in a step (observe, compression, model call, action, blob write, transaction, lens summaries);
* a *resume* point (about one in five, never the first): kill a resume process a seeded fraction
  of the way through its start-up (import, fast-forward of the simulated phone, transcript
  rebuild), measured from earlier resumes.

After every kill (no process running) it checks: every step seen committed before the kill is
still there unchanged (``lost``), step numbers are 1…n with no repeat (``duplicated``),
``PRAGMA integrity_check`` (``integrity_failures``) and blobs referenced but absent
(``missing_blobs``). A resume that ends on its own with a non-zero exit or prints a traceback, or
makes no progress for 60 s, is ``unresumable``. When the task finishes before all points are
used, a fresh session of the same task is started (``sessions_used``).

    python benchmarks/crash_matrix.py --points 50 --json [--seed 0] [--task PATH] [--keep]

Prints one JSON object (with ``--json``) or a short table: the five counts (all expected 0),
points, kills_done, seed, task, session_id, status, success, steps, sessions_used, elapsed_s and
``prompt_mismatches`` (turns next to each kill whose request, re-rendered from the DB as
``artemis sessions prompt`` does, differs from the one sent) and ``kills`` (per kill: process, target, steps at the kill, delay, approximate phase — read from the
DB a few ms before the kill — and pending summaries).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from artemis_cli.bench.crash_check import StepSnap, compare, merge, read_only, snapshot  # noqa: E402
from artemis_cli.config.task import Task, load_task  # noqa: E402
from artemis_cli.engine.db import DataEngine  # noqa: E402
from artemis_cli.engine.health import integrity_problems, missing_blobs  # noqa: E402
from artemis_cli.models.fakes.gemini import FakeGeminiServer  # noqa: E402
from artemis_cli.models.offline.scripted import script_policy  # noqa: E402
from artemis_cli.models.registry import reference_script  # noqa: E402

DEFAULT_TASK = REPO / "tasks" / "bench" / "bench-long-recall.yaml"  # 208 reference steps
MAX_DELAY_S = 0.4
RESUME_SHARE = 0.2
STALL_S = 60.0
FINAL_TIMEOUT_S = 600.0
POLL_S = 0.02


@dataclass
class Kill:
    point: int
    process: str  # run | resume
    mode: str  # step | resume
    target: int
    steps_at_kill: int
    delay_s: float
    phase: str
    pending_summaries: int
    session_id: str


@dataclass
class Report:
    points: int
    seed: int
    task: str
    lost: int = 0
    duplicated: int = 0
    unresumable: int = 0
    integrity_failures: int = 0
    missing_blobs: int = 0
    kills_done: int = 0
    session_id: str = ""
    sessions_used: int = 0
    status: str = ""
    success: bool = False
    steps: int = 0
    tracebacks: int = 0
    prompt_mismatches: int = 0  # SPEC §5 inv. 4: turns around each kill re-render to the sent request
    resume_window_s: float = 0.0
    elapsed_s: float = 0.0
    data_dir: str = ""
    problems: list[str] = field(default_factory=list)
    kills: list[Kill] = field(default_factory=list)


@dataclass
class Proc:
    kind: str  # run | resume
    popen: subprocess.Popen[bytes]
    started: float
    log: Path
    steps_at_start: int
    resume_events_at_start: int
    ff_events_at_start: int
    session: str | None = None  # a run's session is known once its row appears


class Probe:
    """Read-only look at the DB (short timeouts, no lock held between reads)."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self._conn: sqlite3.Connection | None = None

    def _c(self) -> sqlite3.Connection | None:
        if self._conn is None:
            if not self.db.exists():
                return None
            try:
                self._conn = read_only(self.db, timeout_s=0.2)
            except sqlite3.Error:
                return None
        return self._conn

    def one(self, sql: str, params: list[Any]) -> Any:
        conn = self._c()
        if conn is None:
            return None
        try:
            row = conn.execute(sql, params).fetchone()
        except sqlite3.Error:
            self.close()
            return None
        return row[0] if row else None

    def newest_session(self, exclude: set[str]) -> str | None:
        conn = self._c()
        if conn is None:
            return None
        try:
            rows = conn.execute("SELECT id FROM sessions ORDER BY started_at DESC, id DESC").fetchall()
        except sqlite3.Error:
            self.close()
            return None
        return next((r[0] for r in rows if r[0] not in exclude), None)

    def steps(self, sid: str) -> int:
        return int(self.one("SELECT count(*) FROM steps WHERE session_id = ?", [sid]) or 0)

    def events(self, sid: str, kind: str) -> int:
        return int(self.one("SELECT count(*) FROM events WHERE session_id = ? AND kind = ?", [sid, kind]) or 0)

    def phase(self, proc: Proc, sid: str | None) -> tuple[str, int]:
        """(approximate phase, pending summaries) right now."""
        if sid is None:
            return "run:startup", 0
        pending = int(self.one("SELECT count(*) FROM steps WHERE session_id = ? AND summary_status = 'pending'",
                               [sid]) or 0)
        if proc.kind == "resume" and self.events(sid, "resume") <= proc.resume_events_at_start:
            if self.events(sid, "fast_forward") <= proc.ff_events_at_start:
                return "resume:load+fast_forward", pending
            return "resume:rebuild", pending
        n = int(self.one("SELECT max(number) FROM steps WHERE session_id = ?", [sid]) or 0)
        nxt = n + 1
        if not self.one("SELECT 1 FROM events WHERE session_id = ? AND kind = 'ledger' AND step = ? LIMIT 1",
                        [sid, nxt]):
            return "step:observe+compress", pending
        if not self.one("SELECT 1 FROM llm_calls WHERE session_id = ? AND role = 'operator' AND step = ? LIMIT 1",
                        [sid, nxt]):
            return "step:model_call", pending
        return "step:act+commit", pending

    def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None


def password_text(task: Task) -> str | None:
    """The text the reference types into a password field: the user knows it, run and resume need
    it (typed passwords are stored redacted; a task's secret and fast-forward read
    ``$ARTEMIS_SECRET``)."""
    for action in reference_script(task):
        typed = action.get("type")
        if isinstance(typed, dict) and "password" in json.dumps(typed.get("into") or {}):
            if typed.get("secret"):  # one of the task's secrets: the simulated Shop's demo password
                from artemis_cli.sim.worlds.shop import PASSWORD

                return PASSWORD
            return str(typed.get("text"))
    return None


def plan_points(rng: random.Random, points: int, reference_steps: int) -> list[tuple[str, int, float]]:
    """(mode, target step count, delay or fraction) per point, all seeded."""
    modes = ["step" if i == 0 or rng.random() >= RESUME_SHARE else "resume" for i in range(points)]
    n_step = modes.count("step")
    lo, hi = 2, max(3, reference_steps - 2)
    pool = list(range(lo, hi))
    targets = sorted(rng.sample(pool, n_step) if n_step <= len(pool) else rng.choices(pool, k=n_step))
    out: list[tuple[str, int, float]] = []
    it = iter(targets)
    for mode in modes:
        if mode == "step":
            out.append((mode, next(it), round(rng.uniform(0.0, MAX_DELAY_S), 3)))
        else:
            out.append((mode, 0, round(rng.uniform(0.05, 1.1), 3)))
    return out


class Matrix:
    def __init__(self, task_path: Path, points: int, seed: int, work: Path) -> None:
        self.task_path = task_path
        self.task = load_task(task_path)
        self.points = points
        self.seed = seed
        self.work = work
        self.home = work / "home"
        self.logs = work / "logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.probe = Probe(self.home / "artemis.db")
        self.report = Report(points=points, seed=seed, task=str(task_path.relative_to(REPO)
                                                                if task_path.is_relative_to(REPO) else task_path),
                             data_dir=str(self.home))
        self.known: dict[str, dict[int, StepSnap]] = {}
        self.lost: set[tuple[str, int]] = set()
        self.dups: set[tuple[str, int]] = set()
        self.missing: set[str] = set()
        self.windows: list[float] = []
        self.sessions: list[str] = []
        self.n_procs = 0
        self.env: dict[str, str] = {}

    # -- processes --------------------------------------------------------------------------

    def _spawn(self, kind: str, args: list[str]) -> Proc:
        self.n_procs += 1
        log = self.logs / f"{self.n_procs:03d}-{kind}.log"
        sid = self.sessions[-1] if kind == "resume" else None
        with log.open("wb") as out:
            popen = subprocess.Popen([sys.executable, "-m", "artemis_cli", *args], cwd=REPO, env=self.env,
                                     stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        return Proc(kind, popen, time.monotonic(), log,
                    self.probe.steps(sid) if sid else 0,
                    self.probe.events(sid, "resume") if sid else 0,
                    self.probe.events(sid, "fast_forward") if sid else 0,
                    sid)

    def _run(self) -> Proc:
        return self._spawn("run", ["run", str(self.task_path), "--model", "gemini", "--no-live", "--json"])

    def _resume(self) -> Proc:
        return self._spawn("resume", ["resume", self.sessions[-1], "--json", "--no-live"])

    def _session(self, proc: Proc) -> str | None:
        """The runner's session id (a new run's, once its row exists)."""
        if proc.session is None:
            proc.session = self.probe.newest_session(set(self.sessions))
            if proc.session is not None:
                self.sessions.append(proc.session)
                self.report.sessions_used = len(self.sessions)
        return proc.session

    def _traceback(self, proc: Proc) -> bool:
        return b"Traceback (most recent call last)" in proc.log.read_bytes()

    # -- checks after a kill (no runner alive) --------------------------------------------

    def _check(self) -> int:
        """Compare, integrity and blobs; returns the current step count."""
        self.probe.close()
        with DataEngine.open(self.home) as engine:
            problems = integrity_problems(engine)
            if problems:
                self.report.integrity_failures += 1
                self.report.problems.append("integrity: " + "; ".join(problems)[:300])
            self.missing.update(missing_blobs(engine))
        self.report.missing_blobs = len(self.missing)
        steps = 0
        with contextlib.closing(read_only(self.home / "artemis.db", timeout_s=2.0)) as conn:
            for sid in self.sessions:
                after = snapshot(conn, sid)
                known = self.known.setdefault(sid, {})
                diff = compare(known.values(), after)
                self.lost.update((sid, n) for n in diff.lost)
                self.dups.update((sid, n) for n in diff.duplicated)
                merge(known, after)
                steps = len(after)
        self.report.lost, self.report.duplicated = len(self.lost), len(self.dups)
        return steps

    def _kill(self, proc: Proc) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.popen.pid, signal.SIGKILL)
        proc.popen.wait()
        if proc.popen.returncode == -signal.SIGKILL and self._traceback(proc):  # else _ended counts it
            self.report.tracebacks += 1
            self.report.problems.append(f"traceback before the kill in {proc.log.name}")

    def _status(self, sid: str) -> str:
        with contextlib.closing(read_only(self.home / "artemis.db", timeout_s=2.0)) as conn:
            row = conn.execute("SELECT status FROM sessions WHERE id = ?", [sid]).fetchone()
        return str(row[0]) if row else ""

    def _ended(self, proc: Proc) -> str:
        """A runner ended on its own: 'finished' (session over) or 'failed' (counted)."""
        rc = proc.popen.wait()
        tb = self._traceback(proc)
        if rc == 0 and not tb:
            return "finished"
        sid = self.sessions[-1] if self.sessions else None
        status = self._status(sid) if sid else ""
        if rc == 1 and not tb and status == "failed":
            self.report.problems.append(f"{proc.log.name}: the task failed its success checks")
            return "finished"
        if proc.kind == "resume":
            self.report.unresumable += 1
        if tb:
            self.report.tracebacks += 1
        tail = proc.log.read_text(errors="replace")[-600:]
        self.report.problems.append(f"{proc.log.name} exited {rc}: {tail}")
        return "failed"

    # -- the matrix -------------------------------------------------------------------------

    def _wait(self, proc: Proc, mode: str, target: int, delay: float) -> tuple[str, int]:
        """Wait for the kill moment. Returns ('kill', target) or ('ended'|'stalled', 0)."""
        if mode == "resume":
            window = statistics.median(self.windows) if self.windows else 3.0
            deadline = proc.started + delay * window
            while time.monotonic() < deadline:
                if proc.popen.poll() is not None:
                    return "ended", 0
                time.sleep(POLL_S)
            return "kill", self.probe.steps(proc.session or "")
        last_progress, last_n = time.monotonic(), -1
        want = max(target, proc.steps_at_start + 1)
        window_seen = proc.kind != "resume"
        while True:
            if proc.popen.poll() is not None:
                return "ended", 0
            sid = self._session(proc)
            n = self.probe.steps(sid) if sid else 0
            if not window_seen and sid and self.probe.events(sid, "resume") > proc.resume_events_at_start:
                self.windows.append(time.monotonic() - proc.started)
                window_seen = True
            if n != last_n:
                last_n, last_progress = n, time.monotonic()
            if n >= want:
                break
            if time.monotonic() - last_progress > STALL_S:
                return "stalled", 0
            time.sleep(POLL_S)
        end = time.monotonic() + delay
        while time.monotonic() < end:
            if proc.popen.poll() is not None:
                return "ended", 0
            time.sleep(0.005)
        return "kill", want

    def run(self) -> Report:
        t0 = time.monotonic()
        rng = random.Random(self.seed)
        plan = plan_points(rng, self.points, len(self.task.reference) or self.task.max_steps)
        secret = password_text(self.task)
        with FakeGeminiServer(script_policy(reference_script(self.task))) as server:
            self.env = {**os.environ, "ARTEMIS_HOME": str(self.home), "GEMINI_API_KEY": "crash-matrix-key",
                        "ARTEMIS_GEMINI_BASE_URL": server.base_url, "PYTHONUNBUFFERED": "1"}
            if secret is not None:
                self.env["ARTEMIS_SECRET"] = secret
            runs = 1
            proc = self._run()
            failures_in_a_row = 0
            i = 0
            while i < len(plan):
                mode, target, delay = plan[i]
                if mode == "resume" and proc.kind != "resume":
                    mode, target, delay = "step", 0, round(delay * MAX_DELAY_S / 1.1, 3)
                state, at = self._wait(proc, mode, target, delay)
                phase, pending = "", 0
                if state == "kill":
                    phase, pending = self.probe.phase(proc, self._session(proc))
                    self._kill(proc)
                    if proc.popen.returncode != -signal.SIGKILL:  # it ended on its own just before
                        state = "ended"
                if state == "ended":
                    outcome = self._ended(proc)
                    self._check()
                    if outcome == "finished":
                        # the task is over before all points were used: a fresh session
                        runs += 1
                        plan[i:] = plan_points(random.Random(self.seed + runs), len(plan) - i,
                                               len(self.task.reference) or self.task.max_steps)
                        proc = self._run()
                        continue
                    failures_in_a_row += 1
                    if failures_in_a_row >= 3:
                        self.report.problems.append("three failed resumes in a row: stopping the matrix")
                        break
                    proc = self._resume() if self.sessions else self._run()
                    continue
                if state == "stalled":
                    if proc.kind == "resume":
                        self.report.unresumable += 1
                    self.report.problems.append(f"{proc.log.name}: no new step for {STALL_S:.0f} s")
                    self._kill(proc)
                    self._check()
                    proc = self._resume()
                    continue
                failures_in_a_row = 0
                sid = self._session(proc)  # the row may have appeared in the last milliseconds
                steps = self._check()
                self.report.kills.append(Kill(i + 1, proc.kind, mode, at, steps, delay, phase, pending, sid or ""))
                self.report.kills_done += 1
                i += 1
                if sid and self._status(sid) == "running":
                    proc = self._resume()
                else:  # killed before the session row existed, or after the session was closed
                    proc = self._run()  # (the runner was cleaning up): nothing to resume, start again
            # the last runner goes to the end of the task
            deadline = time.monotonic() + FINAL_TIMEOUT_S
            while proc.popen.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)
            if proc.popen.poll() is None:
                self._kill(proc)
                self.report.problems.append(f"{proc.log.name}: did not finish in {FINAL_TIMEOUT_S:.0f} s")
                if proc.kind == "resume":
                    self.report.unresumable += 1
            else:
                self._ended(proc)
            self._check()
        self.probe.close()
        self._final()
        self.report.resume_window_s = round(statistics.median(self.windows), 2) if self.windows else 0.0
        self.report.elapsed_s = round(time.monotonic() - t0, 1)
        return self.report

    def _final(self) -> None:
        if not self.sessions:
            return
        from artemis_cli.memory.turn_check import check_turn

        with DataEngine.open(self.home) as engine:
            for sid in self.sessions:
                last = engine.last_step_number(sid)
                around = sorted({n for k in self.report.kills if k.session_id == sid
                                 for n in (k.steps_at_kill, k.steps_at_kill + 1) if 1 <= n <= last})
                for n in around:
                    if not check_turn(engine, sid, n).match:
                        self.report.prompt_mismatches += 1
                        self.report.problems.append(f"session {sid} step {n}: re-rendered request differs")
            rec = engine.get_session(self.sessions[-1])
            self.report.session_id = rec.id
            self.report.status = rec.status
            self.report.success = bool((rec.result or {}).get("success"))
            self.report.steps = engine.last_step_number(rec.id)


def _table(report: Report) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    table = Table(title=f"crash matrix · {report.task} · seed {report.seed}")
    table.add_column("check")
    table.add_column("count", justify="right")
    for key in ("lost", "duplicated", "unresumable", "integrity_failures", "missing_blobs"):
        value = getattr(report, key)
        table.add_row(key, f"[{'green' if value == 0 else 'red'}]{value}[/]")
    console.print(table)
    console.print(f"kills {report.kills_done}/{report.points} · sessions {report.sessions_used} · "
                  f"session {report.session_id} {report.status} success={report.success} · steps {report.steps} "
                  f"· elapsed {report.elapsed_s} s")
    for problem in report.problems:
        console.print(f"[yellow]! {problem}[/]", markup=True, highlight=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0] if __doc__ else None)
    parser.add_argument("--points", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--task", type=Path, default=DEFAULT_TASK)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--verbose", action="store_true", help="list every kill in the table output")
    parser.add_argument("--keep", action="store_true", help="keep the data dir and runner logs")
    args = parser.parse_args(argv)
    if args.points < 1:
        parser.error("--points must be at least 1")
    work = Path(tempfile.mkdtemp(prefix="artemis-crash-"))
    try:
        report = Matrix(args.task.resolve(), args.points, args.seed, work).run()
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if not args.keep:
        report.data_dir = ""
    if args.json:
        print(json.dumps(asdict(report), indent=2))
    else:
        _table(report)
        if args.verbose:
            for k in report.kills:
                print(f"  #{k.point:>2} {k.process:<6} {k.mode:<6} steps={k.steps_at_kill:<4} "
                      f"delay={k.delay_s:<6} {k.phase} pending={k.pending_summaries}")
    bad = report.lost + report.duplicated + report.unresumable + report.integrity_failures + report.missing_blobs
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
