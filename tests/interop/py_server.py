"""An MCP server written with the official Python SDK (MCPServer, formerly FastMCP).

Usage:
  py_server.py stdio          serve on stdin/stdout
  py_server.py http           serve Streamable HTTP on 127.0.0.1, a free port; the first line
                              printed on stdout is the port, once the socket is listening.
"""

import socket
import sys

import anyio
from mcp.server.mcpserver import MCPServer

server = MCPServer("py-peer", version="1.0.0")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def echo(text: str) -> str:
    """Say the text back."""
    return text


@server.tool()
def fail(reason: str) -> str:
    """Always fail, with the reason."""
    raise ValueError(reason)


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        server.run("stdio")
        return
    import uvicorn

    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    app = server.streamable_http_app(streamable_http_path="/mcp")
    config = uvicorn.Config(app, log_level="warning", lifespan="on")
    uv = uvicorn.Server(config)
    print(sock.getsockname()[1], flush=True)
    anyio.run(uv.serve, [sock])


if __name__ == "__main__":
    main()
