"""Session leases: one process owns a session at a time (SPEC §15).

``run``, ``resume`` and ``replay`` take a lease on their session before they touch the device:
one row in ``session_leases`` naming the owner (host, pid, the pid's start time) and a
heartbeat. The row is checked and written inside one ``BEGIN IMMEDIATE`` transaction, so of
two processes asking at once exactly one gets it. A lease is *live* when

- its owner is on this host: the pid exists and started when the lease says (a reused pid
  is not the owner);
- its owner is on another host (a shared data dir): its heartbeat is younger than
  ``LEASE_TIMEOUT_S``.

A live lease is never overridden; a dead one (the owner was killed, crashed, or its host
went away) is taken over. A ``running`` session whose lease is dead is shown as
``interrupted`` (``derived_status``).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .clock import now_iso, parse_iso, utc_now
from .errors import SessionBusy, SessionTakenOver
from .records import MCP_LOOP, continue_command
from .rows import select_rows
from .transaction import write_transaction

if TYPE_CHECKING:
    from .db import DataEngine
    from .records import SessionStatus

#: A heartbeat is written this often while a lease is held.
HEARTBEAT_INTERVAL_S = 10.0
#: An owner on another host whose heartbeat is older than this is taken to be gone.
LEASE_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class LeaseOwner:
    """Who holds (or held) a session's lease, as stored."""

    session_id: str
    host: str
    pid: int
    started: str | None
    command: str
    token: str
    acquired_at: str
    heartbeat_at: str

    @property
    def heartbeat_age_s(self) -> float:
        return max(0.0, (utc_now() - parse_iso(self.heartbeat_at)).total_seconds())

    def is_live(self) -> bool:
        if self.host == this_host():
            return process_matches(self.pid, self.started)
        return self.heartbeat_age_s < LEASE_TIMEOUT_S

    def describe(self) -> str:
        where = "this host" if self.host == this_host() else f"host {self.host}"
        return (f"process {self.pid} on {where} (artemis {self.command}, since {self.acquired_at}, "
                f"heartbeat {self.heartbeat_age_s:.0f} s ago)")


def this_host() -> str:
    return socket.gethostname()


def process_start(pid: int) -> str | None:
    """A stable identity for the process ``pid``: boot id + start time in clock ticks (Linux),
    None where /proc does not say (the pid alone is then trusted)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None
    # field 22 (starttime) counts from after the command name, which may hold spaces and ')'
    fields = stat[stat.rfind(")") + 2:].split()
    return f"{boot}:{fields[19]}" if len(fields) > 19 else None


def process_matches(pid: int, started: str | None) -> bool:
    """True when ``pid`` is alive on this host and is the process that took the lease."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, owned by another user
    if started is None:
        return True
    now = process_start(pid)
    return now is None or now == started


def _row_to_owner(row: dict[str, Any]) -> LeaseOwner:
    return LeaseOwner(session_id=row["session_id"], host=row["owner_host"], pid=int(row["owner_pid"]),
                      started=row["owner_started"], command=row["command"], token=row["token"],
                      acquired_at=row["acquired_at"], heartbeat_at=row["heartbeat_at"])


def read_owner(conn: sqlite3.Connection, session_id: str) -> LeaseOwner | None:
    rows = select_rows(conn, "SELECT * FROM session_leases WHERE session_id = ?", [session_id])
    return _row_to_owner(rows[0]) if rows else None


def busy_error(owner: LeaseOwner) -> SessionBusy:
    then = continue_command(owner.session_id, MCP_LOOP if owner.command == MCP_LOOP else None)
    if owner.host == this_host():
        hint = f"wait for it to end, or stop it (kill {owner.pid}) and take over with `{then}`"
    else:
        hint = (f"stop it on {owner.host}; if that host is gone, the lease lapses {LEASE_TIMEOUT_S:.0f} s after "
                f"its last heartbeat, then `{then}` takes over")
    return SessionBusy(f"session {owner.session_id} is in use by {owner.describe()}", hint=hint)


