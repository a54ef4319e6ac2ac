"""``artemis mcp``: a ``DrivenSession`` served over MCP (stdio, or streamable HTTP on 127.0.0.1)
with the official SDK's low-level server, so the tool list is exactly ours (``mcp_server.tools``).

Every tool call runs on one worker thread, in order: one device, one session, whole steps. A
call the client gives up on (a cancelled request, a dropped connection) still finishes its step
and writes it whole before anything else runs; then, when the connection that drove the session
closes, the session is marked ``interrupted`` (``artemis mcp --resume ID`` continues it). When the
server stops (a closed stdin, SIGTERM) the step in flight cuts its wait and settling short and is
written whole first (``DrivenSession.hurry``).

One connection drives a session at a time: another one may ``observe`` (nothing is recorded) and
its other calls are refused, saying when the owner is released. Over HTTP a connection ends with
the client's DELETE or, for a client that left without one (a crash, a SIGKILL, the Inspector
CLI after each call), once it has had no request or stream open for ``release_after_s`` (the
SDK's session idle timeout; ``artemis mcp --release-after``). The next client then continues the
session where the phone is, and its first answer says so.

Any exception inside a tool is an error result naming the tool (never a protocol error): the
session goes on. Arguments past their bounds (``mcp_server.bounds``) are refused the same way.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import math
import sys
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import wait as wait_for
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from mcp import types
from mcp.server.lowlevel import Server

from artemis_cli.engine.records import MCP_LOOP, continue_command
from artemis_cli.errors import ArtemisError, DeviceError
from artemis_cli.mcp_server.answers import IMAGE_MAX_SIDE, StepAnswer, ViewAnswer, device_json, memory_answer
from artemis_cli.mcp_server.bounds import OutOfBounds, check_args
from artemis_cli.mcp_server.session import ClientInfo, DrivenSession, ToolRefused
from artemis_cli.mcp_server.tools import (
    PROMPT_DESCRIPTION,
    PROMPT_NAME,
    android_task_prompt,
    instructions,
    mcp_tools,
)
from artemis_cli.perception.marks import draw_marks, marks_of

log = logging.getLogger(__name__)
T = TypeVar("T")

#: Over HTTP, a driving client with no request or stream open for this long is released.
DEFAULT_RELEASE_S = 60.0
#: How long a stop waits for the step in flight (cut short: its wait and settling end at once).
STOP_GRACE_S = 20.0

REPORT_URI = "artemis://session/report"
SCREEN_URI = "artemis://screen/current.png"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("artemis-cli")
    except PackageNotFoundError:
        return "0"


def _client_of(ctx: Any) -> ClientInfo:
    params = getattr(ctx.session, "client_params", None)
    info = getattr(params, "client_info", None)
    if info is None:
        return ClientInfo()
    return ClientInfo(str(info.name or "unknown-client")[:80], str(info.version or "")[:40])


def _connection_of(ctx: Any) -> Any:
    """The connection a request came on (the SDK keeps it on the request's session object)."""
    return getattr(ctx.session, "_connection", None)


def _http_session_of(ctx: Any) -> str | None:
    """The streamable-HTTP session id a request carries (None on stdio)."""
    headers = getattr(getattr(ctx, "request", None), "headers", None)
    return headers.get("mcp-session-id") if headers is not None else None


def _text(text: str) -> types.TextContent:
    return types.TextContent(type="text", text=text)


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[_text(text)], is_error=True)


