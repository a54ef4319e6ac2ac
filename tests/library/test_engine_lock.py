"""Every SQL statement that writes, or opens or ends a savepoint, runs under the engine's lock —
checked on the connection itself while a Python API run's summary jobs write in the background.

sqlite-utils' ``db.query`` wraps even a read in ``SAVEPOINT``/``RELEASE``: one on the main thread
without the lock nests in a summary job's transaction and ends it (the job then fails with "no such
savepoint" and its summary is lost). Seen in a cached run of the Python API."""

from __future__ import annotations

import threading
from pathlib import Path

from library_support import SCRIPTS, SHOP_SECRETS, run_shop

from artemis_cli import Phone
from artemis_cli.config.profile import load_profile
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.fakes.gemini import FakeGeminiServer
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.offline.scripted import goal_policy
from artemis_cli.sim.phone import SimPhone

_READS = ("SELECT", "PRAGMA", "WITH", "EXPLAIN")


def test_no_statement_writes_or_nests_outside_the_lock(tmp_path: Path) -> None:
    engine = DataEngine.open(tmp_path)
    lock = engine.lock
    unlocked: list[str] = []

    def watch(statement: str) -> None:
        if not lock._is_owned() and statement.lstrip().split(" ", 1)[0].upper() not in _READS:  # type: ignore[attr-defined]
            unlocked.append(f"{threading.current_thread().name}: {statement[:100]}")

    engine.db.conn.set_trace_callback(watch)
    try:
        with FakeGeminiServer(goal_policy(SCRIPTS)) as srv:
            model = GeminiModel(["gemini-2.5-flash"], api_key="k", base_url=srv.base_url, sleep=lambda s: None,
                                backoff_s=0.0)
            for _ in range(2):  # the model's run (lens jobs), then the cached one (mechanical summaries)
                with Phone(SimPhone(), engine, load_profile("flash"), model=model, cache="shop", name="shop",
                           secrets=SHOP_SECRETS, real_time=False) as phone:
                    run_shop(phone)
                    phone.stats()
        assert phone.stats().replayed_steps == 8
    finally:
        engine.db.conn.set_trace_callback(None)
        engine.close()
    assert unlocked == []
