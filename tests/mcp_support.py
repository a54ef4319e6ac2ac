"""The official MCP Python SDK's client, on its own event-loop thread, called synchronously from
tests: over stdio (the server is a subprocess the SDK starts) or streamable HTTP."""

from __future__ import annotations

import asyncio
import re
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client


class McpClient:
    """One MCP connection. ``call`` waits for a tool's answer; ``start`` sends a call and returns
    its future at once; ``close`` ends the connection (pending calls are abandoned)."""

    def __init__(self, connect: Callable[[], Any], name: str | None = None) -> None:
        self._connect = connect
        self._info = types.Implementation(name=name, version="1") if name else None
        self._loop = asyncio.new_event_loop()
        self._calls: asyncio.Queue[tuple[str, Any, Future[Any]]] | None = None
        self._ready: Future[Any] = Future()
        self._thread = threading.Thread(target=self._loop.run_until_complete, args=(self._main(),), daemon=True)
        self._thread.start()
        self.init = self._ready.result(timeout=60)

    @classmethod
    def stdio(cls, params: StdioServerParameters, errlog: Any) -> McpClient:
        return cls(lambda: stdio_client(params, errlog=errlog))

    @classmethod
    def http(cls, url: str, name: str | None = None) -> McpClient:
        """``name``: the clientInfo name it sends (the SDK's own by default)."""
        return cls(lambda: streamable_http_client(url), name)

    async def _main(self) -> None:
        self._calls = asyncio.Queue()
        pending: set[asyncio.Task[Any]] = set()
        try:
            async with self._connect() as streams, ClientSession(streams[0], streams[1], client_info=self._info) as session:
                self._ready.set_result(await session.initialize())
                while True:
                    name, args, fut = await self._calls.get()
                    if name == "":
                        for task in pending:
                            task.cancel()
                        fut.set_result(None)
                        return
                    task = asyncio.ensure_future(self._one(session, name, args, fut))
                    pending.add(task)
                    task.add_done_callback(pending.discard)
        except BaseException as e:
            if not self._ready.done():
                self._ready.set_exception(e)
            raise

    @staticmethod
    async def _one(session: ClientSession, name: str, args: Any, fut: Future[Any]) -> None:
        try:
            if name == "tools/list":
                result: Any = await session.list_tools()
            elif name == "resources/list":
                result = await session.list_resources()
            elif name == "resources/read":
                result = await session.read_resource(args)
            elif name == "prompts/get":
                result = await session.get_prompt(args[0], args[1])
            else:
                result = await session.call_tool(name, args)
            fut.set_result(result)
        except BaseException as e:  # cancelled too: the test sees it
            if not fut.done():
                fut.set_exception(e)
            if isinstance(e, asyncio.CancelledError):
                raise

    def _send(self, name: str, args: Any) -> Future[Any]:
        fut: Future[Any] = Future()
        assert self._calls is not None
        self._loop.call_soon_threadsafe(self._calls.put_nowait, (name, args, fut))
        return fut

    def ask(self, name: str, args: Any = None, timeout: float = 60) -> Any:
        return self._send(name, args).result(timeout=timeout)

    def tools(self) -> list[Any]:
        return list(self.ask("tools/list").tools)

    def start(self, tool: str, **args: Any) -> Future[Any]:
        return self._send(tool, args)

    def call(self, tool: str, timeout: float = 60, **args: Any) -> Any:
        return self.ask(tool, args, timeout)

    def text(self, tool: str, **args: Any) -> str:
        res = self.call(tool, **args)
        body = "".join(c.text for c in res.content if c.type == "text")
        assert not res.is_error, f"{tool}({args}) failed: {body}"
        return body

    def close(self) -> None:
        try:
            self.ask("", None, 20)
        finally:
            self._thread.join(timeout=20)


def index_of(listing: str, label: str, cls: str | None = None) -> int:
    """The index of the element list line labelled (or hinted) ``label``, of class ``cls``."""
    for m in re.finditer(r'^\[(\d+)\] (\S+) (?:"([^"]*)"|hint="([^"]*)")', listing, re.M):
        if label in (m.group(3), m.group(4)) and (cls is None or m.group(2) == cls):
            return int(m.group(1))
    raise AssertionError(f"no element {label!r} in:\n{listing}")
