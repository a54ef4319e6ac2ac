"""Password redaction works on the stored turn's structure, never on its bytes (SPEC §5 invariant 5,
§10.2, §10.6; issue 11 item 6).

A blind replace over the serialised turn corrupted it for short passwords: ``A`` occurs in most
base64 thought signatures, ``7`` in ``{"index": 7}``, ``true`` in ``"submit": true``; reading the
step back then failed, the run crashed and every resume crashed the same way.

End to end, once per password: the Shop login task (its password set through the task's
``sim: {shop_password_env: …}``) runs through the real CLI with the gemini model — the real
google-genai SDK against ``FakeGeminiServer`` in this process, playing the task's reference
solution with thought signatures — and is killed with SIGKILL while the model answers step 5
(the password was typed at step 3, and step 4's request already showed that turn redacted);
``artemis resume`` finishes it. Then: the sim logged in with the
real password and the order went through; every stored turn parses; the password is nowhere in
the DataEngine nor in any blob but screenshots; the signature of the redacted call is still the
one the service issued; and every request of every step re-renders to the hash recorded when it
was sent (the machinery of ``artemis sessions prompt --step N``).
"""

from __future__ import annotations

import base64
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_secrets_artefacts import _database_dump, _leaks

from artemis_cli.config.task import load_task
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import SessionRecord
from artemis_cli.memory.recall import Recall
from artemis_cli.memory.restore import entry_from_step
from artemis_cli.memory.turn_check import check_turn
from artemis_cli.models.base import FunctionCall, FunctionResponse, Message, ModelRequest, Part
from artemis_cli.models.fakes.gemini import FakeGeminiServer, FakeReply, FakeRequest
from artemis_cli.models.gemini import GeminiModel
from artemis_cli.models.offline.scripted import script_policy
from artemis_cli.models.registry import reference_script
from artemis_cli.operators.act import REDACTED as TYPED_REDACTED
from artemis_cli.operators.act import ActionResult
from artemis_cli.operators.observe import observe
from artemis_cli.operators.recording import StepWriter, redact_turn
from artemis_cli.operators.tools import tool_declarations
from artemis_cli.operators.turn import model_text, run_turn
from artemis_cli.sim.phone import SimPhone

REPO = Path(__file__).resolve().parents[2]
PASSWORD_ENV = "ARTEMIS_TEST_SHOP_PASSWORD"
PASSWORD_STEP = 3  # launch, username, password, ...
HOLD_STEP = 5  # the run is killed while the model answers this step's first request
STEP_RE = re.compile(r"^# STEP (\d+) of at most", re.M)
PNG = b"\x89PNG\r\n\x1a\n"


# -- unit: redaction by structure ---------------------------------------------------------------


def _signature_containing(secret: str) -> bytes:
    """Signature bytes whose base64 form contains ``secret`` (what a blind replace hit)."""
    padded = secret + "A" * (-len(secret) % 4)
    raw = base64.b64decode(padded + "AAAA")
    assert secret in base64.b64encode(raw).decode("ascii")
    return raw + b"\x00\xff"


@pytest.mark.parametrize("secret", ["A", "7", "true", "text", "artemis123"])
def test_redaction_keeps_signatures_numbers_keys_and_booleans(secret: str) -> None:
    signature = _signature_containing(secret)
    other_signature = _signature_containing(secret)[::-1]
    call = FunctionCall("type_text", {"index": 7, "text": secret, "submit": True}, "call-1")
    turn = [
        Message("model", [Part(text=f"Typing {secret} into the password field", thought=True,
                               thought_signature=other_signature),
                          Part(function_call=call, thought_signature=signature)]),
    ]
    before = json.dumps([m.to_dict() for m in turn], ensure_ascii=False)

    redacted = redact_turn(turn, [secret])

    assert json.dumps([m.to_dict() for m in turn], ensure_ascii=False) == before  # the live turn is untouched
    (message,) = redacted
    thought, typed = message.parts
    assert typed.thought_signature == signature and thought.thought_signature == other_signature
    assert typed.function_call == FunctionCall("type_text", {"index": 7, "text": TYPED_REDACTED, "submit": True},
                                               "call-1")
    assert list(typed.function_call.args) == ["index", "text", "submit"]  # same keys, same order
    assert thought.thought and thought.text == f"Typing {TYPED_REDACTED} into the password field"
    stored = [m.to_dict() for m in redacted]
    assert stored[0]["parts"][1]["thought_signature"] == base64.b64encode(signature).decode("ascii")
    # what the DataEngine keeps reads back (a blind replace broke exactly this)
    back = [Message.from_dict(d) for d in json.loads(json.dumps(stored, ensure_ascii=False))]
    assert back[0].parts[1].thought_signature == signature
    assert back[0].parts[1].function_call == typed.function_call
    assert secret not in model_text(redacted)


