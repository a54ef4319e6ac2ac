"""The HTML report: offline, escaped, one card per step, chunks when the table exists; checked in
headless Chromium (Debian's /usr/bin/chromium, installed by .ci/run)."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from artemis_cli.config.task import Task
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import LlmCallRecord
from artemis_cli.report import build_report, write_report

XSS = "<img src=x onerror=alert(1)>"


def _xss_task() -> Task:
    """A note whose title is markup: the simulated phone shows it as text on its screens."""
    return Task.model_validate({
        "id": "notes-xss-title",
        "goal": "Write a note with a strange title",
        "max_steps": 8,
        "sim": {"world": "default", "seed": 41, "popups": False},
        "setup": [{"shell": "am force-stop com.artemis.notes"}],
        "reference": [
            {"launch": "com.artemis.notes"},
            {"tap": {"text": "New note"}},
            {"type": {"text": XSS, "into": {"id": "title"}}},
            {"tap": {"desc": "Save note"}},
            {"tap": {"desc": XSS}},  # the saved note's row in the list: its target text is the title
            {"finish": {"success": True, "answer": f"saved {XSS}"}},
        ],
    })


@pytest.fixture
def xss_session(tmp_path: Path, record_task: Callable[..., Any]) -> tuple[DataEngine, str, int]:
    engine = DataEngine.open(tmp_path / "data")
    result = record_task(engine, _xss_task())
    # model calls with tokens, so the chart has bars
    for step in range(1, result.steps + 1):
        engine.record_llm_call(LlmCallRecord(session_id=result.session_id, role="operator", model=XSS, step=step,
                                             prompt_tokens=1000 * step, cached_tokens=600 * step))
    return engine, result.session_id, result.steps


def test_report_escapes_every_device_and_model_string(xss_session: tuple[DataEngine, str, int]) -> None:
    engine, sid, steps = xss_session
    recorded = engine.get_steps(sid)
    assert any((s.target or {}).get("content_desc") == XSS for s in recorded), "the title was on screen"
    assert XSS in engine.blob(recorded[-1].ui_xml or "").decode("utf-8").replace("&lt;", "<").replace("&gt;", ">")
    page = build_report(engine, sid)
    assert XSS not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert page.count("<article class='step'") == steps
    # the calls carry tokens: context size and cached share charts, tokens by role in the summary
    assert "id='context-chart'" in page and "id='cache-chart'" in page
    assert "<table class='tokens'>" in page and "cache share" in page
    # offline: no external references
    assert not re.search(r"""(src|href)=['"]?(https?:)?//""", page)


def test_chunk_section_shows_the_newest_version_escaped(xss_session: tuple[DataEngine, str, int]) -> None:
    from artemis_cli.memory.chunk_store import ChunkRow, append_chunk_version

    engine, sid, _ = xss_session
    base = {"session_id": sid, "start_step": 1, "end_step": 3, "status": "ready",
            "milestone": "note editor <b>open</b>", "band1": {"facts": ["<script>x</script>"]},
            "band3": "notes"}
    append_chunk_version(engine, ChunkRow(**base, band2="old narrative"))  # type: ignore[arg-type]
    append_chunk_version(engine, ChunkRow(**base, band2="newest narrative"))  # type: ignore[arg-type]
    page = build_report(engine, sid)
    assert "id='chunk-1'" in page and "Steps 1–3" in page
    assert "<script>x</script>" not in page and "<b>open</b>" not in page
    assert "note editor &lt;b&gt;open&lt;/b&gt;" in page
    assert "newest narrative" in page and "old narrative" not in page
    assert page.count("class='band chunk'") == 1
    band = page[page.index("class='band chunk'"):page.index("</section>", page.index("class='band chunk'"))]
    # band ① as text lines, never JSON
    assert "Facts:</span> &lt;script&gt;x&lt;/script&gt;" in band
    assert "{" not in band and "[&quot;" not in band


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")
def test_headless_chromium_renders_cards_and_shows_markup_as_text(
    xss_session: tuple[DataEngine, str, int], tmp_path: Path
) -> None:
    engine, sid, steps = xss_session
    report = write_report(engine, sid, tmp_path / "report.html")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars"]
    url = report.resolve().as_uri()
    shot = tmp_path / "report.png"
    dom = subprocess.run([CHROMIUM, *flags, f"--user-data-dir={tmp_path / 'profile-a'}", "--dump-dom", url],
                         capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert html.count('<article class="step"') == steps
    assert "&lt;img src=x onerror=alert(1)&gt;" in html  # shown as text…
    assert '<img src="x"' not in html and "onerror=" not in html.replace("onerror=alert(1)&gt;", "")  # …not markup
    proc = subprocess.run([CHROMIUM, *flags, f"--user-data-dir={tmp_path / 'profile-b'}", f"--screenshot={shot}",
                           "--window-size=1280,2000", url], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    cards = html.count('<article class="step"')
    print(f"\nchromium: {cards} step cards; screenshot {shot} ({shot.stat().st_size} bytes)")


def test_report_cli_writes_a_file(xss_session: tuple[DataEngine, str, int], tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from artemis_cli.cli.app import app

    engine, sid, _ = xss_session
    out = tmp_path / "r" / "x.html"
    out.parent.mkdir()  # -o never creates directories
    res = CliRunner().invoke(app, ["report", sid[:15], "-o", str(out), "--data-dir", str(engine.data_dir)])
    assert res.exit_code == 0, res.output
    assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
