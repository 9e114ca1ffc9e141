"""The official MCP Python SDK's client plays at the arcade through the surface host
(`mcpl-surface serve`, RFC-014 section 8.6), over stdio or Streamable HTTP, using only the
four meta-tools and what their results say.

Usage:
  py_surface.py [--mode MODE] GAME SURFACE_BIN ARG...
  py_surface.py [--mode MODE] GAME --http URL TOKEN

MODE is the SDK's connect mode: `legacy` (the default: `initialize`), `auto` (it probes
`server/discover` and goes modern on a server that answers it) or a modern version
(`2026-07-28`). GAME is `tictactoe` or `go`. The client launches SURFACE_BIN ARG... as an
MCP client launches any stdio server, or reaches URL with the bearer TOKEN; lists its
tools, opens a game against the bot with `toolsets--open`, and plays with `toolsets--act`:
it tries cells (points) in a fixed order, and a cell the result says is not allowed is a
tool error, after which the next is tried. At Go it places a few stones, then passes until
the game is over. It prints one JSON object: {"server", "protocolVersion", "handshake",
"stamped", "tools", "opened", "moves", "final", "errors", "logs", "news", "refused",
"tools_stable"}; `logs` are the `notifications/message` data it received, `news` the
"Since your previous call:" blocks of its results, `stamped` the serverInfo name on the
last result (a modern server's), `handshake` `initialize`, `discover` or `none`.
"""

import json
import sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

TTT_CELLS = ["b2", "a1", "c3", "a3", "c1", "b1", "b3", "a2", "c2"]
GO_COLUMNS = "ABCDEFGHJ"
# Every point of a 9x9 board in a fixed scattered order (37 is prime to 81).
GO_POINTS = [f"{GO_COLUMNS[(i * 37) % 81 % 9]}{(i * 37) % 81 // 9 + 1}" for i in range(81)]
GO_STONES = 10


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


NEWS = "Since your previous call:"
SERVER_INFO = "io.modelcontextprotocol/serverInfo"


async def main() -> None:
    argv = sys.argv[1:]
    mode = "legacy"
    if argv[0] == "--mode":
        mode, argv = argv[1], argv[2:]
    game = argv[0]
    logs = []

    async def on_log(params) -> None:
        logs.append(params.data)

    if argv[1] == "--http":
        url, token = argv[2], argv[3]
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with http:
            async with Client(
                streamable_http_client(url, http_client=http), mode=mode, logging_callback=on_log
            ) as client:
                await play(client, game, logs)
    else:
        server = StdioServerParameters(command=argv[1], args=argv[2:])
        async with Client(server, mode=mode, logging_callback=on_log) as client:
            await play(client, game, logs)


async def play(client: Client, game: str, logs: list) -> None:
    init = client.session.initialize_result
    discovered = client.session.discover_result
    info = client.server_info
    tools = await client.list_tools()
    report = {
        "server": info.name if info else None,
        "protocolVersion": client.protocol_version,
        "handshake": "initialize" if init else ("discover" if discovered else "none"),
        "stamped": None,
        "tools": [t.name for t in tools.tools],
        "opened": None,
        "moves": [],
        "final": None,
        "errors": [],
        "logs": logs,
        "news": [],
    }

    async def call(name: str, arguments: dict):
        result = await client.call_tool(name, arguments)
        stamp = (getattr(result, "meta", None) or {}).get(SERVER_INFO) or {}
        report["stamped"] = stamp.get("name")
        text = text_of(result)
        if NEWS in text:
            report["news"].append(text.split(NEWS, 1)[1])
        return result

    async def act(tool: str, arguments: dict):
        return await call("toolsets--act", {"tool": tool, "instance": "py", "args": arguments})

    options = {"size": 9} if game == "go" else {}
    opened = await call(
        "toolsets--open", {"toolset": game, "instance": "py", "options": options}
    )
    report["opened"] = text_of(opened)
    if opened.is_error:
        report["errors"].append(report["opened"])
        print(json.dumps(report), flush=True)
        return

    if game == "tictactoe":
        candidates, play_tool, stones = TTT_CELLS, "tictactoe_play", 5
    else:
        candidates, play_tool, stones = GO_POINTS, "go_play", GO_STONES
    placed = 0
    refused = 0
    for _turn in range(300):
        if placed < stones:
            result = None
            for point in candidates:
                if point in report["moves"]:
                    continue
                r = await act(play_tool, {"move": point})
                if r.is_error:
                    refused += 1
                    continue
                result, placed = r, placed + 1
                report["moves"].append(point)
                break
            if result is None:
                # Nowhere left to play: pass (Go) or stop (tic-tac-toe cannot get here).
                placed = stones
                continue
        else:
            result = await act("go_pass", {})
            report["moves"].append("pass")
            if result.is_error:
                report["errors"].append(text_of(result))
                break
        text = text_of(result)
        if "Game over:" in text:
            report["final"] = text
            break
    report["refused"] = refused
    tools_after = await client.list_tools()
    report["tools_stable"] = [t.model_dump(mode="json") for t in tools_after.tools] == [
        t.model_dump(mode="json") for t in tools.tools
    ]
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    anyio.run(main)
