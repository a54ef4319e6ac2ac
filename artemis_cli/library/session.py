"""The session a Python program drives: ``mcp_server.session.DrivenSession`` with the program, not
an MCP client, at the wheel.

One copy of the mechanism: a ``Phone`` call is planned on the screen it was picked on, performed
and judged by ``operators.perform`` and written by ``operators.recording`` exactly as an MCP
client's or the operator loop's action is. Only the session row differs: ``loop="library"`` and
the program (its name, e.g. a test's node id) as the operator."""

from __future__ import annotations

from typing import Any

from artemis_cli.engine.records import LIBRARY_CALL_EVENT, LIBRARY_LOOP, EventRecord
from artemis_cli.mcp_server.session import ClientInfo, DrivenSession

#: Each Python API call that is not a plain step (``engine.records.LIBRARY_CALL_EVENT``).
CALL_EVENT = LIBRARY_CALL_EVENT
#: A step the program asked for that was not sent (its target is not on the screen).
NOT_SENT_EVENT = "library_not_sent"


class LibrarySession(DrivenSession):
    """A ``DrivenSession`` recorded as the Python API's (``loop="library"``)."""

    loop = LIBRARY_LOOP
    no_goal = "driven by a Python program (artemis_cli.Phone)"

    def start(self, client: ClientInfo) -> str:
        if self.session_id is not None:
            return self.session_id
        self.client = client
        self._create()
        assert self.session_id is not None
        return self.session_id

    def _run_record(self) -> dict[str, Any]:
        return dict(self.run_config)

    def event(self, kind: str, payload: dict[str, Any], step: int | None = None) -> None:
        assert self.session_id is not None
        if self._lease is not None:
            self._lease.check()
        self.engine.record_event(EventRecord(session_id=self.session_id, step=step, kind=kind, payload=payload))

    @property
    def last_step(self) -> int:
        return self._last_step

    def caught_up(self, obs: Any) -> None:
        """Steps were written by a loop or a replay in this session: go on after the last of
        them, on the screen they left (``obs``)."""
        assert self.session_id is not None
        self._last_step = self.engine.last_step_number(self.session_id)
        self.seen = obs

    @property
    def clock_start(self) -> float:
        """The monotonic time the session's clock (its steps' ``offset_ms``) counts from."""
        return self._t0 - self._offset_base_ms / 1000

    @property
    def lease(self) -> Any:
        return self._lease
