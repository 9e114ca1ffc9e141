"""A 2025-11-25 server written with the official Python SDK (MCPServer) whose tools do what
servers of that revision may do to a client and that this project's host must take:

- `slow_echo` closes its request's SSE stream before answering (SSE polling, SEP-1699):
  the answer waits in the event store for the client to resume with `Last-Event-ID`;
- `confirm` asks the client for input (`elicitation/create`) with a form whose every field
  has a default; `ask_name` asks with a required field that has none. Both say back what
  the client answered. The SDK sends them whatever capabilities the client declared.

Usage: py_polling_server.py  serves Streamable HTTP on 127.0.0.1, a free port; the first
line printed on stdout is the port, once the socket is listening.
"""

import itertools
import socket

import anyio
import uvicorn
from pydantic import BaseModel, Field

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.streamable_http import EventMessage, EventStore

server = MCPServer("py-polling", version="1.0.0")


class MemoryEventStore(EventStore):
    """Every event of every stream, in memory, for the replay after a closed stream."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, object]] = []
        self.ids = itertools.count(1)

    async def store_event(self, stream_id, message):
        event_id = str(next(self.ids))
        self.events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(self, last_event_id, send_callback):
        stream = next((s for e, s, _ in self.events if e == last_event_id), None)
        if stream is None:
            return None
        after = False
        for event_id, s, message in self.events:
            if after and s == stream and message is not None:
                await send_callback(EventMessage(message, event_id))
            if event_id == last_event_id:
                after = True
        return stream


@server.tool()
async def slow_echo(text: str, ctx: Context) -> str:
    """Close this request's stream first, then answer: the client resumes to read it."""
    await ctx.close_sse_stream()
    return f"after polling: {text}"


class Confirm(BaseModel):
    confirm: bool = Field(default=False, description="Go ahead?")
    size: int = Field(default=9, description="Board size")


class Name(BaseModel):
    name: str = Field(description="Your name")


@server.tool()
async def confirm(ctx: Context) -> str:
    """Ask a question every field of which has a default."""
    answer = await ctx.elicit("Start a game?", schema=Confirm)
    data = answer.data.model_dump() if answer.action == "accept" else None
    return f"{answer.action} {data}"


@server.tool()
async def ask_name(ctx: Context) -> str:
    """Ask a question with a required field and no default."""
    answer = await ctx.elicit("Who are you?", schema=Name)
    return answer.action


def main() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    app = server.streamable_http_app(
        streamable_http_path="/mcp", event_store=MemoryEventStore(), retry_interval=50
    )
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    uv = uvicorn.Server(config)
    print(sock.getsockname()[1], flush=True)
    anyio.run(uv.serve, [sock])


if __name__ == "__main__":
    main()
