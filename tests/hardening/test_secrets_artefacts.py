"""SPEC §5 invariant 5 end to end: no artefact a user can make holds the API key or a typed password.

The shop login task runs through the real CLI (``python -m artemis_cli``) with the gemini model
(the real google-genai SDK against ``FakeGeminiServer`` in this process, playing the task's
reference solution) and a sentinel API key. Then every artefact is produced — session list and
details, chunks, re-rendered prompts, recall, the HTML report, both exports, a replay plan, a real
replay on the simulated phone, runs that fail with model errors (400, an exhausted 503 chain, and
one under ``ARTEMIS_DEBUG=1``) — and every byte is searched: all files of the data dir (database,
WAL, blobs, in any encoding we can undo), every output file, every stdout and stderr.

The test can fail in both directions: the redaction marker must be present where the password was
typed (typing was not silently dropped), and the simulated phone must have received the real
password (the login succeeded and the order was placed).
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import json
import os
import secrets
import sqlite3
import struct
import subprocess
import sys
import zlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, quote_plus

from artemis_cli.config.task import load_task
from artemis_cli.engine.records import REDACTED as STORED_REDACTED
from artemis_cli.models.fakes.gemini import FakeGeminiServer
from artemis_cli.models.offline.scripted import script_policy
from artemis_cli.models.registry import reference_script
from artemis_cli.operators.act import REDACTED as TYPED_REDACTED
from artemis_cli.operators.secrets import secret_label

REPO = Path(__file__).resolve().parents[2]
TASK = REPO / "tasks" / "shop-buy-one.yaml"
PASSWORD = "artemis123"  # the Shop's demo password: the task's secret shop_password, from its variable
SECRET_ENV = "ARTEMIS_SECRET_SHOP_PASSWORD"
# where the password was typed, what a user reads names the secret (or, for text typed into a
# password field without one, the redaction marker)
MARKERS = (TYPED_REDACTED, STORED_REDACTED, secret_label("shop_password"), '"secret": "shop_password"')
# Chunks every 3 steps, so the chunk lens (which reads step records) runs on the password step too.
PROFILE = "extends: flash\nmemory:\n  chunking: {max_steps: 3}\n  transcript: {min_active_steps: 2}\n"


@dataclass(frozen=True)
class Output:
    """One CLI invocation: what it printed and how it ended."""

    name: str
    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


def _artemis(name: str, args: list[str], env: dict[str, str]) -> Output:
    done = subprocess.run([sys.executable, "-m", "artemis_cli", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=300)
    return Output(name, tuple(args), done.returncode, done.stdout, done.stderr)


def _needles(secret: str) -> dict[str, bytes]:
    """The secret in every encoding a leak could take: raw, URL-quoted, hex, UTF-16, and base64 at
    all three alignments (the stable middle of the encoding, whatever bytes surround it)."""
    raw = secret.encode("utf-8")
    found = {
        "raw": raw,
        "url": quote(secret, safe="").encode(),
        "url+": quote_plus(secret).encode(),
        "hex": raw.hex().encode(),
        "utf16": secret.encode("utf-16-le"),
    }
    for shift in range(3):
        for kind, encode in (("b64", base64.b64encode), ("b64url", base64.urlsafe_b64encode)):
            coded = encode(b"\0" * shift + raw + b"\0" * 3)
            # skip the characters that depend on the leading bytes; drop the tail that depends on the trailing ones
            start = 4 * ((shift + 2) // 3)
            end = 4 * ((shift + len(raw)) // 3)
            if end - start >= 8:
                found[f"{kind}@{shift}"] = coded[start:end]
    return found


def _png_text(data: bytes) -> Iterator[bytes]:
    """The text chunks of a PNG, decompressed (tEXt, zTXt, iTXt)."""
    pos = 8
    while pos + 8 <= len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + length]
        pos += 12 + length
        if kind == b"tEXt":
            yield body
        elif kind == b"zTXt":
            key, _, rest = body.partition(b"\0")
            yield key + b"\0" + zlib.decompress(rest[1:])
        elif kind == b"iTXt":
            key, _, rest = body.partition(b"\0")
            compressed, text = rest[0], rest[2:]
            yield key + b"\0" + (zlib.decompress(text.split(b"\0", 2)[-1]) if compressed else text)


def _views(data: bytes) -> Iterator[bytes]:
    """The bytes themselves plus anything we can decode out of them."""
    yield data
    if data[:2] == b"\x1f\x8b":
        yield gzip.decompress(data)
    elif data[:1] == b"\x78":
        with contextlib.suppress(zlib.error):
            yield zlib.decompress(data)
    elif data[:8] == b"\x89PNG\r\n\x1a\n":
        yield from _png_text(data)


def _database_dump(db: Path) -> bytes:
    """Every value of every table (WAL included), as SQL text."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return "\n".join(conn.iterdump()).encode("utf-8")
    finally:
        conn.close()


