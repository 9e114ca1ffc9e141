// The official MCP TypeScript SDK's client (@modelcontextprotocol/sdk, pinned in
// package-lock.json) plays at the arcade through the surface host (`mcpl-surface serve`,
// RFC-014 section 8.6), over stdio, using only the four meta-tools and what their results
// say: the TypeScript twin of tests/interop/py_surface.py.
//
//   node ts_surface.mjs GAME SURFACE_BIN ARG...
//
// GAME is `tictactoe` or `go`. It launches SURFACE_BIN ARG... as a stdio server, lists its
// tools, opens a game against the bot with toolsets--open and plays with toolsets--act,
// trying cells (points) in a fixed order: one the result says is not allowed is a tool
// error, and the next is tried. At Go it places a few stones, then passes until the game is
// over. It prints one JSON line: {server, tools, opened, moves, final, errors, logs,
// refused, tools_stable}.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const TTT_CELLS = ["b2", "a1", "c3", "a3", "c1", "b1", "b3", "a2", "c2"];
const GO_COLUMNS = "ABCDEFGHJ";
// Every point of a 9x9 board in a fixed scattered order (37 is prime to 81).
const GO_POINTS = Array.from({ length: 81 }, (_, i) => {
  const at = (i * 37) % 81;
  return `${GO_COLUMNS[at % 9]}${Math.floor(at / 9) + 1}`;
});
const GO_STONES = 10;

const textOf = (r) =>
  (r.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");

const [game, command, ...args] = process.argv.slice(2);
const logs = [];
const client = new Client({ name: "ts-surface", version: "0" });
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
  logs.push(n.params.data);
});
await client.connect(new StdioClientTransport({ command, args, stderr: "inherit" }));
const tools = await client.listTools();
const report = {
  server: client.getServerVersion()?.name ?? null,
  tools: tools.tools.map((t) => t.name),
  opened: null,
  moves: [],
  final: null,
  errors: [],
  logs,
  refused: 0,
};
const act = (tool, a) =>
  client.callTool({ name: "toolsets--act", arguments: { tool, instance: "ts", args: a } });

const opened = await client.callTool({
  name: "toolsets--open",
  arguments: { toolset: game, instance: "ts", options: game === "go" ? { size: 9 } : {} },
});
report.opened = textOf(opened);
if (opened.isError) {
  report.errors.push(report.opened);
} else {
  const [candidates, play, stones] =
    game === "tictactoe" ? [TTT_CELLS, "tictactoe_play", 5] : [GO_POINTS, "go_play", GO_STONES];
  let placed = 0;
  for (let turn = 0; turn < 300; turn++) {
    let result = null;
    if (placed < stones) {
      for (const point of candidates) {
        if (report.moves.includes(point)) continue;
        const r = await act(play, { move: point });
        if (r.isError) {
          report.refused += 1;
          continue;
        }
        result = r;
        placed += 1;
        report.moves.push(point);
        break;
      }
      if (result === null) {
        placed = stones;
        continue;
      }
    } else {
      result = await act("go_pass", {});
      report.moves.push("pass");
      if (result.isError) {
        report.errors.push(textOf(result));
        break;
      }
    }
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
