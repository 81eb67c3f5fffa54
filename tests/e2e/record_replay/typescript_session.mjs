// One fixed client session, run by the official TypeScript SDK's client, printed as JSON.
//
//   node typescript_session.mjs PLAN TRANSPORT TARGET...
//
// The same PLAN and TRANSPORT as python_session.py. The SDK is the one the example driver
// pins (examples/drivers/typescript-sdk); what each call returned, after the SDK's own
// schema parsing, is printed as it is.
import { fileURLToPath } from "node:url";
import path from "node:path";

const here = path.dirname(fileURLToPath(import.meta.url));
const sdk = path.resolve(
  here, "..", "..", "..", "examples", "drivers", "typescript-sdk", "node_modules",
  "@modelcontextprotocol", "sdk", "dist", "esm", "client",
);
const load = (name) => import(path.join(sdk, name));
const { Client } = await load("index.js");

const [planText, transport, ...target] = process.argv.slice(2);
const plan = JSON.parse(planText);
let connection;
if (transport === "stdio") {
  const { StdioClientTransport } = await load("stdio.js");
  connection = new StdioClientTransport({ command: target[0], args: target.slice(1) });
} else if (transport === "sse") {
  const { SSEClientTransport } = await load("sse.js");
  connection = new SSEClientTransport(new URL(target[0]));
} else {
  const { StreamableHTTPClientTransport } = await load("streamableHttp.js");
  connection = new StreamableHTTPClientTransport(new URL(target[0]));
}
const client = new Client({ name: "record-replay", version: "1.0.0" });
await client.connect(connection);
const results = [];
for (const step of plan) {
  if (step.op === "call_tool") {
    results.push(await client.callTool({ name: step.name, arguments: step.arguments ?? {} }));
  } else if (step.op === "read_resource") {
    results.push(await client.readResource({ uri: step.uri }));
  } else if (step.op === "get_prompt") {
    results.push(await client.getPrompt({ name: step.name, arguments: step.arguments }));
  } else if (step.op === "list_tools") {
    results.push(await client.listTools());
  } else if (step.op === "list_resources") {
    results.push(await client.listResources());
  } else if (step.op === "list_prompts") {
    results.push(await client.listPrompts());
  } else {
    throw new Error(`unknown operation ${step.op}`);
  }
}
const server = client.getServerVersion();
await client.close();
console.log(JSON.stringify({ server, results }));
