"""`artemis doctor` end to end: the real CLI in a subprocess on a data dir with a session the
real `artemis run` recorded, then damaged on disk the way it happens to users."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
#: The rows doctor adds about the data dir; the others depend on this machine (adb, phone, key).
DATA_CHECKS = {"data dir", "data dir writable", "free space", "database", "blobs"}
MACHINE_CHECKS = {"adb binary", "adb server", "device", "API key"}


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "ARTEMIS_GEMINI_BASE_URL", "GOOGLE_GEMINI_BASE_URL")}
    env["ANDROID_ADB_SERVER_PORT"] = "1"  # nothing listens there: adb rows fail fast and the same way
    return {**env, **extra}


def artemis(*args: str, prefix: tuple[str, ...] = (), env: dict[str, str] | None = None,
            ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*prefix, sys.executable, "-m", "artemis_cli", *args], cwd=REPO,
                          env=_env(**(env or {})), capture_output=True, text=True, timeout=300)


def doctor_json(data_dir: Path, *args: str, prefix: tuple[str, ...] = (), env: dict[str, str] | None = None,
                ) -> tuple[int, dict[str, Any]]:
    proc = artemis("doctor", "--data-dir", str(data_dir), "--json", *args, prefix=prefix, env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    payload = json.loads(proc.stdout)
    assert payload["ok"] is all(c["ok"] for c in payload["checks"])
    assert proc.returncode == (0 if payload["ok"] else 1)  # exit 1 exactly when a row failed
    return proc.returncode, payload


def data_rows(payload: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in payload["checks"] if c["check"] in DATA_CHECKS]


def failing(payload: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in payload["checks"] if not c["ok"]]


@pytest.fixture(scope="module")
def recorded_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir holding one session recorded by the real `artemis run` (read-only: copy it)."""
    path = tmp_path_factory.mktemp("recorded") / "data"
    proc = artemis("run", "tasks/demo.yaml", "--model", "heuristic", "--json", "--no-live", "--data-dir", str(path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["success"] is True
    assert not (path / "artemis.db-wal").exists()  # the run closed the DB: the WAL is checkpointed
    return path


@pytest.fixture
def data(recorded_dir: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "data"
    shutil.copytree(recorded_dir, copy)
    return copy


def references(data_dir: Path) -> list[tuple[str, int, str, str]]:
    """(session, step, field, sha) of every blob reference, in the order doctor names them."""
    conn = sqlite3.connect(f"file:{data_dir / 'artemis.db'}?mode=ro&immutable=1", uri=True)
    fields = ("pre_screenshot", "post_screenshot", "ui_xml", "post_ui_xml", "marker")
    union = " UNION ALL ".join(f"SELECT session_id, number, '{f}', {f} FROM steps WHERE {f} IS NOT NULL"
                               for f in fields)
    found = conn.execute(f"SELECT * FROM ({union}) ORDER BY 1, 2, 3").fetchall()
    conn.close()
    assert found
    return found


def first_use(data_dir: Path, index: int) -> tuple[str, str]:
    """A referenced blob (the ``index``-th distinct one) and how doctor names it."""
    firsts: dict[str, tuple[str, int, str]] = {}
    for session, step, field, sha in references(data_dir):
        firsts.setdefault(sha, (session, step, field))
    sha, (session, step, field) = list(firsts.items())[index]
    return sha, f"step {step} of session {session}: {field} blob {sha[:12]}…"


def test_a_recorded_data_dir_is_healthy(data: Path) -> None:
    before = sorted(p.relative_to(data) for p in data.rglob("*"))
    _, payload = doctor_json(data)
    assert [c["check"] for c in data_rows(payload)] == ["data dir", "data dir writable", "free space", "database",
                                                         "blobs"]
    assert all(c["level"] == "ok" for c in data_rows(payload)), data_rows(payload)
    assert {c["check"] for c in failing(payload)} <= MACHINE_CHECKS
    assert sorted(p.relative_to(data) for p in data.rglob("*")) == before  # nothing created


def test_a_deleted_blob_fails_and_names_the_step(data: Path) -> None:
    sha, named = first_use(data, -1)
    (data / "blobs" / sha[:2] / sha).unlink()
    code, payload = doctor_json(data)
    assert code == 1
    [problem] = [c for c in data_rows(payload) if not c["ok"]]
    assert problem["check"] == "blobs" and problem["detail"].startswith(f"{named} is missing")
    assert "restore the missing files" in problem["hint"]

    text = artemis("doctor", "--data-dir", str(data))
    assert text.returncode == 1
    lines = text.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith(f"✗ blobs: {named} is missing"))
    assert lines[at + 1].strip().startswith("→ restore the missing files under")
    assert lines[-1].startswith("Problems:") and "blobs" in lines[-1]


def test_an_altered_blob_is_named_with_deep(data: Path) -> None:
    sha, named = first_use(data, 0)
    blob = data / "blobs" / sha[:2] / sha
    raw = bytearray(blob.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    blob.write_bytes(bytes(raw))
    _, shallow = doctor_json(data)
    assert all(c["ok"] for c in data_rows(shallow))  # without --deep only presence is checked
    code, deep = doctor_json(data, "--deep")
    assert code == 1
    [problem] = [c for c in data_rows(deep) if not c["ok"]]
    assert problem["detail"].startswith(f"{named} is altered (its bytes hash to ")


def test_a_corrupted_database_page_is_reported_with_a_fix(data: Path) -> None:
    db = data / "artemis.db"
    size = db.stat().st_size
    with open(db, "r+b") as handle:
        handle.seek(size // 2)
        handle.write(b"\xa5" * 8192)
    code, payload = doctor_json(data)
    assert code == 1
    bad = [c for c in data_rows(payload) if not c["ok"]]
    assert bad and bad[0]["check"] == "database"
    # SQLite either refuses the file ("database disk image is malformed") or lists what
    # integrity_check found on the damaged pages: which one depends on what the write hit
    detail = bad[0]["detail"]
    assert detail.startswith("artemis.db: ") and ("malformed" in detail or "page" in detail.casefold())
    assert "restore artemis.db from a backup" in bad[0]["hint"] and "--data-dir" in bad[0]["hint"]


def test_a_file_that_is_not_a_database_does_not_crash_doctor(data: Path) -> None:
    (data / "artemis.db").write_bytes(b"\x00garbage" * 1000)
    code, payload = doctor_json(data)
    assert code == 1
    [bad] = [c for c in data_rows(payload) if not c["ok"]]
    assert "file is not a database" in bad["detail"]


def test_a_new_data_dir_is_fine_and_not_created(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    _, payload = doctor_json(empty)
    assert all(c["ok"] for c in data_rows(payload))
    assert "no artemis.db yet" in next(c["detail"] for c in payload["checks"] if c["check"] == "database")
    assert list(empty.iterdir()) == []

    missing = tmp_path / "missing"
    _, payload = doctor_json(missing)
    assert all(c["ok"] for c in data_rows(payload))
    assert "does not exist yet" in next(c["detail"] for c in payload["checks"] if c["check"] == "data dir")
    assert not missing.exists()


def test_the_gemini_endpoint_is_shown(tmp_path: Path) -> None:
    def endpoint(**env: str) -> dict[str, Any]:
        _, payload = doctor_json(tmp_path, env=env)
        return next(c for c in payload["checks"] if c["check"] == "Gemini endpoint")

    default = endpoint()
    assert default["ok"] and "generativelanguage.googleapis.com" in default["detail"]
    ours = endpoint(ARTEMIS_GEMINI_BASE_URL="http://127.0.0.1:8765/")
    assert ours["ok"] and ours["detail"] == "http://127.0.0.1:8765/ (from ARTEMIS_GEMINI_BASE_URL)"
    bad = endpoint(ARTEMIS_GEMINI_BASE_URL="localhost:8765")
    assert not bad["ok"] and "not an http(s) URL" in bad["detail"] and bad["hint"]


# -- a read-only mount and a full disk: real mounts in a private mount namespace ---------------


def _in_mount_namespace(script: str) -> tuple[str, ...]:
    probe = subprocess.run(["unshare", "-m", "sh", "-c", "mount -t tmpfs tmpfs /mnt"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip(f"cannot mount in a private namespace here: {probe.stderr.decode().strip()}")
    return ("unshare", "-m", "sh", "-c", script + ' && exec "$@"', "sh")


def test_a_read_only_data_dir_is_reported_and_still_checked(data: Path) -> None:
    prefix = _in_mount_namespace(f"mount --bind '{data}' '{data}' && mount -o remount,ro,bind '{data}'")
    code, payload = doctor_json(data, prefix=prefix)
    assert code == 1
    rows = {c["check"]: c for c in data_rows(payload)}
    assert rows["data dir writable"]["level"] == "error"
    assert "read-only file system" in rows["data dir writable"]["detail"]
    assert "writable --data-dir" in rows["data dir writable"]["hint"]
    assert rows["database"]["ok"] and rows["blobs"]["ok"]  # read-only, yet fully checked


def test_a_full_disk_is_an_error(data: Path, tmp_path: Path) -> None:
    mount = tmp_path / "small"
    mount.mkdir()
    # An 8 MB file system holding the data dir: under FREE_SPACE_ERROR_BYTES free.
    prefix = _in_mount_namespace(f"mount -t tmpfs -o size=8m tmpfs '{mount}' && cp -a '{data}' '{mount}/data'")
    code, payload = doctor_json(mount / "data", prefix=prefix)
    assert code == 1
    space = next(c for c in payload["checks"] if c["check"] == "free space")
    assert space["level"] == "error" and "disk full" in space["detail"] and space["hint"]
    assert all(c["ok"] for c in data_rows(payload) if c["check"] != "free space")


def test_a_read_only_database_fails_for_a_normal_user(data: Path) -> None:
    """chmod 444 does not stop root, so run doctor as `nobody` on a data dir that user owns
    (outside pytest's temp root, which is 0700)."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run doctor as another user")
    with tempfile.TemporaryDirectory(prefix="artemis-doctor-") as tmp:
        home = Path(tmp)
        home.chmod(0o755)
        owned = home / "data"
        shutil.copytree(data, owned)
        for path in [owned, *owned.rglob("*")]:
            os.chown(path, 65534, 65534)
        db = owned / "artemis.db"
        db.chmod(0o444)
        prefix = ("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups")
        code, payload = doctor_json(owned, prefix=prefix)
    assert code == 1
    [bad] = [c for c in data_rows(payload) if not c["ok"]]
    assert bad["check"] == "data dir writable" and bad["detail"].startswith(f"{db} is not writable")
    assert "r--r--r--" in bad["detail"] and f"chmod u+w {db}" in bad["hint"]
    assert all(c["ok"] for c in data_rows(payload) if c["check"] in ("database", "blobs"))
