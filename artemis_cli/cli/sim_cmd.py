"""``artemis sim serve``: the simulated phone as an adbd on TCP, for adb, adbutils and uiautomator2."""

from __future__ import annotations

import signal
import time
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

app = typer.Typer(help="The simulated phone.", no_args_is_help=True)


@app.command("serve")
def serve(
    port: Annotated[int, typer.Option("--port", help="TCP port (not 5555-5585: adb probes those as emulators); 0 picks a free one.")] = 7555,
    host: Annotated[str, typer.Option("--host", help="Address to listen on.")] = "127.0.0.1",
    world: Annotated[str, typer.Option("--world", "-w", help="Sim world.")] = "default",
    seed: Annotated[int, typer.Option("--seed", help="Seed for pop-ups, faults and the order of windows in uiautomator2 dumps.")] = 0,
    faults: Annotated[str | None, typer.Option("--faults", help="e.g. 'idle_state:0.2,drop:0.05,latency_ms:30'. Kinds: idle_state, null_root, stale_dump, garbage_xml, empty_hierarchy, screencap_fail, drop, crash, anr (probabilities), latency_ms:N, popup_storm.")] = None,
    adb_keyboard: Annotated[bool, typer.Option("--adb-keyboard", help="Pretend uiautomator2's AdbKeyboard IME is installed.")] = False,
    popups: Annotated[bool, typer.Option("--popups/--no-popups", help="Promotion pop-ups now and then.")] = True,
    packages: Annotated[Path | None, typer.Option("--packages", help="A real phone's `adb shell pm list packages` output: each package is installed as a stub app that opens a screen naming its package (no label: plain adb gives none), beside the world's own apps.")] = None,
    permission_prompts: Annotated[bool, typer.Option("--permission-prompts/--no-permission-prompts", help="Apps ask for runtime permissions on first launch (the Clock: notifications), as on Android 13+.")] = True,
    locked: Annotated[bool, typer.Option("--locked", help="Start on the lock screen (swipe up or `input keyevent 82` unlocks).")] = False,
    latency: Annotated[str, typer.Option("--latency", help="Device-latency profile charged to every shell command and uiautomator2 call, as a real phone takes them: off (default), pixel (a 1080x2400 phone: screencap -p 1.2 s, uiautomator dump 1.6 s, input 0.2 s, ...), fast (pixel / 10). Jitter seeded by --seed.")] = "off",
) -> None:
    """Serve the simulated phone as an adbd until Ctrl-C; then `adb connect HOST:PORT`."""
    from artemis_cli.cli.console import escape, out
    from artemis_cli.sim.adbd import SimAdbd
    from artemis_cli.sim.latency import Latency
    from artemis_cli.sim.phone import SimPhone

    profile = Latency(latency, seed)  # a bad name is a UsageError before anything listens
    phone = SimPhone(world=world, seed=seed, faults=faults, popups=popups, packages=packages,
                     permission_prompts=permission_prompts, locked=locked)
    adbd = SimAdbd(phone, host=host, port=port, adb_keyboard=adb_keyboard, latency=profile).start()
    # A plain flag, not threading.Event: Event.set() in a signal handler can deadlock when the
    # signal lands while the main thread holds the Event's own lock inside wait().
    stopping: list[int] = []

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stopping.append(signum)

    old = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        con = out()
        extra = f", latency {profile.profile}" if profile.active else ""
        if packages is not None:
            extra += f", {len(phone.packages())} apps with {packages.name}"
        con.print(f"Simulated phone (world {escape(world)}, seed {seed}{extra}) listening on {adbd.serial}",
                  markup=False)
        con.print(f"Connect with: adb connect {adbd.serial}", markup=False)
        con.print("Press Ctrl-C to stop.", markup=False)
        con.file.flush()
        while not stopping:
            time.sleep(0.2)
    finally:
        adbd.stop()
        for s, h in old.items():
            signal.signal(s, h)
        out().print("Stopped.", markup=False)
