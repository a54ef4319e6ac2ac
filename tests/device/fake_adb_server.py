"""A tiny adb *server* (host side, port 5037 protocol) for tests: a fake at the protocol boundary.

It speaks the smart-socket protocol adbutils uses: ``host:version``, ``host:devices[-l]``,
``host:connect:``, ``host:tport:serial:S`` followed by ``shell:CMD``.  Shell commands are answered
by a ``FakeShell`` (a scripted phone with a tiny file system), and every command is recorded.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field


def free_port() -> int:
    """A TCP port nothing listens on (bound then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _block(text: str) -> bytes:
    data = text.encode()
    return f"{len(data):04x}".encode() + data


@dataclass
class FakeShell:
    """Answers shell commands. ``rules`` maps a command prefix to a callable or queued outputs."""

    files: dict[str, bytes] = field(default_factory=dict)
    rules: dict[str, Callable[[str], bytes | str] | list[bytes | str]] = field(default_factory=dict)
    commands: list[str] = field(default_factory=list)

    def __call__(self, cmd: str) -> bytes:
        self.commands.append(cmd)
        for prefix in sorted(self.rules, key=len, reverse=True):
            if cmd.startswith(prefix):
                rule = self.rules[prefix]
                out = rule(cmd) if callable(rule) else (rule.pop(0) if len(rule) > 1 else rule[0])
                return out.encode() if isinstance(out, str) else out
        if cmd.startswith("rm -f "):
            self.files.pop(cmd[6:].strip(), None)
            return b""
        if cmd.startswith("cat "):
            path = cmd[4:].strip()
            if path in self.files:
                return self.files[path]
            return f"cat: {path}: No such file or directory\n".encode()
        return b""


@dataclass
class FakeAdbServer:
    devices: dict[str, str]  # serial -> state ("device", "offline", "unauthorized")
    shell: FakeShell = field(default_factory=FakeShell)
    models: dict[str, str] = field(default_factory=dict)
    version: int = 41
    port: int = 0

    def __post_init__(self) -> None:
        self._sock = socket.socket()
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self.port = int(self._sock.getsockname()[1])
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._sock.close()

    def __enter__(self) -> FakeAdbServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    @staticmethod
    def _read_cmd(conn: socket.socket) -> str:
        head = b""
        while len(head) < 4:
            chunk = conn.recv(4 - len(head))
            if not chunk:
                raise EOFError
            head += chunk
        size, body = int(head, 16), b""
        while len(body) < size:
            chunk = conn.recv(size - len(body))
            if not chunk:
                raise EOFError
            body += chunk
        return body.decode()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            try:
                cmd = self._read_cmd(conn)
                if cmd == "host:version":
                    conn.sendall(b"OKAY" + _block(f"{self.version:04x}"))
                elif cmd in ("host:devices", "host:devices-l"):
                    lines = []
                    for serial, state in self.devices.items():
                        line = f"{serial}\t{state}"
                        if cmd.endswith("-l") and serial in self.models:
                            line += f" product:fake model:{self.models[serial]} device:fake transport_id:1"
                        lines.append(line + "\n")
                    conn.sendall(b"OKAY" + _block("".join(lines)))
                elif cmd.startswith("host:connect:"):
                    conn.sendall(b"OKAY" + _block(f"failed to connect to {cmd[13:]}"))
                elif cmd.startswith("host:tport:serial:"):
                    serial = cmd[len("host:tport:serial:") :]
                    dev_state = self.devices.get(serial)
                    if dev_state is None:
                        conn.sendall(b"FAIL" + _block(f"device '{serial}' not found"))
                        return
                    if dev_state != "device":
                        conn.sendall(b"FAIL" + _block(f"device {dev_state}"))
                        return
                    conn.sendall(b"OKAY" + (1).to_bytes(8, "little"))
                    service = self._read_cmd(conn)
                    if not service.startswith("shell:"):
                        conn.sendall(b"FAIL" + _block(f"unsupported service {service.split(':')[0]}"))
                        return
                    out = self.shell(service[len("shell:") :])
                    conn.sendall(b"OKAY" + out)
                else:
                    conn.sendall(b"FAIL" + _block(f"unknown command {cmd}"))
            except (OSError, EOFError, ValueError):
                return
