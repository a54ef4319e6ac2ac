"""The MCP Inspector's CLI (`@modelcontextprotocol/inspector --cli`) against `artemis mcp --http`:
it makes one call per process and exits without an HTTP DELETE, so each call is a new client on a
new connection while the last one's session is still open (issue 35). Every call is served and
they drive one session. `.ci/run` installs the Inspector and exports ARTEMIS_MCP_INSPECTOR;
without it (or node) the test skips saying why."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from test_mcp_server import server_env, start_http_server, stop_server

from artemis_cli.engine.db import DataEngine

INSPECTOR = os.environ.get("ARTEMIS_MCP_INSPECTOR", "")

pytestmark = [
    pytest.mark.skipif(not shutil.which("node"), reason="node is not installed"),
    pytest.mark.skipif(not INSPECTOR or not os.access(INSPECTOR, os.X_OK),
                       reason="the MCP Inspector is not installed (ARTEMIS_MCP_INSPECTOR; .ci/run installs it)"),
]


def inspector_call(url: str, tool: str, **args: str) -> dict[str, Any]:
    argv = [INSPECTOR, "--cli", url, "--transport", "http", "--method", "tools/call", "--tool-name", tool]
    for key, value in args.items():
        argv += ["--tool-arg", f"{key}={value}"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=server_env())
    assert done.returncode == 0, done.stdout + done.stderr
    return dict(json.loads(done.stdout))


def test_two_inspector_cli_calls_in_a_row_are_both_served(tmp_path: Path) -> None:
    data = tmp_path / "data"
    url, proc = start_http_server(data)
    try:
        first = inspector_call(url, "launch_app", app="Clock")
        assert not first.get("isError"), first
        session_id = first["structuredContent"]["session_id"]
        second = inspector_call(url, "press_key", key="home")
        text = second["content"][0]["text"]
        assert not second.get("isError"), text
        assert text.startswith(f"Session {session_id} continues after step 1: MCP client inspector-cli"), text
        assert second["structuredContent"]["step"] == 2
    finally:
        stop_server(proc)
    with DataEngine.open_for_reading(data) as engine:
        assert [s.action_type for s in engine.get_steps(session_id)] == ["launch_app", "press_key"]
