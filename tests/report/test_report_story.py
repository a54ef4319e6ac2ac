"""The report reads like a story: summary first, then the timeline with level tags and readable
chunk / era bands; no chart without data; device text escaped; images once per blob, thumbnails,
``--assets DIR``; and a headless Chromium screenshot whose first viewport shows the summary and the
first step (Debian's /usr/bin/chromium, installed by .ci/run; skipped without it)."""

from __future__ import annotations

import base64
import io
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from artemis_cli.config.task import Task
from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.records import SessionRecord, StepRecord
from artemis_cli.report import build_report, write_report

SCRIPT = "<script>alert('x')</script>"


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory,
         record_task: Callable[..., Any]) -> tuple[DataEngine, str, int]:
    """The 60-odd step shop order with the scripted (offline) model: chunks, periods, pop-ups."""
    engine = DataEngine.open(tmp_path_factory.mktemp("shop") / "data")
    result = record_task(engine, "shop-office-order.yaml")
    return engine, result.session_id, result.steps


@pytest.fixture(scope="module")
def shop_page(shop: tuple[DataEngine, str, int]) -> str:
    engine, sid, _ = shop
    return build_report(engine, sid)


def test_the_summary_comes_first_and_says_what_happened(shop: tuple[DataEngine, str, int], shop_page: str) -> None:
    steps = shop[2]
    page = shop_page
    summary, timeline, first = page.index("id='summary'"), page.index("id='timeline'"), page.index("id='step-1'")
    assert summary < timeline < first
    head = page[summary:timeline]
    assert "Log in to the Shop with the demo account" in head  # the goal
    assert "class='badge succeeded'>succeeded" in head and "all success checks passed" in head
    assert "scripted" in head and "offline" in head  # the model label says it is offline
    assert f"<dt>steps</dt><dd>{steps}</dd>" in head and "<dt>wall time</dt>" in head
    assert "none billed — offline model" in head  # no table of zeros, no invented cost
    assert "<table class='tokens'>" not in head and "$" not in head.replace("$595.52", "")
    assert page.count("<article class='step'") == steps


def test_no_chart_for_an_offline_session(shop_page: str) -> None:
    assert "<svg class='chart'" not in shop_page and "id='charts'" not in shop_page


def test_steps_carry_their_compression_level_and_bands_are_text(shop_page: str) -> None:
    tags = re.findall(r"<span class='lvl [a-z]+' title='[^']*'>([^<]+)</span>", shop_page)
    assert len(tags) == shop_page.count("<article class='step'")
    kinds = {t.split()[0] for t in tags}
    assert "in" in kinds and kinds & {"chunk", "era", "period", "snapshot"}, kinds
    assert tags[-1] == "in full"  # the newest steps are still word for word in the transcript
    legend = shop_page.split("<details id='legend'>", 1)[1].split("</details>", 1)[0]
    for tag in ("in full", "chunk N", "era N", "snapshot"):  # every tag a reader sees is explained
        assert f"<span class='lvl'>{tag}</span>" in legend
    bands = re.findall(r"<section class='band [a-z]+'.*?</section>", shop_page, flags=re.S)
    assert any("class='band chunk'" in b for b in bands)
    for band in bands:
        assert "{&quot;" not in band and "{" not in band  # never raw JSON
        assert '\\"launch_app\\"' not in band and "band ①" not in band
    chunk = next(b for b in bands if "class='band chunk'" in b)
    assert "Purpose:</span>" in chunk and "What was done:</span>" in chunk
    assert "&quot;launch_app&quot;" in chunk  # the field's own quotes, shown as text


def test_identical_screenshots_are_embedded_once_as_small_thumbnails(shop: tuple[DataEngine, str, int],
                                                                      shop_page: str) -> None:
    engine, sid, _ = shop
    shas = [s.pre_screenshot for s in engine.get_steps(sid) if s.pre_screenshot]
    thumbs = re.findall(r"src='data:image/webp;base64,([A-Za-z0-9+/=]+)'", shop_page)
    assert len(thumbs) == len(set(shas))
    assert shop_page.count("loading='lazy'") == len(shas)
    with Image.open(io.BytesIO(base64.b64decode(thumbs[0]))) as im:
        assert im.format == "WEBP" and im.width <= 320
    assert len(shop_page) < 3_000_000


