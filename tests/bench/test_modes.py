"""The legacy and naive projections render what they promise, with the ledger's interface."""

from __future__ import annotations

from artemis_cli.memory.ledger import LedgerEntry, LedgerSettings, Tail, TranscriptLedger
from artemis_cli.memory.modes import LEGACY_HISTORY_HEADING, LegacyLedger, NaiveLedger, ledger_for_mode
from artemis_cli.models.base import FunctionCall, FunctionResponse, Message, Part

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + (100).to_bytes(4, "big") * 2 + b"rest"


def _base() -> TranscriptLedger:
    return TranscriptLedger(system="sys", tools=[], task_text="# TASK\nDo it", settings=LedgerSettings(),
                            load_image=lambda sha: PNG)


def _fill(ledger: TranscriptLedger, n: int) -> None:
    for step in range(1, n + 1):
        turn = [Message("model", [Part(text=f"[script {step}/9] tap"), Part(function_call=FunctionCall("tap", {"index": step}))])]
        replies = [FunctionResponse("tap", {"status": "ok"})] if step > 1 else []
        ledger.commit(LedgerEntry(step=step, observation=f"# CURRENT OBSERVATION [T+00:0{step}]\nStep {step}\n<screen>x</screen>",
                                  image_sha=f"sha{step}", replies_in=replies, turn=turn))


def test_naive_keeps_every_image_and_list() -> None:
    ledger = ledger_for_mode("naive", _base())
    assert isinstance(ledger, NaiveLedger)
    _fill(ledger, 6)
    assert ledger.begin_turn(7, lambda s: ("ready", "summary")) == []
    msgs = ledger.messages(Tail(7, [], "# CURRENT OBSERVATION [T+00:07]\nnow", PNG), [])
    parts = [p for m in msgs for p in m.parts]
    assert sum(1 for p in parts if p.image_png) == 7
    assert sum(1 for p in parts if p.text and "<screen>" in p.text) == 6


def test_legacy_is_one_user_message_with_every_step_line() -> None:
    ledger = ledger_for_mode("legacy", _base())
    assert isinstance(ledger, LegacyLedger)
    _fill(ledger, 4)
    ledger.begin_turn(5, lambda s: ("ready", f"screen {s}"))
    msgs = ledger.messages(Tail(5, [FunctionResponse("tap", {"status": "ok"})], "# CURRENT OBSERVATION now", PNG), [])
    assert [m.role for m in msgs] == ["user"]
    history = next(p.text for p in msgs[0].parts if p.text and p.text.startswith(LEGACY_HISTORY_HEADING))
    assert [ln.split(":")[0] for ln in history.splitlines()[1:]] == [f"- Step {i}" for i in range(1, 5)]
    assert "[script 4/9]" in history and "screen 2" in history and "<screen>" not in history
    assert sum(1 for p in msgs[0].parts if p.image_png) == 1
