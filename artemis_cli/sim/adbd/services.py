"""Which service an OPEN names: shell (legacy and v2), ``exec:``, ``sync:``, ``tcp:PORT``,
``localabstract:mobilecli-server`` (while mobilecli's server runs), ``reboot:`` and a few stubs."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from artemis_cli.sim.adbd.device_shell import U2_JAR, DeviceSide
from artemis_cli.sim.adbd.mobilecli_server import SOCKET as MOBILECLI_SOCKET
from artemis_cli.sim.adbd.mobilecli_server import UIAUTOMATION_TAKEN
from artemis_cli.sim.adbd.shell_service import (
    V2IO,
    ShellIO,
    parse_shell_service,
    run_command,
    run_interactive,
)
from artemis_cli.sim.adbd.stream import Stream
from artemis_cli.sim.adbd.sync_service import serve_sync
from artemis_cli.sim.adbd.u2_server import U2Server

if TYPE_CHECKING:
    from artemis_cli.sim.adbd.server import TransportFaults

Service = Callable[[Stream], None]


class Services:
    def __init__(self, device: DeviceSide, faults: TransportFaults) -> None:
        self.device = device
        self.faults = faults
        self.u2 = U2Server(device)

    def resolve(self, name: str) -> Service | None:
        """The handler for an OPEN of ``name``; None refuses it (the host sees CLSE)."""
        spec = parse_shell_service(name)
        if spec is not None:
            def io(stream: Stream) -> ShellIO:
                return V2IO(stream, spec.pty) if spec.v2 else ShellIO(stream)

            if not spec.command.strip():
                return self._guarded(lambda s: run_interactive(io(s), self.device))
            return self._command(spec.command, io)
        if name.startswith("exec:"):
            return self._command(name[len("exec:"):], ShellIO)
        if name == "sync:":
            return self._guarded(lambda s: serve_sync(s, self.device))
        if name.startswith("tcp:"):
            try:
                port = int(name.rsplit(":", 1)[1])
            except ValueError:
                return None
            u2 = self.device.u2
            if u2.running and port == u2.port:
                return self.u2.serve
            return None  # connection refused: nothing listens there
        if name == MOBILECLI_SOCKET:
            return self._guarded(self.device.mobilecli.serve) if self.device.mobilecli.listening else None
        if name.startswith("reboot:"):
            return self._reboot
        if name in ("root:", "unroot:"):
            msg = b"adbd cannot run as root in production builds\n" if name == "root:" else b"adbd not running as root\n"
            return lambda s: s.write(msg)
        return None  # framebuffer: / reverse: / jdwp / … are not provided

    def _guarded(self, service: Service) -> Service:
        def run(stream: Stream) -> None:
            self.faults.before_service()
            service(stream)

        return run

    def _command(self, cmd: str, io: Callable[[Stream], ShellIO]) -> Service:
        port = self.device.is_u2_launch(cmd)
        if port is not None:
            return self._guarded(lambda s: self._u2_process(s, io(s), port))
        return self._guarded(lambda s: run_command(io(s), self.device, cmd))

    def _reboot(self, stream: Stream) -> None:
        """``adb reboot``: like adbd, the stream stays open until the device goes down."""
        if self.device.on_reboot is None:
            with self.device.lock:
                self.device.phone.reboot()
            return
        self.device.on_reboot()
        stream.wait_closed()

    def _u2_process(self, stream: Stream, io: ShellIO, port: int) -> None:
        """The uiautomator2 server "process": runs while its shell stream stays open."""
        dev = self.device
        with dev.lock:
            has_jar = dev.phone.fs.exists(U2_JAR)
            already = dev.u2.running
        if not has_jar:
            io.err(b"Error: Could not find or load main class com.wetest.uia2.Main\n")
            io.exit(1)
            return
        if already or not dev.u2_can_start or dev.mobilecli.running:  # one UiAutomation at a time
            io.err(UIAUTOMATION_TAKEN.encode())
            io.exit(1)
            return
        dev.u2.running, dev.u2.port = True, port
        dev.u2.starts += 1
        try:
            io.out(b"[server] INFO: [UiAutomator2Server] Starting Server\n")
            while not stream.wait_closed(timeout=1.0):
                if stream.closed:
                    break
        finally:
            dev.u2.running = False
            time.sleep(0)  # let a concurrent ping see the server go away
