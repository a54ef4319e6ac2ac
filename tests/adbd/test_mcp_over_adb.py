"""`artemis mcp` on a phone reached over adb: `artemis sim serve` behind Debian's adb server (a
private one, never 5037), driven by the MCP SDK's stdio client (issue 27). A tap where nothing
changes answers ``no_change`` and a type_text aimed at a label is refused before anything is sent
(issue 34), as on the simulated phone in-process; what the phone shows afterwards is read through
adb, not from the answers."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from adbd_support import ServedCli, needs_adb

pytest.importorskip("mcp", reason="the MCP Python SDK is not installed (pip install -e .)")
from mcp import StdioServerParameters
from mcp_support import McpClient, index_of

from artemis_cli.engine.db import DataEngine

pytestmark = needs_adb


def test_no_change_and_a_refused_type_text_over_adb(cli: ServedCli, tmp_path: Path) -> None:
    served = cli  # `artemis sim serve --no-popups`, attached to a private adb server
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANDROID_")}
    env |= {"ANDROID_ADB_SERVER_PORT": str(served.adb.port), "COLUMNS": "300", "ARTEMIS_DEBUG": "1"}
    data = tmp_path / "data"
    params = StdioServerParameters(command=sys.executable, env=env, args=[
        "-m", "artemis_cli", "mcp", "--device", served.serial, "--backend", "adb", "--data-dir", str(data)])
    client = McpClient.stdio(params, sys.stderr)
    try:
        launched = client.call("launch_app", app="Contacts")
        assert launched.structured_content["status"] == "ok", launched.content
        listing = launched.content[0].text
        form = client.call("tap", index=index_of(listing, "Create contact", "ImageButton")).content[0].text
        title = index_of(form, "Create contact", "TextView")
        still = client.call("tap", index=title)
        assert still.structured_content["status"] == "no_change", still.content[0].text
        refused = client.call("type_text", index=title, text="Ortega")  # a label: refused, nothing sent
        assert refused.is_error and f"[{title}] is a TextView, not a text field" in refused.content[0].text
        typed = client.call("type_text", index=index_of(form, "First name"), text="Sofia")
        assert typed.structured_content["status"] == "ok", typed.content[0].text
    finally:
        client.close()  # no finish: the session is left interrupted, steps whole
    dump = served.adb.text("exec-out", "uiautomator dump /dev/tty", serial=served.serial)
    assert 'text="Sofia"' in dump and "Ortega" not in dump
    with DataEngine.open_for_reading(data) as engine:
        (rec,) = engine.list_sessions()
        assert rec.device_kind == "adb" and rec.device_serial == served.serial
        steps = engine.get_steps(rec.id)
        assert [s.result_status for s in steps] == ["ok", "ok", "no_change", "ok"]
        assert engine.get_session(rec.id).status == "interrupted"