def test_redaction_touches_only_typed_text() -> None:
    """Other calls' arguments, in-turn answers and user parts are kept, even when they hold the
    secret's characters; a turn with no secret comes back equal."""
    secret = "7"
    tap = FunctionCall("tap", {"index": 7}, "t")
    note = FunctionCall("recall_history", {"query": "7"}, "r")
    answer = Message("user", [Part(function_response=FunctionResponse("recall_history", {"steps": [7]}, "r")),
                              Part(text="Call exactly one action tool (or finish) to continue. 7")])
    turn = [Message("model", [Part(function_call=tap), Part(function_call=note)]), answer,
            Message("model", [Part(function_call=FunctionCall("type_text", {"text": "77"}))])]
    redacted = redact_turn(turn, [secret, ""])
    assert redacted[0].to_dict() == turn[0].to_dict() and redacted[1] is answer
    assert redacted[2].parts[0].function_call.args == {"text": TYPED_REDACTED * 2}  # type: ignore[union-attr]
    assert [m.to_dict() for m in redact_turn(turn, [""])] == [m.to_dict() for m in turn]
    # the longer secret goes first: "ab" is one redaction, not "a" + a stray "b"
    ab = [Message("model", [Part(text="ab")])]
    assert redact_turn(ab, ["a", "ab"])[0].parts[0].text == TYPED_REDACTED


def test_a_rejected_password_call_is_stored_redacted_too(tmp_path: Path) -> None:
    """A password call the loop rejects (two actions in one message) still typed nothing, but the
    model wrote the password: the stored turn holds it redacted, its signature kept, though the
    action that ended the turn typed into another field. Real SDK, fake service, sim phone."""
    secret = "s3cret-Pass"
    phone = SimPhone(popups=False, shop_password=secret)
    phone.launch("com.artemis.shop")
    info = phone.info()
    obs = observe(phone, (info.width, info.height), "pixels")
    index = {e.node.resource_id.rsplit("/", 1)[-1]: e.index for e in obs.elements if e.node.resource_id}

    def policy(request: FakeRequest) -> FakeReply:
        if not any(c.get("role") == "model" for c in request.contents):  # first call: two actions at once
            return FakeReply(parts=[{"functionCall": {"name": "type_text", "args": {"index": index["password"],
                                                                                    "text": secret}}},
                                    {"functionCall": {"name": "tap", "args": {"index": index["login"]}}}],
                             thought_text=f"The password is {secret}; type it and log in.")
        return FakeReply.call("type_text", {"index": index["username"], "text": "demo"})

    engine = DataEngine.open(tmp_path / "data")
    sid = engine.create_session(SessionRecord(goal="Log in to the Shop"))
    with FakeGeminiServer(policy) as server:
        model = GeminiModel(["gemini-2.5-flash"], api_key="k", base_url=server.base_url, sleep=lambda s: None,
                            backoff_s=0.0)
        opening = Message("user", [Part(text="Log in to the Shop.")])
        turn = run_turn(lambda msgs: ModelRequest("system", [opening, *msgs], tool_declarations()),
                        model.generate, obs, packages=lambda: [])
        assert all(r.status == 200 for r in server.requests) and len(server.requests) == 2
        assert turn.action is not None and turn.action.secret is None  # "demo" into the username field
        assert turn.secrets == [secret]
        StepWriter(engine, sid, Recall(engine)).write(
            number=1, started_at="2025-01-01T00:00:00.000Z", offset_ms=0, pre=obs, post=obs, action=turn.action,
            result=ActionResult("ok"), turn=turn, users=[], observation="obs", replies_in=[], replies_out=[])
        step = engine.get_step(sid, 1)
        parts = [Part.from_dict(p) for m in (step.meta or {})["messages"] if m["role"] == "model" for p in m["parts"]]
        typed = {p.function_call.args["text"]: p for p in parts if p.function_call and p.function_call.name == "type_text"}
        assert set(typed) == {TYPED_REDACTED, "demo"}
        signature = typed[TYPED_REDACTED].thought_signature
        assert signature is not None and server.issued_signature(signature)
        assert secret not in (step.thought or "") and TYPED_REDACTED in (step.thought or "")
    engine.close()
    leaks = [where for where, value in _stored_values(tmp_path / "data" / "artemis.db") if secret in value]
    assert not leaks, leaks