def test_repeated_screens_point_at_the_first_copy(tmp_path: Path) -> None:
    """Two steps on the same screenshot blob: one data copy, the second image names it."""
    engine = DataEngine.open(tmp_path / "data")
    png = io.BytesIO()
    Image.new("RGB", (1080, 2400), (40, 90, 160)).save(png, format="PNG")
    sid = engine.create_session(SessionRecord(goal="tap twice", screen_width=1080, screen_height=2400))
    for n in (1, 2):
        engine.record_step(StepRecord(session_id=sid, number=n, action_type="tap", x=500, y=900),
                           blobs={"pre_screenshot": (png.getvalue(), "screenshot")})
    page = build_report(engine, sid)
    assert page.count("data:image/webp;base64,") == 1
    first = re.search(r"<img id='i-([0-9a-f]+)'", page)
    assert first and f"data-same='{first.group(1)}'" in page
    assert page.count("<svg class='mark'") == 2  # each step keeps its own tap marker
    assert "cx='500' cy='900'" in page


def _script_task() -> Task:
    """A note whose title is a script tag: the simulated phone shows it as text."""
    return Task.model_validate({
        "id": "notes-script-title",
        "goal": f"Write a note titled {SCRIPT}",
        "max_steps": 8,
        "sim": {"world": "default", "seed": 41, "popups": False},
        "setup": [{"shell": "am force-stop com.artemis.notes"}],
        "reference": [
            {"launch": "com.artemis.notes"},
            {"tap": {"text": "New note"}},
            {"type": {"text": SCRIPT, "into": {"id": "title"}}},
            {"tap": {"desc": "Save note"}},
            {"finish": {"success": True, "answer": f"saved {SCRIPT}"}},
        ],
    })


def test_device_text_is_escaped(tmp_path: Path, record_task: Callable[..., Any]) -> None:
    engine = DataEngine.open(tmp_path / "data")
    result = record_task(engine, _script_task())
    xml = b"".join(engine.blob(s.post_ui_xml) for s in engine.get_steps(result.session_id) if s.post_ui_xml)
    assert b"script" in xml  # the title was on screen
    page = build_report(engine, result.session_id)
    assert SCRIPT not in page and "<script>alert" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page
    scripts = re.findall(r"<script>(.{0,25})", page, flags=re.S)  # the page's own scripts only
    assert scripts and all(s.startswith(("window.ARTEMIS_FULL={};", "\n(function(){")) for s in scripts), scripts


def test_a_failed_session_names_the_failing_check_and_what_it_got(tmp_path: Path) -> None:
    engine = DataEngine.open(tmp_path / "data")
    sid = engine.create_session(SessionRecord(goal="Turn <b>Wi-Fi</b> on", model_label="gemini (gemini-2.5-flash)",
                                              config={"offline_model": False}))
    engine.record_step(StepRecord(session_id=sid, number=1, action_type="tap", x=10, y=10,
                                  result_status="no_change", result_detail="no visible change"))
    engine.finish_session(sid, "failed", {"message": "success checks failed: visible: Wi-Fi on", "checks": [
        {"check": "visible: Wi-Fi on", "passed": False, "detail": "not on screen; saw <i>Wi-Fi off</i>"},
        {"check": "shell: settings get global wifi_on equals '1'", "passed": True, "detail": "1"},
    ]})
    page = build_report(engine, sid)
    summary = page[page.index("id='summary'"):page.index("id='timeline'")]
    assert "class='badge failed'>failed" in summary
    assert "1 of 2 success checks failed" in summary and "visible: Wi-Fi on" in summary
    assert "<span class='got'>not on screen; saw &lt;i&gt;Wi-Fi off&lt;/i&gt;</span>" in summary
    assert "Turn &lt;b&gt;Wi-Fi&lt;/b&gt; on" in summary and "(offline model)" not in summary
    assert "none billed — no model calls" in summary
    assert "no screenshot" in page and "class='result nochange'" in page


