"""The shell services: legacy ``shell:`` / ``exec:`` and the shell protocol v2 (``shell,v2,…:``).

Service names are ``shell[,ARG…]:[COMMAND]`` with ARGs ``v2``, ``raw``, ``pty``, ``TERM=…``
(adb's ``ShellServiceString``); without ``raw``/``pty`` an empty command gets a pty, a command
runs raw.

**Legacy** (no ``v2``): one byte stream each way; stdout and stderr arrive mixed in the order
written, there is no exit status, and stdin has no end of its own: a command that reads stdin
(``cat``, ``grep PAT``) waits until the host closes the stream, like adbd's (adb never closes it
on stdin EOF for such devices, so ``echo x | adb shell cat`` hangs against a legacy device).

**v2**: both directions are packets ``id:u8, length:u32le, data``. Host → device: 0 stdin,
4 close-stdin (stdin EOF), 5 window size (ignored). Device → host: 1 stdout, 2 stderr, 3 exit
(one byte: the status & 0xff), then the device closes the stream. With a pty, stderr is sent as
stdout and ``\\n`` becomes ``\\r\\n`` (the tty's ONLCR).
"""

from __future__ import annotations

import struct
import time
from dataclasses import dataclass

from artemis_cli.sim.adbd.device_shell import DeviceSide
from artemis_cli.sim.adbd.stream import Stream, StreamClosed
from artemis_cli.sim.shell_logcat import LogFollower, follow_args

ID_STDIN, ID_STDOUT, ID_STDERR, ID_EXIT, ID_CLOSE_STDIN, ID_WINDOW_SIZE = range(6)
HEADER = struct.Struct("<BI")
CHUNK = 64 * 1024 - HEADER.size  # data per v2 packet (longer output goes as several packets)
MAX_STDIN_PACKET = 1024 * 1024  # a longer stdin packet is a broken host: the stream is closed
PROMPT = b"artemis_sim:/ $ "
FOLLOW_TICK = 0.2  # s between looks at the log while `logcat` streams


@dataclass(frozen=True)
class ShellSpec:
    v2: bool
    pty: bool
    command: str


def parse_shell_service(name: str) -> ShellSpec | None:
    """``shell:ls`` / ``shell,v2,TERM=xterm,raw:ls`` → ShellSpec; None when it is no shell service."""
    head, sep, command = name.partition(":")
    args = head.split(",")
    if not sep or args[0] != "shell":
        return None
    kind = "raw" if "raw" in args else "pty" if "pty" in args else ("raw" if command.strip() else "pty")
    return ShellSpec("v2" in args[1:], kind == "pty", command)


class ShellIO:
    """Legacy framing: plain bytes both ways, no exit status."""

    pty = False

    def __init__(self, stream: Stream) -> None:
        self.stream = stream

    def read(self) -> bytes | None:
        """The next stdin bytes; None at stdin EOF (here: the host closed the stream)."""
        return self.stream.recv()

    def out(self, data: bytes) -> None:
        if data:
            self.stream.write(data)

    def err(self, data: bytes) -> None:
        self.out(data)

    def exit(self, code: int) -> None:
        """Legacy shells cannot report a status: the stream just ends."""


class V2IO(ShellIO):
    """Shell protocol v2 packets."""

    def __init__(self, stream: Stream, pty: bool) -> None:
        super().__init__(stream)
        self.pty = pty
        self.stdin_closed = False

    def read(self) -> bytes | None:
        while not self.stdin_closed:
            try:
                kind, length = HEADER.unpack(self.stream.read_exact(HEADER.size))
                if length > MAX_STDIN_PACKET:
                    raise StreamClosed(f"shell v2 packet of {length} bytes")
                data = self.stream.read_exact(length) if length else b""
            except StreamClosed:
                self.stdin_closed = True
                return None
            if kind == ID_STDIN and data:
                return data
            if kind == ID_CLOSE_STDIN:
                self.stdin_closed = True
            # ID_WINDOW_SIZE and unknown ids: nothing to do
        return None

    def _send(self, kind: int, data: bytes) -> None:
        for start in range(0, len(data), CHUNK):
            piece = data[start:start + CHUNK]
            self.stream.write(HEADER.pack(kind, len(piece)) + piece)

    def out(self, data: bytes) -> None:
        self._send(ID_STDOUT, data.replace(b"\n", b"\r\n") if self.pty else data)

    def err(self, data: bytes) -> None:
        if self.pty:
            self.out(data)
        else:
            self._send(ID_STDERR, data)

    def exit(self, code: int) -> None:
        self.stream.write(HEADER.pack(ID_EXIT, 1) + bytes([code & 0xFF]))


def run_command(io: ShellIO, device: DeviceSide, command: str) -> None:
    """One command line: collect stdin first if it reads it, run, send output and status."""
    stdin = b""
    if device.reads_stdin(command):
        chunks = []
        while (chunk := io.read()) is not None:
            chunks.append(chunk)
        if io.stream.closed:
            return  # the host went away: nobody to answer
        stdin = b"".join(chunks)
    device.latency.charge_shell(command)  # outside the phone's lock: other streams run meanwhile
    follow = follow_args(command)
    if follow is not None:
        stream_log(io, device, LogFollower(follow))
        return
    res = device.run(command, stdin=stdin)
    if device.rebooting:  # `reboot`: the connection drops before anything else arrives
        io.stream.wait_closed()
        return
    if isinstance(io, V2IO) and not io.pty:
        io.out(res.stdout)
        io.err(res.stderr)
    else:
        io.out(res.output)
    io.exit(res.exit_code)


def stream_log(io: ShellIO, device: DeviceSide, follower: LogFollower) -> None:
    """``logcat`` without ``-d``: the log so far, then new lines every FOLLOW_TICK s, until the host
    closes the stream (a phone's logcat never ends by itself)."""
    try:
        while not io.stream.closed:
            with device.lock:
                text = follower.poll(device.phone.logs)
            if text:
                io.out(text.encode("utf-8"))
            time.sleep(FOLLOW_TICK)
    except StreamClosed:
        return


def run_interactive(io: ShellIO, device: DeviceSide) -> None:
    """``adb shell`` without a command: run each stdin line; a pty shows a prompt. Ends at
    ``exit [N]`` or stdin EOF, with the last status."""
    prompt = io.pty or not isinstance(io, V2IO)
    if prompt:
        io.out(PROMPT)
    status = 0
    buf = b""
    while (chunk := io.read()) is not None:
        buf += chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n") if io.pty else chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            text = line.decode("utf-8", "replace").strip()
            if text == "logout":
                io.exit(status)
                return
            if text:
                device.latency.charge_shell(text)
                res = device.run(text, status=status)
                if isinstance(io, V2IO) and not io.pty:
                    io.out(res.stdout)
                    io.err(res.stderr)
                else:
                    io.out(res.output)
                status = res.exit_code
                if res.exited:
                    io.exit(status)
                    return
            if prompt:
                io.out(PROMPT)
    if buf.strip() and isinstance(io, V2IO):  # a last line without a newline still runs at EOF
        device.latency.charge_shell(buf.decode("utf-8", "replace").strip())
        res = device.run(buf.decode("utf-8", "replace").strip(), status=status)
        io.out(res.stdout if not io.pty else res.output)
        if not io.pty:
            io.err(res.stderr)
        status = res.exit_code
    if not io.stream.closed:
        io.exit(status)
