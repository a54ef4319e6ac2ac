"""Which service an OPEN names: ``shell:``, ``exec:``, ``sync:``, ``tcp:PORT`` and a few stubs."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from artemis_cli.sim.adbd.device_shell import U2_JAR, DeviceSide
from artemis_cli.sim.adbd.stream import Stream
from artemis_cli.sim.adbd.sync_service import serve_sync
from artemis_cli.sim.adbd.u2_server import U2Server

if TYPE_CHECKING:
    from artemis_cli.sim.adbd.server import TransportFaults

Service = Callable[[Stream], None]
PROMPT = b"artemis_sim:/ $ "


class Services:
    def __init__(self, device: DeviceSide, faults: TransportFaults) -> None:
        self.device = device
        self.faults = faults
        self.u2 = U2Server(device)

    def resolve(self, name: str) -> Service | None:
        """The handler for an OPEN of ``name``; None refuses it (the host sees CLSE)."""
        if name.startswith("shell:"):
            cmd = name[len("shell:"):]
            return self._interactive if not cmd.strip() else self._command(cmd)
        if name.startswith("exec:"):
            return self._command(name[len("exec:"):])
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
        if name in ("root:", "unroot:"):
            msg = b"adbd cannot run as root in production builds\n" if name == "root:" else b"adbd not running as root\n"
            return lambda s: s.write(msg)
        return None  # shell,v2 / framebuffer: / reverse: / jdwp / … are not provided

    def _guarded(self, service: Service) -> Service:
        def run(stream: Stream) -> None:
            self.faults.before_service()
            service(stream)

        return run

    def _command(self, cmd: str) -> Service:
        port = self.device.is_u2_launch(cmd)
        if port is not None:
            return self._guarded(lambda s: self._u2_process(s, port))

        def run(stream: Stream) -> None:
            out = self.device.run(cmd).output
            if out:
                stream.write(out)

        return self._guarded(run)

    def _interactive(self, stream: Stream) -> None:
        """``adb shell`` without a command (no pty): runs each line, prints a prompt."""
        stream.write(PROMPT)
        buf = b""
        while True:
            chunk = stream.recv()
            if chunk is None:
                return
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                text = line.decode("utf-8", "replace").strip()
                if text in ("exit", "logout"):
                    return
                if text:
                    out = self.device.run(text).output
                    if out:
                        stream.write(out)
                stream.write(PROMPT)

    def _u2_process(self, stream: Stream, port: int) -> None:
        """The uiautomator2 server "process": runs while its shell stream stays open."""
        dev = self.device
        with dev.lock:
            has_jar = dev.phone.fs.exists(U2_JAR)
            already = dev.u2.running
        if not has_jar:
            stream.write(b'Error: Could not find or load main class com.wetest.uia2.Main\n')
            return
        if already or not dev.u2_can_start:
            stream.write(b"java.lang.IllegalStateException: UiAutomationService "
                         b"android.accessibilityservice.IAccessibilityServiceClient$Stub$Proxy@5deffd5"
                         b"already registered!\n")
            return
        dev.u2.running, dev.u2.port = True, port
        dev.u2.starts += 1
        try:
            stream.write(b"[server] INFO: [UiAutomator2Server] Starting Server\n")
            while not stream.wait_closed(timeout=1.0):
                if stream.closed:
                    break
        finally:
            dev.u2.running = False
            time.sleep(0)  # let a concurrent ping see the server go away
