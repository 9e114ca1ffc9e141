"""An MCP client written with the official Python SDK that listens for tool-list changes
(`Client.listen`, MCP 2026-07-28 `subscriptions/listen`), in the connect mode named by
MCP_CONNECT_MODE (`auto` by default, or a modern version such as `2026-07-28`).

Usage:
  py_listen.py URL                connect over Streamable HTTP
  py_listen.py stdio CMD...       spawn CMD and connect over stdio

It opens a stream for `toolsListChanged`, lists the tools, calls `change_tools`, waits for
the stream's event, lists the tools again, leaves the stream (cancelling it), and prints one
JSON object: {"protocolVersion": ..., "honored": {...}, "event": NAME, "before": [names],
"after": [names], "result": text of change_tools}.
"""

import json
import os
import sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters


async def main() -> None:
    if sys.argv[1] == "stdio":
        server = StdioServerParameters(command=sys.argv[2], args=sys.argv[3:])
    else:
        server = sys.argv[1]
    mode = os.environ.get("MCP_CONNECT_MODE", "auto")
    async with Client(server, mode=mode) as client:
        async with client.listen(tools_list_changed=True) as sub:
            honored = sub.honored.model_dump(mode="json", by_alias=True, exclude_none=True)
            before = [t.name for t in (await client.list_tools()).tools]
            called = await client.call_tool("change_tools", {})
            with anyio.fail_after(30):
                event = await sub.__anext__()
            after = [t.name for t in (await client.list_tools()).tools]
        print(
            json.dumps(
                {
                    "protocolVersion": client.protocol_version,
                    "honored": honored,
                    "event": type(event).__name__,
                    "before": before,
                    "after": after,
                    "result": called.content[0].text,
                }
            ),
            flush=True,
        )


if __name__ == "__main__":
    anyio.run(main)
