"""The official MCP Python SDK's client against the example server
(`server/examples/toolsets.rs`), over stdio.

Usage: py_example.py CMD...   spawn CMD and connect to it over stdio

It lists the tools; opens `notes` and adds a note; opens two counters and counts in each,
naming it; counts once without naming one. It prints one JSON object:
{"tools": [names, sorted], "said": {step: {"text": joined text, "isError": bool}}}.
"""

import json
import sys

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

STEPS = [
    ("open_notes", "toolset_open", {"toolset": "notes"}),
    ("add", "note_add", {"text": "buy milk"}),
    ("list", "note_list", {}),
    ("open_a", "toolset_open", {"toolset": "counter"}),
    ("open_b", "toolset_open", {"toolset": "counter"}),
    ("count_b", "count", {"instance": "counter-2", "by": 5}),
    ("count_a", "count", {"instance": "counter-1"}),
    ("count_unnamed", "count", {}),
]


async def main() -> None:
    server = StdioServerParameters(command=sys.argv[1], args=sys.argv[2:])
    async with Client(server) as client:
        tools = await client.list_tools()
        said = {}
        for step, tool, args in STEPS:
            result = await client.call_tool(tool, args)
            dumped = result.model_dump(mode="json", by_alias=True, exclude_none=True)
            text = " ".join(c.get("text", "") for c in dumped.get("content", []))
            said[step] = {"text": text, "isError": bool(dumped.get("isError", False))}
        print(json.dumps({"tools": sorted(t.name for t in tools.tools), "said": said}))


anyio.run(main)
