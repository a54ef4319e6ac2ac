"""An engine a command never closed is closed at interpreter exit, so the WAL is checkpointed
into artemis.db and -wal/-shm are removed (a copied data dir is then one file plus blobs/)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

LEAKS_ITS_ENGINE = textwrap.dedent("""
    import sys, threading, time
    from artemis_cli.engine.db import DataEngine

    engine = DataEngine.open(sys.argv[1])
    engine.db["probe"].insert({"a": 1})

    def hold(kept=engine):  # a daemon thread's frame is never freed: nor is its connection
        time.sleep(60)

    threading.Thread(target=hold, daemon=True).start()
""")


def test_an_unclosed_engine_is_checkpointed_at_exit(tmp_path: Path) -> None:
    data = tmp_path / "data"
    proc = subprocess.run([sys.executable, "-c", LEAKS_ITS_ENGINE, str(data)], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert sorted(p.name for p in data.iterdir()) == ["artemis.db", "blobs"]
    import sqlite3

    conn = sqlite3.connect(f"file:{data / 'artemis.db'}?mode=ro&immutable=1", uri=True)
    assert conn.execute("SELECT a FROM probe").fetchall() == [(1,)]  # the write is in the main file
    conn.close()
