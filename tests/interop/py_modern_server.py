"""A modern-only MCP server (2026-07-28) written with the official Python SDK (MCPServer).

The SDK serves both eras by default; this peer refuses the legacy one, so a client that
reaches its tools has spoken 2026-07-28 (issue #39 item 8):

- stdio: the SDK's modern serving loop only (`initialize` gets -32022 naming the versions);
- Streamable HTTP: a POST without a modern `MCP-Protocol-Version` is refused with 400 and a
  JSON-RPC error that is no modern one (-32600), as a legacy request to a modern-only
  endpoint is.

Tools:
  add(a, b)          the sum
  confirm_size()     asks, by MRTR (an `InputRequiredResult` with an `elicitation/create`
                     form whose every field has a default), which size to use, then says
                     what it was answered
  ask_name()         asks for a name, a required field without a default
  grow()             adds the tool `extra` and tells listeners the list changed

Usage:
  py_modern_server.py stdio [--no-listen]
  py_modern_server.py http [--no-listen]
                               Streamable HTTP on 127.0.0.1, a free port; the first line on
                               stdout is the port, once the socket listens.
  --no-listen                  serve no `subscriptions/listen` (-32601)
"""

import json
import socket
import sys

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ElicitRequest, ElicitRequestFormParams, InputRequiredResult

# `--no-listen`: the server serves no `subscriptions/listen` (the SDK's `subscriptions=False`).
NO_LISTEN = "--no-listen" in sys.argv[2:]
server = MCPServer("py-modern", version="1.0.0", subscriptions=False if NO_LISTEN else None)


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _answer(ctx: Context, key: str):
    responses = ctx.input_responses or {}
    answer = responses.get(key)
    return None if answer is None else answer.model_dump(mode="json", exclude_none=True)


def _ask(ctx: Context, key: str, message: str, schema: dict, state: str):
    caps = ctx.client_capabilities
    if caps is None or caps.elicitation is None:
        # MRTR: a server MUST NOT ask what the client has not declared.
        raise ValueError("the client does not declare elicitation")
    return InputRequiredResult(
        input_requests={
            key: ElicitRequest(params=ElicitRequestFormParams(message=message, requested_schema=schema))
        },
        request_state=state,
    )


@server.tool()
def confirm_size(ctx: Context) -> str | InputRequiredResult:
    """Ask which board size to use (a form whose fields all have defaults)."""
    answer = _answer(ctx, "size")
    if answer is None:
        schema = {
            "type": "object",
            "properties": {
                "size": {"type": "integer", "default": 9},
                "confirm": {"type": "boolean", "default": True},
            },
            "required": ["size", "confirm"],
        }
        return _ask(ctx, "size", "Which board size?", schema, "asked-size")
    if ctx.request_state != "asked-size":
        raise ValueError(f"requestState not echoed: {ctx.request_state!r}")
    return "answered " + json.dumps(answer, sort_keys=True)


@server.tool()
def ask_name(ctx: Context) -> str | InputRequiredResult:
    """Ask for a name (a required field with no default)."""
    answer = _answer(ctx, "name")
    if answer is None:
        schema = {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        }
        return _ask(ctx, "name", "Your name?", schema, "asked-name")
    return "answered " + json.dumps(answer, sort_keys=True)


def extra() -> str:
    """A tool that grow() adds."""
    return "extra"


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the tool `extra` and tell listeners."""
    if "extra" not in [t.name for t in await server.list_tools()]:
        server.add_tool(extra, name="extra")
    await ctx.notify_tools_changed()
    return "grown"


def serve_stdio() -> None:
    from mcp.server.runner import _serve_modern_stream
    from mcp.server.stdio import stdio_server

    low = server._lowlevel_server

    async def run() -> None:
        async with stdio_server() as (read, write):
            async with low.lifespan(low) as state:
                # The SDK's own modern loop, without the dual-era opening that would let
                # `initialize` in (private in mcp 2.3.0, pinned).
                await _serve_modern_stream(low, read, write, lifespan_state=state, raise_exceptions=False)

    anyio.run(run)


def modern_only(app):
    """Refuses, with 400, every request that does not name a modern protocol version."""

    async def guarded(scope, receive, send):
        if scope["type"] == "http":
            version = dict(scope["headers"]).get(b"mcp-protocol-version", b"").decode("latin-1")
            if not version.startswith("2026-"):
                body = json.dumps(
                    {
                        "jsonrpc": "2.0",
                        "id": None,
                        "error": {"code": -32600, "message": "this server serves only MCP 2026-07-28"},
                    }
                ).encode()
                await send(
                    {
                        "type": "http.response.start",
                        "status": 400,
                        "headers": [(b"content-type", b"application/json")],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return guarded


def serve_http() -> None:
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    app = server.streamable_http_app(streamable_http_path="/mcp")
    config = uvicorn.Config(modern_only(app), log_level="warning", lifespan="on")
    uv = uvicorn.Server(config)
    print(sock.getsockname()[1], flush=True)
    anyio.run(uv.serve, [sock])


if __name__ == "__main__":
    if (sys.argv[1] if len(sys.argv) > 1 else "stdio") == "stdio":
        serve_stdio()
    else:
        serve_http()
