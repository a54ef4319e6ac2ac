"""Run a suite: cases on devices through the one scheduler (``bench.scheduler.run_items``),
retries of failed cases, each case's session imported into the user's data dir."""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from artemis_cli.plural import counted
from artemis_cli.suite.cases import Case
from artemis_cli.suite.job import CaseJob, run_case_job


def new_suite_id() -> str:
    return "suite-" + uuid.uuid4().hex[:10]


def _import_unfinished(engine: Any, items: list[Any], work: Path, suite_id: str) -> bool:
    """After Ctrl-C: bring each unfinished case's session (interrupted, resumable) into the user's
    data dir. True when one could not be imported (its work dir must then be kept)."""
    from artemis_cli.engine.bundle import import_bundle, write_bundle
    from artemis_cli.engine.db import DataEngine
    from artemis_cli.suite import store

    failed = False
    for item in items:
        if not item.work_dir.exists():
            continue
        try:
            with DataEngine.open(item.work_dir, create=False) as case_engine:
                for s in case_engine.list_sessions(limit=None):
                    bundle = work / f"{item.key}-{s.id}.zip"
                    write_bundle(case_engine, s.id, bundle)
                    import_bundle(engine, bundle)
                    key, _, attempt = item.key.rpartition("@")  # linked to the suite: sessions list --suite
                    store.record_case(engine, suite_id, key, int(attempt), s.id, "interrupted", None,
                                      "interrupted: resume it with artemis resume " + s.id)
        except Exception:
            failed = True
    return failed


#: a progress line per this many steps of a running case
STEP_LINE_EVERY = 10


def _session_jobs(engine: Any, cases: list[Case], work: Path, say: Callable[[str], None],
                  world_slots: bool = False) -> dict[str, dict[str, str]]:
    """For each session case: the session to replay and the bundles that carry it (and its promoted
    baseline) into the case's data dir. A bundle PATH is imported into the user's data dir first
    (idempotent), so its replay is linked to it there. Where each runs is said here, by the rule
    ``artemis replay`` follows (``replay.place``)."""
    from artemis_cli.engine.bundle import import_bundle, write_bundle
    from artemis_cli.replay.place import replay_place

    out: dict[str, dict[str, str]] = {}
    work.mkdir(parents=True, exist_ok=True)
    for c in cases:
        if c.kind != "session":
            continue
        sid = c.session or import_bundle(engine, Path(c.bundle)).session_id
        rec = engine.get_session(sid)
        source = work / f"{_safe(c.key)}.source.zip"
        write_bundle(engine, rec.id, source)
        job = {"session": rec.id, "source_bundle": str(source), "baseline_bundle": ""}
        chosen = replay_place(engine, rec)  # the promoted baseline a replay of ``rec`` replays, if any
        say(f"{c.key}: {chosen.text()}" + ("; on a sim:<world> device of --devices, in that world" if world_slots
                                           else ""))
        if chosen.substituted:
            baseline = work / f"{_safe(c.key)}.baseline.zip"
            write_bundle(engine, chosen.replayed, baseline)
            job["baseline_bundle"] = str(baseline)
        out[c.key] = job
    return out


