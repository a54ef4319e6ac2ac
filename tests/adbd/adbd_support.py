"""Fixtures: Debian's real adb server on its own free port, and the sim adbd on another.

Nothing here touches a developer's adb server on 5037: every adb call gets ``-P PORT`` and
ANDROID_ADB_SERVER_PORT points adbutils/uiautomator2 at the test server, which is killed at the end.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import cast

import pytest

from artemis_cli.config.task import SimOptions
from artemis_cli.device.select import sim_for
from artemis_cli.sim.adbd import SimAdbd, free_port
from artemis_cli.sim.phone import SimPhone

ADB = shutil.which("adb")
needs_adb = pytest.mark.skipif(ADB is None, reason="Debian's `adb` is not installed (apt-get install adb)")


@dataclass
class AdbServer:
    port: int

    def run(self, *args: str, serial: str | None = None, timeout: float = 30, check: bool = True,
            input: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        assert ADB is not None
        cmd = [ADB, "-P", str(self.port), *(["-s", serial] if serial else []), *args]
        res = subprocess.run(cmd, capture_output=True, timeout=timeout, input=input,
                             env={**os.environ, "ANDROID_ADB_SERVER_PORT": str(self.port)})
        if check and res.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} -> {res.returncode}: {res.stdout!r} {res.stderr!r}")
        return res

    def text(self, *args: str, serial: str | None = None) -> str:
        return self.run(*args, serial=serial).stdout.decode("utf-8", "replace")


@pytest.fixture(scope="session")
def adb_server() -> Iterator[AdbServer]:
    if ADB is None:
        pytest.skip("Debian's `adb` is not installed (apt-get install adb)")
    server = AdbServer(free_port())
    server.run("start-server")
    try:
        yield server
    finally:
        server.run("kill-server", check=False)


@dataclass
class SimDevice:
    phone: SimPhone
    adbd: SimAdbd
    adb: AdbServer

    @property
    def serial(self) -> str:
        return self.adbd.serial

    def shell(self, command: str) -> str:
        return self.adb.text("shell", command, serial=self.serial)


def attach(adb: AdbServer, adbd: SimAdbd) -> None:
    out = adb.text("connect", adbd.serial)
    assert "connected to" in out, out
    adb.run("wait-for-device", serial=adbd.serial, timeout=10)


@pytest.fixture
def sim_device(adb_server: AdbServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[SimDevice]:
    """A fresh sim phone served by SimAdbd and `adb connect`-ed to the test adb server."""
    monkeypatch.setenv("ANDROID_ADB_SERVER_HOST", "127.0.0.1")
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(adb_server.port))
    phone = cast(SimPhone, sim_for(SimOptions(popups=False, permission_prompts=False)))
    adbd = SimAdbd(phone, port=free_port()).start()
    attach(adb_server, adbd)
    try:
        yield SimDevice(phone, adbd, adb_server)
    finally:
        adb_server.run("disconnect", adbd.serial, check=False)
        adbd.stop()


@dataclass
class ServedCli:
    """`artemis sim serve` running as its own process, `adb connect`-ed to the test adb server."""

    serial: str
    adb: AdbServer
    proc: subprocess.Popen[bytes]

    def sh(self, script: str, input: bytes | None = None, timeout: float = 30) -> subprocess.CompletedProcess[bytes]:
        """Run ``script`` in bash with ADB/ANDROID_SERIAL set, as a user types it (`adb shell …`)."""
        assert ADB is not None
        env = {**os.environ, "ANDROID_ADB_SERVER_PORT": str(self.adb.port), "ANDROID_SERIAL": self.serial,
               "PATH": os.path.dirname(ADB) + os.pathsep + os.environ.get("PATH", "")}
        return subprocess.run(["bash", "-c", script], capture_output=True, input=input, timeout=timeout, env=env)


def serve_cli(adb: AdbServer, *extra: str) -> ServedCli:
    """Start `python -m artemis_cli sim serve --port P …` and attach it."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "artemis_cli", "sim", "serve", "--port", str(port), *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError as e:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                why = proc.stderr.read() if proc.stderr else b""
                raise AssertionError(f"artemis sim serve did not start: {why!r}") from e
            time.sleep(0.1)
    out = adb.text("connect", f"127.0.0.1:{port}")
    assert "connected to" in out, out
    adb.run("wait-for-device", serial=f"127.0.0.1:{port}", timeout=10)
    return ServedCli(f"127.0.0.1:{port}", adb, proc)


def stop_cli(cli: ServedCli) -> None:
    cli.adb.run("disconnect", cli.serial, check=False)
    cli.proc.terminate()
    try:
        cli.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        cli.proc.kill()


@pytest.fixture(scope="module")
def cli(adb_server: AdbServer) -> Iterator[ServedCli]:
    """`artemis sim serve --no-popups` in a subprocess, attached to the private adb server."""
    served = serve_cli(adb_server, "--no-popups")
    try:
        yield served
    finally:
        stop_cli(served)
