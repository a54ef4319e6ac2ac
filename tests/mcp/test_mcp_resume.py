"""A client that goes away mid-session (issue 27): the call it was waiting on still becomes a whole
step, the session is left ``interrupted``, and `artemis mcp --resume ID` continues it — on a
simulated phone restored to where the session was — with the next step number."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from mcp_support import index_of
from test_mcp_server import answer, cli, stdio_client

from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.segments import INTERRUPTED_EVENT, RESUME_EVENT
from artemis_cli.mcp_server.session import CUT_SHORT_EVENT

pytest.importorskip("mcp")


def test_a_client_gone_mid_call_leaves_whole_steps_and_resume_continues(tmp_path: Path) -> None:
    data = tmp_path / "data"
    log = (tmp_path / "first.log").open("w")
    first = stdio_client(data, "--device", "sim", "--goal", "Add the contact Sofia", errlog=log)
    listing = answer(first.call("launch_app", app="Contacts"))
    form = answer(first.call("tap", index=index_of(listing, "Create contact", "ImageButton")))
    typed = first.call("type_text", index=index_of(form, "First name"), text="Sofia")
    session_id = typed.structured_content["session_id"]
    rival = stdio_client(data, "--resume", session_id)  # one process owns a session at a time
    try:
        for _ in range(2):  # refused each time: never a new session instead of the one asked for
            busy = rival.call("observe")
            assert busy.is_error and "in use by" in busy.content[0].text, busy.content
    finally:
        rival.close()
    # in flight when the client goes away the SDK's way: stdin closed, SIGTERM 2 s later, SIGKILL
    # 2 s after that: the wait is cut short so the step is written whole before the kill
    pending = first.start("wait", seconds=5.0)
    time.sleep(0.3)
    first.close()
    log.close()
    assert not pending.done() or pending.exception() is not None, "the client left before the answer"
    deadline = time.monotonic() + 20
    while True:  # the server writes the step it was in, then the interruption, then exits
        with DataEngine.open_for_reading(data) as engine:
            stored = engine.get_session(session_id)
            if stored.status == "interrupted" or time.monotonic() > deadline:
                steps = engine.get_steps(session_id)
                stops = engine.events(session_id, kind=INTERRUPTED_EVENT)
                break
        time.sleep(0.1)
    assert stored.status == "interrupted", (tmp_path / "first.log").read_text()
    assert [s.action_type for s in steps] == ["launch_app", "tap", "type_text", "wait"]
    assert all(s.pre_screenshot and s.post_screenshot and s.ui_xml and s.post_ui_xml and s.outcome for s in steps)
    assert stops and stops[-1].payload["after_step"] == 4
    assert f"artemis mcp --resume {session_id}" in (stored.result or {}).get("message", "")
    assert (stored.result or {}).get("stop_reason") == "the MCP client disconnected"
    with DataEngine.open_for_reading(data) as engine:
        (cut,) = engine.events(session_id, kind=CUT_SHORT_EVENT)
    assert cut.step == 4 and cut.payload["tool"] == "wait" and cut.payload["after_s"] < 5
    shown = cli("sessions", "show", session_id, "--data-dir", str(data))
    assert f"continue with: artemis mcp --resume {session_id}" in shown.stdout, shown.stdout
    assert "artemis resume" not in shown.stdout
    listed = json.loads(cli("sessions", "show", session_id, "--json", "--data-dir", str(data)).stdout)
    assert listed["resume"] == f"artemis mcp --resume {session_id}"

    second = stdio_client(data, "--resume", session_id)
    try:
        seen = answer(second.call("observe"))
        assert "Foreground app: com.android.contacts." in seen and '"Sofia"' in seen, seen  # fast-forwarded
        assert "next action is step 5" in seen
        saved = second.call("tap", index=index_of(seen, "Save"))
        assert saved.structured_content["step"] == 5 and saved.structured_content["status"] == "ok", answer(saved)
        done = second.call("finish", success=True, answer="saved")
        assert done.structured_content["step"] == 6
    finally:
        second.close()
    with DataEngine.open_for_reading(data) as engine:
        assert engine.get_session(session_id).status == "succeeded"
        assert [s.number for s in engine.get_steps(session_id)] == [1, 2, 3, 4, 5, 6]
        assert engine.events(session_id, kind=RESUME_EVENT)[-1].payload["after_step"] == 4


def test_a_stop_signal_leaves_the_session_interrupted_and_exits_143(tmp_path: Path) -> None:
    import os
    import signal

    from test_mcp_server import start_http_server

    data = tmp_path / "data"
    url, proc = start_http_server(data)
    try:
        from mcp_support import McpClient

        client = McpClient.http(url)
        try:
            opened = client.call("launch_app", app="Clock")
            session_id = opened.structured_content["session_id"]
            proc.send_signal(signal.SIGTERM)
            err = proc.communicate(timeout=30)[1]
        finally:
            client.close()
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
    assert proc.returncode == 143, err
    assert f"continue it with: artemis mcp --resume {session_id}" in err
    with DataEngine.open_for_reading(data) as engine:
        assert engine.get_session(session_id).status == "interrupted"
        assert [s.action_type for s in engine.get_steps(session_id)] == ["launch_app"]
