"""``artemis bench run --ray``: pairs on a two-node Ray cluster, one actor per phone.

The cluster is ``ray.cluster_utils.Cluster`` on this machine: two Ray nodes, each declaring one
phone through the custom resource ``artemis_device:<serial>``. Each phone is an ``artemis sim
serve`` attached to its own private adb server (Debian's real ``adb``), so every node talks to
its phone through its own adb server, as one host of a real cluster would. The actors record on
their node and ship each finished session back as a bundle, which the driver imports.

Skipped, saying why, without Ray (``pip install 'artemis-cli[ray]'``) or without ``adb``. The
cluster-file and no-Ray-import tests need neither.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from artemis_cli.bench.cluster_file import device_resource, load_cluster_file
from artemis_cli.bench.runner import BenchConfig
from artemis_cli.bench.validate import validate_results
from artemis_cli.engine.db import DataEngine
from artemis_cli.errors import ConfigError, UsageError
from artemis_cli.sim.adbd import free_port

REPO = Path(__file__).resolve().parents[2]
ADB = shutil.which("adb")
OBJECT_STORE = 80 * 1024 * 1024


# -- no Ray unless --ray ---------------------------------------------------------------------------


def test_the_cli_and_bench_modules_never_import_ray() -> None:
    code = (
        "import sys\n"
        "import artemis_cli.cli.app, artemis_cli.cli.bench_cmd, artemis_cli.bench.runner\n"
        "import artemis_cli.bench.ray_backend, artemis_cli.bench.cluster_file, artemis_cli.bench.worker\n"
        "from typer.testing import CliRunner\n"
        "from artemis_cli.cli.app import app\n"
        "res = CliRunner().invoke(app, ['bench', 'run', '--help'])\n"
        "assert res.exit_code == 0, res.output\n"
        "assert '--ray' in res.output and '--devices-file' in res.output, res.output\n"
        "bad = sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.'))\n"
        "assert not bad, bad\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         env={**os.environ, "COLUMNS": "200"})
    assert res.returncode == 0, res.stdout + res.stderr


def test_without_ray_installed_the_flag_says_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from artemis_cli.bench.ray_backend import run_bench_ray

    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    config = BenchConfig(suite=REPO / "tasks" / "bench", out=tmp_path / "r.json", modes=["transcript"])
    with pytest.raises(UsageError, match="needs Ray") as err:
        run_bench_ray(config, "auto")
    assert "artemis-cli[ray]" in (err.value.hint or "")


def test_devices_file_needs_ray(tmp_path: Path) -> None:
    (tmp_path / "cluster.yaml").write_text("hosts:\n  - address: 10.0.0.5\n", encoding="utf-8")
    res = subprocess.run([sys.executable, "-m", "artemis_cli", "bench", "run", str(REPO / "tasks" / "bench"),
                          "--out", str(tmp_path / "r.json"), "--devices-file", str(tmp_path / "cluster.yaml")],
                         capture_output=True, text=True, timeout=120, env={**os.environ, "ARTEMIS_HOME": str(tmp_path)})
    assert res.returncode == 2, res.stdout + res.stderr
    assert "--devices-file needs --ray" in res.stdout + res.stderr


# -- cluster.yaml ----------------------------------------------------------------------------------


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_cluster_file_loads_with_defaults(tmp_path: Path) -> None:
    cluster = load_cluster_file(_write(tmp_path / "c.yaml", (
        "hosts:\n"
        "  - address: 10.0.0.5\n"
        "    adb_port: 5038\n"
        "    devices: [R58M123ABC, 127.0.0.1:7555]\n"
        "  - address: phone-host-2\n")))
    assert [h.address for h in cluster.hosts] == ["10.0.0.5", "phone-host-2"]
    assert cluster.hosts[0].adb_port == 5038 and cluster.hosts[1].adb_port == 5037
    assert cluster.hosts[1].devices is None
    assert cluster.serials == ["R58M123ABC", "127.0.0.1:7555"]
    assert device_resource("127.0.0.1:7555") == "artemis_device:127.0.0.1:7555"


def test_cluster_file_errors_name_file_line_and_field(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.yaml", (
        "hosts:\n"
        "  - address: 10.0.0.5\n"
        "    adb_port: 70000\n"
        "    devices: [X1, \"a b\"]\n"
        "    devcies: []\n"
        "  - address: http://10.0.0.6\n"
        "    adb_port: \"5037\"\n"))
    with pytest.raises(ConfigError) as err:
        load_cluster_file(path)
    text = str(err.value)
    assert f"{path}:3: hosts[0].adb_port: must be ≤ 65535 (got 70000)" in text
    assert f"{path}:4: hosts[0].devices[1]: must be an adb serial without spaces" in text
    assert f"{path}:5: hosts[0].devcies: unknown key 'devcies' (did you mean 'devices'?)" in text
    assert f"{path}:6: hosts[1].address: must be a host name or IP address" in text
    assert f"{path}:7: hosts[1].adb_port: must be a whole number (got '5037')" in text


def test_cluster_file_refuses_a_phone_or_host_listed_twice(tmp_path: Path) -> None:
    path = _write(tmp_path / "c.yaml", (
        "hosts:\n"
        "  - address: 10.0.0.5\n"
        "    devices: [X1, X2]\n"
        "  - address: 10.0.0.6\n"
        "    devices:\n"
        "      - X3\n"
        "      - X1\n"
        "  - address: 10.0.0.6\n"))
    with pytest.raises(ConfigError) as err:
        load_cluster_file(path)
    text = str(err.value)
    assert f"{path}:7: hosts[1].devices[1]: device 'X1' is also listed under hosts[0] (line 2)" in text
    assert f"{path}:8: hosts[2]: 10.0.0.6 with adb_port 5037 is already hosts[1] (line 4)" in text


@pytest.mark.parametrize(("text", "expected"), [
    ("hosts: []\n", ":1: hosts: has 0 items; expected at least 1"),
    ("hosts:\n  - adb_port: 5037\n", ":2: hosts[0].address: required key is missing"),
    ("hosts:\n  - address: 10.0.0.5\n    devices: [X1, X1]\n", ":3: hosts[0].devices: device 'X1' is listed twice"),
    ("hosts:\n  - address: 10.0.0.5\n    devices: [sim]\n", ":3: hosts[0].devices[0]: 'sim' is the in-process"),
    ("- address: 10.0.0.5\n", ":1: "),
])
def test_cluster_file_shapes(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as err:
        load_cluster_file(_write(tmp_path / "c.yaml", text))
    assert expected in str(err.value)


# -- the two-node cluster --------------------------------------------------------------------------

#: two three-step pairs; each task's setup resets the phone, so a phone can run both in turn
TINY_TASK = {
    "goal": "Turn on dark theme", "app": "com.android.settings", "max_steps": 8,
    "sim": {"world": "default", "seed": 11, "popups": False},
    "setup": [{"shell": "settings put secure ui_night_mode 1"}, {"shell": "am force-stop com.android.settings"}],
    "success": [{"shell": "settings get secure ui_night_mode", "equals": "2"}],
    "reference": [{"tap": {"text": "Display"}}, {"tap": {"id": "dark_theme_switch"}},
                  {"finish": {"success": True, "answer": "Dark theme is on"}}],
}


def _suite(root: Path) -> Path:
    suite = root / "suite"
    suite.mkdir(parents=True, exist_ok=True)
    for task_id in ("ray-dark-a", "ray-dark-b"):
        (suite / f"{task_id}.yaml").write_text(yaml.safe_dump({"id": task_id, **TINY_TASK}, sort_keys=False),
                                               encoding="utf-8")
    return suite


@dataclass
class Phone:
    """One host's phone: a private adb server and an `artemis sim serve` attached to it."""

    adb_port: int
    serial: str
    proc: subprocess.Popen[bytes]

    def adb(self, *args: str, check: bool = True) -> str:
        assert ADB is not None
        res = subprocess.run([ADB, "-P", str(self.adb_port), *args], capture_output=True, timeout=30)
        if check and res.returncode != 0:
            raise AssertionError(f"adb {args} -> {res.returncode}: {res.stdout!r} {res.stderr!r}")
        return res.stdout.decode("utf-8", "replace")


