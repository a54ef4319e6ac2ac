"""Runs the tests share: the demo task on the fake Gemini server through the real SDK."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from artemis_cli.config.profile import load_profile
from artemis_cli.config.task import SimOptions, load_task
from artemis_cli.device.select import sim_for
from artemis_cli.engine.db import DataEngine
from artemis_cli.models.fakes.gemini import FakeGeminiServer
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.offline.scripted import script_policy
from artemis_cli.models.registry import reference_script
from artemis_cli.runner import RunResult, run_task
from artemis_cli.sim.phone import SimPhone
from artemis_cli.stopping import StopRequested

REPO = Path(__file__).resolve().parent.parent


@contextlib.contextmanager
def demo_on_fake_gemini(data: Path, wrap: Callable[[Any], Any]) -> Iterator[tuple[RunResult, DataEngine, FakeGeminiServer]]:
    """tasks/demo.yaml run on the fake Gemini server through the real SDK, the server playing the
    task's reference solution through ``wrap(policy)``: (result, engine, server) while it is up."""
    task = load_task(REPO / "tasks" / "demo.yaml")
    with FakeGeminiServer(wrap(script_policy(reference_script(task))), min_cacheable_tokens=256) as srv:
        model = GeminiModel(["gemini-2.5-flash"], api_key="k", base_url=srv.base_url, sleep=lambda s: None,
                            backoff_s=0.0)
        engine = DataEngine.open(data)
        result = run_task(task, load_profile("flash"), sim_for(SimOptions(world=task.sim.world, seed=task.sim.seed)), model, engine, real_time=False)
        yield result, engine, srv


class Stderr:
    """Reads a process's stderr as it comes; ``wait_for(text)`` waits until a line holds it."""

    def __init__(self, proc: subprocess.Popen[str]) -> None:
        self.lines: list[str] = []
        self._changed = threading.Condition()
        self._done = False
        self._thread = threading.Thread(target=self._read, args=(proc,), daemon=True)
        self._thread.start()

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            with self._changed:
                self.lines.append(line)
                self._changed.notify_all()
        with self._changed:
            self._done = True
            self._changed.notify_all()

    def wait_for(self, text: str, timeout_s: float = 60) -> None:
        """Until a line holds ``text`` (AssertionError when the stream ends or time runs out first)."""
        with self._changed:
            self._changed.wait_for(lambda: self._done or any(text in ln for ln in self.lines), timeout_s)
            seen = any(text in ln for ln in self.lines)
        assert seen, f"{text!r} never on stderr:\n{''.join(self.lines)}"

    def text(self) -> str:
        """Everything, once the stream has ended (the process exited)."""
        self._thread.join(60)
        return "".join(self.lines)

    def finish(self, proc: subprocess.Popen[str], timeout_s: float = 120) -> tuple[str, str]:
        """(stdout, stderr) once ``proc`` has exited; ``communicate()`` would take the reader's lines."""
        assert proc.stdout is not None
        out = proc.stdout.read()
        proc.wait(timeout_s)
        return out, self.text()


def stop_begun(service: Any, bound_s: float) -> threading.Thread:
    """``service.stop(bound_s)`` (a StepMemoryService) in a thread of its own, returned once the
    stop has begun: it takes no job any more and waits for the running ones."""
    stopper = threading.Thread(target=service.stop, args=(bound_s,), name="test-stopper")
    stopper.start()
    begun = threading.Event()
    while not service._pool.stopping:
        assert stopper.is_alive(), "the stop ended before it was seen to begin"
        begun.wait(0.005)
    return stopper


class StopAtSecondTap(SimPhone):
    """A simulated phone at whose second tap a stop signal (SIGINT) lands, once ``before()`` has
    run (what must be true when it lands)."""

    def __init__(self, before: Callable[[], object], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.before, self.taps_seen = before, 0

    def tap(self, x: int, y: int) -> None:
        self.taps_seen += 1
        if self.taps_seen == 2:
            self.before()
            raise StopRequested(signal.SIGINT)
        super().tap(x, y)
