"""What the Python API raises: the CLI's typed errors, and these for steps that did not happen.

``StepFailed`` is an ``ArtemisError`` (a task failure, exit code 1 at a command boundary) carrying
the step's observed outcome; ``CheckFailed`` is also an ``AssertionError``, so pytest shows a
failed ``phone.check`` as the assertion it is, with the model's reason."""

from __future__ import annotations

from typing import Any

from artemis_cli.errors import ArtemisError


class StepFailed(ArtemisError):
    """A call whose effect was not observed: the target was not on screen, the action did not
    take effect, or an AI step did not reach its goal. ``outcome`` is the observed outcome (the
    step's ``result_status``/detail, or the loop's stop), ``step`` its number in the session."""

    def __init__(self, message: str, *, step: int | None = None, session_id: str | None = None,
                 outcome: Any = None, hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.step = step
        self.session_id = session_id
        self.outcome = outcome


class CheckFailed(StepFailed, AssertionError):
    """``phone.check``: the model judged the statement false on the current screen; the message
    carries its reason."""
