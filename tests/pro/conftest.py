"""Fixtures for the Pro agent tests: a FakeGeminiServer behind the real google-genai SDK."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from pro_helpers import ServeFn, gemini_model

from artemis_cli.models.fakes.gemini import FakeGeminiServer, FakeReply, FakeRequest
from artemis_cli.models.gemini import GeminiModel


@pytest.fixture
def serve() -> Iterator[ServeFn]:
    """``serve(policy) -> (server, GeminiModel)``; servers stop at teardown."""
    servers: list[FakeGeminiServer] = []

    def start(policy: Callable[[FakeRequest], FakeReply]) -> tuple[FakeGeminiServer, GeminiModel]:
        srv = FakeGeminiServer(policy).start()
        servers.append(srv)
        return srv, gemini_model(srv)

    yield start
    for srv in servers:
        srv.stop()
