"""``artemis mcp``: a ``DrivenSession`` served over MCP (stdio, or streamable HTTP on 127.0.0.1)
with the official SDK's low-level server, so the tool list is exactly ours (``mcp_server.tools``).

Every tool call runs on one worker thread, in order: one device, one session, whole steps. A
call the client gives up on (a cancelled request, a dropped connection) still finishes its step
and writes it whole before anything else runs; then, when the connection that drove the session
closes, the session is marked ``interrupted`` (``artemis mcp --resume ID`` continues it). One
connection drives a session at a time: another one's action calls are refused while it lasts.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from mcp import types
from mcp.server.lowlevel import Server

from artemis_cli.errors import ArtemisError, DeviceError
from artemis_cli.mcp_server.answers import IMAGE_MAX_SIDE, StepAnswer, ViewAnswer, device_json, memory_answer
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


def _text(text: str) -> types.TextContent:
    return types.TextContent(type="text", text=text)


def _error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[_text(text)], is_error=True)


class ArtemisMcp:
    """The MCP face of one ``DrivenSession``."""

    def __init__(self, session: DrivenSession, *, on_notice: Callable[[str], None] | None = None) -> None:
        self.session = session
        self.on_notice = on_notice or (lambda text: print(text, file=sys.stderr))
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="artemis-mcp")
        self._owner: Any = None  # the connection driving the session
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

    def interrupt(self, reason: str) -> None:
        """Queue the session's interruption behind any call still running (whole steps)."""
        self.worker.submit(self._interrupt, reason)

    def _interrupt(self, reason: str) -> None:
        session_id = self.session.session_id
        try:
            self.session.interrupt(reason)
        except Exception as exc:  # the lease was taken over, a full disk: say so, never hang
            self.on_notice(f"could not mark session {session_id} interrupted: {type(exc).__name__}: {exc}")
            return
        if session_id:
            self.on_notice(f"session {session_id} interrupted ({reason}); continue it with: "
                           f"artemis mcp --resume {session_id}")

    def close(self, reason: str) -> None:
        """At the server's end: wait for the running call, then interrupt an open session."""
        self.interrupt(reason)
        stopped: KeyboardInterrupt | None = None
        while True:  # a stop signal (a client's SIGTERM after closing stdin) must not cut a step short
            try:
                self.worker.shutdown(wait=True)
                break
            except KeyboardInterrupt as exc:  # the first one only: catch_stop_signals ignores later ones
                stopped = exc
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

    def _watch(self, ctx: Any) -> None:
        """Make the connection of ``ctx`` the session's driver, interrupting the session when it
        closes. Raises ToolRefused when another connection drives it."""
        conn = _connection_of(ctx)
        if self._owner is not None and conn is not self._owner and self.session.session_id is not None:
            raise ToolRefused(f"session {self.session.session_id} is being driven by another client "
                              f"({self.session.client.label}); one client at a time")
        if conn is self._owner:
            return
        self._owner = conn
        stack = getattr(conn, "exit_stack", None)
        if stack is not None:
            async def closed() -> None:
                if self._owner is conn:
                    self._owner = None
                    self.interrupt("the MCP client disconnected")

            stack.push_async_callback(closed)

    async def _call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        name, args = params.name, dict(params.arguments or {})
        if name not in {t.name for t in self.tools}:
            known = ", ".join(t.name for t in self.tools)
            return _error(f"unknown tool {name!r}" + (" (this server is read-only)" if self.session.policy.read_only
                                                     else "") + f"; tools: {known}")
        client = _client_of(ctx)
        try:
            self._watch(ctx)
            return await self._on_worker(lambda: self._dispatch(name, args, client))
        except ToolRefused as exc:
            return _error(str(exc))
        except DeviceError as exc:
            saved = self.session.session_id
            return _error(f"the device is unavailable: {exc}" + (f" (session {saved} is saved)" if saved else ""))
        except ArtemisError as exc:
            return _error(str(exc) + (f" ({exc.hint})" if exc.hint else ""))

    def _dispatch(self, name: str, args: dict[str, Any], client: ClientInfo) -> types.CallToolResult:
        session = self.session
        session.start(client)
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

        app = self.server.streamable_http_app(host=host)
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
        server = uvicorn.Server(config)
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

