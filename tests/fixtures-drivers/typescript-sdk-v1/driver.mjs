#!/usr/bin/env node
// A FROZEN COPY of examples/drivers/typescript-sdk/driver.mjs as it was under driver
// protocol v1, kept as a test fixture: tests/e2e/test_e2e_real_clients.py runs the suite through
// it to show that a v1 driver keeps passing what it passed (backward compatibility of 1.1).
// Do not update it; the example driver is the one to copy.
//
// An mcp-testbench driver (driver protocol v1) for the official TypeScript SDK client
// (@modelcontextprotocol/sdk 1.32). See docs/driver-protocol.md.
//
//   npm ci --prefix examples/drivers/typescript-sdk
//   pytest --mcp-driver="node examples/drivers/typescript-sdk/driver.mjs"
//
// Shape: print the hello, then read one JSON command per line from stdin, run each one
// concurrently, and write exactly one JSON reply line per command to stdout. Events
// (notifications the client surfaced) are written as lines without an id.

import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport, SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';

const PROTOCOL = 'mcp-testbench-driver/1';
const CANCELLED = 'cancelled by the harness';
const MAX_PAGES = 1000;
// The revisions the harness knows that this SDK negotiates (it has none of 2026-07-28).
const REVISIONS = SUPPORTED_PROTOCOL_VERSIONS.filter((v) => v >= '2024-11-05').sort();

// stdout carries protocol lines only: anything a library logs goes to stderr instead.
console.log = console.info = console.debug = console.error;
const write = (message) => process.stdout.write(`${JSON.stringify(message)}\n`);
const log = (text) => console.error(`typescript-sdk-driver: ${text}`);
// A stray rejection inside the SDK must not kill the driver: every later command would fail.
process.on('unhandledRejection', (reason) => log(`unhandled rejection: ${reason}`));

function sdkVersion() {
  try {
    const url = new URL('./node_modules/@modelcontextprotocol/sdk/package.json', import.meta.url);
    return JSON.parse(readFileSync(url, 'utf8')).version;
  } catch {
    return 'unknown';
  }
}

// A failure the driver itself reports (not one the SDK raised).
class Failure extends Error {
  constructor(kind, message) {
    super(message);
    this.kind = kind;
  }
}

const session = {
  client: null,
  transport: null,
  timeoutMs: 10_000, // connect's timeoutMs: the bound of every later request too
  closed: false, // the SDK reported the connection closed
  protocolVersion: undefined, // as the initialize result carried it
  serverErrors: new Set(), // messages of JSON-RPC errors the server really sent
};
const running = new Map(); // command id -> { controller, done }

function makeTransport(spec) {
  switch (spec?.type) {
    case 'stdio': {
      const [command, ...args] = spec.command;
      // stderr 'inherit': the server's log shows up in this driver's stderr (and in reports).
      return new StdioClientTransport({ command, args, env: spec.env ?? {}, stderr: 'inherit' });
    }
    case 'http':
      return new StreamableHTTPClientTransport(new URL(spec.url), {
        requestInit: { headers: spec.headers ?? {} },
      });
    case 'sse-legacy':
      return new SSEClientTransport(new URL(spec.url), {
        requestInit: { headers: spec.headers ?? {} },
      });
    default:
      throw new Failure('unsupported', `unknown transport type ${JSON.stringify(spec?.type)}`);
  }
}

async function connect(command, signal) {
  if (session.client) throw new Failure('other', 'connect was already sent');
  const wanted = command.protocolVersion;
  if (wanted && !REVISIONS.includes(wanted)) {
    throw new Failure('unsupported', `the TypeScript SDK does not speak ${wanted}`);
  }
  // The SDK always offers its latest revision and accepts an older one from the server;
  // its API cannot prefer another, so `protocolVersion` is left to the server to pick.
  const handlers = command.handlers ?? {};
  const capabilities = {}; // declared only for the features the harness gave answers for
  if (handlers.sampling != null) capabilities.sampling = {};
  if (handlers.elicitation != null) capabilities.elicitation = {}; // {} means form mode
  if (handlers.roots != null) capabilities.roots = {};
  const info = { name: 'mcp-testbench-driver', version: sdkVersion() };
  const client = new Client(info, { capabilities });
  if (capabilities.sampling) {
    client.setRequestHandler(CreateMessageRequestSchema, () => handlers.sampling);
  }
  if (capabilities.elicitation) {
    client.setRequestHandler(ElicitRequestSchema, () => handlers.elicitation);
  }
  if (capabilities.roots) {
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: handlers.roots }));
  }
  // Every notification the SDK has no handler of its own for reaches the application here.
  client.fallbackNotificationHandler = async (n) => {
    write({ event: 'notification', method: n.method, params: n.params ?? {} });
  };
  client.onerror = (error) => {
    write({ event: 'log', text: `client error: ${error?.message ?? error}` });
  };
  client.onclose = () => {
    session.closed = true;
  };
  const transport = makeTransport(command.transport);
  // Protocol.connect() chains a handler that is already set: this one sees every message
  // first and remembers what tells server-sent errors apart from the SDK's own McpErrors.
  transport.onmessage = (message) => {
    if (message?.error && 'id' in message) {
      session.serverErrors.add(`MCP error ${message.error.code}: ${message.error.message}`);
    } else if (session.protocolVersion === undefined && message?.result?.protocolVersion) {
      session.protocolVersion = message.result.protocolVersion;
    }
  };
  Object.assign(session, { client, transport, timeoutMs: command.timeoutMs ?? session.timeoutMs });
  await client.connect(transport, { signal, timeout: session.timeoutMs });
  return { protocolVersion: session.protocolVersion, serverInfo: client.getServerVersion() ?? {} };
}

