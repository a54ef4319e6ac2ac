"""`artemis sim serve`: prints the address and the adb connect command; Ctrl-C stops it cleanly."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys

from adbd_support import free_port


def test_serve_prints_the_address_and_stops_on_ctrl_c() -> None:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "artemis_cli", "sim", "serve", "--port", str(port)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "COLUMNS": "200"})
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().decode()
        second = proc.stdout.readline().decode()
        assert f"127.0.0.1:{port}" in first
        assert second.strip() == f"Connect with: adb connect 127.0.0.1:{port}"
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=10)
        assert proc.returncode == 0, err
        assert b"Stopped." in out
    finally:
        if proc.poll() is None:
            proc.kill()


def test_serve_refuses_emulator_ports() -> None:
    res = subprocess.run([sys.executable, "-m", "artemis_cli", "sim", "serve", "--port", "5555"],
                         capture_output=True, timeout=30)
    assert res.returncode == 2 and b"5555-5585" in res.stderr
