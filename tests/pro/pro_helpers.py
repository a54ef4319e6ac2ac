"""Helpers for the Pro agent tests (imported as a plain module, like tests/sim/sim_helpers.py)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from golden_files import assert_golden

from artemis_cli.models.fakes.gemini import FakeGeminiServer, FakeReply, FakeRequest
from artemis_cli.models.gemini import GeminiModel

GOLDEN = Path(__file__).parent / "golden"
CHAIN = ["gemini-2.5-flash"]


def check_golden(name: str, text: str) -> None:
    """Exact golden text; regenerate with ARTEMIS_UPDATE_GOLDEN=1 and review the diff."""
    assert_golden(GOLDEN / name, text)


class Replies:
    """Policy: the next text of a list (the last one repeats)."""

    def __init__(self, *texts: str) -> None:
        self.texts = list(texts)

    def __call__(self, req: FakeRequest) -> FakeReply:
        text = self.texts.pop(0) if len(self.texts) > 1 else self.texts[0]
        return FakeReply.text(text)


ServeFn = Callable[[Callable[[FakeRequest], FakeReply]], tuple[FakeGeminiServer, GeminiModel]]


def gemini_model(server: FakeGeminiServer) -> GeminiModel:
    """The real adapter (real SDK, real HTTP) pointed at the fake server; no retries or sleeps."""
    return GeminiModel(CHAIN, api_key="k", base_url=server.base_url, sleep=lambda s: None, backoff_s=0.0,
                       max_retries=0)