// The SDK returns one page at a time; the application follows nextCursor verbatim.
async function allPages(key, fetchPage) {
  const items = [];
  let cursor;
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const result = await fetchPage(cursor === undefined ? undefined : { cursor });
    items.push(...result[key]);
    cursor = result.nextCursor;
    if (cursor === undefined) return { [key]: items };
  }
  throw new Failure('other', `still a nextCursor after ${MAX_PAGES} pages`);
}

async function perform(command, signal) {
  if (command.op === 'connect') return connect(command, signal);
  if (command.op === 'cancel') {
    // Aborting the signal makes the SDK send notifications/cancelled and reject the
    // request; the target command then replies from run(). Unknown or finished: no-op.
    running.get(command.target)?.controller.abort(CANCELLED);
    return {};
  }
  const { client } = session;
  if (!client) throw new Failure('other', `${command.op} before connect`);
  const options = { signal, timeout: session.timeoutMs };
  switch (command.op) {
    case 'list_tools':
      return allPages('tools', (params) => client.listTools(params, options));
    case 'call_tool': {
      if (command.timeoutMs !== undefined) options.timeout = command.timeoutMs;
      if (command.progress) {
        // The SDK puts a progressToken in _meta; each progress it surfaces becomes an event.
        options.onprogress = (params) => {
          write({ event: 'notification', method: 'notifications/progress', params });
        };
      }
      // isError results are results: returned as the value, never turned into errors.
      const params = { name: command.name, arguments: command.arguments ?? {} };
      return client.callTool(params, undefined, options);
    }
    case 'list_resources':
      return allPages('resources', (params) => client.listResources(params, options));
    case 'read_resource':
      return client.readResource({ uri: command.uri }, options);
    case 'list_prompts':
      return allPages('prompts', (params) => client.listPrompts(params, options));
    case 'get_prompt':
      return client.getPrompt({ name: command.name, arguments: command.arguments ?? {} }, options);
    case 'ping':
      await client.ping(options);
      return {};
    default:
      throw new Failure('unsupported', `this driver has no op ${JSON.stringify(command.op)}`);
  }
}

// Map what the SDK threw to the protocol's error kinds.
function errorOf(error, signal) {
  const message = error instanceof Error ? error.message : String(error);
  const reply = (kind, code = null) => ({ kind, code, message });
  if (error instanceof Failure) return reply(error.kind);
  if (signal.aborted) return { kind: 'other', code: null, message: CANCELLED };
  if (error instanceof McpError) {
    if (session.serverErrors.has(message)) return reply('protocol', error.code);
    // The SDK's own McpErrors: a request timeout (it carries data.timeout), a closed
    // connection, or a local check (e.g. structuredContent against the outputSchema).
    if (error.code === ErrorCode.RequestTimeout && error.data?.timeout !== undefined) {
      return reply('timeout');
    }
    if (error.code === ErrorCode.ConnectionClosed && session.closed) return reply('transport');
    return reply('other');
  }
  // HTTP statuses, failed fetches and spawns (system errors carry a string code).
  const systemError = typeof error?.code === 'string' || typeof error?.cause?.code === 'string';
  if (error instanceof StreamableHTTPError || error instanceof SseError || systemError) {
    return reply('transport');
  }
  if (message === 'Not connected' || session.closed) return reply('transport');
  return reply('other');
}

// Run one command and write exactly one reply for it, whatever happens.
function run(command) {
  const controller = new AbortController();
  const entry = { controller, done: null };
  running.set(command.id, entry);
  entry.done = (async () => {
    try {
      const value = await perform(command, controller.signal);
      write({ id: command.id, ok: true, value: value ?? {} });
    } catch (error) {
      write({ id: command.id, ok: false, error: errorOf(error, controller.signal) });
    } finally {
      running.delete(command.id);
    }
  })();
}

// `close` (reply, then exit 0) or the end of stdin (the harness is gone: just exit 0).
async function shutdown(closeId) {
  const { client, transport } = session;
  const bounded = (promise, ms) =>
    Promise.race([promise.catch(() => {}), new Promise((r) => setTimeout(r, ms).unref())]);
  if (client) {
    // An application ending its HTTP session says so (DELETE); client.close() alone does not.
    if (transport?.sessionId !== undefined && transport.terminateSession) {
      await bounded(transport.terminateSession(), 2000);
    }
    await bounded(client.close(), 5000); // pending requests fail now, and reply
  }
  await bounded(Promise.allSettled([...running.values()].map((e) => e.done)), 5000);
  if (closeId === undefined) process.exit(0);
  process.stdout.write(`${JSON.stringify({ id: closeId, ok: true, value: {} })}\n`, () =>
    process.exit(0),
  );
}

write({
  hello: PROTOCOL,
  client: { name: '@modelcontextprotocol/sdk', version: sdkVersion() },
  supports: [
    'stdio', 'http', 'sse-legacy', 'tools', 'resources', 'prompts', 'sampling', 'elicitation',
    'roots', 'ping', 'cancel', 'progress', 'logging', ...REVISIONS,
  ],
});

let closing = false;
const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
lines.on('line', (line) => {
  if (closing || !line.trim()) return;
  let command;
  try {
    command = JSON.parse(line);
  } catch {
    command = null;
  }
  if (typeof command !== 'object' || command === null || !('id' in command)) {
    log(`ignored a line that is not a command: ${line.slice(0, 200)}`);
    return;
  }
  if (command.op === 'close') {
    closing = true;
    void shutdown(command.id);
  } else {
    void run(command);
  }
});
lines.on('close', () => {
  if (!closing) {
    closing = true;
    void shutdown(undefined);
  }
});
