"""The device-latency profile charged on the adbd wire: the real adb client pays it, and calls on
two streams sleep at the same time (no lock held while charging)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator

import pytest
from adbd_support import AdbServer, attach, free_port, needs_adb

from artemis_cli.sim.adbd import SimAdbd
from artemis_cli.sim.latency import Latency
from artemis_cli.sim.phone import SimPhone

pytestmark = needs_adb


@pytest.fixture
def serve(adb_server: AdbServer) -> Iterator[object]:
    started: list[SimAdbd] = []

    def start(latency: Latency | str | None) -> SimAdbd:
        adbd = SimAdbd(SimPhone(popups=False), port=free_port(), latency=latency).start()
        started.append(adbd)
        attach(adb_server, adbd)
        return adbd

    yield start
    for adbd in started:
        adb_server.run("disconnect", adbd.serial, check=False)
        adbd.stop()


def test_off_charges_nothing(serve, adb_server: AdbServer) -> None:  # type: ignore[no-untyped-def]
    adbd = serve(None)
    assert adbd.device.latency.profile == "off"
    res = adb_server.run("exec-out", "screencap -p", serial=adbd.serial)
    assert res.stdout.startswith(b"\x89PNG")
    assert dict(adbd.device.latency.calls) == {}


def test_screencap_over_real_adb_pays_the_fast_profile(serve, adb_server: AdbServer) -> None:  # type: ignore[no-untyped-def]
    adbd = serve("fast")
    lat = adbd.device.latency
    t0 = time.perf_counter()
    res = adb_server.run("exec-out", "screencap -p", serial=adbd.serial)
    elapsed = time.perf_counter() - t0
    assert res.stdout.startswith(b"\x89PNG")
    assert lat.calls["screencap_png"] == 1
    charged = lat.charged_s["screencap_png"]
    assert charged > 0
    assert elapsed >= charged  # a lower bound only
    adb_server.run("shell", "input tap 5 5", serial=adbd.serial)
    assert lat.calls["input"] == 1


def test_two_streams_sleep_concurrently(serve, adb_server: AdbServer) -> None:  # type: ignore[no-untyped-def]
    """Each charge waits at a barrier for the other before sleeping: with a lock held while
    charging the second call could never arrive and the barrier would break."""
    barrier = threading.Barrier(2, timeout=10)
    spans: list[tuple[float, float]] = []
    lock = threading.Lock()

    def sleep(seconds: float) -> None:
        barrier.wait()
        t0 = time.monotonic()
        time.sleep(seconds)
        with lock:
            spans.append((t0, time.monotonic()))

    adbd = serve(Latency("fast", seed=1, sleep=sleep))
    outs: list[bytes] = []

    def call() -> None:
        outs.append(adb_server.run("exec-out", "screencap -p", serial=adbd.serial).stdout)

    threads = [threading.Thread(target=call) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(outs) == 2 and all(o.startswith(b"\x89PNG") for o in outs)
    assert len(spans) == 2
    union = max(e for _, e in spans) - min(s for s, _ in spans)
    assert union < sum(e - s for s, e in spans)  # the two sleeps overlapped


def test_u2_jsonrpc_calls_are_charged_by_kind() -> None:
    slept: list[float] = []
    adbd = SimAdbd(SimPhone(popups=False), port=free_port(), latency=Latency("pixel", sleep=slept.append))
    u2 = adbd.services.u2
    for method in ("dumpWindowHierarchy", "takeScreenshot", "click", "deviceInfo"):
        params = [540, 1200] if method == "click" else []
        reply = json.loads(u2.handle_jsonrpc(json.dumps({"jsonrpc": "2.0", "id": 1, "method": method,
                                                         "params": params}).encode()))
        assert "result" in reply, reply
    assert dict(adbd.device.latency.calls) == {"u2_dump": 1, "u2_screenshot": 1, "u2_input": 1, "u2_rpc": 1}
    assert len(slept) == 4
