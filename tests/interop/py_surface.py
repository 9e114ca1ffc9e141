"""The official MCP Python SDK's client plays at the arcade through the surface host
(`mcpl-surface serve`, RFC-014 section 8.6), over stdio, using only the four meta-tools and
what their results say.

Usage:
  py_surface.py GAME SURFACE_BIN ARG...

GAME is `tictactoe` or `go`. The client launches SURFACE_BIN ARG... as an MCP client
launches any stdio server, lists its tools, opens a game against the bot with
`toolsets--open`, and plays with `toolsets--act`: it tries cells (points) in a fixed order,
and a cell the result says is not allowed is a tool error, after which the next is tried.
At Go it places a few stones, then passes until the game is over. It prints one JSON
object: {"server", "tools", "opened", "moves", "final", "errors", "logs"}; `logs` are the
`notifications/message` data it received.
"""

import json
import sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

TTT_CELLS = ["b2", "a1", "c3", "a3", "c1", "b1", "b3", "a2", "c2"]
GO_COLUMNS = "ABCDEFGHJ"
# Every point of a 9x9 board in a fixed scattered order (37 is prime to 81).
GO_POINTS = [f"{GO_COLUMNS[(i * 37) % 81 % 9]}{(i * 37) % 81 // 9 + 1}" for i in range(81)]
GO_STONES = 10


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


async def main() -> None:
    game, command, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    logs = []

    async def on_log(params) -> None:
        logs.append(params.data)

    server = StdioServerParameters(command=command, args=args)
    async with Client(server, logging_callback=on_log) as client:
        init = client.session.initialize_result
        tools = await client.list_tools()
        report = {
            "server": init.server_info.name if init else None,
            "tools": [t.name for t in tools.tools],
            "opened": None,
            "moves": [],
            "final": None,
            "errors": [],
            "logs": logs,
        }

        async def act(tool: str, arguments: dict):
            return await client.call_tool(
                "toolsets--act", {"tool": tool, "instance": "py", "args": arguments}
            )

        options = {"size": 9} if game == "go" else {}
        opened = await client.call_tool(
            "toolsets--open", {"toolset": game, "instance": "py", "options": options}
        )
        report["opened"] = text_of(opened)
        if opened.is_error:
            report["errors"].append(report["opened"])
            print(json.dumps(report), flush=True)
            return

        if game == "tictactoe":
            candidates, play, stones = TTT_CELLS, "tictactoe_play", 5
        else:
            candidates, play, stones = GO_POINTS, "go_play", GO_STONES
        placed = 0
        refused = 0
        for _turn in range(300):
            if placed < stones:
                result = None
                for point in candidates:
                    if point in report["moves"]:
                        continue
                    r = await act(play, {"move": point})
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
