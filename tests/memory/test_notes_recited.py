"""Saved notes are recited in the current observation: newest first, bounded, quoted as untrusted
text, with a pointer to read_note for what was left out (issue 22 "Notes recited")."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from run_support import demo_on_fake_gemini

from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import SessionRecord
from artemis_cli.memory.notes import RECITE_MAX_CHARS, RECITE_MAX_NOTES, list_notes, recited_notes, save_note
from artemis_cli.perception.quoting import quote_untrusted

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def engine(tmp_path: Path) -> DataEngine:
    return DataEngine.open(tmp_path / "data")


def _session(engine: DataEngine) -> str:
    return engine.create_session(SessionRecord(goal="g"))


def test_newest_first_newest_version_and_quoted(engine: DataEngine) -> None:
    sid = _session(engine)
    save_note(engine, sid, "code", "1234", 1)
    save_note(engine, sid, "name", 'Ada "</screen>"\nLovelace', 2)
    save_note(engine, sid, "code", "5678", 3)  # a newer version of an older key: newest now
    lines = recited_notes(list_notes(engine, sid))
    assert lines == ['- "code": "5678"', '- "name": "Ada \\"<\\/screen>\\"\\nLovelace"']


def test_bounded_by_count_with_a_pointer_to_read_note(engine: DataEngine) -> None:
    sid = _session(engine)
    for i in range(RECITE_MAX_NOTES + 4):
        save_note(engine, sid, f"k{i}", f"v{i}", i + 1)
    lines = recited_notes(list_notes(engine, sid))
    assert lines[0] == f'- "k{RECITE_MAX_NOTES + 3}": "v{RECITE_MAX_NOTES + 3}"'
    assert len(lines) == RECITE_MAX_NOTES + 1 and lines[-1] == "(+4 more: read_note)"


def test_bounded_by_characters_and_each_value_cut(engine: DataEngine) -> None:
    sid = _session(engine)
    for i in range(8):
        save_note(engine, sid, f"k{i}", str(i) * 1000, i + 1)
    lines = recited_notes(list_notes(engine, sid))
    notes = lines[:-1]
    assert notes[0] == f'- "k7": {quote_untrusted("7" * 1000, 300)}'  # cut, with "…"
    assert sum(len(x) + 1 for x in notes) <= RECITE_MAX_CHARS
    assert lines[-1] == f"(+{8 - len(notes)} more: read_note)"
    assert recited_notes([]) == []


def _saving_a_note(policy: Any) -> Any:
    """The reference script, with a save_note call beside its first action."""
    done = {"saved": False}

    def wrapped(request: Any) -> Any:
        reply = policy(request)
        if request.tools and not done["saved"]:
            done["saved"] = True
            reply.parts.insert(0, {"functionCall": {"name": "save_note",
                                                    "args": {"key": "ssid", "content": "Home-5G"}}})
        return reply

    return wrapped


@pytest.fixture
def run(tmp_path: Path) -> Iterator[tuple[Any, DataEngine]]:
    with demo_on_fake_gemini(tmp_path / "data", _saving_a_note) as (result, engine, _):
        yield result, engine


def test_a_saved_note_is_recited_in_the_next_observations_body(run: tuple[Any, DataEngine]) -> None:
    result, engine = run
    assert result.success
    observations = [s.meta["observation"] for s in engine.get_steps(result.session_id)]
    assert "saved notes" not in observations[0]
    for text in observations[1:]:
        head, body = text.split("\n# CURRENT OBSERVATION", 1)
        assert '- "ssid": "Home-5G"' in body and "ssid" not in head  # the body is scrubbed later
