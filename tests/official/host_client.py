#!/usr/bin/env python3
"""The client under test when the official conformance suite tests a client: the host.

`conformance client --command "python3 host_client.py"` runs this once per scenario with
the scenario's server URL as the last argument and its name in MCP_CONFORMANCE_SCENARIO.
It starts `mcpl-host console` (the binary named by MCPL_HOST) with that one server and
plays the part the scenario asks of a client through the console's JSON lines, as an agent
would: the host does the protocol (the handshake or era probe, listing, calling, answering
elicitation, resuming streams), this script only chooses what to call. Exits non-zero when
the host cannot do what the scenario needs.
"""

import json
import os
import subprocess
import sys
import tempfile

SERVER = "s"


class Console:
    """`mcpl-host console` with one server, spoken to in JSON lines."""

    def __init__(self, host, url, state_dir):
        self.proc = subprocess.Popen(
            [host, "console", "--server", f"{SERVER}={url}", "--state-dir", state_dir,
             # The era found as the binding pages say: a server/discover probe, then
             # initialize if the server is a legacy one.
             "--era", "auto"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        self.next_id = 0

    def ask(self, request):
        """Sends one request line; returns its answer (events before it are logged)."""
        self.next_id += 1
        line = dict(request, id=self.next_id)
        self.proc.stdin.write(json.dumps(line) + "\n")
        self.proc.stdin.flush()
        while True:
            out = self.proc.stdout.readline()
            if not out:
                raise SystemExit("host_client: the host ended before answering")
            message = json.loads(out)
            sys.stderr.write(f"host_client: {out}")
            if message.get("id") == self.next_id:
                return message

    def close(self):
        self.proc.stdin.close()
        return self.proc.wait(timeout=30)


def server_tools(console):
    """The server's tools as the model sees them (`s--NAME`), by their own names."""
    tools = console.ask({"tools": True})["tools"]
    prefix = f"{SERVER}--"
    return {t["name"][len(prefix):]: t for t in tools if t["name"].startswith(prefix)}


def call(console, name, args):
    answer = console.ask({"tool": f"{SERVER}--{name}", "args": args})
    result = answer.get("result") or {}
    if result.get("isError"):
        sys.stderr.write(f"host_client: {name} answered an error: {result}\n")
    return result


def main():
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    host = os.environ.get("MCPL_HOST", "mcpl-host")
    with tempfile.TemporaryDirectory() as state_dir:
        console = Console(host, url, state_dir)
        tools = server_tools(console)
        # A scenario that says which calls to make (MCP_CONFORMANCE_CONTEXT's toolCalls)
        # gets exactly those.
        context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
        calls = context.get("toolCalls") if isinstance(context, dict) else None
        if calls:
            for c in calls:
                call(console, c["name"], c.get("arguments") or {})
        elif scenario == "sep-2322-client-request-state":
            # MRTR: every tool it serves is one flow (state echoed, none, unrelated, …).
            for name in tools:
                call(console, name, {})
        elif scenario == "elicitation-sep1034-client-defaults":
            call(console, "test_client_elicitation_defaults", {})
        elif scenario == "json-schema-2020-12-preservation":
            # The schema as the host offered it to the model, echoed back: whatever the
            # host dropped of it shows.
            schema = tools["json_schema_2020_12_tool"]["inputSchema"]
            call(console, "json_schema_echo", {"schema": schema})
        elif tools and scenario != "initialize":
            # tools_call's add_numbers, sse-retry's reconnection tool, and any other
            # scenario that serves a tool: the first one, with the arguments the suite's
            # own client sends.
            call(console, next(iter(tools)), {"a": 2, "b": 3})
        status = console.close()
    sys.exit(status)


if __name__ == "__main__":
    main()
