// The official MCP TypeScript SDK 2.x client (@modelcontextprotocol/client, pinned in
// package-lock.json), a plain MCP host with no MCPL, plays tic-tac-toe at the arcade
// directly, through the compat tools RFC-014 section 8 gives such a host (`toolset_open`,
// and an `instance` argument on the game's tools): the TypeScript twin of
// tests/interop/py_arcade.py.
//
//   node ts2_arcade.mjs http URL TOKEN MODE
//   node ts2_arcade.mjs stdio MODE CMD ARG...
//
// MODE is the SDK's version negotiation: `auto` (probe `server/discover`, modern on a
// server that answers it), `legacy`, or a version to pin (`2026-07-28`). Over stdio the
// client spawns CMD ARG....
//
// It lists the tools, opens a game against the bot with `toolset_open` and plays the first
// free cell each answer lists until the game is over. It prints one JSON line:
// {server, era, protocolVersion, stamped, wire, tools, opened, moves, final,
//  errors}. `era` and `protocolVersion` are what the client says it negotiated; `stamped`
// (the serverInfo name in the last call result's `_meta`, which only a modern server puts
// there) and `wire` are what the server sent: over HTTP `wire` lists each
// POST's JSON-RPC method, the `Mcp-Session-Id` the server answered with (legacy only) and
// the HTTP status, read by the fetch the transport goes through.
import { Client } from "@modelcontextprotocol/client";
import { recordedHttpTransport } from "./ts2_wire.mjs";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const SERVER_INFO = "io.modelcontextprotocol/serverInfo";

const textOf = (r) =>
  (r.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

const freeCells = (text) => {
  const m = /Free cells: (.*)/.exec(text);
  return m ? m[1].split(",").map((c) => c.trim()) : [];
};

const negotiation = (mode) =>
  mode === "auto" || mode === "legacy" ? { mode } : { mode: { pin: mode } };

const [kind, ...rest] = process.argv.slice(2);
const wire = [];
let transport;
let mode;
if (kind === "http") {
  const [url, token, m] = rest;
  mode = m;
  transport = recordedHttpTransport(url, token, wire);
} else if (kind === "stdio") {
  const [m, command, ...args] = rest;
  mode = m;
  transport = new StdioClientTransport({ command, args, stderr: "inherit" });
} else {
  console.error("usage: ts2_arcade.mjs http URL TOKEN MODE | stdio MODE CMD ARG...");
  process.exit(2);
}

const client = new Client(
  { name: "ts2-arcade", version: "0" },
  { versionNegotiation: negotiation(mode) },
);
await client.connect(transport);
const tools = await client.listTools();
const opened = await client.callTool({
  name: "toolset_open",
  arguments: { toolset: "tictactoe", instance: "ts" },
});
const report = {
  server: client.getServerVersion()?.name ?? null,
  era: client.getProtocolEra() ?? null,
  protocolVersion: client.getNegotiatedProtocolVersion() ?? null,
  stamped: opened._meta?.[SERVER_INFO]?.name ?? null,
  wire,
  tools: tools.tools.map((t) => t.name),
  opened: textOf(opened),
  moves: [],
  final: null,
  errors: [],
};
if (opened.isError) report.errors.push(report.opened);
let free = freeCells(report.opened);
// X moves at most five times in a game.
for (let turn = 0; turn < 5 && free.length > 0; turn++) {
  const cell = free[0];
  report.moves.push(cell);
  const result = await client.callTool({
    name: "tictactoe_play",
    arguments: { move: cell, instance: "ts" },
  });
  const text = textOf(result);
  report.stamped = result._meta?.[SERVER_INFO]?.name ?? null;
  if (result.isError) {
    report.errors.push(text);
    break;
  }
  if (text.includes("Game over:")) {
    report.final = text;
    break;
  }
  free = freeCells(text);
}
await client.close();
console.log(JSON.stringify(report));
