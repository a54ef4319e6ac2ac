"""docs/agent.md shows what a real model is given: its rendered request, a tool declaration and the
screenshot it was sent are the ones this test produces, through the real google-genai SDK against
the fake Gemini server (``agent_doc_run``). ``ARTEMIS_UPDATE_GOLDEN=1`` rewrites the blocks.

Times (``T+mm:ss``) are the one thing a run does not fix, so they are compared as a pattern."""

from __future__ import annotations

import base64
import json
import os
import re
from pathlib import Path

from agent_doc_run import STEP, run_demo

from artemis_cli.cli.prompt_cmd import render_request_text
from artemis_cli.operators.tools import tool_declarations

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "agent.md"
SCREENSHOT = REPO / "docs" / "agent-step3-screenshot.png"
_TIME = re.compile(r"T\+\d\d:\d\d")


def _block(name: str) -> re.Pattern[str]:
    return re.compile(rf"(<!-- {name}:begin -->\n```text\n)(.*?)(```\n<!-- {name}:end -->)", re.S)


def _blocks(doc: str) -> dict[str, str]:
    out = {}
    for name in ("request", "tool"):
        found = _block(name).search(doc)
        assert found, f"docs/agent.md lost its {name} block"
        out[name] = found.group(2)
    return out


def _sent_images(request: object) -> list[bytes]:
    images = []
    for content in request.contents:  # type: ignore[attr-defined]
        for part in content.get("parts") or []:
            data = (part.get("inlineData") or {}).get("data")
            if data:
                images.append(base64.urlsafe_b64decode(data + "=" * (-len(data) % 4)))
    return images


def test_the_documented_request_is_the_one_a_model_gets(tmp_path: Path) -> None:
    check, operator_requests = run_demo(tmp_path / "data")
    assert check.match, check.rows  # the request re-renders from the DataEngine to its recorded hash
    rendered = {
        "request": render_request_text(check.requests[0]) + "\n",
        "tool": json.dumps(next({"name": t.name, "description": t.description, "parameters": t.parameters}
                                for t in tool_declarations("pixels") if t.name == "tap"),
                           indent=2, ensure_ascii=False) + "\n",
    }
    sent = _sent_images(operator_requests[STEP - 1])[-1]  # this turn's screenshot, as it went out
    doc = DOC.read_text(encoding="utf-8")
    if os.environ.get("ARTEMIS_UPDATE_GOLDEN") == "1":
        for name, text in rendered.items():
            doc = _block(name).sub(lambda m, text=text: m.group(1) + text + m.group(3), doc)
        DOC.write_text(doc, encoding="utf-8")
        SCREENSHOT.write_bytes(sent)
    blocks = _blocks(DOC.read_text(encoding="utf-8"))
    assert _TIME.sub("T+mm:ss", blocks["request"]) == _TIME.sub("T+mm:ss", rendered["request"]), \
        "docs/agent.md's request is stale; regenerate with ARTEMIS_UPDATE_GOLDEN=1 and review"
    assert blocks["tool"] == rendered["tool"]
    assert SCREENSHOT.read_bytes() == sent, "docs/agent-step3-screenshot.png is not what the model was sent"
    # what the document says about the request holds for it
    text = rendered["request"]
    assert '"intent": "the Wi-Fi switch turns ON"' not in text  # this turn's own call is not in its request
    assert '"intended": "the Network & internet page opens"' in text
    assert "Keyboard: hidden." in text and "<screen>" in text
