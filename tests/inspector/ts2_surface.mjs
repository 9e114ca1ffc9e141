// The official MCP TypeScript SDK 2.x client (@modelcontextprotocol/client, pinned in
// package-lock.json) plays tic-tac-toe against the arcade's bot through the surface host
// (`mcpl-surface serve`, RFC-014 section 8.6), over stdio or Streamable HTTP, using only the
// four meta-tools and what their results say: the 2.x twin of ts_surface.mjs.
//
//   node ts2_surface.mjs MODE stdio SURFACE_BIN ARG...
//   node ts2_surface.mjs MODE http URL TOKEN
//
// MODE is the SDK's version negotiation: `auto` (probe `server/discover`, modern on a
// server that answers it), `legacy`, or a version to pin (`2026-07-28`). It lists the
// tools, opens a game against the bot with toolsets--open and plays with toolsets--act,
// trying cells in a fixed order: one the result says is not allowed is a tool error, and
// the next is tried. It prints one JSON line: {server, era, protocolVersion, stamped,
// resultType, wire, tools, opened, moves, final, errors, logs, news, refused,
// tools_stable}. `era` and `protocolVersion` are what the client says it negotiated;
// `stamped` (the serverInfo name in the last result's `_meta`, which only a modern server
// puts there) and `resultType` are what the server sent; over HTTP `wire` lists each
// POST's JSON-RPC method, the `Mcp-Session-Id` the server answered with (legacy only) and
// the HTTP status; `news` are the "Since your previous call:" blocks of the results and
// `logs` the `notifications/message` data received.
import { Client } from "@modelcontextprotocol/client";
import { recordedHttpTransport } from "./ts2_wire.mjs";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const SERVER_INFO = "io.modelcontextprotocol/serverInfo";
const NEWS = "Since your previous call:";
const TTT_CELLS = ["b2", "a1", "c3", "a3", "c1", "b1", "b3", "a2", "c2"];

const textOf = (r) =>
  (r.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

const negotiation = (mode) =>
  mode === "auto" || mode === "legacy" ? { mode } : { mode: { pin: mode } };

const [mode, kind, ...rest] = process.argv.slice(2);
const wire = [];
let transport;
if (kind === "http") {
  const [url, token] = rest;
  transport = recordedHttpTransport(url, token, wire);
} else if (kind === "stdio") {
  const [command, ...args] = rest;
  transport = new StdioClientTransport({ command, args, stderr: "inherit" });
} else {
  console.error("usage: ts2_surface.mjs MODE stdio CMD ARG... | MODE http URL TOKEN");
  process.exit(2);
}

const logs = [];
const client = new Client(
  { name: "ts2-surface", version: "0" },
  { versionNegotiation: negotiation(mode) },
);
client.setNotificationHandler("notifications/message", (n) => {
  logs.push(n.params.data);
});
await client.connect(transport);
const tools = await client.listTools();
const report = {
  server: client.getServerVersion()?.name ?? null,
  era: client.getProtocolEra() ?? null,
  protocolVersion: client.getNegotiatedProtocolVersion() ?? null,
  stamped: null,
  resultType: null,
  wire,
  tools: tools.tools.map((t) => t.name),
  opened: null,
  moves: [],
  final: null,
  errors: [],
  logs,
  news: [],
  refused: 0,
};
const call = async (name, args) => {
  const result = await client.callTool({ name, arguments: args });
  report.stamped = result._meta?.[SERVER_INFO]?.name ?? null;
  report.resultType = result.resultType ?? null;
  const text = textOf(result);
  if (text.includes(NEWS)) report.news.push(text.split(NEWS)[1]);
  return result;
};

const opened = await call("toolsets--open", { toolset: "tictactoe", instance: "ts" });
report.opened = textOf(opened);
if (opened.isError) {
  report.errors.push(report.opened);
} else {
  // X moves at most five times in a game.
  for (let turn = 0; turn < 5; turn++) {
    let result = null;
    for (const cell of TTT_CELLS) {
      if (report.moves.includes(cell)) continue;
      const r = await call("toolsets--act", {
        tool: "tictactoe_play",
        instance: "ts",
        args: { move: cell },
      });
      if (r.isError) {
        report.refused += 1;
        continue;
      }
      result = r;
      report.moves.push(cell);
      break;
    }
    if (result === null) break;
    const text = textOf(result);
    if (text.includes("Game over:")) {
      report.final = text;
      break;
    }
  }
}
const after = await client.listTools();
report.tools_stable = JSON.stringify(after.tools) === JSON.stringify(tools.tools);
await client.close();
console.log(JSON.stringify(report));