def _start_phone() -> Phone:
    assert ADB is not None
    adb_port, port = free_port(), free_port()
    proc = subprocess.Popen([sys.executable, "-m", "artemis_cli", "sim", "serve", "--port", str(port),
                             "--no-popups", "--seed", "11"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    phone = Phone(adb_port, f"127.0.0.1:{port}", proc)
    phone.adb("start-server")
    deadline = time.monotonic() + 30
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError as e:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"artemis sim serve did not start: {proc.stderr and proc.stderr.read()!r}") from e
            time.sleep(0.1)
    assert "connected to" in phone.adb("connect", phone.serial)
    phone.adb("-s", phone.serial, "wait-for-device")
    return phone


def _stop_phone(phone: Phone) -> None:
    phone.adb("disconnect", phone.serial, check=False)
    phone.adb("kill-server", check=False)
    phone.proc.terminate()
    try:
        phone.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        phone.proc.kill()


@dataclass
class Rig:
    ray: Any
    cluster: Any
    phones: list[Phone]
    nodes: list[str]  # Ray node id of phones[i]'s node
    address: str  # the nodes' address (both are this machine)

    def devices_file(self, path: Path, *, discover_second: bool = False) -> Path:
        hosts: list[dict[str, Any]] = []
        for i, phone in enumerate(self.phones):
            host: dict[str, Any] = {"address": self.address, "adb_port": phone.adb_port,
                                    "work_dir": str(path.parent / "nodes")}  # not the machine's temp dir
            if not (discover_second and i == 1):
                host["devices"] = [phone.serial]
            hosts.append(host)
        path.write_text(yaml.safe_dump({"hosts": hosts}, sort_keys=False), encoding="utf-8")
        return path


@pytest.fixture(scope="module")
def rig() -> Iterator[Rig]:
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'artemis-cli[ray]')")
    from ray.cluster_utils import Cluster

    if ADB is None:
        pytest.skip("Debian's `adb` is not installed (apt-get install adb)")
    phones: list[Phone] = []
    cluster = None
    try:
        phones = [_start_phone(), _start_phone()]
        cluster = Cluster(initialize_head=True, head_node_args={
            "num_cpus": 1, "object_store_memory": OBJECT_STORE, "include_dashboard": False,
            "resources": {device_resource(phones[0].serial): 1}})
        node_b = cluster.add_node(num_cpus=1, object_store_memory=OBJECT_STORE,
                                  resources={device_resource(phones[1].serial): 1})
        cluster.wait_for_nodes()
        ray.init(address=cluster.address, log_to_driver=False, logging_level="WARNING")
        nodes = {n["NodeID"]: n for n in ray.nodes() if n["Alive"]}
        by_res = {r: nid for nid, n in nodes.items() for r in n["Resources"]}
        ids = [by_res[device_resource(p.serial)] for p in phones]
        assert ids[1] == node_b.node_id
        yield Rig(ray, cluster, phones, ids, nodes[ids[0]]["NodeManagerAddress"])
    finally:
        ray.shutdown()
        if cluster is not None:
            cluster.shutdown()
        for phone in phones:
            _stop_phone(phone)


