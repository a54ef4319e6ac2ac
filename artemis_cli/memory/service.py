"""StepMemoryService (SPEC §10.1): background step summaries, keyed by (session, step).

* ``submit`` never blocks the operator: it writes ``pending`` (version 1) and queues the job on a
  ``ThreadPoolExecutor`` with ``max_concurrency`` workers (threads are the project's concurrency
  model).
* A job makes up to ``retry_limit`` lens attempts; any exception from ``describe`` (a
  ``LensError`` for unusable output, a model error, or anything unexpected) is one failed
  attempt. Success writes ``ready`` (version 1) with the lens's text, source and model; when all
  attempts fail it writes ``failed`` (version 1) and records a ``lens_failure`` event.
* Writes go through ``DataEngine.write_summary`` (SPEC §5 invariant 3), so a late or stale
  writer can never downgrade a decided summary: ``pending`` never overwrites ``ready``/``failed``
  and ``failed`` never overwrites ``ready``.
* A second submit of the same step is ignored, and so is a submit whose ``pending`` write is
  rejected (the step's summary is already decided, e.g. after a resume): no model call is made.
* Nothing escapes a worker silently: unexpected problems after the attempts (a write or a
  callback raising) are logged (one line naming the step) and kept in
  :attr:`StepMemoryService.problems`.
* ``stop(bound_s)`` is the first thing every stop of a run does (``memory.jobs``): no new job,
  queued jobs cancelled, running ones given ``bound_s`` and then cut off. A job's writes (its lens
  calls, its summary, the recall index) are made together at its end, so a job cut off writes
  nothing: its step stays ``pending`` and ``artemis resume`` summarises it
  (:func:`pending_lens_jobs`).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from types import TracebackType

from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import EventRecord
from artemis_cli.engine.storage import log_failure
from artemis_cli.errors import UsageError
from artemis_cli.memory.jobs import BackgroundJobs, JobCutOff
from artemis_cli.memory.lens import Lens, LensJob, LensResult

__all__ = ["LENS_FAILURE_EVENT", "SUMMARY_VERSION", "StepMemoryService"]

log = logging.getLogger(__name__)

#: The summary version the first summary of a step is written at (re-summaries use higher ones).
SUMMARY_VERSION = 1
LENS_FAILURE_EVENT = "lens_failure"
_MAX_ERROR_CHARS = 300

StepKey = tuple[str, int]


class StepMemoryService:
    """Background step summaries through one :class:`~artemis_cli.memory.lens.Lens`."""

    def __init__(
        self,
        engine: DataEngine,
        lens: Lens,
        *,
        max_concurrency: int = 2,
        retry_limit: int = 3,
        on_ready: Callable[[int, str], None] | None = None,
        on_failed: Callable[[int], None] | None = None,
    ) -> None:
        if not isinstance(max_concurrency, int) or max_concurrency < 1:
            raise UsageError(f"lens max_concurrency must be an integer >= 1, not {max_concurrency!r}")
        if not isinstance(retry_limit, int) or retry_limit < 1:
            raise UsageError(f"lens retry_limit must be an integer >= 1, not {retry_limit!r}")
        self.engine = engine
        self.lens = lens
        self.max_concurrency = max_concurrency
        self.retry_limit = retry_limit
        self._on_ready = on_ready
        self._on_failed = on_failed
        self._pool = BackgroundJobs(max_concurrency, "artemis-lens", batch=engine.batch)
        self._lock = threading.Lock()
        self._jobs: dict[StepKey, Future[None] | None] = {}  # None: reserved or ignored submit
        self._closed = False
        #: Unexpected problems inside workers (write or callback errors), newest last.
        self.problems: list[str] = []

    # --- public API ----------------------------------------------------------------------

    def submit(self, job: LensJob) -> None:
        """Queue a summary for ``job.step`` and return at once (``pending`` v1 is written first).

        Ignored when this step was already submitted or its summary is already decided. Raises
        ``StepNotFound`` when the step is not recorded yet, ``UsageError`` after ``close``.
        """
        key = (job.session_id, job.step)
        with self._lock:
            if self._closed:
                raise UsageError("the step memory service is closed; no more summaries can be queued")
            if key in self._jobs:
                return
            self._jobs[key] = None  # reserve: a concurrent duplicate submit is ignored
        try:
            applied = self.engine.write_summary(
                job.session_id, job.step, status="pending", source=self.lens.source, version=SUMMARY_VERSION
            )
        except BaseException:
            with self._lock:
                self._jobs.pop(key, None)
            raise
        if not applied:  # decided already: the DataEngine rejects every later pending write too
            with self._lock:
                if self._jobs.get(key, False) is None:
                    del self._jobs[key]
            log.debug("step %s/%d: summary already decided; submit ignored", *key)
            return
        with self._lock:
            future = None if self._closed else self._pool.submit(lambda: self._run(job),
                                                                 f"step {job.session_id}/{job.step}: summary job")
            if future is None:  # closed meanwhile: the step stays pending (a resume summarises it)
                self._jobs.pop(key, None)
                return
            self._jobs[key] = future
        future.add_done_callback(lambda done: self._forget(key, done))

    def _forget(self, key: StepKey, done: Future[None]) -> None:
        """Drop a finished job, so the service holds only jobs in flight (bounded memory over long
        runs). A later submit of that step is still ignored: its ``pending`` write is rejected by
        the DataEngine because the summary is decided (``ready`` or ``failed``)."""
        with self._lock:
            if self._jobs.get(key) is done:
                del self._jobs[key]

    def state(self, session_id: str, step: int) -> tuple[str, str | None]:
        """``(summary_status, summary)`` as stored now."""
        record = self.engine.get_step(session_id, step)
        return record.summary_status, record.summary

    def flush(self, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for queued and running jobs; True when all have finished."""
        return self._pool.wait(timeout_s)

    def in_flight(self) -> int:
        """Jobs queued or running."""
        return self._pool.in_flight()

    def cancel_queued(self) -> list[str]:
        """No new jobs, queued ones cancelled (their steps stay ``pending``), no new attempt in
        the running ones; the first half of :meth:`stop`."""
        with self._lock:
            self._closed = True
        return self._pool.cancel_queued()

    def stop(self, bound_s: float) -> list[str]:
        """Stop accepting jobs, cancel queued ones, give running ones ``bound_s`` to finish and
        cut off the rest; every step not summarised stays ``pending`` (a resume summarises it).
        When it returns no job writes any more: the engine may close. Returns the jobs cancelled
        or cut off. Idempotent."""
        with self._lock:
            self._closed = True
        return self._pool.stop(bound_s)

    def close(self) -> None:
        """``stop(0)``: queued jobs cancelled, running ones cut off. Idempotent."""
        self.stop(0)

    def __enter__(self) -> StepMemoryService:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # --- worker --------------------------------------------------------------------------

    def _run(self, job: LensJob) -> None:
        try:
            self._summarise(job)
        except JobCutOff:
            raise
        except Exception as exc:  # a write or callback failed: never silent (unless a stop caused it)
            if self._pool.cut_off():
                raise
            self._problem(job, f"{type(exc).__name__}: {exc}")
            log_failure(log, exc, "step %s/%d: summary job failed", job.session_id, job.step)

    def _attempt(self, job: LensJob) -> LensResult:
        result = self.lens.describe(job)
        if not isinstance(result, LensResult) or not isinstance(result.text, str) or not result.text.strip():
            raise TypeError(f"lens {self.lens.source!r} returned no usable result: {result!r}")
        return result

    def _summarise(self, job: LensJob) -> None:
        last: Exception | None = None
        attempts = 0
        for attempts in range(1, self.retry_limit + 1):
            self._pool.check()  # a stop has begun: no new attempt (the step stays pending)
            try:
                result = self._attempt(job)
            except Exception as exc:
                last = exc
                log.info(
                    "step %s/%d: lens attempt %d/%d failed: %s: %s",
                    job.session_id, job.step, attempts, self.retry_limit, type(exc).__name__, exc,
                )
                continue
            with self._pool.commit():  # the lens calls, the summary and its index: together or not at all
                applied = self.engine.write_summary(
                    job.session_id,
                    job.step,
                    status="ready",
                    text=result.text,
                    source=result.source,
                    version=SUMMARY_VERSION,
                    model=result.model,
                )
                if applied and self._on_ready is not None:
                    self._callback(job, self._on_ready, job.step, result.text)
            return
        assert last is not None
        with self._pool.commit():
            self._write_failed(job, attempts, last)

    def _write_failed(self, job: LensJob, attempts: int, last: Exception) -> None:
        applied = self.engine.write_summary(
            job.session_id,
            job.step,
            status="failed",
            source=self.lens.source,
            version=SUMMARY_VERSION,
            model=getattr(self.lens, "model_name", None),
        )
        self.engine.record_event(
            EventRecord(
                kind=LENS_FAILURE_EVENT,
                session_id=job.session_id,
                step=job.step,
                payload={
                    "step": job.step,
                    "attempts": attempts,
                    "error_class": type(last).__name__,
                    "reason": getattr(last, "reason", None),
                    "error": str(last)[:_MAX_ERROR_CHARS],
                    "source": self.lens.source,
                    "applied": applied,
                },
            )
        )
        if applied and self._on_failed is not None:
            self._callback(job, self._on_failed, job.step)

    def _callback(self, job: LensJob, call: Callable[..., None], *args: object) -> None:
        try:
            call(*args)
        except Exception as exc:
            self._problem(job, f"callback raised {type(exc).__name__}: {exc}")
            log_failure(log, exc, "step %s/%d: summary callback raised", job.session_id, job.step)

    def _problem(self, job: LensJob, text: str) -> None:
        with self._lock:
            self.problems.append(f"step {job.step}: {text}")
