// Shared by ts2_arcade.mjs and ts2_surface.mjs: the TypeScript SDK 2.x client's Streamable
// HTTP transport with a bearer token, recording each exchange as the server answered it
// (its HTTP method, its JSON-RPC method, the status, the `Mcp-Session-Id` answered) into
// `wire`, so that a test judges the era by what went over the wire, not by what the client
// says it negotiated.
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

export function recordedHttpTransport(url, token, wire) {
  const recording = async (input, init) => {
    let method = null;
    try {
      method = JSON.parse(init?.body ?? "null")?.method ?? null;
    } catch {
      // Not JSON (no body on a GET): no method.
    }
    const response = await fetch(input, init);
    wire.push({
      http: init?.method ?? "GET",
      method,
      status: response.status,
      session: response.headers.get("mcp-session-id"),
    });
    return response;
  };
  return new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    fetch: recording,
  });
}