def _config(root: Path) -> BenchConfig:
    return BenchConfig(suite=_suite(root), out=root / "r.json", modes=["transcript"], synthetic_steps=20,
                       recall_steps=10)


def _rows(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["task"]: r for r in results["tasks"]}


@pytest.mark.slow
def test_pairs_run_on_both_nodes_and_come_back_as_bundles(rig: Rig, tmp_path: Path) -> None:
    from artemis_cli.bench.ray_backend import run_bench_ray

    config = _config(tmp_path)
    devices_file = rig.devices_file(tmp_path / "cluster.yaml", discover_second=True)  # phone B: asked of its adb
    notes: list[tuple[str, str]] = []
    steps: list[tuple[str, int]] = []
    done: list[str] = []
    from artemis_cli.bench.runner import Progress

    results = run_bench_ray(config, rig.cluster.address, devices_file,
                            Progress(on_device_note=lambda d, t: notes.append((d, t)),
                                     on_device_step=lambda d, n: steps.append((d, n)),
                                     on_pair_done=lambda t, m, row: done.append(t)))
    validate_results(results)
    rows = _rows(results)
    assert set(rows) == {"ray-dark-a", "ray-dark-b"}
    serials = [p.serial for p in rig.phones]
    assert sorted(r["device"] for r in rows.values()) == sorted(serials), rows  # both phones ran a pair
    assert {r["ray_node"] for r in rows.values()} == set(rig.nodes)  # on both nodes
    for row in rows.values():
        assert row["success"] is True, row
        assert row["host"] == rig.address
        assert row["ray_node"] == rig.nodes[serials.index(row["device"])]  # each phone on its own node
        assert row["attempts"] == 1 and row["requeued_from"] is None
        assert row["bundle_bytes"] > 0
        # the session came back as a bundle, into the driver's data dir (the local run's layout)
        assert Path(row["data_dir"]) == config.work / f"{row['task']}-transcript"
        engine = DataEngine.open_for_reading(row["data_dir"])
        try:
            session = engine.get_session(row["session_id"])
            assert session.task_id == row["task"] and engine.step_count(session.id) == row["steps"] == 3
        finally:
            engine.close()
    assert results["devices"] == serials
    assert results["unfinished"] == []
    # per-step progress from the actors (polled by the driver), not only each pair's final count
    assert len(done) == 2 and len(steps) > len(done), steps
    assert {d for d, _n in steps} == set(serials) and all(1 <= n <= 3 for _d, n in steps)
    stats = results["device_stats"]
    assert all(stats[s]["pairs"] == 1 and stats[s]["dropped"] is None for s in serials)
    pinned = {d["device"]: d["pinned_by"] for d in results["ray"]["devices"]}
    assert pinned == {s: device_resource(s) for s in serials}  # the discovered phone too: its node declares it
    assert results["ray"]["nodes"] == 2
    assert list((tmp_path / "nodes").iterdir()) == []  # each actor dropped its host work dir at the end
    # the state file keeps the finished pairs: the same command again runs none (and starts no actor)
    again = run_bench_ray(config, rig.cluster.address, devices_file)
    assert {r["session_id"] for r in again["tasks"]} == {r["session_id"] for r in rows.values()}
    assert again["devices"] == []
    state = json.loads(config.state_path.read_text(encoding="utf-8"))
    assert set(state["pairs"]) == {"ray-dark-a|transcript", "ray-dark-b|transcript"}


