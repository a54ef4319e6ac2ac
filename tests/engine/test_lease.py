"""Session leases (SPEC §15): one process owns a session; a live owner is never overridden, a
dead one is taken over, and a running session nobody owns reads as interrupted.

Owners are real processes: a child Python process takes the lease through the real engine, so
"alive", "dead" and "another process" mean what they mean on a user's machine."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from artemis_cli.engine import lease as lease_mod
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.errors import SessionBusy
from artemis_cli.engine.records import SessionRecord

HOLDER = textwrap.dedent("""
    import json, sys, time
    from artemis_cli.engine.db import DataEngine
    from artemis_cli.engine.errors import SessionBusy
    engine = DataEngine.open(sys.argv[1])
    try:
        lease = engine.acquire_lease(sys.argv[2], "run")
    except SessionBusy as exc:
        print(json.dumps({"got": False, "error": str(exc), "exit_code": exc.exit_code}), flush=True)
        sys.exit(0)
    print(json.dumps({"got": True, "pid": lease.owner.pid}), flush=True)
    time.sleep(float(sys.argv[3]))
    lease.release()
""")


def _session(engine: DataEngine) -> str:
    return engine.create_session(SessionRecord(id="", task_id="t", goal="g", status="running"))


def _holder(data: Path, session_id: str, hold_s: float) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", HOLDER, str(data), session_id, str(hold_s)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _first_line(proc: subprocess.Popen[str]) -> dict[str, object]:
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line, proc.stderr.read() if proc.stderr else ""
    data: dict[str, object] = json.loads(line)
    return data


def test_a_live_owner_in_another_process_is_refused(engine: DataEngine) -> None:
    sid = _session(engine)
    holder = _holder(engine.data_dir, sid, 30)
    try:
        assert _first_line(holder)["got"] is True
        with pytest.raises(SessionBusy) as caught:
            engine.acquire_lease(sid, "resume")
        assert caught.value.exit_code == 2
        assert f"process {holder.pid}" in str(caught.value)
        assert f"kill {holder.pid}" in (caught.value.hint or "")
        assert f"artemis resume {sid}" in (caught.value.hint or "")
        assert engine.derived_status(engine.get_session(sid)) == "running"
    finally:
        holder.kill()
        holder.wait()


def test_a_dead_owner_is_taken_over_and_shows_interrupted(engine: DataEngine) -> None:
    sid = _session(engine)
    holder = _holder(engine.data_dir, sid, 30)
    assert _first_line(holder)["got"] is True
    holder.kill()  # kill -9: the lease row stays behind
    holder.wait()
    owner = engine.lease_owner(sid)
    assert owner is not None and owner.pid == holder.pid and not owner.is_live()
    assert engine.derived_status(engine.get_session(sid)) == "interrupted"
    assert [s.id for s in engine.list_sessions(status="interrupted")] == [sid]
    assert engine.list_sessions(status="running") == []
    with engine.acquire_lease(sid, "resume") as lease:
        assert lease.took_over is not None and lease.took_over.pid == holder.pid
        assert engine.derived_status(engine.get_session(sid)) == "running"
    assert engine.lease_owner(sid) is None  # released


def test_of_many_processes_asking_at_once_exactly_one_owns_the_session(engine: DataEngine) -> None:
    sid = _session(engine)
    procs = [_holder(engine.data_dir, sid, 3) for _ in range(6)]
    try:
        answers = [_first_line(p) for p in procs]
    finally:
        for p in procs:
            p.wait(timeout=30)
    winners = [a for a in answers if a["got"]]
    assert len(winners) == 1, answers
    assert all(a["exit_code"] == 2 and "is in use by process" in str(a["error"]) for a in answers if not a["got"])


def test_a_reused_pid_is_not_the_owner(engine: DataEngine) -> None:
    """The pid is alive (it is ours) but it started at another time than the lease says."""
    import os

    sid = _session(engine)
    engine.db.execute(
        "INSERT INTO session_leases VALUES (?, ?, ?, ?, 'run', 'tok', '2026-01-01T00:00:00+00:00', ?)",
        [sid, lease_mod.this_host(), os.getppid(), "another-boot:1", lease_mod.now_iso()])
    engine.db.conn.commit()
    assert lease_mod.process_start(os.getppid()) is not None  # Linux: /proc says when it started
    assert not engine.lease_owner(sid).is_live()  # type: ignore[union-attr]
    assert engine.derived_status(engine.get_session(sid)) == "interrupted"


def test_an_owner_on_another_host_lives_by_its_heartbeat(engine: DataEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    sid = _session(engine)
    fresh = lease_mod.now_iso()
    engine.db.execute("INSERT INTO session_leases VALUES (?, 'other-host', 1, NULL, 'run', 'tok', ?, ?)",
                      [sid, fresh, fresh])
    engine.db.conn.commit()
    with pytest.raises(SessionBusy) as caught:
        engine.acquire_lease(sid, "resume")
    assert "host other-host" in str(caught.value)
    assert f"{lease_mod.LEASE_TIMEOUT_S:.0f} s" in (caught.value.hint or "")
    # the same row, seen after the timeout has passed
    monkeypatch.setattr(lease_mod, "LEASE_TIMEOUT_S", 0.0)
    assert engine.derived_status(engine.get_session(sid)) == "interrupted"
    with engine.acquire_lease(sid, "resume") as lease:
        assert lease.took_over is not None and lease.took_over.host == "other-host"


def test_the_heartbeat_keeps_the_lease_fresh_and_notices_a_takeover(
    engine: DataEngine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lease_mod, "HEARTBEAT_INTERVAL_S", 0.05)
    sid = _session(engine)
    with engine.acquire_lease(sid, "run") as lease:
        first = engine.lease_owner(sid).heartbeat_at  # type: ignore[union-attr]
        deadline = time.monotonic() + 10
        while engine.lease_owner(sid).heartbeat_at == first and time.monotonic() < deadline:  # type: ignore[union-attr]
            time.sleep(0.02)
        assert engine.lease_owner(sid).heartbeat_at > first  # type: ignore[union-attr]
        engine.db.execute("UPDATE session_leases SET token = 'someone-else' WHERE session_id = ?", [sid])
        engine.db.conn.commit()
        while not lease.lost and time.monotonic() < deadline:
            time.sleep(0.02)
        assert lease.lost
    assert engine.lease_owner(sid).token == "someone-else"  # type: ignore[union-attr]  # not ours to delete


def test_a_check_reads_the_lease_again_only_after_another_connection_committed(tmp_path: Path) -> None:
    """The loop checks its lease before every write: the row is read again only when another
    connection has committed since it was last found ours (``PRAGMA data_version``); our own
    writes never make it read, another engine's write always does, and a takeover still raises."""
    from artemis_cli.engine.errors import SessionTakenOver
    from artemis_cli.engine.records import EventRecord

    engine, other = DataEngine.open(tmp_path / "d"), DataEngine.open(tmp_path / "d")
    try:
        sid = _session(engine)
        reads: list[str] = []
        engine.db.conn.set_trace_callback(lambda sql: reads.append(sql) if "session_leases" in sql else None)
        with engine.acquire_lease(sid, "run") as lease:
            reads.clear()
            lease.check()
            assert len(reads) == 1  # the first check reads the row
            for i in range(5):
                engine.record_event(EventRecord(session_id=sid, kind="x", payload={"i": i}))
                lease.check()
            assert len(reads) == 1  # our own writes: no read
            other.record_event(EventRecord(session_id=sid, kind="y"))
            lease.check()
            assert len(reads) == 2  # another connection committed: read again, still ours
            theirs = other.acquire_lease(sid, "resume")
            with pytest.raises(SessionTakenOver):
                lease.check()
            theirs.release()
    finally:
        engine.close()
        other.close()
