"""Background jobs a stop can end cleanly (issue 35): the step and chunk summaries made beside the
operator loop.

Every way a run stops (a signal, a lost lease, a budget stop, a device drop, a model failure, the
end of the task) first calls :meth:`BackgroundJobs.stop`, then writes the final status, then closes
the DataEngine. ``stop(bound_s)`` takes no new job, cancels the queued ones, waits up to
``bound_s`` for the running ones and *cuts off* those still running. A job writes only inside
:meth:`BackgroundJobs.commit`, which holds the stop's gate: once ``stop`` returns, no job is
writing and none will start to, so the engine can close under them.

A job's model calls are recorded with its result, not before (:func:`defer_write`, used by
``operators.roles.call_recorder``): a job cut off leaves nothing behind but its ``pending`` row, which
``artemis resume`` redoes, so the summary exists once and its model call is recorded once.

Workers are daemon threads: a job cut off while its model call is in flight does not hold the
process at exit (a ``ThreadPoolExecutor`` would join it). A job that fails unexpectedly is one
log line naming the job (its full traceback only with ``ARTEMIS_DEBUG=1``); a job cut off, or
failing because it was, is silent.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from artemis_cli.engine.storage import log_failure

__all__ = ["BackgroundJobs", "JobCutOff", "defer_write"]

log = logging.getLogger(__name__)


class JobCutOff(Exception):
    """A stop cut this job off: it writes nothing more (its work stays ``pending``)."""


@dataclass(eq=False)
class _Job:
    label: str
    call: Callable[[], None]
    owner: BackgroundJobs
    future: Future[None] = field(default_factory=Future)
    deferred: list[Callable[[], None]] = field(default_factory=list)
    cut_off: bool = False


_current = threading.local()  # .job: the _Job this thread runs, if any


def defer_write(write: Callable[[], None]) -> None:
    """Run ``write`` now or, inside a background job, with the job's :meth:`~BackgroundJobs.commit`
    (dropped when the job is cut off)."""
    job: _Job | None = getattr(_current, "job", None)
    if job is None:
        write()
    else:
        job.deferred.append(write)


class BackgroundJobs:
    """``workers`` daemon threads running jobs in submission order; see the module text."""

    def __init__(self, workers: int, name: str, *, batch: Callable[[], Any] | None = None) -> None:
        self.name = name
        self._workers = workers
        self._batch = batch  # e.g. DataEngine.batch: a commit's writes as one transaction
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        self._jobs: set[_Job] = set()  # queued or running
        self._lock = threading.Lock()
        self._gate = threading.Lock()  # held by a commit, and by stop while it cuts jobs off
        self._stopping = False

    def submit(self, call: Callable[[], None], label: str) -> Future[None] | None:
        """Queue ``call``; None when the jobs are stopped (nothing is queued then)."""
        with self._lock:
            if self._stopping:
                return None
            job = _Job(label, call, self)
            self._jobs.add(job)
            if len(self._threads) < min(self._workers, len(self._jobs)):
                thread = threading.Thread(target=self._work, name=f"{self.name}-{len(self._threads) + 1}",
                                          daemon=True)
                self._threads.append(thread)
                thread.start()
        self._queue.put(job)
        return job.future

    @property
    def stopping(self) -> bool:
        return self._stopping

    def in_flight(self) -> int:
        with self._lock:
            return len(self._jobs)

    def wait(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for every queued and running job; True when none is left."""
        import time

        deadline = time.monotonic() + max(0.0, timeout_s)
        while True:
            with self._lock:
                futures = [j.future for j in self._jobs]
            if not futures:
                return True
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            wait(futures, timeout=min(remaining, 0.1), return_when=FIRST_COMPLETED)

    def cancel_queued(self) -> list[str]:
        """The first half of :meth:`stop`: no new jobs, and the queued ones are cancelled (no
        attempt starts any more in the running ones either). Returns the cancelled labels."""
        with self._lock:
            self._stopping = True
            dropped = [j for j in self._jobs if j.future.cancel()]
            self._jobs.difference_update(dropped)
            for _ in self._threads:
                self._queue.put(None)  # each worker ends after the jobs before it
        return [j.label for j in dropped]

    def stop(self, bound_s: float = 0.0) -> list[str]:
        """No new jobs; queued ones are cancelled; running ones get ``bound_s`` to finish, then
        are cut off. Returns the labels of the jobs cancelled or cut off. Idempotent."""
        dropped = self.cancel_queued()
        self.wait(bound_s)
        with self._gate:  # no commit is under way now, and none will start for these
            with self._lock:
                running = list(self._jobs)
            for job in running:
                job.cut_off = True
        if running:
            log.debug("%s: %d job(s) cut off by the stop: %s", self.name, len(running),
                      ", ".join(j.label for j in running))
        return dropped + [j.label for j in running]

    def cut_off(self) -> bool:
        """In a job: whether a stop cut it off (it then ends quietly; its work stays pending)."""
        job: _Job | None = getattr(_current, "job", None)
        return job is not None and job.owner is self and job.cut_off

    def check(self) -> None:
        """In a job: raise :class:`JobCutOff` once a stop has begun (start no new attempt)."""
        job: _Job | None = getattr(_current, "job", None)
        if job is not None and job.owner is self and (self._stopping or job.cut_off):
            raise JobCutOff(job.label)

    @contextmanager
    def commit(self) -> Iterator[None]:
        """A job's writes: its deferred writes (model calls) first, then the block's, in one
        transaction when ``batch`` was given. Raises :class:`JobCutOff` when a stop cut the job
        off. Outside a job it is just the block (and the deferred writes have been made)."""
        job: _Job | None = getattr(_current, "job", None)
        if job is None or job.owner is not self:
            yield
            return
        with self._gate:
            if job.cut_off:
                raise JobCutOff(job.label)
            with self._batch() if self._batch is not None else _nothing():
                writes, job.deferred = job.deferred, []
                for write in writes:
                    write()
                yield

    # --- worker --------------------------------------------------------------------------

    def _work(self) -> None:
        while True:
            job = self._queue.get()
            if job is None:
                return
            if not job.future.set_running_or_notify_cancel():
                continue  # cancelled while queued
            _current.job = job
            try:
                job.call()
                if job.deferred:  # writes the job left outside a commit: made now, unless cut off
                    with self.commit():
                        pass
            except JobCutOff:
                log.debug("%s: %s cut off by a stop", self.name, job.label)
            except Exception as exc:
                if job.cut_off:
                    log.debug("%s: %s ended by the stop: %s: %s", self.name, job.label, type(exc).__name__, exc)
                else:
                    log_failure(log, exc, "%s failed", job.label)
            finally:
                _current.job = None
                with self._lock:
                    self._jobs.discard(job)
                job.future.set_result(None)


@contextmanager
def _nothing() -> Iterator[None]:
    yield