@pytest.mark.slow
def test_a_lost_actor_has_its_pair_requeued_once_on_the_other_phone(rig: Rig, tmp_path: Path) -> None:
    from artemis_cli.bench.ray_backend import DeviceSlot, actor_name, run_bench_ray

    config = _config(tmp_path)
    victim = rig.phones[1].serial
    killed: list[str] = []

    def kill_b(task_id: str, mode: str, slot: DeviceSlot) -> None:
        if slot.serial == victim and not killed:  # mid-pair: it was just handed to the actor
            rig.ray.kill(rig.ray.get_actor(actor_name(slot)), no_restart=True)
            killed.append(task_id)

    results = run_bench_ray(config, rig.cluster.address, rig.devices_file(tmp_path / "cluster.yaml"),
                            on_dispatch=kill_b)
    validate_results(results)
    assert len(killed) == 1
    rows = _rows(results)
    assert set(rows) == {"ray-dark-a", "ray-dark-b"} and results["unfinished"] == []
    survivor = rig.phones[0].serial
    assert {r["device"] for r in rows.values()} == {survivor}
    again = rows[killed[0]]
    assert again["attempts"] == 2 and again["requeued_from"] == victim and again["success"] is True
    assert again["interruptions"][0]["device"] == victim
    assert "actor died" in again["interruptions"][0]["reason"]
    assert results["device_stats"][victim]["dropped"] and results["device_stats"][victim]["pairs"] == 0
    assert results["device_stats"][survivor]["pairs"] == 2
    dirs = {d["device"]: d["work_dir"] for d in results["ray"]["devices"]}
    assert dirs[victim] and not Path(dirs[victim]).exists()  # the killed actor's work dir is gone from its host


