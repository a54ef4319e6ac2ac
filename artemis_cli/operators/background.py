"""The background work of a run (step summaries, the chunk lens, the Pro checker) and how every
stop ends it (issue 35): first, before the final status is written and the engine is closed."""

from __future__ import annotations

import time
from typing import Any

from artemis_cli.memory.service import StepMemoryService

#: How long a stop signal gives the background summaries in flight
#: before it cuts them off; their steps stay ``pending`` and ``artemis resume`` summarises them.
STOP_BOUND_S = 2.0


def stop_background(loop: Any, service: StepMemoryService, bound_s: float, why: str = "") -> None:
    """What every stop does first, before the final status is written and the engine is closed
    (``memory.jobs``): the step summaries and the chunk lens get ``bound_s`` between them, then
    what is left is cut off (its steps stay ``pending``; a resume makes them); the Pro checker
    finishes its verdict. Afterwards no background job writes to the engine. At the end of a run
    (``why`` empty: the task's end, a budget stop, a device drop, a model failure) the queued jobs
    are made within the bound too; on a stop signal (``why``: its name) they are cancelled at once,
    no new model call is started, and the user is told what the stop waits for."""
    deadline = time.monotonic() + max(0.0, bound_s)
    compressor = loop.compressor

    def left() -> float:
        return max(0.0, deadline - time.monotonic())

    if why:
        service.cancel_queued()
        if compressor is not None:
            compressor.cancel_queued()
        busy = service.in_flight() + (compressor.in_flight() if compressor is not None else 0)
        notice = getattr(loop, "on_notice", None)
        if notice is not None:
            waits = (f"finishing {busy} background summar{'y' if busy == 1 else 'ies'} (at most {bound_s:g} s; "
                     "any left unfinished is made on resume), then " if busy and bound_s > 0 else "")
            notice(f"stopping on {why}: {waits}saving the session")
    else:
        service.flush(left())
        if compressor is not None:
            compressor.flush(left())
    service.stop(left())
    if compressor is not None:
        compressor.stop(left())
    close_agents = getattr(loop, "close_agents", None)
    if close_agents is not None:
        close_agents()
