"""Memory runtime (SPEC §10): step summaries (lenses), transcript ledger, recall and notes.

This package's ``__init__`` exports the step-summary side (SPEC §10.1); import the other
modules (``ledger``, ``recall``, ``notes``, ``similarity``) directly.
"""

from artemis_cli.memory.lens import (
    LENS_SYSTEM_PROMPT,
    SECTION_MARKERS,
    VERDICT_WORDS,
    Lens,
    LensError,
    LensJob,
    LensResult,
    VisualTransitionLens,
    build_lens_request,
    check_lens_output,
    verdict_words,
)
from artemis_cli.memory.mechanical import MechanicalLens
from artemis_cli.memory.service import LENS_FAILURE_EVENT, StepMemoryService

__all__ = [
    "LENS_FAILURE_EVENT",
    "LENS_SYSTEM_PROMPT",
    "SECTION_MARKERS",
    "VERDICT_WORDS",
    "Lens",
    "LensError",
    "LensJob",
    "LensResult",
    "MechanicalLens",
    "StepMemoryService",
    "VisualTransitionLens",
    "build_lens_request",
    "check_lens_output",
    "verdict_words",
]