@pytest.mark.slow
def test_a_phone_nobody_declares_is_a_clear_error(rig: Rig, tmp_path: Path) -> None:
    from artemis_cli.bench.ray_backend import run_bench_ray
    from artemis_cli.errors import DeviceError

    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump({"hosts": [{"address": rig.address, "devices": ["NOPE123"]}]}), encoding="utf-8")
    with pytest.raises(DeviceError, match=r"no live Ray node declares the resource of: NOPE123") as err:
        run_bench_ray(_config(tmp_path), rig.cluster.address, path)
    assert "artemis_device:SERIAL" in (err.value.hint or "")


@pytest.mark.slow
def test_a_lost_node_has_its_pair_requeued_on_a_phone_of_another_node(rig: Rig, tmp_path: Path) -> None:
    """A third node with its own phone joins, gets a pair, and is removed from the cluster mid-pair."""
    from artemis_cli.bench.ray_backend import DeviceSlot, run_bench_ray

    phone = _start_phone()
    try:
        node = rig.cluster.add_node(num_cpus=1, object_store_memory=OBJECT_STORE,
                                    resources={device_resource(phone.serial): 1})
        rig.cluster.wait_for_nodes()
        path = tmp_path / "cluster.yaml"
        path.write_text(yaml.safe_dump({"hosts": [
            {"address": rig.address, "adb_port": rig.phones[0].adb_port, "devices": [rig.phones[0].serial],
             "work_dir": str(tmp_path / "nodes")},
            {"address": rig.address, "adb_port": phone.adb_port, "devices": [phone.serial],
             "work_dir": str(tmp_path / "nodes")}]}), encoding="utf-8")
        removed: list[str] = []

        def lose_node(task_id: str, mode: str, slot: DeviceSlot) -> None:
            if slot.serial == phone.serial and not removed:
                assert slot.node_id == node.node_id
                rig.cluster.remove_node(node)
                removed.append(task_id)

        results = run_bench_ray(_config(tmp_path), rig.cluster.address, path, on_dispatch=lose_node)
    finally:
        _stop_phone(phone)
    validate_results(results)
    rows = _rows(results)
    assert len(removed) == 1 and set(rows) == {"ray-dark-a", "ray-dark-b"} and results["unfinished"] == []
    moved = rows[removed[0]]
    assert moved["requeued_from"] == phone.serial and moved["device"] == rig.phones[0].serial
    assert moved["ray_node"] == rig.nodes[0] and moved["success"] is True
    assert results["device_stats"][phone.serial]["dropped"]


def test_the_device_worker_runs_the_drivers_copy_of_a_task_and_ships_a_bundle(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No Ray needed: the actor's class on the in-process sim, with the suite missing on its host."""
    from artemis_cli.bench.ray_backend import DeviceWorker
    from artemis_cli.bench.worker import jobs_for, run_pair_job
    from artemis_cli.engine.bundle import import_bundle

    for name in ("ANDROID_ADB_SERVER_HOST", "ANDROID_ADB_SERVER_PORT"):
        monkeypatch.delenv(name, raising=False)  # DeviceWorker sets them (its own process, on a node)
    config = _config(tmp_path / "driver")
    job = jobs_for(config)[0]
    text = Path(job.task_file).read_bytes()
    Path(job.task_file).unlink()  # not on this "host"
    worker = DeviceWorker("sim", 5037, str(tmp_path / "node"))
    row, bundle = worker.run(run_pair_job, job, "ray-dark-a|transcript", {job.task_file: text})
    assert worker.steps() == 3  # what the driver polls for per-step progress
    assert row["task"] == "ray-dark-a" and row["success"] is True and row["device"] == "sim"
    path = tmp_path / "s.bundle"
    path.write_bytes(bundle)
    engine = DataEngine.open(tmp_path / "imported")
    try:
        assert import_bundle(engine, path).session_id == row["session_id"]
        assert engine.step_count(row["session_id"]) == 3
    finally:
        engine.close()
    worker.forget("ray-dark-a|transcript")
    assert list(worker.root.iterdir()) == []
    worker.close()
    assert not worker.root.exists()