def test_assets_dir_gets_the_images_and_the_html_links_them(shop: tuple[DataEngine, str, int],
                                                             tmp_path: Path) -> None:
    engine, sid, _ = shop
    shas = {s.pre_screenshot for s in engine.get_steps(sid) if s.pre_screenshot}
    html = write_report(engine, sid, tmp_path / "out" / "r.html", assets=tmp_path / "out" / "img")
    thumbs = sorted((tmp_path / "out" / "img" / "thumbs").iterdir())
    fulls = sorted((tmp_path / "out" / "img" / "full").iterdir())
    assert len(thumbs) == len(fulls) == len(shas)
    assert {p.stem for p in fulls} == {s[:16] for s in shas}
    assert fulls[0].read_bytes() in {engine.blob(s) for s in shas}  # the stored screenshot, as it is
    page = html.read_text(encoding="utf-8")
    assert "data:image" not in page
    assert f"src='img/thumbs/{thumbs[0].name}'" in page and f"href='img/full/{fulls[0].name}'" in page
    assert [p.name for p in (tmp_path / "out").iterdir() if p.name.startswith(".")] == []


def test_report_cli_assets_option(shop: tuple[DataEngine, str, int], tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from artemis_cli.cli.app import app

    engine, sid, _ = shop
    res = CliRunner().invoke(app, ["report", sid, "-o", str(tmp_path / "r.html"), "--assets", str(tmp_path / "a"),
                                   "--data-dir", str(engine.data_dir)])
    assert res.exit_code == 0, res.output
    assert any((tmp_path / "a" / "thumbs").iterdir()) and "a/thumbs/" in (tmp_path / "r.html").read_text()


# --- headless Chromium: what the first viewport shows ----------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars"]


def _pixels(img: Image.Image) -> list[tuple[int, int, int]]:
    raw = img.convert("RGB").tobytes()
    return [(raw[i], raw[i + 1], raw[i + 2]) for i in range(0, len(raw), 3)]


def _dominant(img: Image.Image) -> tuple[int, int, int]:
    return Counter(_pixels(img)).most_common(1)[0][0]


def _near(a: tuple[int, int, int], b: tuple[int, int, int], tol: int = 12) -> bool:
    return all(abs(x - y) <= tol for x, y in zip(a, b, strict=True))


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)")
def test_first_viewport_shows_the_summary_and_the_first_step(shop: tuple[DataEngine, str, int],
                                                             tmp_path: Path) -> None:
    assert CHROMIUM is not None
    engine, sid, steps = shop
    report = write_report(engine, sid, tmp_path / "report.html")
    url = report.resolve().as_uri()
    dom = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile-a'}", "--dump-dom", url],
                         capture_output=True, text=True, timeout=180)
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert html.index('id="summary"') < html.index('id="timeline"') < html.index('id="step-1"')
    assert html.count('<article class="step"') == steps
    assert "data-same=" not in html or html.count("src=") >= steps  # repeated screens got their source
    shot = tmp_path / "first.png"
    proc = subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile-b'}", f"--screenshot={shot}",
                           "--window-size=1280,900", url], capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-2000:]
    with Image.open(shot) as im:
        page = im.convert("RGB")
    assert page.size == (1280, 900)
    # the top is the summary: text on a white card, not an empty area
    top = page.crop((60, 10, 1220, 220))
    assert len(set(_pixels(top))) > 50, "the top of the first viewport is blank"
    # the first step's screenshot is on screen: its thumbnail's dominant colour fills a block of the
    # lower part of the viewport, where a 160-pixel-wide thumbnail sits at the left of its card
    first = re.search(r"id='step-1'.*?src='data:image/webp;base64,([A-Za-z0-9+/=]+)'",
                      report.read_text(encoding="utf-8"), flags=re.S)
    assert first is not None
    with Image.open(io.BytesIO(base64.b64decode(first.group(1)))) as thumb:
        colour = _dominant(thumb)
    lower = page.crop((60, 300, 260, 900))
    hits = sum(1 for px in _pixels(lower) if _near(px, colour))
    assert hits > 160 * 120, f"step 1's screenshot is not in the first viewport ({hits} pixels of {colour})"