# -- end to end: run, kill, resume, check ---------------------------------------------------------


def _task_file(tmp_path: Path, password: str) -> Path:
    """The Shop purchase task (tasks/shop-buy-one.yaml) with the account password ``password``.
    The goal never names the password: it is in the reference solution only."""
    doc: dict[str, Any] = {
        "id": "shop-secret-login",
        "goal": "Log in to the Shop with the demo account and buy a Desk Lamp",
        "max_steps": 15,
        "sim": {"world": "default", "seed": 57, "popups": False, "shop_password_env": PASSWORD_ENV},
        "setup": [{"shell": "am force-stop com.artemis.shop"}],
        "success": [
            {"shell": "content query --uri content://com.artemis.shop/orders",
             "matches": "items=1, total=27.99, products=Desk Lamp x1$"},
            {"visible": "Thank you for your order!"},
        ],
        "reference": [
            {"launch": "com.artemis.shop"},
            {"type": {"text": "demo", "into": {"id": "username"}}},
            {"type": {"text": password, "into": {"id": "password"}, "submit": True}},
            {"swipe": {"from": [540, 2100], "to": [540, 700]}},
            {"tap": {"desc": "Add Desk Lamp to cart"}},
            {"tap": {"id": "cart_button"}},
            {"tap": {"text": "Checkout"}},
            {"finish": {"success": True, "answer": "Ordered one Desk Lamp"}},
        ],
    }
    path = tmp_path / "shop-secret.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


class HoldAtStep:
    """A policy that holds the first operator request of ``step`` until released (so the runner
    can be killed mid-call at a known point), then answers like ``inner``."""

    def __init__(self, inner: Any, step: int) -> None:
        self.inner = inner
        self.step = step
        self.reached = threading.Event()
        self.release = threading.Event()

    def __call__(self, request: FakeRequest) -> FakeReply:
        m = STEP_RE.search(request.last_user_text())
        if request.tools and m and int(m.group(1)) == self.step and not self.release.is_set():
            self.reached.set()
            self.release.wait(120)
        reply: FakeReply = self.inner(request)
        return reply


def _artemis(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "artemis_cli", *args], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=300)


