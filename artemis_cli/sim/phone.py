"""SimPhone: the simulated Android phone implementing artemis_cli.device.protocol.Device.

Its parts, bottom to top: the state (sim/phone_state.py), the screen (sim/phone_screen.py) and the
input (sim/phone_input.py); here the Device protocol, whose calls pay the injected faults."""

from __future__ import annotations

from artemis_cli.device.protocol import KEY_NAMES, DeviceInfo
from artemis_cli.errors import DeviceOffline, HierarchyError, ScreenshotError, ShellError, UsageError
from artemis_cli.perception.logcat import LogEvents
from artemis_cli.sim.faults import IDLE_STATE_MSG, NULL_ROOT_MSG
from artemis_cli.sim.gestures import CALL_GAP_MS
from artemis_cli.sim.phone_input import PhoneInput
from artemis_cli.sim.shell import ShellResult


class SimPhone(PhoneInput):
    """A deterministic virtual phone: same world, seed and actions give byte-identical screens."""

    # ==== Device protocol ========================================================================
    def reset_to(self, world: str, seed: int, popups: bool, *, locked: bool | None = None,
                 permission_prompts: bool | None = None) -> None:
        """Start over as a fresh phone of ``world`` with ``seed`` (what a task's ``sim:`` settings
        ask for), keeping the screen size, the shop password and the fault injector: a served
        sim (``artemis sim serve``) runs one task after another this way, as a real phone would be
        wiped between runs. ``artemis-sim reset`` in the sim's shell calls it."""
        faults = self.faults
        type(self).__init__(self, world=world, seed=seed, width=self.display.phys_w, height=self.display.phys_h,
                            popups=popups,
                            shop_password=self._shop_password, shuffle_windows=self.shuffle_windows,
                            packages=self._packages_file,
                            permission_prompts=self.permissions.enabled if permission_prompts is None
                            else permission_prompts,
                            locked=self.keyguard.enabled if locked is None else locked)
        self.faults = faults

    def info(self) -> DeviceInfo:
        serial = "sim" if self.world == "default" else f"sim:{self.world}"
        self._sync_display()
        return DeviceInfo(serial=serial, kind="sim", model="Artemis Sim", width=self.width, height=self.height,
                          sdk=34)

    def screenshot(self) -> bytes:
        self._enter()
        if self.faults.screencap_fails():
            raise ScreenshotError("screencap failed (simulated)", hint="retry the screenshot")
        return self.capture()

    def hierarchy(self) -> str:
        self._enter()
        fault = self.faults.dump_fault()
        if fault == "idle_state":
            raise HierarchyError(IDLE_STATE_MSG)
        if fault == "null_root":
            raise HierarchyError(NULL_ROOT_MSG)
        if fault == "stale_dump":
            raise HierarchyError("stale window dump: the dump file was not rewritten")
        if fault is not None:  # garbage_xml / empty_hierarchy: a "successful" dump with bad content
            return self.faults.faulty_content(fault, self.u2_dump())
        return self.u2_dump()

    def tap(self, x: int, y: int) -> None:
        self._enter()
        self.do_tap(x, y)

    def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        self._enter()
        self.do_long_press(x, y)

    def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        self._enter()
        self.do_swipe(x1, y1, x2, y2, duration_ms)

    def double_tap(self, x: int, y: int) -> None:
        self._enter()
        self.do_double_tap(x, y)

    def drag(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 1000) -> None:
        self._enter()
        self.do_drag(x1, y1, x2, y2)

    def type_text(self, text: str) -> None:
        self._enter()
        self.do_type(text)

    def clear_text(self, length: int) -> None:
        self._enter()
        self.do_clear()

    def key(self, name: str) -> None:
        self._enter()
        if name.lower() not in KEY_NAMES:
            raise UsageError(f"unknown key {name!r}", hint=f"keys: {', '.join(KEY_NAMES)}")
        self.do_key(name.lower())

    def launch(self, package: str) -> None:
        self._enter()
        if not self.has_package(package):
            raise ShellError(f"cannot launch {package!r}: no such package on the sim",
                             hint=f"installed apps: {', '.join(self.packages())}")
        self.do_launch(package)

    def current_app(self) -> str | None:
        self._enter()
        return self.current_package()

    def log_events(self) -> LogEvents:
        """Error lines (crashes, ANRs) logged since the last call, read with the phone's own
        ``logcat`` (perception/logcat.py); cheap: no device-call faults, no latency."""
        return self._logs.read()

    def shell(self, command: str) -> str:
        return self.shell_bytes(command).decode("utf-8", "replace")

    def shell_bytes(self, command: str) -> bytes:
        self._enter()
        if not isinstance(command, str):
            raise ShellError(f"shell command must be a string, got {type(command).__name__}")
        return self.sh.run(command).output

    def run(self, command: str) -> ShellResult:
        """Shell with the exit code (for the adbd server); no device-call faults."""
        return self.sh.run(command)

    def close(self) -> None:
        self.closed = True

    def _enter(self) -> None:
        if self.closed:
            raise DeviceOffline("sim device is closed")
        self.touch.arrive()
        self.touch.advance(CALL_GAP_MS)  # one protocol call after another: an agent's steps
        self.faults.device_call()

    # ==== files (adb push/pull) ==================================================================
    def read_file(self, path: str) -> bytes:
        return self.fs.read_file(path)

    def write_file(self, path: str, data: bytes) -> None:
        self.fs.now = self.clock.epoch_s()
        self.fs.write_file(path, data)
