"""`artemis mcp` driven by the official MCP SDK's own clients (issue 27): stdio and streamable HTTP.

One flow, on the simulated phone: tools/list, observe, launch_app, taps (one on a label, where
nothing changes: ``no_change``), type_text into a field (the typed-text check says it landed) and
into a label (``failed``: nothing was typed), finish. Then, as a user would: `artemis sessions show`
lists every action with its hit-tested target and outcome, `artemis replay` on a fresh simulated
phone matches or retargets every step, and the Maestro export has a ``tapOn`` per tap.
"""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

mcp = pytest.importorskip("mcp", reason="the MCP Python SDK is not installed (pip install -e .)")
from mcp import StdioServerParameters  # noqa: E402
from mcp_support import McpClient, index_of  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from artemis_cli.cli.app import app  # noqa: E402
from artemis_cli.engine.db import DataEngine  # noqa: E402

PNG = b"\x89PNG\r\n\x1a\n"
EXPECTED_TOOLS = ["observe", "tap", "double_tap", "long_press", "type_text", "scroll", "swipe", "drag", "press_key",
                  "launch_app", "open_url", "stop_app", "wait", "finish", "recall", "note"]


def server_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANDROID_")}
    return {**env, "COLUMNS": "300", "ARTEMIS_DEBUG": "1"}


def stdio_client(data: Path, *args: str, errlog: Any = None) -> McpClient:
    params = StdioServerParameters(command=sys.executable, args=["-m", "artemis_cli", "mcp", "--data-dir", str(data),
                                                                *args], env=server_env())
    return McpClient.stdio(params, errlog if errlog is not None else sys.stderr)


def answer(result: Any) -> str:
    body = "".join(c.text for c in result.content if c.type == "text")
    assert not result.is_error, body
    return body


def cli(*args: str) -> Any:
    res = CliRunner().invoke(app, list(args))
    return res


def drive(client: McpClient) -> str:
    """The flow; returns the session id (checked step by step as it goes)."""
    tools = client.tools()
    assert [t.name for t in tools] == EXPECTED_TOOLS
    assert "observe" in client.init.instructions and "<screen>" in client.init.instructions

    seen = client.call("observe")
    text = answer(seen)
    assert "Foreground app: com.android.launcher3." in text and "<screen>" in text and "</screen>" in text
    images = [c for c in seen.content if c.type == "image"]
    assert len(images) == 1 and base64.b64decode(images[0].data).startswith(PNG)
    session_id = seen.structured_content["session_id"]

    launched = client.call("launch_app", app="Contacts", intent="open the contacts")
    assert launched.structured_content["status"] == "ok", answer(launched)
    assert launched.structured_content["step"] == 1
    text = answer(launched)
    assert "app now com.android.contacts" in text and "Foreground app: com.android.contacts." in text

    created = client.call("tap", index=index_of(text, "Create contact", "ImageButton"))
    assert created.structured_content["status"] == "ok", answer(created)
    form = answer(created)

    label = index_of(form, "Create contact", "TextView")  # the title: a label no tap does anything to
    still = client.call("tap", index=label)
    assert still.structured_content["status"] == "no_change", answer(still)
    assert still.structured_content["screen_changed"] is False

    typed = client.call("type_text", index=index_of(form, "First name"), text="Sofia")
    assert typed.structured_content["status"] == "ok", answer(typed)
    assert '"Sofia"' in answer(typed)

    refused = client.call("type_text", index=label, text="Ortega")  # a label: no text field, nothing sent
    assert refused.is_error and f"[{label}] is a TextView, not a text field" in refused.content[0].text

    saved = client.call("tap", index=index_of(answer(typed), "Save"))
    assert saved.structured_content["status"] == "ok", answer(saved)

    done = client.call("finish", success=True, answer="Sofia is saved")
    assert done.structured_content["status"] == "finished" and done.structured_content.get("closed") is True
    assert f"artemis replay {session_id}" in answer(done)

    uris = {str(r.uri) for r in client.ask("resources/list").resources}
    assert uris == {"artemis://session/report", "artemis://screen/current.png"}
    (shot,) = client.ask("resources/read", "artemis://screen/current.png").contents
    assert shot.mime_type == "image/png" and base64.b64decode(shot.blob).startswith(PNG)
    (report,) = client.ask("resources/read", "artemis://session/report").contents
    assert report.text.startswith("<!DOCTYPE html>") and session_id in report.text  # the session just closed
    prompt = client.ask("prompts/get", ("android_task", {"goal": "Add the contact Sofia"}))
    body = prompt.messages[0].content.text
    assert body.startswith("Carry out this task on the Android phone: Add the contact Sofia")
    assert "Android know-how:" in body and "Untrusted content:" in body and "save_note" not in body
    return str(session_id)