def _strings(value: Any) -> list[str]:
    """Every string inside a JSON value (keys included)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _stored_values(db: Path) -> list[tuple[str, str]]:
    """(table.column, string) for every text value in the database, JSON values opened up."""
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        out: list[tuple[str, str]] = []
        tables = [r[0] for r in conn.execute("select name from sqlite_master where type = 'table'")]
        for table in tables:
            cursor = conn.execute(f'select * from "{table}"')
            names = [d[0] for d in cursor.description]
            for row in cursor:
                for name, value in zip(names, row, strict=True):
                    if not isinstance(value, str):
                        continue
                    try:
                        found = _strings(json.loads(value))
                    except ValueError:
                        found = [value]
                    out += [(f"{table}.{name}", s) for s in found]
        return out
    finally:
        conn.close()


def _password_nodes(xml: str) -> list[str]:
    """The text of every password node in a uiautomator dump."""
    import xml.etree.ElementTree as ET

    return [n.get("text", "") for n in ET.fromstring(xml).iter("node") if n.get("password") == "true"]


@pytest.mark.slow
@pytest.mark.parametrize("password", ["A", "7", "true", "artemis123"])
def test_password_session_survives_kill_resume_and_rerenders(password: str, tmp_path: Path) -> None:
    task_path = _task_file(tmp_path, password)
    task = load_task(task_path)
    home = tmp_path / "home"
    hold = HoldAtStep(script_policy(reference_script(task)), HOLD_STEP)
    base_env = {k: v for k, v in os.environ.items()
                if not k.startswith(("ARTEMIS_SECRET", "ARTEMIS_REPLAY_SECRET", "GOOGLE_API_KEY", "ARTEMIS_DEBUG"))}
    with FakeGeminiServer(hold) as server:
        env = {**base_env, "ARTEMIS_HOME": str(home), "GEMINI_API_KEY": "test-key",
               "ARTEMIS_GEMINI_BASE_URL": server.base_url, PASSWORD_ENV: password}

        # 1. the run, killed while the model answers step 5 (steps 1-4 committed, 3 typed the password)
        proc = subprocess.Popen([sys.executable, "-m", "artemis_cli", "run", str(task_path), "--model", "gemini",
                                 "--no-live", "--json"], cwd=REPO, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 240
            while not hold.reached.wait(0.1) and proc.poll() is None and time.monotonic() < deadline:
                pass
            if not hold.reached.is_set() or proc.poll() is not None:
                proc.kill()
                out, err = proc.communicate()
                pytest.fail(f"the run never reached step {HOLD_STEP}: exit {proc.returncode}\n{out[-2000:]}"
                            f"{err[-3000:]}")
            os.kill(proc.pid, signal.SIGKILL)
            proc.communicate()
        finally:
            hold.release.set()

        engine = DataEngine.open(home)
        (session,) = engine.list_sessions()
        sid = session.id
        assert session.status in ("running", "interrupted")  # killed: it never ended
        assert engine.last_step_number(sid) == HOLD_STEP - 1
        # every committed turn reads back (the blind replace made this raise)
        for record in engine.get_steps(sid):
            entry_from_step(engine, record)

        # 2. resume: the sim is fast-forwarded with $ARTEMIS_SECRET, never the DataEngine
        done = _artemis(["resume", sid, "--json", "--no-live"], {**env, "ARTEMIS_SECRET": password})
        assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
        result = json.loads(done.stdout)
        # the sim got the real password (login and order), after the kill as before it
        assert result["success"] and all(c["passed"] for c in result["checks"]), result["checks"]
        assert all(r.status != 400 for r in server.requests)  # no signature was ever refused

        # 3. the model never saw its password again once the turn was committed ...
        typed_live = [p["functionCall"]["args"].get("text") for r in server.requests for c in r.contents
                      if c.get("role") == "model" for p in c.get("parts", [])
                      if p.get("functionCall", {}).get("name") == "type_text"]
        assert typed_live and password not in typed_live and TYPED_REDACTED in typed_live
        # ... and the redacted call still carries the signature the service issued, byte for byte
        steps = engine.get_steps(sid)
        numbers = [s.number for s in steps]
        assert numbers == list(range(1, len(numbers) + 1)) and numbers[-1] > HOLD_STEP
        secret_step = steps[PASSWORD_STEP - 1]
        assert secret_step.target and secret_step.target["password"] is True
        assert secret_step.action_args["redacted"] is True and secret_step.action_args["text"] != password
        calls = [Part.from_dict(p) for m in (secret_step.meta or {})["messages"] if m["role"] == "model"
                 for p in m["parts"] if "function_call" in p]
        (typed,) = calls
        assert typed.function_call is not None and typed.function_call.args["text"] == TYPED_REDACTED
        assert typed.thought_signature is not None and server.issued_signature(typed.thought_signature)
        assert password not in (secret_step.thought or "")

        # 4. every request of every step re-renders to the hash recorded when it was sent
        for number in numbers:
            check = check_turn(engine, sid, number)
            assert check.match, (number, check.rows)
        cli = _artemis(["sessions", "prompt", sid, "--step", str(PASSWORD_STEP + 1), "--json"], env)
        assert cli.returncode == 0 and json.loads(cli.stdout)["match"] is True, cli.stdout + cli.stderr
        engine.close()

    # 5. the password is nowhere in the DataEngine, nor in any blob but screenshots
    db = home / "artemis.db"
    exact = [where for where, value in _stored_values(db) if value == password]
    assert not exact, exact
    blobs = {str(p.relative_to(home)): p.read_bytes() for p in (home / "blobs").rglob("*") if p.is_file()}
    xml_blobs = {name: data for name, data in blobs.items() if not data.startswith(PNG)}
    assert xml_blobs and any(b"password=\"true\"" in data for data in xml_blobs.values())
    for name, data in xml_blobs.items():
        assert all(password not in text for text in _password_nodes(data.decode("utf-8"))), name
    if len(password) >= 6:  # long enough to grep for in every encoding without false alarms
        sources = {"artemis.db (dump)": _database_dump(db), **xml_blobs}
        sources.update({p.name: p.read_bytes() for p in home.glob("artemis.db*") if p.is_file()})
        leaks = _leaks(sources, {"password": password})
        assert not leaks, "\n".join(leaks)
