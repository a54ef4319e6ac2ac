"""The process ``rss.py`` measures: ``python -m artemis_cli ARGS``, plus what it reports at exit.

Runs the CLI exactly as ``python -m artemis_cli`` does (``runpy``, same argv), then, however it
exits, writes the process's in-memory caches (``artemis_cli.perception.bytecache.cache_stats``:
entries, bytes, bound) as JSON to ``$ARTEMIS_RSS_STATS``. With ``$ARTEMIS_RSS_TRACEMALLOC`` set to
a directory, tracemalloc traces every allocation (``$ARTEMIS_RSS_TRACE_FRAMES`` frames, 1 by
default) and each SIGUSR1 from ``rss.py``
dumps a snapshot there (``snap-<n>.tm``): the parent diffs the first against the last to name
what grows. Tracing costs time and memory, so RSS figures of a traced run are not comparable.
"""

from __future__ import annotations

import json
import os
import runpy
import signal
import sys
import threading
from pathlib import Path
from typing import Any

STATS = os.environ.pop("ARTEMIS_RSS_STATS", "")
TRACE_DIR = os.environ.pop("ARTEMIS_RSS_TRACEMALLOC", "")
TRACE_FRAMES = int(os.environ.pop("ARTEMIS_RSS_TRACE_FRAMES", "1") or 1)


def _write_stats() -> None:
    if not STATS:
        return
    from artemis_cli.perception.bytecache import cache_stats

    Path(STATS).write_text(json.dumps(cache_stats(), indent=2) + "\n")


def _start_tracing(where: Path) -> None:
    import tracemalloc

    tracemalloc.start(TRACE_FRAMES)
    count = 0
    lock = threading.Lock()

    def snap(signum: int, frame: Any) -> None:
        nonlocal count
        with lock:
            count += 1
            tracemalloc.take_snapshot().dump(str(where / f"snap-{count}.tm"))
            (where / f"snap-{count}.done").touch()

    signal.signal(signal.SIGUSR1, snap)


def main() -> None:
    if TRACE_DIR:
        _start_tracing(Path(TRACE_DIR))
    sys.argv = ["artemis", *sys.argv[1:]]
    try:
        runpy.run_module("artemis_cli", run_name="__main__", alter_sys=True)
    finally:
        _write_stats()


if __name__ == "__main__":
    main()
