"""An MCP client written with the official Python SDK, in its default connect mode
(`auto`: it probes `server/discover` and goes modern on a server that answers it), or
the mode named by the environment variable MCP_CONNECT_MODE (`legacy`, `auto`, or a
modern version such as `2026-07-28`).

Usage:
  py_client.py URL TOOL ARGS_JSON           connect over Streamable HTTP
  py_client.py stdio TOOL ARGS_JSON CMD...  spawn CMD and connect over stdio

It initializes (declaring sampling, elicitation and roots: the model answers "sampled: " and
the prompt's text, the user accepts with the email py@example.org, the one root is
file:///py/project), lists every tool, calls TOOL with ARGS_JSON, and prints one JSON object:
{"handshake": "initialize"|"discover", "server": ..., "protocolVersion": ..., "tools": [names], "result": CallToolResult}.
"server" is the serverInfo of `initialize`, or in the modern era the one stamped on results.
"""

import json
import os
import sys

import anyio
from mcp import Client, types
from mcp.client.stdio import StdioServerParameters


async def sample(context, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
    content = params.messages[0].content
    text = content.text if isinstance(content, types.TextContent) else "?"
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=f"sampled: {text}"),
        model="py-model",
        stop_reason="endTurn",
    )


async def roots(context) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///py/project", name="Project")])


async def elicit(context, params: types.ElicitRequestParams) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"email": "py@example.org"})


async def main() -> None:
    target, tool, args = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    if target == "stdio":
        server = StdioServerParameters(command=sys.argv[4], args=sys.argv[5:])
    else:
        server = target
    mode = os.environ.get("MCP_CONNECT_MODE", "auto")
    async with Client(
        server,
        mode=mode,
        sampling_callback=sample,
        elicitation_callback=elicit,
        list_roots_callback=roots,
    ) as client:
        init = client.session.initialize_result
        tools = await client.list_tools()
        result = await client.call_tool(tool, args)
        info = client.server_info
        print(
            json.dumps(
                {
                    "handshake": "initialize" if init else "discover",
                    "server": info.name if info else None,
                    "protocolVersion": client.protocol_version,
                    "tools": [t.name for t in tools.tools],
                    "result": result.model_dump(mode="json", by_alias=True, exclude_none=True),
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    anyio.run(main)
