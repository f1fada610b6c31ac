"""MCPEnv: a ToolEnv whose tools come from MCP servers started over stdio.

The servers are shared by every rollout (upstream's intent: global, read-only tool servers).
Their sessions live on a private event loop in a daemon thread, so the environment can be
built synchronously in `load_environment` and its tools called from any loop. Needs the
official MCP SDK (`pip install mcp`); without it construction raises `ConfigError`.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from verifiers.decorators import teardown
from verifiers.envs.integrations._optional import require
from verifiers.envs.tool_env import ToolEnv
from verifiers.errors import ConfigError, InfraError
from verifiers.types import ToolMessage

logger = logging.getLogger("verifiers")

INSTALL = "pip install mcp  (the Model Context Protocol SDK)"
CONNECT_TIMEOUT_S = 120.0


@dataclass
class MCPServerConfig:
    """How to start one MCP server: `command args...` with extra environment `env`."""

    name: str
    command: str
    args: list[str] | None = None
    env: dict[str, str] | None = None
    description: str = ""


def _default_error_formatter(e: Exception) -> str:
    return f"Error: {e}"


class MCPServerConnection:
    """One running server: its session, its tools, and a task holding the stdio streams open."""

    def __init__(self, config: MCPServerConfig, mcp: Any) -> None:
        self.config = config
        self._mcp = mcp
        self.session: Any = None
        self.tools: dict[str, Any] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._error: BaseException | None = None

    async def connect(self) -> dict[str, Any]:
        self.loop = asyncio.get_running_loop()
        self._task = asyncio.create_task(self._serve())
        await self._ready.wait()
        if self._error is not None:
            raise InfraError(
                f"MCP server {self.config.name!r} ({self.config.command}) failed to start: "
                f"{self._error}"
            ) from self._error
        return self.tools

    async def _serve(self) -> None:
        # the optional SDK's submodule, loaded on use (the package itself came from `require`)
        stdio_client = importlib.import_module("mcp.client.stdio").stdio_client

        params = self._mcp.StdioServerParameters(
            command=self.config.command, args=self.config.args or [], env=self.config.env
        )
        try:
            async with stdio_client(params) as (read, write):
                async with self._mcp.ClientSession(read, write) as session:
                    await session.initialize()
                    listed = await session.list_tools()
                    self.tools = {tool.name: tool for tool in listed.tools}
                    self.session = session
                    self._ready.set()
                    await asyncio.Event().wait()  # hold the streams open until cancelled
        except asyncio.CancelledError:
            raise
        except Exception as e:
            self._error = e
        finally:
            self.session = None
            self._ready.set()

    async def call_tool(self, tool_name: str, arguments: dict[str, Any]) -> str:
        """Call on the connection's own loop (the caller may be on another) and join the text
        parts of the result."""
        if self.session is None or self.loop is None:
            raise InfraError(f"MCP server {self.config.name!r} is not connected")
        fut = asyncio.run_coroutine_threadsafe(
            self.session.call_tool(tool_name, arguments=arguments), self.loop
        )
        result = await asyncio.wrap_future(fut)
        parts = [str(getattr(item, "text", item)) for item in result.content or ()]
        return "\n".join(parts) if parts else "No result returned from tool"

    async def disconnect(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass


class MCPToolWrapper:
    """An MCP tool as a callable with `__name__`/`__doc__` and an OpenAI tool definition."""

    def __init__(self, server_name: str, tool: Any, connection: MCPServerConnection) -> None:
        self.server_name = server_name
        self.tool = tool
        self.server_connection = connection
        self.__name__ = tool.name
        self.__doc__ = tool.description or ""

    async def __call__(self, **kwargs: Any) -> str:
        return await self.server_connection.call_tool(self.tool.name, kwargs)

    def to_tool_def(self) -> dict[str, Any]:
        return {
            "name": self.__name__,
            "description": self.__doc__ or "",
            "parameters": _input_schema(self.tool) or {"type": "object", "properties": {}},
        }


class MCPEnv(ToolEnv):
    """Tools of MCP servers, shared by all rollouts (upstream's constructor arguments)."""

    def __init__(
        self,
        mcp_servers: list[MCPServerConfig | dict] | None = None,
        max_turns: int = 10,
        error_formatter: Callable[[Exception], str] = _default_error_formatter,
        **kwargs: Any,
    ) -> None:
        mcp = require("mcp", "MCPEnv", INSTALL)
        self.mcp_servers = [_server_config(s) for s in mcp_servers or ()]
        self.server_connections: dict[str, MCPServerConnection] = {}
        self.mcp_tools: dict[str, MCPToolWrapper] = {}
        super().__init__(tools=[], max_turns=max_turns, error_formatter=error_formatter, **kwargs)
        self._bg_loop = asyncio.new_event_loop()
        self._bg_thread = threading.Thread(
            target=self._bg_loop.run_forever, name="vf-mcp", daemon=True
        )
        self._bg_thread.start()
        future = asyncio.run_coroutine_threadsafe(self._connect_servers(mcp), self._bg_loop)
        try:
            future.result(timeout=CONNECT_TIMEOUT_S)
        except BaseException:
            self._stop_loop()
            raise
        wrappers = list(self.mcp_tools.values())
        tools: list[Callable[..., Any]] = list(wrappers)
        self.tools = tools
        self.tool_map = {w.__name__: w for w in wrappers}
        self.tool_defs = [w.to_tool_def() for w in wrappers]

    async def _connect_servers(self, mcp: Any) -> None:
        for config in self.mcp_servers:
            connection = MCPServerConnection(config, mcp)
            tools = await connection.connect()
            self.server_connections[config.name] = connection
            for tool in tools.values():
                self.mcp_tools[tool.name] = MCPToolWrapper(config.name, tool, connection)
                logger.debug("registered MCP tool %s from %s", tool.name, config.name)

    async def call_tool(
        self, tool_name: str, tool_args: dict[str, Any], tool_call_id: str, **kwargs: Any
    ) -> ToolMessage:
        wrapper = self.mcp_tools.get(tool_name)
        if wrapper is None:
            content = f"Error: Tool '{tool_name}' not found"
        else:
            try:
                content = str(await wrapper(**tool_args))
            except Exception as e:
                content = self.error_formatter(e)
        return ToolMessage(content=content, tool_call_id=tool_call_id)

    @teardown
    async def teardown_mcp_servers(self) -> None:
        """Stop the servers and the private loop (once; a later call does nothing)."""
        if not self._bg_thread.is_alive():
            return
        for connection in self.server_connections.values():
            fut = asyncio.run_coroutine_threadsafe(connection.disconnect(), self._bg_loop)
            await asyncio.wrap_future(fut)
        self.server_connections.clear()
        self.mcp_tools.clear()
        self._stop_loop()

    async def teardown(self) -> None:
        # Environment.teardown does not run @teardown handlers itself; call ours here.
        await self.teardown_mcp_servers()
        await super().teardown()

    def _stop_loop(self) -> None:
        self._bg_loop.call_soon_threadsafe(self._bg_loop.stop)
        self._bg_thread.join(timeout=5)


def _input_schema(tool: Any) -> dict[str, Any] | None:
    # mcp 1.x names it `inputSchema`, mcp 2.x `input_schema`.
    schema = getattr(tool, "input_schema", None)
    return schema if schema is not None else getattr(tool, "inputSchema", None)


def _server_config(server: MCPServerConfig | dict) -> MCPServerConfig:
    if isinstance(server, MCPServerConfig):
        return server
    if not isinstance(server, dict) or "name" not in server or "command" not in server:
        raise ConfigError(
            f"MCPEnv: each server is an MCPServerConfig or a dict with 'name' and 'command', "
            f"not {server!r}"
        )
    return MCPServerConfig(
        name=server["name"],
        command=server["command"],
        args=server.get("args"),
        env=server.get("env"),
        description=server.get("description", ""),
    )
