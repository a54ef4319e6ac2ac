"""Storage errors are the user's to fix, not bugs (issue 11): a full disk stops a run as
`interrupted` with one line and a resume hint (exit 3, `--json` still prints its result), and a
read-only data dir can still be read while write commands say it is not writable.

Real file systems: a small tmpfs and a read-only bind mount, each in a private mount namespace
(`unshare -m`), so nothing leaks to the machine; skipped where mounting is not allowed."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
ARTEMIS = f"{shlex.quote(sys.executable)} -m artemis_cli"


def _namespace(script: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs tmpfs /mnt"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot mount in a private namespace here: {probe.stderr.decode().strip()}")
    return subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=timeout,
                          cwd=REPO)


def _blocks(text: str) -> dict[str, str]:
    """Split the script's output at `=== NAME` marker lines."""
    out: dict[str, str] = {}
    name = ""
    for line in text.splitlines():
        if line.startswith("=== "):
            name = line[4:].strip()
            out[name] = ""
        elif name:
            out[name] += line + "\n"
    return out


@pytest.mark.slow
def test_a_full_disk_stops_the_run_resumably_and_resume_finishes_after_space_is_freed(tmp_path: Path) -> None:
    mnt = tmp_path / "small"
    mnt.mkdir()
    data = mnt / "data"
    task = REPO / "tasks" / "clock-ten-alarms.yaml"
    script = f"""
        mount -t tmpfs -o size=2m tmpfs {mnt}
        {ARTEMIS} run {task} --model scripted --json --no-live --data-dir {data} > {tmp_path}/run.out 2> {tmp_path}/run.err
        rc=$?; echo "=== run_rc"; echo $rc
        mount -o remount,size=64m {mnt}
        {ARTEMIS} sessions list --json --data-dir {data} > {tmp_path}/list.out
        {ARTEMIS} resume latest --json --no-live --data-dir {data} > {tmp_path}/resume.out 2> {tmp_path}/resume.err
        rc=$?; echo "=== resume_rc"; echo $rc
    """
    proc = _namespace(script)
    blocks = _blocks(proc.stdout)
    assert blocks["run_rc"].strip() == "3", proc.stderr
    run_err = (tmp_path / "run.err").read_text()
    assert "Traceback" not in run_err and "unexpected" not in run_err
    result = json.loads((tmp_path / "run.out").read_text())
    assert result["status"] == "interrupted" and result["stop_reason"] == "storage_full"
    assert result["exit_code"] == 3
    assert result["message"].startswith(f"disk full at {data} (")
    assert result["message"].endswith(f"MB free): free space, then artemis resume {result['session_id']}")
    listed = json.loads((tmp_path / "list.out").read_text())
    assert listed[0]["id"] == result["session_id"] and listed[0]["status"] == "interrupted"
    assert blocks["resume_rc"].strip() == "0", (tmp_path / "resume.err").read_text()[-2000:]
    resumed = json.loads((tmp_path / "resume.out").read_text())
    assert resumed["status"] == "succeeded" and resumed["steps"] > result["steps"]