def check_recorded(data: Path, session_id: str, client_name: str) -> None:
    """What a user sees afterwards: show, replay on a fresh sim, the Maestro export."""
    shown = cli("sessions", "show", session_id, "--json", "--data-dir", str(data))
    assert shown.exit_code == 0, shown.output
    record = json.loads(shown.stdout)
    session, steps = record, record["steps"]
    assert session["status"] == "succeeded" and session["loop"] == "mcp"
    assert client_name in session["model_label"]
    assert [s["action"]["type"] for s in steps] == ["launch_app", "tap", "tap", "type_text", "tap", "finish"]
    assert [s["result"]["status"] for s in steps] == ["ok", "ok", "no_change", "ok", "ok", "finished"]
    for s in steps:
        assert s["outcome"] is not None and s["outcome"]["status"] == s["result"]["status"]
        assert s["pre_screenshot"]["exists"] and s["post_screenshot"]["exists"] and s["ui_xml"]["exists"]
    taps = [s for s in steps if s["action"]["type"] in ("tap", "type_text")]
    assert all(s["target"] and s["label_source"] != "none" for s in taps), taps
    assert steps[1]["target"]["resource_id"].endswith("floating_action_button")
    assert steps[3]["outcome"]["field"]["landed"] is True and steps[3]["outcome"]["field"]["shows"] == "Sofia"
    table = cli("sessions", "show", session_id, "--data-dir", str(data))
    assert table.exit_code == 0 and "no_change" in table.stdout and "Create contact" in table.stdout

    replayed = cli("replay", session_id, "--device", "sim", "--json", "--data-dir", str(data))
    verdict = json.loads(replayed.stdout)
    assert replayed.exit_code == 0, replayed.output
    statuses = [s["status"] for s in verdict["steps"]]
    assert len(statuses) == len(steps) and set(statuses) <= {"replayed", "retargeted"}, verdict
    assert verdict["diverged"] == 0 and verdict["first_divergence"] is None

    flow = data / "flow.yaml"
    exported = cli("sessions", "export", session_id, "--format", "maestro", "-o", str(flow), "--data-dir", str(data))
    assert exported.exit_code == 0, exported.output
    sections = dict(re.findall(r"^# step (\d+): .*\n((?:(?!# step ).*\n)*)", flow.read_text(), re.M))
    for s in steps:
        if s["action"]["type"] == "tap":  # each tap is its own tapOn (a type_text's focusing tap is one too)
            assert sections[str(s["number"])].count("- tapOn:") == 1, (s["number"], flow.read_text())
    assert "- inputText: Sofia" in sections["4"]


def test_stdio_client_drives_records_and_the_session_replays(tmp_path: Path) -> None:
    data = tmp_path / "data"
    client = stdio_client(data, "--device", "sim", "--goal", "Add the contact Sofia")
    try:
        session_id = drive(client)
    finally:
        client.close()
    check_recorded(data, session_id, "mcp")


def start_http_server(data: Path, *args: str) -> tuple[str, subprocess.Popen[str]]:
    """`artemis mcp --http 0 --device sim [ARGS]` and the URL it says it serves."""
    proc = subprocess.Popen([sys.executable, "-m", "artemis_cli", "mcp", "--http", "0", "--device", "sim",
                             "--data-dir", str(data), *args], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            text=True, env=server_env())
    assert proc.stderr is not None
    line = proc.stderr.readline()
    m = re.search(r"at (http://127\.0\.0\.1:\d+/mcp)", line)
    if not m:
        proc.kill()
        raise AssertionError(line + proc.communicate()[1])
    return m.group(1), proc


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[tuple[str, Path, subprocess.Popen[str]]]:
    data = tmp_path / "data"
    url, proc = start_http_server(data)
    try:
        yield url, data, proc
    finally:
        stop_server(proc)


def stop_server(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    try:
        proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()


def test_streamable_http_client_drives_the_same_flow(http_server: tuple[str, Path, subprocess.Popen[str]]) -> None:
    url, data, proc = http_server
    client = McpClient.http(url)
    try:
        session_id = drive(client)
    finally:
        client.close()
    check_recorded(data, session_id, "mcp")
    assert proc.poll() is None, "the HTTP server outlives its clients"
    # a later client starts a new session; when it goes away without finishing, the session is
    # left interrupted (resumable) while the server goes on serving
    later = McpClient.http(url)
    try:
        opened = later.call("launch_app", app="Settings")
        second = opened.structured_content["session_id"]
        assert second != session_id and opened.structured_content["step"] == 1
    finally:
        later.close()
    deadline = time.monotonic() + 20
    while True:
        with DataEngine.open_for_reading(data) as engine:
            status = engine.get_session(second).status
        if status == "interrupted" or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert status == "interrupted" and proc.poll() is None
