// Drives `nexus mcp` with the official MCP TypeScript SDK and prints one JSON
// report on stdout. The Go test checks the report; this script only talks.
//
//   node client.mjs stdio <nexus binary> [args...]
//   node client.mjs http <url> <token|->   ("-" = send no token)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, target, ...rest] = process.argv.slice(2);

function transportFor() {
  if (mode === "stdio") {
    return new StdioClientTransport({ command: target, args: rest, env: process.env, stderr: "inherit" });
  }
  if (mode === "http") {
    const token = rest[0];
    const headers = token && token !== "-" ? { Authorization: `Bearer ${token}` } : {};
    return new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } });
  }
  throw new Error(`unknown mode ${mode}`);
}

function payload(result) {
  const text = result.content?.find((c) => c.type === "text")?.text;
  return { isError: result.isError === true, text, structured: result.structuredContent };
}

const report = { connected: false };
const client = new Client({ name: "nexus-ts-sdk-test", version: "0.0.0" });
try {
  await client.connect(transportFor());
  report.connected = true;
  report.server = client.getServerVersion();
  const { tools } = await client.listTools();
  report.tools = tools.map((t) => ({ name: t.name, annotations: t.annotations, required: t.inputSchema?.required ?? [] }));
  report.planStart = payload(await client.callTool({
    name: "nx_plan_start",
    arguments: { topic: "TS SDK check", issues: ["Does it connect?"], research_summary: "Read the MCP spec." },
  }));
  report.taskAdd = payload(await client.callTool({
    name: "nx_task_add",
    arguments: { title: "Connect", context: "From the TypeScript SDK", deps: [] },
  }));
  report.badCall = payload(await client.callTool({ name: "nx_task_update", arguments: { id: 99, status: "completed" } }));
} catch (err) {
  report.error = String(err?.message ?? err);
  report.code = err?.code;
} finally {
  await client.close().catch(() => {});
}
process.stdout.write(JSON.stringify(report) + "\n");