def test_a_read_only_data_dir_is_readable_and_refuses_writes(tmp_path: Path) -> None:
    data = tmp_path / "data"
    made = subprocess.run([sys.executable, "-m", "artemis_cli", "run", "tasks/demo.yaml", "--model", "heuristic",
                           "--json", "--no-live", "--data-dir", str(data)], capture_output=True, text=True,
                          timeout=300, cwd=REPO)
    assert made.returncode == 0, made.stderr
    session_id = json.loads(made.stdout)["session_id"]
    report = tmp_path / "report.html"
    d = f"--data-dir {data}"
    commands = {
        "list": f"{ARTEMIS} sessions list --json {d}",
        "show": f"{ARTEMIS} sessions show {session_id} --json {d}",
        "export": f"{ARTEMIS} sessions export {session_id} --format jsonl {d}",
        "recall": f"{ARTEMIS} recall {session_id} wifi --json {d}",
        "prompt": f"{ARTEMIS} sessions prompt {session_id} --step 2 {d}",
        "report": f"{ARTEMIS} report {session_id} -o {report} {d}",
        "run": f"{ARTEMIS} run tasks/demo.yaml --model heuristic --no-live {d}",
        "resume": f"{ARTEMIS} resume {session_id} {d}",
        "rm": f"{ARTEMIS} sessions rm {session_id} --yes {d}",
    }
    script = f"mount --bind {data} {data} && mount -o remount,ro,bind {data}\n" + "\n".join(
        f'echo "=== {name}"; {cmd} 2>&1; rc=$?; echo "=== {name}_rc"; echo $rc' for name, cmd in commands.items())
    blocks = _blocks(_namespace(script).stdout)
    for name in ("list", "show", "export", "recall", "prompt", "report"):
        assert blocks[f"{name}_rc"].strip() == "0", (name, blocks[name])
        assert "unexpected" not in blocks[name] and "damaged" not in blocks[name]
    assert json.loads(blocks["list"])[0]["id"] == session_id
    assert len(json.loads(blocks["show"])["steps"]) == 4
    assert len(blocks["export"].strip().splitlines()) == 4
    assert "match" in blocks["prompt"] and "mismatch" not in blocks["prompt"]
    assert report.stat().st_size > 0
    # the session ended, so resume is refused for that reason before any write is tried
    assert blocks["resume_rc"].strip() == "2"
    for name in ("run", "rm"):
        assert blocks[f"{name}_rc"].strip() == "2", (name, blocks[name])
        assert f"Error: the data dir {data} is not writable" in blocks[name]
        assert "read commands (sessions, report, recall, export) still work" in blocks[name]


def test_a_full_disk_outside_a_run_is_one_line_naming_the_data_dir(engine: Any, record_task: Callable[..., Any],
                                                                    tmp_path: Path) -> None:
    """`sessions import` on a full disk: the DataEngine raises StorageFull naming ITS dir (given
    here through $ARTEMIS_HOME, so nothing on the command line names it), not an unexpected
    OSError; the same for a read-only data dir named only by $ARTEMIS_HOME."""
    from artemis_cli.engine.bundle import write_bundle

    sid = record_task(engine, "demo.yaml").session_id
    bundle = tmp_path / "run.artemis"
    write_bundle(engine, sid, bundle)
    mnt = tmp_path / "small"
    mnt.mkdir()
    data = mnt / "data"
    ro = tmp_path / "ro"
    made = f"{shlex.quote(sys.executable)} -c 'import sys; from artemis_cli.engine.db import DataEngine; " \
           "DataEngine.open(sys.argv[1]).close()'"
    script = f"""
        mount -t tmpfs -o size=1m tmpfs {mnt}
        {made} {data}
        {made} {ro}
        dd if=/dev/zero of={mnt}/filler bs=4k 2>/dev/null
        echo "=== list"; ARTEMIS_HOME={data} {ARTEMIS} sessions list --json 2>&1; rc=$?; echo "=== list_rc"; echo $rc
        echo "=== full"; ARTEMIS_HOME={data} {ARTEMIS} sessions import {bundle} 2>&1; rc=$?; echo "=== full_rc"; echo $rc
        truncate -s -160K {mnt}/filler
        echo "=== part"; ARTEMIS_HOME={data} {ARTEMIS} sessions import {bundle} 2>&1; rc=$?; echo "=== part_rc"; echo $rc
        mount --bind {ro} {ro} && mount -o remount,ro,bind {ro}
        echo "=== ro"; ARTEMIS_HOME={ro} {ARTEMIS} sessions import {bundle} 2>&1; rc=$?; echo "=== ro_rc"; echo $rc
    """
    blocks = _blocks(_namespace(script, timeout=120).stdout)
    assert blocks["list_rc"].strip() == "0" and json.loads(blocks["list"]) == [], blocks["list"]  # reads still work
    for name in ("full", "part"):  # opening (the WAL index cannot grow), then writing the blobs
        assert blocks[f"{name}_rc"].strip() == "3", blocks[name]
        lines = blocks[name].splitlines()
        assert lines[0].startswith(f"Error: disk full at {data} ("), blocks[name]
        assert lines[0].endswith("MB free): free space, then run the command again")
        assert lines[1].startswith("Hint: nothing recorded so far is lost") and len(lines) == 2
    assert blocks["ro_rc"].strip() == "2", blocks["ro"]
    assert blocks["ro"].splitlines()[0] == f"Error: the data dir {ro} is not writable"