def _safe(key: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_.@#" else "_" for ch in key)


def run_suite(cases: list[Case], *, model: str | None, profile: str | None, devices: Any,
              data_dir: Path, retries: int = 0, ray_address: str | None = None,
              devices_file: Path | None = None, report_dir: Path | None = None,
              say: Callable[[str], None] = lambda _t: None) -> dict[str, Any]:
    from artemis_cli.bench.scheduler import SchedulerEvents, WorkItem, run_items
    from artemis_cli.engine.bundle import import_bundle, write_bundle
    from artemis_cli.engine.db import DataEngine

    suite_id = new_suite_id()
    work = Path(tempfile.mkdtemp(prefix=f"artemis-{suite_id}-"))
    results: dict[str, dict[str, Any]] = {}
    engine = DataEngine.open(data_dir)
    from artemis_cli.suite import store

    store.start_suite(engine, suite_id, {"cases": [c.key for c in cases], "model": model, "profile": profile,
                                         "retries": retries})
    sessions = _session_jobs(engine, cases, work, say,
                             world_slots=any(str(getattr(d, "spec", "")).startswith("sim:") for d in devices or []))
    reports: dict[str, str] = {}
    shown_steps: dict[str, int] = {}

    class Show(SchedulerEvents):
        def start(self, item: WorkItem, device: str) -> None:
            say(f"{device}: start {item.label}")

        def step(self, item: WorkItem, device: str, steps: int) -> None:
            if steps // STEP_LINE_EVERY > shown_steps.get(item.key, 0) // STEP_LINE_EVERY:
                shown_steps[item.key] = steps
                say(f"{device}: {item.label} · step {steps}")

        def done(self, item: WorkItem, device: str, row: dict[str, Any]) -> None:
            key, _, attempt = item.key.rpartition("@")
            if row["session_id"] is not None:  # None: a session case whose replay could not start
                with DataEngine.open(item.work_dir) as case_engine:  # into the user's data dir
                    bundle = work / f"{_safe(item.key)}.zip"
                    write_bundle(case_engine, row["session_id"], bundle)
                import_bundle(engine, bundle)
            if report_dir is not None and row["session_id"] is not None:
                reports[key] = _write_case_report(engine, row["session_id"], report_dir, f"{_safe(key)}-{attempt}")
                row["report"] = reports[key]
            store.record_case(engine, suite_id, key, int(attempt), row["session_id"],
                              "passed" if row["passed"] else "failed", device, row.get("failure") or None)
            state = "passed" if row["passed"] else f"FAILED ({row['failure']})"
            say(f"{device}: done  {item.label} · {counted(row['steps'] or 0, 'step')} · {state}")

        def note(self, device: str, text: str) -> None:
            say(f"{device}: {text}")

    pending = [c for c in cases if not c.invalid]  # an invalid task file never runs: it fails below
    for c in cases:
        if c.invalid:
            store.record_case(engine, suite_id, c.key, 1, None, "failed", None, _invalid_failure(c))
            say(f"invalid {c.key}: {c.invalid}")
    attempt = 1
    interrupted = False
    unfinished: list[str] = []
    try:
        while pending:
            items = [WorkItem(key=f"{c.key}@{attempt}", label=c.key if attempt == 1 else f"{c.key} (retry {attempt - 1})",
                              job=CaseJob(c.task_file, model, profile, attempt, **sessions.get(c.key, {})),
                              work_dir=work / _safe(f"{c.key}@{attempt}"),
                              files=tuple(f for f in (c.task_file, *sessions.get(c.key, {}).values()) if f.endswith(
                                  (".yaml", ".yml", ".zip")))) for c in pending]
            res = run_items(items, run_case_job, devices=devices, ray_address=ray_address,
                            devices_file=devices_file, events=Show())
            again: list[Case] = []
            for c in pending:
                row = res.rows.get(f"{c.key}@{attempt}")
                if row is None:
                    unfinished.append(c.key)
                    continue
                prev = results.get(c.key)
                results[c.key] = {**row, "attempt_count": attempt, "failed_before": bool(prev)}
                if not row["passed"] and attempt <= retries:
                    again.append(c)
            if res.interrupted:
                interrupted = True
                kept = _import_unfinished(engine, [i for i in items if i.key in res.unfinished], work, suite_id)
                if kept:
                    say(f"some unfinished sessions could not be imported; their data dirs are kept under {work}")
                    work = Path(tempfile.mkdtemp(prefix="artemis-unused-"))  # the finally removes this, not them
                break
            pending, attempt = again, attempt + 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    out_cases: list[dict[str, Any]] = []
    for c in cases:
        row = results.get(c.key)
        if c.invalid:
            out_cases.append({"key": c.key, "name": c.task_id, "source": c.source, "status": "failed",
                              "flaky": False, "attempts": 0, "device": None, "session_id": None, "steps": 0,
                              "failure": _invalid_failure(c), "message": c.invalid, "kind": "invalid",
                              "task_file": c.task_file})
            continue
        if row is None:
            out_cases.append({"key": c.key, "name": c.task_id, "source": c.source, "status": "interrupted",
                              "flaky": False, "attempts": 0, "failure": "not finished"})
            continue
        flaky = row["passed"] and row["failed_before"]
        if flaky:
            store.mark_flaky(engine, suite_id, c.key, row["attempt_count"])
        out_cases.append({
            "key": c.key, "name": c.task_id, "source": c.source,
            "status": "passed" if row["passed"] else "failed", "flaky": flaky,
            "attempts": row["attempt_count"], "device": row.get("device"), "session_id": row["session_id"],
            "steps": row["steps"], "model_calls": row.get("model_calls"), "tokens": row.get("tokens"),
            "cost": row.get("cost"), "failure": row.get("failure") or None, "message": row.get("message"),
            "elapsed_s": row.get("elapsed_s"), "kind": c.kind, "report": row.get("report"),
            "replay": row.get("replay"), "app_faults": row.get("app_faults") or [],
        })
    passed = sum(1 for c in out_cases if c["status"] == "passed")
    status = "interrupted" if interrupted else ("passed" if passed == len(out_cases) else "failed")
    totals = {"cases": len(out_cases), "passed": passed,
                       "failed": sum(1 for c in out_cases if c["status"] == "failed"),
                       "flaky": sum(1 for c in out_cases if c["flaky"]),
                       "interrupted": len(unfinished),
                       "steps": sum(c.get("steps") or 0 for c in out_cases)}
    totals["cost_usd"] = _total_cost(out_cases)
    store.end_suite(engine, suite_id, status, totals)
    engine.close()
    suite = {"id": suite_id, "status": status, "cases": out_cases, "totals": totals}
    if report_dir is not None:
        from artemis_cli.suite.index import write_index

        suite["index"] = str(write_index(suite, report_dir))
    return suite


def _invalid_failure(case: Case) -> str:
    return f"invalid task file: {case.invalid}"


def _total_cost(cases: list[dict[str, Any]]) -> float | None:
    """The suite's cost in USD: None when any finished case's cost is unknown."""
    from artemis_cli.engine.token_usage import sum_cost_dicts

    return sum_cost_dicts([c.get("cost") for c in cases if c.get("session_id")])


def _write_case_report(engine: Any, session_id: str, report_dir: Path, name: str) -> str:
    from artemis_cli.report.html import write_report

    report_dir.mkdir(parents=True, exist_ok=True)
    return str(write_report(engine, session_id, report_dir / f"{name}.html"))
