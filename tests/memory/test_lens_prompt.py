"""The lens prompt pinned byte for byte, and the wording checks (SPEC §10.1).

Regenerate the golden files with ARTEMIS_UPDATE_GOLDEN=1 and review the diff.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from golden_files import assert_golden
from PIL import Image

from artemis_cli.memory.lens import (
    MAX_OUTPUT_CHARS,
    MIN_OUTPUT_CHARS,
    SECTION_MARKERS,
    VERDICT_WORDS,
    LensError,
    LensJob,
    build_lens_request,
    check_lens_output,
    neutralize_verdict_words,
    verdict_words,
)
from artemis_cli.models.base import ModelRequest

GOLDEN = Path(__file__).parent / "golden"


def check(name: str, text: str) -> None:
    assert_golden(GOLDEN / name, text)


def png() -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", (1080, 2400), (250, 250, 250)).save(buf, format="PNG")
    return buf.getvalue()


def render(request: ModelRequest) -> str:
    lines = [f"role: {request.role}", "=== system ===", request.system, "=== messages ==="]
    for message in request.messages:
        lines.append(f"--- {message.role} ---")
        for part in message.parts:
            lines.append("[image/png]" if part.image_png is not None else (part.text or ""))
    return "\n".join(lines) + "\n"


def job(post: bool, kind: str = "tap", points: list[tuple[int, int]] | None = None) -> LensJob:
    return LensJob(
        session_id="s", step=7, pre_png=png(), post_png=png() if post else None, action_kind=kind,
        points=[(962, 348)] if points is None else points,
        action_phrase='tap Switch "Wi-Fi" (id wifi_switch)', pre_xml="", post_xml=None,
        observed={"summary": 'Switch "Wi-Fi" (id wifi_switch) now checked'} if post else None,
    )


def test_transition_prompt_golden() -> None:
    request = build_lens_request(job(post=True))
    assert request.role == "lens" and request.tools == []
    check("lens_prompt_transition.txt", render(request))


def test_single_image_prompt_golden() -> None:
    check("lens_prompt_single.txt", render(build_lens_request(job(post=False))))


def test_actions_without_a_position_say_so() -> None:
    request = build_lens_request(job(post=True, kind="press_key", points=[]))
    assert "Marker: none (this action has no screen position)." in request.messages[0].parts[0].text  # type: ignore[operator]


def test_the_system_prompt_lists_every_verdict_word() -> None:
    request = build_lens_request(job(post=True))
    assert all(word in request.system for word in VERDICT_WORDS)


# --- wording checks --------------------------------------------------------------------------

REQUIRED = ("successfully", "successful", "success", "completed", "complete", "failed", "failure",
            "navigated", "entered", "correctly", "incorrectly", "achieved", "accomplished", "done")


def test_the_list_holds_at_least_the_required_words() -> None:
    assert set(REQUIRED) <= set(VERDICT_WORDS)


@pytest.mark.parametrize("word", REQUIRED)
def test_each_verdict_word_is_found_whole_and_case_insensitive(word: str) -> None:
    assert verdict_words(f"The screen {word.upper()} now.") == [word.upper()]
    assert verdict_words(f"The screen shows {word}x and x{word}.") == []
    with pytest.raises(LensError) as info:
        check_lens_output(f"The settings list is visible; it {word.capitalize()} here.")
    assert info.value.reason == "verdict_word"


def test_quoted_screen_text_is_exempt_but_an_unbalanced_quote_is_not() -> None:
    assert verdict_words('A "Done" button and a "Payment \\"successful\\"" toast.') == []
    assert verdict_words('It reads "Done.\nThe step is done') == ["Done", "done"]
    assert verdict_words('A "' + "x" * 300 + ' done"') == ["done"]  # overlong quotes do not hide


def test_neutralize_quotes_stray_verdict_words() -> None:
    text = 'finish(success=true, answer="Done") then done; Completed.'
    out = neutralize_verdict_words(text)
    assert verdict_words(out) == []
    assert out == 'finish("success"=true, answer="Done") then "done"; "Completed".'


def test_output_length_bounds() -> None:
    assert check_lens_output("  " + "a" * MIN_OUTPUT_CHARS + "\n") == "a" * MIN_OUTPUT_CHARS
    with pytest.raises(LensError):
        check_lens_output("a" * (MIN_OUTPUT_CHARS - 1))
    assert check_lens_output("a" * MAX_OUTPUT_CHARS)
    with pytest.raises(LensError) as info:
        check_lens_output("a" * (MAX_OUTPUT_CHARS + 1))
    assert info.value.reason == "too_long"


@pytest.mark.parametrize("marker", SECTION_MARKERS)
def test_echoed_section_markers_fail(marker: str) -> None:
    with pytest.raises(LensError) as info:
        check_lens_output(f"Some description. {marker.lower()} the list of settings.")
    assert info.value.reason == "echo"