class Lease:
    """A held lease. ``release()`` gives it back; a heartbeat thread keeps it fresh meanwhile.
    ``lost`` turns true if another process took the session over (our heartbeat had lapsed);
    ``check()`` raises then, so the loop stops acting on the device and writing the session."""

    def __init__(self, engine: DataEngine, owner: LeaseOwner, took_over: LeaseOwner | None) -> None:
        self.engine = engine
        self.owner = owner
        self.took_over = took_over  # the dead owner this lease replaced, if any
        self.lost = False
        self.taken_by: LeaseOwner | None = None  # who owns the session since ours was lost
        #: ``engine.data_version()`` when the stored lease was last read and found ours (None: not
        #: yet): while it is unchanged no other connection has committed, so the row is as read
        self._verified_at: int | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, name="artemis-lease", daemon=True)
        self._thread.start()

    @property
    def session_id(self) -> str:
        return self.owner.session_id

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_INTERVAL_S):
            try:
                if not self.engine.heartbeat_lease(self.owner):
                    self.lost = True
                    return
            except Exception:  # a full disk or a closed engine: the lease ages, nothing else
                continue

    def check(self) -> None:
        """Raise ``SessionTakenOver`` when the session is no longer ours: the heartbeat saw it, or
        the stored lease now carries another token (read now: a takeover is seen at once, not
        at the next heartbeat). The loop calls this before every device action and step write.
        A read that fails (a locked or vanished data dir) is no evidence: the heartbeat decides.

        Cheap: the row is read again only when another connection has committed since it was
        last found ours (SQLite's ``data_version``; this process's own writes never change the
        lease row to another owner), so a takeover — a commit by the process taking over — is
        still seen by the very next check. The version is read before the row: a takeover
        committed between the two changes the version the next check compares with."""
        if not self.lost:
            try:
                version = self.engine.data_version()
                if version == self._verified_at:
                    return
                owner = self.engine.lease_owner(self.session_id)
            except Exception:
                return
            if owner is not None and owner.token == self.owner.token:
                self._verified_at = version
                return
            self.lost, self.taken_by = True, owner
        by = f"by {self.taken_by.describe()}" if self.taken_by is not None else "by another process"
        raise SessionTakenOver(
            f"session {self.session_id} was taken over {by}; this process stopped before its next "
            "device action and wrote nothing more to the session",
            hint=f"follow it with `artemis sessions show {self.session_id}`")

    def release(self) -> None:
        """Stop the heartbeat and delete the row if it is still ours. Never raises."""
        self._stop.set()
        with contextlib.suppress(Exception):  # dead-owner detection covers a row left behind
            self.engine.release_lease(self.owner)

    def __enter__(self) -> Lease:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def acquire(db: Any, session_id: str, command: str) -> tuple[LeaseOwner, LeaseOwner | None]:
    """Take the lease on ``session_id`` for this process, atomically. Returns (ours, the dead
    owner taken over or None); raises ``SessionBusy`` when a live owner holds it."""
    now = now_iso()
    pid = os.getpid()
    mine = LeaseOwner(session_id=session_id, host=this_host(), pid=pid, started=process_start(pid),
                      command=command, token=secrets.token_hex(8), acquired_at=now, heartbeat_at=now)
    with write_transaction(db):
        previous = read_owner(db.conn, session_id)
        if previous is not None and previous.is_live() and not (
                previous.host == mine.host and previous.pid == mine.pid):
            raise busy_error(previous)
        db.execute(
            "INSERT OR REPLACE INTO session_leases (session_id, owner_host, owner_pid, owner_started, command,"
            " token, acquired_at, heartbeat_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [session_id, mine.host, mine.pid, mine.started, command, mine.token, now, now],
        )
    return mine, previous


def heartbeat(db: Any, owner: LeaseOwner) -> bool:
    """Refresh ``owner``'s heartbeat; False when the lease is no longer theirs."""
    with write_transaction(db):
        cur = db.execute("UPDATE session_leases SET heartbeat_at = ? WHERE session_id = ? AND token = ?",
                         [now_iso(), owner.session_id, owner.token])
        return bool(cur.rowcount == 1)


def release(db: Any, owner: LeaseOwner) -> None:
    with write_transaction(db):
        db.execute("DELETE FROM session_leases WHERE session_id = ? AND token = ?", [owner.session_id, owner.token])


def derived_status(status: SessionStatus, owner: LeaseOwner | None) -> SessionStatus:
    """What a user should be shown: a ``running`` session nobody owns any more stopped without
    saying so (kill -9, a crash, a lost host) and is ``interrupted``."""
    if status == "running" and (owner is None or not owner.is_live()):
        return "interrupted"
    return status