class ArtemisMcp:
    """The MCP face of one ``DrivenSession``."""

    def __init__(self, session: DrivenSession, *, on_notice: Callable[[str], None] | None = None,
                 release_after_s: float = DEFAULT_RELEASE_S) -> None:
        self.session = session
        self.on_notice = on_notice or (lambda text: print(text, file=sys.stderr))
        self.release_after_s = release_after_s
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="artemis-mcp")
        self._owner: Any = None  # the connection driving the session
        self._owner_http: str | None = None  # its streamable-HTTP session id
        self._http_server: Any = None  # uvicorn's, while serving HTTP
        policy = session.policy
        self.tools = mcp_tools(policy.read_only)
        self.server: Server[Any] = Server(
            "artemis", version=_version(), title="Artemis (Android phone, every step recorded)",
            instructions=instructions(policy.read_only, policy.allow_apps),
            on_list_tools=self._list_tools, on_call_tool=self._call_tool,
            on_list_resources=self._list_resources, on_read_resource=self._read_resource,
            on_list_prompts=self._list_prompts, on_get_prompt=self._get_prompt,
        )

    # -- the worker thread ---------------------------------------------------------------------

    async def _on_worker(self, fn: Callable[[], T]) -> T:
        # shielded: a cancelled request still finishes (and records) its step before the next one
        future = self.worker.submit(fn)
        return await asyncio.shield(asyncio.wrap_future(future))

    def interrupt(self, reason: str, *, carry_on: str | None = None) -> Future[None]:
        """Cut the call in flight short (its wait and settling; never its action) and queue the
        session's interruption behind it (whole steps). ``carry_on``: why the client left, when the
        next client is to continue the session (HTTP)."""
        self.session.hurry()
        return self.worker.submit(self._interrupt, reason, carry_on)

    def _interrupt(self, reason: str, carry_on: str | None) -> None:
        session_id = self.session.session_id
        try:
            left = self.session.interrupt(reason)
        except Exception as exc:  # the lease was taken over, a full disk: say so, never hang
            self.on_notice(f"could not mark session {session_id} interrupted: {type(exc).__name__}: {exc}")
            return
        if session_id and left is None:
            self.on_notice(f"session {session_id} had no step ({reason}); it is not kept")
        elif left is not None:
            if carry_on is not None:
                self.session.continue_next(left, carry_on)
            then = "the next client continues it (or: " if carry_on is not None else "continue it with: "
            self.on_notice(f"session {left} interrupted ({reason}); {then}{continue_command(left, MCP_LOOP)}"
                           + (")" if carry_on is not None else ""))

    def close(self, reason: str) -> None:
        """At the server's end (stdin closed, a stop signal, the HTTP server stopped): the call in
        flight ends its wait and settling now and is written whole, then an open session is
        interrupted; all within STOP_GRACE_S. A stop signal meanwhile (the SDK's stdio client
        sends SIGTERM 2 s after closing stdin) does not cut this short."""
        done = self.interrupt(reason)
        stopped: KeyboardInterrupt | None = None
        deadline = time.monotonic() + STOP_GRACE_S
        while not done.done() and time.monotonic() < deadline:
            try:  # short waits: a signal is handled between them (an interrupted join is not resumable)
                wait_for([done], timeout=0.1)
            except KeyboardInterrupt as exc:  # the first one only: catch_stop_signals ignores later ones
                stopped = stopped or exc
        if not done.done():
            self.on_notice(f"the call in flight did not end within {STOP_GRACE_S:g} s; stopping without it")
        self.worker.shutdown(wait=False)
        if stopped is not None:
            raise stopped  # the exit code says the process was stopped (143 for SIGTERM)

    # -- tools --------------------------------------------------------------------------------

    async def _list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[
            types.Tool(name=t.name, description=t.description, input_schema=t.input_schema,
                       annotations=types.ToolAnnotations(read_only_hint=t.read_only,
                                                         destructive_hint=False if t.read_only else None))
            for t in self.tools
        ])

    def _watch(self, ctx: Any) -> bool:
        """Make the connection of ``ctx`` the session's driver, interrupting the session when it
        closes; False (nothing changed) when another connection drives it."""
        conn = _connection_of(ctx)
        if self._owner is not None and conn is not self._owner and self.session.session_id is not None:
            if not self._same_client_back(ctx):
                return False
            self._owner = None  # its connection's end, whenever the SDK notices it, changes nothing now
            self.worker.submit(self.session.handover, _client_of(ctx))
        if conn is self._owner:
            return True
        self._owner, self._owner_http = conn, _http_session_of(ctx)
        stack = getattr(conn, "exit_stack", None)
        http = self._owner_http
        if stack is not None and http is not None:  # on stdio the connection ends with the server: close()

            async def closed() -> None:
                if self._owner is conn and self._stopping():
                    self._owner = None
                    self.interrupt("the server was stopped")
                elif self._owner is conn:
                    self._owner = None
                    label = self.session.client.label
                    what = (f"sent nothing for {self.release_after_s:g} s and had no connection open"
                            if self._went_quiet(http) else "disconnected")
                    self.interrupt(f"the MCP client {what}", carry_on=f"its previous client ({label}) {what}")

            stack.push_async_callback(closed)
        return True

    def _same_client_back(self, ctx: Any) -> bool:
        """Whether ``ctx`` is the driving client again on a new connection while its old one has no
        request or stream open: a client that runs one process per call (the Inspector CLI) and
        never sends a DELETE. Two live clients of one kind each hold a stream open (the SDKs'
        GET stream), so neither takes the other's session."""
        if _client_of(ctx) != self.session.client:
            return False
        transport = self._transport(self._owner_http)
        return transport is not None and getattr(transport, "_requests_in_flight", 1) == 0

    def _stopping(self) -> bool:
        """Whether the HTTP server is shutting down (a signal): its connections close with it."""
        return bool(getattr(self._http_server, "should_exit", False))

    def _transport(self, http: str | None) -> Any:
        """The SDK's streamable-HTTP transport of session ``http`` (None: stdio, or gone)."""
        manager = getattr(self.server, "_session_manager", None)
        return getattr(manager, "_server_instances", {}).get(http) if http else None

    def _went_quiet(self, http: str | None) -> bool:
        """Whether HTTP session ``http`` ended by the idle timeout (not by a DELETE)."""
        scope = getattr(self._transport(http), "idle_scope", None)
        return bool(getattr(scope, "cancel_called", False))

    def _busy(self) -> str:
        """Why a client that does not drive the session is refused, and when that changes."""
        busy = (f"session {self.session.session_id} is being driven by another client "
                f"({self.session.client.label}); one client at a time. ")
        scope = getattr(self._transport(self._owner_http), "idle_scope", None)
        deadline = getattr(scope, "deadline", None)
        if not isinstance(deadline, float):
            return busy + "It is released when that client disconnects."
        if math.isinf(deadline):
            return busy + (f"It has a request or stream open; once that closes it is released after "
                           f"{self.release_after_s:g} s without a request (artemis mcp --release-after).")
        left = max(0.0, deadline - asyncio.get_running_loop().time())
        at = datetime.now(UTC) + timedelta(seconds=left)
        return busy + (f"Unless it sends something, it is released in {math.ceil(left)} s (at {at:%H:%M:%S} UTC; "
                       f"artemis mcp --release-after sets the time); you may observe meanwhile.")

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        name, args = params.name, dict(params.arguments or {})
        if name not in {t.name for t in self.tools}:
            known = ", ".join(t.name for t in self.tools)
            return _error(f"unknown tool {name!r}" + (" (this server is read-only)" if self.session.policy.read_only
                                                     else "") + f"; tools: {known}")
        client = _client_of(ctx)
        try:
            if not self._watch(ctx):
                if name != "observe":
                    return _error(self._busy())
                note = self._busy()
                return await self._on_worker(lambda: self._peek(note, args))
            return await self._on_worker(lambda: self._dispatch(name, args, client))
        except (ToolRefused, OutOfBounds) as exc:
            return _error(f"{name}: {exc}" if isinstance(exc, OutOfBounds) else str(exc))
        except DeviceError as exc:
            saved = self.session.session_id
            return _error(f"the device is unavailable: {exc}" + (f" (session {saved} is saved)" if saved else ""))
        except ArtemisError as exc:
            return _error(str(exc) + (f" ({exc.hint})" if exc.hint else ""))
        except Exception as exc:  # a fault of ours or the phone's: an answer, never a protocol error
            log.debug("tool %s failed", name, exc_info=True)
            return _error(f"{name} failed inside Artemis ({type(exc).__name__}: {str(exc)[:300]}); nothing more "
                          f"was done and the session goes on (observe to see the phone)")

    def _peek(self, note: str, args: dict[str, Any]) -> types.CallToolResult:
        view = self.session.peek()
        result = self._view_result(view, marks=args.get("marks") is not False,
                                   screenshot=args.get("screenshot") is not False)
        result.content[0] = _text(f"Not recorded: {note}\n{view.text()}")
        result.structured_content = {**(result.structured_content or {}), "recorded": False}
        return result

    def _dispatch(self, name: str, args: dict[str, Any], client: ClientInfo) -> types.CallToolResult:
        session = self.session
        check_args(name, args, session.screen)
        session.start(client)
        result = self._dispatch_started(name, args)
        if session.opening is not None:  # the first answer says which session the client got
            result.content.insert(0, _text(session.opening))
            session.opening = None
        return result

    def _dispatch_started(self, name: str, args: dict[str, Any]) -> types.CallToolResult:
        session = self.session
        if name == "observe":
            view = session.observe()
            return self._view_result(view, marks=args.get("marks") is not False,
                                     screenshot=args.get("screenshot") is not False)
        if name in ("recall", "note"):
            answer = memory_answer(session.memory_call(name, args))
            image = answer.pop("_image_png", None)
            content: list[Any] = [_text(device_json(answer, indent=1))]
            if isinstance(image, bytes):
                content.append(types.ImageContent(type="image", data=base64.b64encode(image).decode("ascii"),
                                                  mime_type="image/png"))
            return types.CallToolResult(content=content, structured_content=answer, is_error="error" in answer)
        if name == "finish":
            return self._step_result(session.finish(args))
        done = session.act(name, args)
        if isinstance(done, ViewAnswer):  # not sent: the screen changed under the client's target
            return self._view_result(done, marks=True, screenshot=True)
        return self._step_result(done)

    def _view_result(self, view: ViewAnswer, *, marks: bool, screenshot: bool) -> types.CallToolResult:
        content: list[Any] = [_text(view.text())]
        if screenshot:
            png = draw_marks(view.obs.png, IMAGE_MAX_SIDE, marks_of(view.obs.elements) if marks else ())
            content.append(types.ImageContent(type="image", data=base64.b64encode(png).decode("ascii"),
                                              mime_type="image/png"))
        return types.CallToolResult(content=content, structured_content=view.structured())

    def _step_result(self, step: StepAnswer) -> types.CallToolResult:
        return types.CallToolResult(content=[_text(step.text())], structured_content=step.structured())

    # -- resources and prompts -------------------------------------------------------------------

    async def _list_resources(self, ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[
            types.Resource(name="session-report", uri=REPORT_URI, mime_type="text/html",
                           description="The current (or last) session's HTML report: every step with its "
                                       "screenshots, target and outcome."),
            types.Resource(name="screen", uri=SCREEN_URI, mime_type="image/png",
                           description="A screenshot of the phone's screen now (nothing is recorded)."),
        ])

    async def _read_resource(self, ctx: Any, params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        if uri == SCREEN_URI:
            png = await self._on_worker(self.session.device.screenshot)
            return types.ReadResourceResult(contents=[types.BlobResourceContents(
                uri=uri, mime_type="image/png", blob=base64.b64encode(png).decode("ascii"))])
        if uri == REPORT_URI:
            html = await self._on_worker(self._report)
            return types.ReadResourceResult(contents=[types.TextResourceContents(uri=uri, mime_type="text/html",
                                                                                 text=html)])
        from mcp.shared.exceptions import MCPError

        raise MCPError(code=-32002, message=f"unknown resource {uri}")

    def _report(self) -> str:
        from artemis_cli.report.html import build_report

        session_id = self.session.session_id or self.session.last_session_id
        if session_id is None:
            return "<p>No session yet: the first tool call starts one.</p>"
        return build_report(self.session.engine, session_id)

    async def _list_prompts(self, ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=[types.Prompt(
            name=PROMPT_NAME, description=PROMPT_DESCRIPTION,
            arguments=[types.PromptArgument(name="goal", description="What to do on the phone.", required=True)])])

    async def _get_prompt(self, ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        from mcp.shared.exceptions import MCPError

        if params.name != PROMPT_NAME:
            raise MCPError(code=-32602, message=f"unknown prompt {params.name!r}; prompts: {PROMPT_NAME}")
        goal = (params.arguments or {}).get("goal") or ""
        if not goal.strip():
            raise MCPError(code=-32602, message="the android_task prompt needs a `goal`")
        return types.GetPromptResult(description=PROMPT_DESCRIPTION, messages=[
            types.PromptMessage(role="user", content=_text(android_task_prompt(goal)))])

    # -- transports ----------------------------------------------------------------------------

    async def serve_stdio(self) -> None:
        from mcp.server.stdio import stdio_server

        async with stdio_server() as (read, write):
            await self.server.run(read, write, self.server.create_initialization_options())

    async def serve_http(self, port: int, host: str = "127.0.0.1", on_ready: Callable[[str], None] | None = None) -> None:
        import uvicorn

        # the SDK ends a session with no request or stream open for this long: a client that
        # left without a DELETE releases the phone then (``_watch``)
        app = self.server.streamable_http_app(host=host, session_idle_timeout=self.release_after_s)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
        server = self._http_server = uvicorn.Server(config)
        if on_ready is not None:
            async def announce() -> None:
                while not server.started:
                    await asyncio.sleep(0.02)
                sockets = [s for srv in (server.servers or []) for s in srv.sockets]
                bound = sockets[0].getsockname()[1] if sockets else port
                on_ready(f"http://{host}:{bound}/mcp")

            task = asyncio.ensure_future(announce())
        await server.serve()
        if on_ready is not None:
            task.cancel()

