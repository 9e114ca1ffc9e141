"""A plain MCP client (the official Python SDK, no MCPL) plays tic-tac-toe at the arcade.

Usage:
  py_arcade.py URL TOKEN [MODE]
  py_arcade.py stdio MODE CMD...

MODE is the SDK's connect mode: `auto` (the default: it probes `server/discover` and goes
modern on a server that answers it), `legacy`, or a modern version (`2026-07-28`). Over
stdio the client spawns CMD.

It connects over Streamable HTTP with a bearer token, lists the tools, opens a game
against the bot through the compat tool `toolset_open` (RFC-014 section 8: a host without
`toolHints` opens instances through plain tools and names them with an `instance`
argument), and plays the first free cell each answer lists until the game is over. It
prints one JSON object:
{"server": ..., "stamped": the serverInfo name a modern result carries, "protocolVersion": ..., "handshake": "initialize"|"discover"|"none",
 "tools": [names], "opened": text, "moves": [cells], "final": text|null, "errors": [texts]}.
"""

import json
import re
import sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def text_of(result) -> str:
    return "\n".join(c.text for c in result.content if getattr(c, "type", None) == "text")


def free_cells(text: str) -> list[str]:
    m = re.search(r"Free cells: (.*)", text)
    return [c.strip() for c in m.group(1).split(",")] if m else []


async def play(client: Client) -> dict:
    init = client.session.initialize_result
    discovered = client.session.discover_result
    tools = await client.list_tools()
    opened = await client.call_tool("toolset_open", {"toolset": "tictactoe", "instance": "py"})
    text = text_of(opened)
    info = client.server_info
    stamp = (getattr(opened, "meta", None) or {}).get("io.modelcontextprotocol/serverInfo") or {}
    report = {
        "server": info.name if info else None,
        "stamped": stamp.get("name"),
        "protocolVersion": client.protocol_version,
        "handshake": "initialize" if init else ("discover" if discovered else "none"),
        "tools": [t.name for t in tools.tools],
        "opened": text,
        "moves": [],
        "final": None,
        "errors": [],
    }
    if opened.is_error:
        report["errors"].append(text)
    free = free_cells(text)
    # X moves at most five times in a game.
    for _ in range(5):
        if not free:
            break
        cell = free[0]
        report["moves"].append(cell)
        result = await client.call_tool("tictactoe_play", {"move": cell, "instance": "py"})
        text = text_of(result)
        if result.is_error:
            report["errors"].append(text)
            break
        if "Game over:" in text:
            report["final"] = text
            break
        free = free_cells(text)
    return report


async def main() -> None:
    if sys.argv[1] == "stdio":
        mode = sys.argv[2]
        server = StdioServerParameters(command=sys.argv[3], args=sys.argv[4:])
        async with Client(server, mode=mode) as client:
            report = await play(client)
    else:
        url, token = sys.argv[1], sys.argv[2]
        mode = sys.argv[3] if len(sys.argv) > 3 else "auto"
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with http:
            async with Client(streamable_http_client(url, http_client=http), mode=mode) as client:
                report = await play(client)
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    anyio.run(main)
