"""How an `artemis mcp` session ends when its client does not end it (issue 35): a stop while a
call is in flight keeps that step whole, a SIGKILLed server's gap is not counted as active time,
an HTTP client that left without a word is released after ``--release-after`` and the next client
continues the session, and a session that never took a step is not kept."""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

import pytest
from mcp_support import McpClient
from test_mcp_server import answer, cli, server_env, start_http_server, stdio_client, stop_server

from artemis_cli.engine.db import DataEngine
from artemis_cli.engine.segments import session_time, stops
from artemis_cli.mcp_server.session import CUT_SHORT_EVENT

pytest.importorskip("mcp")


class RawStdio:
    """`artemis mcp` on stdio spoken to line by line (JSON-RPC), as a bare client would."""

    def __init__(self, data: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "artemis_cli", "mcp", "--device", "sim",
                                      "--data-dir", str(data)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=server_env())
        self.ids = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "raw-test", "version": "1"}})
        self.notify("notifications/initialized")

    def _write(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def notify(self, method: str) -> None:
        self._write({"jsonrpc": "2.0", "method": method})

    def send(self, method: str, params: dict[str, Any]) -> int:
        self.ids += 1
        self._write({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params})
        return self.ids

    def answer(self, request_id: int) -> dict[str, Any]:
        assert self.proc.stdout is not None
        while True:  # blocks on the server's next line: the answer is the event waited on
            message = json.loads(self.proc.stdout.readline())
            if message.get("id") == request_id:
                return dict(message)

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        return self.answer(self.send(method, params))

    def call(self, tool: str, **args: Any) -> dict[str, Any]:
        return self.request("tools/call", {"name": tool, "arguments": args})["result"]

    def in_flight(self, tool: str, **args: Any) -> None:
        """Send a call and return once the server has taken it: a tools/list sent after it is
        answered at once, and the server reads and dispatches requests in order."""
        self.send("tools/call", {"name": tool, "arguments": args})
        self.request("tools/list", {})

    def finish(self, timeout: float = 30) -> tuple[int, str]:
        assert self.proc.stderr is not None
        code = self.proc.wait(timeout=timeout)
        return code, self.proc.stderr.read().decode()


def recorded(data: Path, session_id: str) -> tuple[Any, list[str], Any]:
    with DataEngine.open_for_reading(data) as engine:
        rec = engine.get_session(session_id)
        steps = engine.get_steps(session_id)
        cut = engine.events(session_id, kind=CUT_SHORT_EVENT)
    return rec, [s.action_type for s in steps], cut


def stopped_in_a_wait(data: Path, stop: Callable[[subprocess.Popen[bytes]], None]) -> tuple[str, int, str]:
    """A session with a launch_app, then a wait(5) in flight when ``stop`` is done to the server:
    the session id, the exit code and stderr."""
    raw = RawStdio(data)
    try:
        session_id = raw.call("launch_app", app="Clock")["structuredContent"]["session_id"]
        raw.in_flight("wait", seconds=5)
        stop(raw.proc)
        code, err = raw.finish()
    finally:
        if raw.proc.poll() is None:
            raw.proc.kill()
    return session_id, code, err


def test_stdin_closed_then_sigterm_at_3s_keeps_the_wait_in_flight(tmp_path: Path) -> None:
    def close_then_sigterm(proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(3)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGTERM)

    data = tmp_path / "data"
    session_id, code, err = stopped_in_a_wait(data, close_then_sigterm)
    rec, steps, cut = recorded(data, session_id)
    assert code in (0, 143), err
    assert steps == ["launch_app", "wait"], err
    assert rec.status == "interrupted" and (rec.result or {}).get("stop_reason") == "the MCP client disconnected"
    assert cut and cut[0].step == 2
    assert "Traceback" not in err and f"artemis mcp --resume {session_id}" in err


def test_sigterm_with_a_call_in_flight_writes_it_whole_and_exits_143(tmp_path: Path) -> None:
    data = tmp_path / "data"
    # stdin still open: the signal alone stops it
    session_id, code, err = stopped_in_a_wait(data, lambda proc: proc.send_signal(signal.SIGTERM))
    rec, steps, cut = recorded(data, session_id)
    assert code == 143, err
    assert steps == ["launch_app", "wait"], err
    assert rec.status == "interrupted" and (rec.result or {}).get("stop_reason") == "the server was stopped"
    assert cut and cut[0].step == 2 and "Traceback" not in err


def test_after_a_sigkill_the_gap_is_not_active_time_and_resume_says_when(tmp_path: Path) -> None:
    data = tmp_path / "data"
    raw = RawStdio(data)
    try:
        session_id = raw.call("launch_app", app="Clock")["structuredContent"]["session_id"]
    finally:
        raw.proc.kill()  # SIGKILL: nothing more is written
        raw.finish()
    shown = cli("sessions", "show", session_id, "--json", "--data-dir", str(data))
    assert json.loads(shown.stdout)["resume"] == f"artemis mcp --resume {session_id}"
    with DataEngine.open_for_reading(data) as engine:
        (step,) = engine.get_steps(session_id)
    killed_at = step.ended_at
    again = stdio_client(data, "--resume", session_id)
    try:
        waited = again.call("wait", seconds=0)
        assert answer(waited).startswith(f"Session {session_id} continues after step 1 (artemis mcp --resume).")
        assert waited.structured_content["step"] == 2
    finally:
        again.close()
    with DataEngine.open_for_reading(data) as engine:
        rec = engine.get_session(session_id)
        resumed = engine.events(session_id, kind="resume")[-1].created_at
        timing = session_time(engine, rec)
    stop = stops(timing)[0]
    # the stop is where the killed process left its last record, not where the resume restored
    # the simulated phone; the gap until the resume is not active time
    assert killed_at is not None and stop.at.isoformat(timespec="milliseconds") == killed_at.replace("Z", "+00:00")
    assert stop.resumed_at is not None and stop.resumed_at.isoformat(timespec="milliseconds") == resumed
    assert stop.gap_s is not None and stop.gap_s > 0
    assert timing.active_s == pytest.approx(timing.wall_s - stop.gap_s, abs=0.01)


def _lines(stream: IO[str]) -> queue.Queue[str]:
    """The server's stderr, line by line, read on a thread (``get`` waits for the next line)."""
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        for line in stream:
            lines.put(line)

    threading.Thread(target=pump, daemon=True).start()
    return lines


_CLIENT = """
import sys
sys.path.insert(0, sys.argv[2])
from mcp_support import McpClient
client = McpClient.http(sys.argv[1], name="gone-client")
print(client.call("launch_app", app="Clock").structured_content["session_id"], flush=True)
sys.stdin.read()  # until killed
"""


def test_a_sigkilled_http_client_is_released_and_the_next_client_continues(tmp_path: Path) -> None:
    data = tmp_path / "data"
    url, proc = start_http_server(data, "--release-after", "1")
    assert proc.stderr is not None
    lines = _lines(proc.stderr)
    try:
        tests_dir = str(Path(__file__).resolve().parents[1])
        gone = subprocess.Popen([sys.executable, "-c", _CLIENT, url, tests_dir], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, text=True, env=server_env())
        assert gone.stdout is not None
        session_id = gone.stdout.readline().strip()
        gone.kill()  # no DELETE, no goodbye
        gone.communicate(timeout=20)
        nxt = McpClient.http(url)
        try:
            refused = nxt.call("launch_app", app="Settings")  # another client: not released yet
            text = refused.content[0].text
            assert refused.is_error, text
            assert f"session {session_id} is being driven by another client (MCP client gone-client 1)" in text
            # the refusal says when: a countdown once the SDK saw the connection close, else that it
            # starts when the open request or stream closes
            assert re.search(r"released in \d+ s \(at \d\d:\d\d:\d\d UTC|once that closes it is released", text)
            seen = nxt.call("observe")  # looking is allowed meanwhile, and not recorded
            assert not seen.is_error and seen.structured_content["recorded"] is False
            assert answer(seen).startswith("Not recorded: ")
            note = lines.get(timeout=60)  # the release: the session is interrupted
            assert f"session {session_id} interrupted (the MCP client sent nothing for 1 s" in note, note
            assert "the next client continues it" in note
            taken = nxt.call("launch_app", app="Settings")
            first = answer(taken)
            assert first.startswith(f"Session {session_id} continues after step 1: its previous client"), first
            assert taken.structured_content["session_id"] == session_id and taken.structured_content["step"] == 2
            assert answer(nxt.call("finish", success=True, answer="done"))
        finally:
            nxt.close()
    finally:
        stop_server(proc)
    with DataEngine.open_for_reading(data) as engine:
        rec = engine.get_session(session_id)
        interrupted = engine.events(session_id, kind="interrupted")
        assert [s.action_type for s in engine.get_steps(session_id)] == ["launch_app", "launch_app", "finish"]
        assert len(engine.list_sessions()) == 1
    assert rec.status == "succeeded"
    assert interrupted and "sent nothing for 1 s" in interrupted[0].payload["reason"]


def test_an_observe_only_client_leaves_no_session(tmp_path: Path) -> None:
    data = tmp_path / "data"
    client = stdio_client(data, "--device", "sim")
    try:
        session_id = client.call("observe").structured_content["session_id"]
        client.call("recall", query="anything")
    finally:
        client.close()
    with DataEngine.open_for_reading(data) as engine:
        assert [s.id for s in engine.list_sessions()] == []
    listed = cli("sessions", "list", "--json", "--data-dir", str(data))
    assert session_id not in listed.stdout
    assert os.path.isdir(data)
