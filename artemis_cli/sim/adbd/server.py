"""SimAdbd: the simulated phone as an adbd on TCP (127.0.0.1 by default).

    with SimAdbd(SimPhone(), port=0) as adbd:      # port 0: pick a free port
        print(adbd.serial)                          # "127.0.0.1:PORT" -> `adb connect` it

Transport faults for reconnect tests: ``drop(seconds)`` closes every connection and refuses new
ones for ``seconds``; the ``drop:P`` fault (from ``--faults``) does the same, seeded, before a
service with probability P.  ``latency_ms:N`` delays every service.  ``latency="pixel"`` charges
each shell command and uiautomator2 call what a real phone takes (artemis_cli/sim/latency.py).

``reboot()`` (the ``reboot:`` service, ``adb reboot``, or ``adb shell reboot``) restarts the phone
(settings, app data and files survive; apps and the screen start over on the launcher), drops
every connection and refuses new ones for a seeded time drawn uniformly from ``reboot_seconds``
(default 2-5 s; ``ARTEMIS_SIM_REBOOT_SECONDS=LO-HI`` or ``=S`` when not given, for tests).
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import socket
import struct
import threading
import time
from types import TracebackType

from artemis_cli.errors import UsageError
from artemis_cli.sim.adbd.connection import Connection
from artemis_cli.sim.adbd.device_shell import DeviceSide
from artemis_cli.sim.adbd.packets import banner
from artemis_cli.sim.adbd.services import Services
from artemis_cli.sim.faults import FaultSpec
from artemis_cli.sim.latency import Latency
from artemis_cli.sim.phone import SimPhone
from artemis_cli.sim.shell_system import PROPS_BASE

log = logging.getLogger(__name__)

# Shell protocol v2 (exit status, stdout/stderr apart, stdin EOF) and legacy `shell:`; plain
# STAT/LIST sync; pushes create parent dirs.
FEATURES: tuple[str, ...] = ("shell_v2", "fixed_push_mkdir", "fixed_push_symlink_timestamp")
EMULATOR_PORTS = range(5555, 5586)
REBOOT_SECONDS = (2.0, 5.0)
REBOOT_ENV = "ARTEMIS_SIM_REBOOT_SECONDS"


def reboot_window(value: tuple[float, float] | None = None) -> tuple[float, float]:
    """``value``, else $ARTEMIS_SIM_REBOOT_SECONDS (``LO-HI`` or ``S``), else REBOOT_SECONDS."""
    if value is None:
        raw = os.environ.get(REBOOT_ENV, "").strip()
        if not raw:
            return REBOOT_SECONDS
        try:
            lo_s, _, hi_s = raw.partition("-")
            value = (float(lo_s), float(hi_s or lo_s))
        except ValueError:
            raise UsageError(f"${REBOOT_ENV} must be SECONDS or LO-HI (got {raw!r})") from None
    lo, hi = value
    if not 0 <= lo <= hi <= 600:
        raise UsageError(f"reboot time must satisfy 0 <= low <= high <= 600 seconds (got {lo}-{hi})")
    return float(lo), float(hi)


def free_port(host: str = "127.0.0.1") -> int:
    """A TCP port free on ``host`` right now, outside the range adb probes as emulators."""
    while True:
        with socket.socket() as s:
            s.bind((host, 0))
            port = int(s.getsockname()[1])
        if port not in EMULATOR_PORTS:
            return port


class TransportFaults:
    """Seeded transport-level faults: latency and dropped connections."""

    def __init__(self, spec: FaultSpec, seed: int, server: SimAdbd) -> None:
        self.spec = spec
        self._rng = random.Random(f"artemis-adbd-drop|{seed}|{spec!r}")
        self.server = server
        self.drops = 0

    def before_service(self) -> None:
        if self.spec.latency_ms:
            time.sleep(self.spec.latency_ms / 1000.0)
        if self.spec.drop > 0 and self._rng.random() < self.spec.drop:
            self.drops += 1
            self.server.drop(0.3 * self._rng.randint(1, 3))
            raise ConnectionAbortedError("simulated connection drop")


class SimAdbd:
    def __init__(self, phone: SimPhone, host: str = "127.0.0.1", port: int = 0, *,
                 adb_keyboard: bool = False, u2_can_start: bool = True,
                 reboot_seconds: tuple[float, float] | None = None, latency: Latency | str | None = None) -> None:
        """``latency``: a device-latency profile (a Latency, or a profile name seeded with the
        phone's seed) charged on the wire to every shell command and uiautomator2 call."""
        if port in EMULATOR_PORTS:
            raise UsageError(f"port {port} is in 5555-5585, which the adb server probes as emulators",
                             hint="choose another port, e.g. --port 7555")
        if not 0 <= port <= 65535:
            raise UsageError(f"not a TCP port: {port}")
        self.phone = phone
        self.host = host
        self.port = port
        self.device = DeviceSide(phone, adb_keyboard=adb_keyboard, u2_can_start=u2_can_start,
                                 on_reboot=self.reboot,
                                 latency=latency if isinstance(latency, Latency) else Latency(latency, phone.seed))
        self.reboot_seconds = reboot_window(reboot_seconds)
        self._reboot_rng = random.Random(f"artemis-adbd-reboot|{phone.seed}")
        self.reboots = 0
        self.last_reboot_seconds = 0.0
        self.faults = TransportFaults(phone.faults.spec, phone.seed, self)
        self.services = Services(self.device, self.faults)
        self._listener: socket.socket | None = None
        self._conns: set[Connection] = set()
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._refuse_until = 0.0
        self._thread: threading.Thread | None = None
        self.connections_accepted = 0

    # --- lifecycle ------------------------------------------------------------------------
    @property
    def serial(self) -> str:
        return f"{self.host}:{self.port}"

    def banner(self) -> bytes:
        return banner(dict(PROPS_BASE), FEATURES)

    def start(self) -> SimAdbd:
        self._listener = self._bind()
        self.port = self._listener.getsockname()[1]
        self._stopped.clear()
        self._thread = threading.Thread(target=self._accept_loop, name=f"adbd-{self.port}", daemon=True)
        self._thread.start()
        return self

    def _bind(self) -> socket.socket:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((self.host, self.port))
        except OSError as e:
            sock.close()
            raise UsageError(f"cannot listen on {self.host}:{self.port}: {e.strerror or e}",
                             hint="choose another --port") from e
        sock.listen(16)
        sock.settimeout(0.2)
        return sock

    def stop(self) -> None:
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self._close_listener()
        for conn in self.connections():
            conn.abort()
        self.device.u2.running = False
        self.device.mobilecli.stop()

    def __enter__(self) -> SimAdbd:
        return self.start()

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()

    def serve_forever(self) -> None:
        """Block until stop() (or Ctrl-C in the caller)."""
        while not self._stopped.wait(0.5):
            pass

    # --- faults ---------------------------------------------------------------------------
    def drop(self, seconds: float) -> None:
        """Close every connection now and refuse connections for ``seconds``."""
        with self._lock:
            self._refuse_until = time.monotonic() + max(0.0, seconds)
        self._close_listener()
        for conn in self.connections():
            conn.abort()

    def reboot(self) -> None:
        """Start a reboot (returns at once): shortly after, the phone restarts, every connection
        drops and connections are refused for a seeded time within ``reboot_seconds``."""
        with self._lock:
            if self.device.rebooting:
                return
            self.device.rebooting = True
            seconds = self._reboot_rng.uniform(*self.reboot_seconds)
        threading.Thread(target=self._go_down, args=(seconds,), name=f"adbd-reboot-{self.port}",
                         daemon=True).start()

    def _go_down(self, seconds: float) -> None:
        time.sleep(0.1)  # what was already sent (the OKAY of `reboot:`) reaches the host first
        with self.device.lock:
            self.phone.reboot()
            self.device.u2.running = False  # processes die with the device
            self.device.mobilecli.stop()
        self.reboots += 1
        self.last_reboot_seconds = seconds
        log.info("adbd: rebooting; back in %.2f s", seconds)
        self.drop(seconds)
        self.device.rebooting = False

    # --- internals ------------------------------------------------------------------------
    def connections(self) -> list[Connection]:
        with self._lock:
            return list(self._conns)

    def connection_closed(self, conn: Connection) -> None:
        with self._lock:
            self._conns.discard(conn)

    def _close_listener(self) -> None:
        with self._lock:
            sock, self._listener = self._listener, None
        if sock is not None:
            with contextlib.suppress(OSError):  # wakes an accept() blocked in another thread
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept_loop(self) -> None:
        while not self._stopped.is_set():
            with self._lock:
                sock = self._listener
                refusing = time.monotonic() < self._refuse_until
            if sock is None:
                if refusing:
                    time.sleep(0.05)
                    continue
                try:
                    new = self._bind()
                except UsageError:
                    time.sleep(0.1)
                    continue
                with self._lock:
                    self._listener = new
                continue
            try:
                client, _ = sock.accept()
            except TimeoutError:
                continue
            except OSError:
                continue  # closed by drop()/stop()
            with self._lock:
                refusing = time.monotonic() < self._refuse_until or self._listener is not sock
            if refusing:  # accepted in the instant the device went down: reset it
                with contextlib.suppress(OSError):
                    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                client.close()
                continue
            try:
                client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                client.settimeout(None)
                conn = Connection(client, self)
            except OSError:  # reset by the peer before we got to it: nothing to serve
                client.close()
                continue
            with self._lock:
                self._conns.add(conn)
                self.connections_accepted += 1
            conn.start()
