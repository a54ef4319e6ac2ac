"""Bad input never wedges an `artemis mcp` session (issue 35): arguments past their documented
bounds get an error result naming the bound, an exception inside a tool is an error result naming
the tool (never a JSON-RPC error), and the session goes on to finish normally."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp.client._memory import InMemoryTransport
from mcp_support import McpClient
from test_mcp_server import answer, stdio_client

from artemis_cli.config.profile import load_profile
from artemis_cli.device.select import resolve_device
from artemis_cli.engine.db import DataEngine
from artemis_cli.mcp_server.bounds import MAX_TEXT_CHARS
from artemis_cli.mcp_server.server import ArtemisMcp
from artemis_cli.mcp_server.session import DrivenSession

pytest.importorskip("mcp")


def refused(result: Any, *needles: str) -> str:
    text = "".join(c.text for c in result.content if c.type == "text")
    assert result.is_error, text
    for needle in needles:
        assert needle in text, text
    return text


def test_oversized_and_out_of_range_input_is_an_error_result_and_the_session_finishes(tmp_path: Path) -> None:
    data = tmp_path / "data"
    client = stdio_client(data, "--device", "sim")
    try:
        tools = {t.name: t.input_schema for t in client.tools()}
        assert tools["type_text"]["properties"]["text"]["maxLength"] == MAX_TEXT_CHARS  # documented to the client
        assert tools["wait"]["properties"]["seconds"]["maximum"] == 10
        opened = client.call("launch_app", app="Contacts")
        session_id = opened.structured_content["session_id"]
        refused(client.call("type_text", text="x" * 1_000_000), "`text` is 1,000,000 characters",
                f"at most {MAX_TEXT_CHARS:,}")
        refused(client.call("wait", seconds=11), "`seconds` must be 0 to 10")
        refused(client.call("tap", x=5000, y=10), "`x` = 5000 is off the screen", "1080x2400")
        refused(client.call("tap", index=10**12), "not an element index")
        refused(client.call("note", key="k" * 2000, content="v"), "`key` is 2,000 characters")
        seen = client.call("observe")
        assert "Foreground app: com.android.contacts." in answer(seen)  # nothing was sent meanwhile
        done = client.call("finish", success=True, answer="bounds hold")
        assert done.structured_content["closed"] is True, answer(done)
    finally:
        client.close()
    with DataEngine.open_for_reading(data) as engine:
        assert engine.get_session(session_id).status == "succeeded"
        assert [s.action_type for s in engine.get_steps(session_id)] == ["launch_app", "finish"]


class BrokenTap:
    """The simulated phone, except that a tap fails with an error no layer expects (a bug in a
    backend, say): the fault is the device's, the handling under test is the server's."""

    def __init__(self, phone: Any) -> None:
        self._phone = phone

    def __getattr__(self, name: str) -> Any:
        return getattr(self._phone, name)

    def tap(self, x: int, y: int) -> None:
        raise RuntimeError("tap exploded")


def test_an_exception_inside_a_tool_is_an_error_result_naming_it_and_the_session_goes_on(tmp_path: Path) -> None:
    engine = DataEngine.open(tmp_path / "data")
    phone = BrokenTap(resolve_device("sim", sim_options={"popups": False}))
    session = DrivenSession(engine, phone, load_profile("flash"), goal="test", run_config={"device": "sim"},
                            real_time=False)
    server = ArtemisMcp(session, on_notice=lambda text: None)
    client = McpClient(lambda: InMemoryTransport(server.server))
    try:
        listing = answer(client.call("observe"))
        session_id = session.session_id
        index = next(int(line[1:line.index("]")]) for line in listing.splitlines() if '"Contacts"' in line)
        broken = client.call("tap", index=index)  # a JSON-RPC error would raise here instead
        refused(broken, "tap failed inside Artemis (RuntimeError: tap exploded)", "the session goes on")
        assert answer(client.call("observe"))
        done = client.call("finish", success=False, answer="the tap broke")
        assert done.structured_content["closed"] is True, answer(done)
    finally:
        client.close()
        server.close("the test ended")
    rec = engine.get_session(session_id or "")
    assert rec.status == "failed" and json.dumps(rec.result)
    engine.close()