def _leaks(sources: dict[str, bytes], secrets_by_name: dict[str, str]) -> list[str]:
    leaks = []
    for what, secret in secrets_by_name.items():
        needles = _needles(secret)
        for source, data in sources.items():
            for view in _views(data):
                leaks += [f"{what} ({kind}) in {source}" for kind, needle in needles.items() if needle in view]
    return leaks


def test_no_artefact_holds_the_api_key_or_the_typed_password(tmp_path: Path) -> None:
    key = "AIzaSy-SENTINEL-" + secrets.token_hex(12)
    home = tmp_path / "home"
    out = tmp_path / "out"
    out.mkdir()
    profile = tmp_path / "chunky.yaml"
    profile.write_text(PROFILE)
    task = load_task(TASK)
    outputs: list[Output] = []
    base_env = {k: v for k, v in os.environ.items()
                if k not in ("GOOGLE_API_KEY", "ARTEMIS_DEBUG")
                and not k.startswith(("ARTEMIS_REPLAY_SECRET", "ARTEMIS_SECRET"))}

    with FakeGeminiServer(script_policy(reference_script(task)), expected_api_key=key) as server:
        env = {**base_env, "ARTEMIS_HOME": str(home), "GEMINI_API_KEY": key,
               "ARTEMIS_GEMINI_BASE_URL": server.base_url, SECRET_ENV: PASSWORD}
        # what the user has when the variable is gone: the recorded session only
        unset = {k: v for k, v in env.items() if k != SECRET_ENV}

        # 1. the run: the key must really be used (the server rejects any other key)
        run = _artemis("run", ["run", str(TASK), "--model", "gemini", "--profile", str(profile), "--no-live",
                               "--json"], env)
        outputs.append(run)
        assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
        result = json.loads(run.stdout)
        sid = result["session_id"]
        # the device got the real password: the Shop logged in and the order went through
        assert result["success"] and all(c["passed"] for c in result["checks"]), result["checks"]
        assert any("Desk Lamp x1" in c["detail"] for c in result["checks"])
        assert server.requests and all(r.status == 200 for r in server.requests)

        # keep one connection open so later writes stay in the WAL file, which is searched too
        # (the last connection to close would checkpoint it into the database and delete it)
        keep_wal = sqlite3.connect(home / "artemis.db")
        keep_wal.execute("select count(*) from sessions").fetchall()

        # 2. every artefact a user can make (read-only commands side by side) and 3. a replay on
        # the simulated phone, where the password comes from the environment, never from the DB
        report, jsonl, maestro = out / "report.html", out / "steps.jsonl", out / "flow.yaml"
        secret_env = {**unset, "ARTEMIS_REPLAY_SECRET": PASSWORD}  # the older replay name still works
        readers = {
            "list": (["sessions", "list", "--json"], env),
            "show-json": (["sessions", "show", sid, "--json"], env),
            "show-text": (["sessions", "show", sid], env),
            "chunks": (["sessions", "show", sid, "--chunks"], env),
            "prompt-4": (["sessions", "prompt", sid, "--step", "4", "--show"], env),
            "prompt-json": (["sessions", "prompt", sid, "--step", "4", "--json"], env),
            "recall-password": (["recall", sid, "password", "--details", "--json"], env),
            "recall-range": (["recall", sid, "--steps", "2-4", "--details"], env),
            "report": (["report", sid, "-o", str(report)], env),
            "export-jsonl": (["sessions", "export", sid, "--format", "jsonl", "-o", str(jsonl)], env),
            "export-maestro": (["sessions", "export", sid, "--format", "maestro", "-o", str(maestro)], env),
            "replay-plan": (["replay", sid, "--dry-run"], env),
            "replay-no-secret": (["replay", sid, "--json"], unset),
            "replay": (["replay", sid, "--json"], secret_env),
        }

        # 4. runs that fail with model errors (the error message path), one after the other
        # because injected faults go to whichever request comes first
        def failing_runs() -> dict[str, Output]:
            debug_env = {**env, "ARTEMIS_DEBUG": "1"}
            runs: dict[str, Output] = {}
            server.inject("400", model="gemini-2.5-flash")
            runs["run-400"] = _artemis("run-400", ["run", str(TASK), "--model", "gemini", "--no-live"], env)
            for model in ("gemini-2.5-flash", "gemini-2.0-flash"):  # the operator's chain in profiles/flash.yaml
                server.inject("503", count=3, model=model)  # 1 try + 2 retries per model
            runs["run-503"] = _artemis("run-503", ["run", str(TASK), "--model", "gemini", "--no-live"], env)
            server.inject("400", model="gemini-2.5-flash")
            runs["run-400-debug"] = _artemis("run-400-debug", ["run", str(TASK), "--model", "gemini", "--no-live"],
                                             debug_env)
            # an error raised out of the CLI after the Gemini client (holding the key) was built
            runs["run-raise-debug"] = _artemis("run-raise-debug", ["run", str(TASK), "--model", "gemini",
                                                                   "--device", "sim:no-such-world"], debug_env)
            return runs

        with ThreadPoolExecutor(max_workers=4) as pool:
            errors = pool.submit(failing_runs)
            pending = {name: pool.submit(_artemis, name, args, e) for name, (args, e) in readers.items()}
            read = {name: job.result() for name, job in pending.items()}
            failed = errors.result()
        outputs += [*read.values(), *failed.values()]

        without = read.pop("replay-no-secret")
        assert without.returncode == 2 and "ARTEMIS_REPLAY_SECRET" in without.stderr, without.stderr[-1500:]
        assert f"set {SECRET_ENV}" in without.stderr, without.stderr[-1500:]
        for name, res in read.items():
            assert res.returncode == 0, f"{name}: {res.stdout[-1500:]}{res.stderr[-1500:]}"
        chunks = read["chunks"].stdout
        assert "Chunk" in chunks and "Steps" in chunks, chunks[-1500:]  # the chunk lens did run
        # the re-rendered request (redacted records) is byte-identical to the one the model got
        assert json.loads(read["prompt-json"].stdout)["match"] is True
        replayed = json.loads(read["replay"].stdout)
        assert replayed["steps"] and all(s["status"] != "diverged" for s in replayed["steps"]), replayed["steps"]

        assert server.pending_faults() == 0
        assert all(res.returncode != 0 for res in failed.values()), {n: r.returncode for n, r in failed.items()}
        assert "400" in failed["run-400"].stdout and "400" in failed["run-400-debug"].stdout
        assert "503" in failed["run-503"].stdout
        assert "Traceback" in failed["run-raise-debug"].stderr  # ARTEMIS_DEBUG=1 shows the traceback

        # the key reached the service only as the x-goog-api-key header, never in a body
        for request in server.requests:
            assert key not in json.dumps(request.body)

    # 5. grep every byte
    sources: dict[str, bytes] = {}
    for path in sorted(home.rglob("*")) + sorted(out.rglob("*")):
        if path.is_file():
            sources[str(path.relative_to(tmp_path))] = path.read_bytes()
    sources["artemis.db (dump)"] = _database_dump(home / "artemis.db")
    keep_wal.close()
    for res in outputs:
        sources[f"{res.name} stdout"] = res.stdout.encode("utf-8")
        sources[f"{res.name} stderr"] = res.stderr.encode("utf-8")
    assert {"home/artemis.db", "home/artemis.db-wal"} <= set(sources)
    assert any(p.startswith("home/blobs/") for p in sources)
    leaks = _leaks(sources, {"API key": key, "password": PASSWORD})
    assert not leaks, "\n".join(leaks)

    # 6. ... and the password step is there, redacted, in what the user reads
    def marked(text: str) -> bool:
        return any(m in text for m in MARKERS)

    steps = json.loads(read["show-json"].stdout)["steps"]
    typed = [s["action"] for s in steps if s["action"]["type"] == "type_text"]
    assert len(typed) == 2 and typed[0]["args"]["text"] == "demo"
    # typed from secret shop_password: recorded by its name, its text shown as the secret's label
    assert typed[1]["args"]["secret"] == "shop_password" and typed[1]["args"]["redacted"] is True, typed[1]
    assert typed[1]["args"]["text"] == secret_label("shop_password"), typed[1]
    assert marked(sources["artemis.db (dump)"].decode("utf-8"))
    for name in ("prompt-4", "recall-range"):
        assert marked(read[name].stdout), f"no redaction marker in {name}"
    assert marked(report.read_text(encoding="utf-8"))
    assert marked(jsonl.read_text(encoding="utf-8"))
    assert "PASSWORD" in maestro.read_text(encoding="utf-8")  # a Maestro variable, never the text
    assert "password" in read["replay-plan"].stdout
