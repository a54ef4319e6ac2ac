"""Fixtures for device tests: a fake adb server on a free port, wired in via the environment."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from fake_adb_server import FakeAdbServer, FakeShell, free_port


@pytest.fixture
def no_adb(monkeypatch: pytest.MonkeyPatch) -> int:
    """Point adb clients at a port where nothing listens; returns that port."""
    port = free_port()
    monkeypatch.setenv("ANDROID_ADB_SERVER_HOST", "127.0.0.1")
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(port))
    return port


@pytest.fixture
def fake_adb(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[..., FakeAdbServer]]:
    """Factory: fake_adb({"serial": "device"}, shell=FakeShell(...)) -> running server (env set)."""
    servers: list[FakeAdbServer] = []

    def start(devices: dict[str, str], shell: FakeShell | None = None, **kw: object) -> FakeAdbServer:
        server = FakeAdbServer(devices=devices, shell=shell or FakeShell(), **kw)  # type: ignore[arg-type]
        servers.append(server)
        monkeypatch.setenv("ANDROID_ADB_SERVER_HOST", "127.0.0.1")
        monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(server.port))
        return server

    yield start
    for server in servers:
        server.close()
