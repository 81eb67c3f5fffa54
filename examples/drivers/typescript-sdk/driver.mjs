#!/usr/bin/env node
// An mcp-testbench driver (driver protocol 1.1) for the official TypeScript SDK client
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

import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport, SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  McpError,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';

const PROTOCOL = 'mcp-testbench-driver/1.1';
const CANCELLED = 'cancelled by the harness';
const MAX_PAGES = 1000;
// Authorizations the application completes for one command before it gives up (the SDK
// ends a repeated step-up itself; this only keeps a driver from looping on its own).
const MAX_AUTHORIZATIONS = 3;
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
  roots: null, // the roots the client answers roots/list with (set_roots changes them)
  auth: null, // the HeadlessAuthProvider, when connect gave `authorization`
};
const fresh = { ...session, serverErrors: null }; // what `reset` starts the next client from
const running = new Map(); // command id -> { controller, done }

// Headless authorization (docs/driver-protocol.md): the SDK's OAuthClientProvider as an
// application implements it. The SDK itself discovers the servers, registers, builds the
// authorization URL (PKCE, resource, scope) and makes the token requests; the provider
// only keeps what the SDK hands it, in memory, and plays the user's browser: it fetches the
// authorization URL without following the redirect and keeps where it was sent. The
// application then hands the code to `transport.finishAuth` and tries again
// (`authorized`). The SDK's API takes the code alone: the `iss` of the response has no
// way in, and `state` is the provider's to make and check, so this provider has none
// (the SDK then sends none).
class HeadlessAuthProvider {
  constructor(authorization) {
    this.authorization = authorization;
    this.preRegistered =
      authorization.clientId == null
        ? undefined
        : {
            client_id: authorization.clientId,
            ...(authorization.clientSecret == null
              ? {}
              : { client_secret: authorization.clientSecret }),
          };
    this.client = this.preRegistered;
    this.savedTokens = undefined;
    this.verifier = undefined;
    this.redirect = null; // where the authorization endpoint sent the browser, not yet used
  }

  get redirectUrl() {
    return this.authorization.redirectUri;
  }

  get clientMetadata() {
    return {
      client_name: this.authorization.clientName,
      redirect_uris: [this.authorization.redirectUri],
    };
  }

  clientInformation() {
    return this.client;
  }

  saveClientInformation(information) {
    this.client = information;
  }

  tokens() {
    return this.savedTokens;
  }

  saveTokens(tokens) {
    this.savedTokens = tokens;
  }

  saveCodeVerifier(verifier) {
    this.verifier = verifier;
  }

  codeVerifier() {
    if (this.verifier === undefined) throw new Failure('other', 'no code verifier was saved');
    return this.verifier;
  }

  invalidateCredentials(scope) {
    if (scope === 'all' || scope === 'client') this.client = this.preRegistered;
    if (scope === 'all' || scope === 'tokens') this.savedTokens = undefined;
    if (scope === 'all' || scope === 'verifier') this.verifier = undefined;
  }

  async redirectToAuthorization(authorizationUrl) {
    const response = await fetch(authorizationUrl, { redirect: 'manual' });
    await response.body?.cancel();
    const location = response.headers.get('location');
    if (!location) {
      throw new Failure(
        'other',
        `the authorization endpoint answered ${response.status} without a redirect`,
      );
    }
    this.redirect = new URL(location, authorizationUrl);
  }

  // The code of the redirect since the last call (null: there was none), as the
  // application's callback page would have received it.
  takeCode() {
    const { redirect } = this;
    this.redirect = null;
    if (redirect === null) return null;
    const code = redirect.searchParams.get('code');
    if (code === null) {
      const error = redirect.searchParams.get('error');
      const description = redirect.searchParams.get('error_description') ?? '';
      throw new Failure('other', `the authorization server refused: ${error}: ${description}`);
    }
    return code;
  }
}

function makeTransport(spec, authProvider) {
  switch (spec?.type) {
    case 'stdio': {
      const [command, ...args] = spec.command;
      // stderr 'inherit': the server's log shows up in this driver's stderr (and in reports).
      return new StdioClientTransport({ command, args, env: spec.env ?? {}, stderr: 'inherit' });
    }
    case 'http':
      return new StreamableHTTPClientTransport(new URL(spec.url), {
        requestInit: { headers: spec.headers ?? {} },
        ...(authProvider ? { authProvider } : {}),
      });
    case 'sse-legacy':
      return new SSEClientTransport(new URL(spec.url), {
        requestInit: { headers: spec.headers ?? {} },
      });
    default:
      throw new Failure('unsupported', `unknown transport type ${JSON.stringify(spec?.type)}`);
  }
}

// What an application does when the SDK throws UnauthorizedError after sending the user
// to authorize: once the redirect has come back, it hands the code to the transport and
// tries again. Any other failure, or one without a redirect, is the command's.
async function authorized(attempt) {
  for (let round = 0; ; round += 1) {
    try {
      return await attempt();
    } catch (error) {
      const code = error instanceof UnauthorizedError ? session.auth?.takeCode() : null;
      if (code == null || round >= MAX_AUTHORIZATIONS) throw error;
      await session.transport.finishAuth(code);
    }
  }
}

async function connect(command, signal) {
  if (session.client) throw new Failure('other', 'connect was already sent');
  const wanted = command.protocolVersion;
  if (wanted && !REVISIONS.includes(wanted)) {
    throw new Failure('unsupported', `the TypeScript SDK does not speak ${wanted}`);
  }
  session.timeoutMs = command.timeoutMs ?? session.timeoutMs;
  if (command.authorization) session.auth = new HeadlessAuthProvider(command.authorization);
  // A connection that needed the user's authorization failed with UnauthorizedError; the
  // application then connects afresh (a transport starts once), as the SDK's examples do.
  await authorized(async () => {
    if (session.client) await bounded(session.client.close(), 2000);
    openClient(command);
    await session.client.connect(session.transport, { signal, timeout: session.timeoutMs });
  });
  const { client } = session;
  return { protocolVersion: session.protocolVersion, serverInfo: client.getServerVersion() ?? {} };
}

function openClient(command) {
  // The SDK always offers its latest revision and accepts an older one from the server;
  // its API cannot prefer another, so `protocolVersion` is left to the server to pick.
  const handlers = command.handlers ?? {};
  const capabilities = {}; // declared only for the features the harness gave answers for
  if (handlers.sampling != null) capabilities.sampling = {};
  if (handlers.elicitation != null) capabilities.elicitation = {}; // {} means form mode
  // listChanged: set_roots changes the roots, and the client then says so.
  if (handlers.roots != null) capabilities.roots = { listChanged: true };
  const info = { name: 'mcp-testbench-driver', version: sdkVersion() };
  const client = new Client(info, { capabilities });
  if (capabilities.sampling) {
    client.setRequestHandler(CreateMessageRequestSchema, () => handlers.sampling);
  }
  if (capabilities.elicitation) {
    client.setRequestHandler(ElicitRequestSchema, () => handlers.elicitation);
  }
  if (capabilities.roots) {
    session.roots = handlers.roots;
    client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: session.roots }));
  }
  // Every notification the SDK has no handler of its own for reaches the application here.
  // Nothing from a client that a `reset` (or a new connection attempt) has thrown away.
  client.fallbackNotificationHandler = async (n) => {
    if (session.client !== client) return;
    write({ event: 'notification', method: n.method, params: n.params ?? {} });
  };
  client.onerror = (error) => {
    if (session.client !== client) return;
    write({ event: 'log', text: `client error: ${error?.message ?? error}` });
  };
  client.onclose = () => {
    if (session.client === client) session.closed = true;
  };
  const transport = makeTransport(command.transport, session.auth);
  // Protocol.connect() chains a handler that is already set: this one sees every message
  // first and remembers what tells server-sent errors apart from the SDK's own McpErrors.
  transport.onmessage = (message) => {
    if (message?.error && 'id' in message) {
      session.serverErrors.add(`MCP error ${message.error.code}: ${message.error.message}`);
    } else if (session.protocolVersion === undefined && message?.result?.protocolVersion) {
      session.protocolVersion = message.result.protocolVersion;
    }
  };
  Object.assign(session, { client, transport, closed: false });
}

// A task-augmented tools/call (2025-11-25 tasks, the SDK's experimental task API). Its
// callToolStream yields the task once created, then the statuses of its own tasks/get
// polls, then the result. The driver hands the task back as soon as the SDK surfaces it
// and ends the stream there (the SDK then sends nothing more): the harness polls with
// get_task, task_result and cancel_task, each one call of the same API.
async function callToolAsTask(client, params, task, options) {
  const stream = client.experimental.tasks.callToolStream(params, undefined, { ...options, task });
  for await (const message of stream) {
    if (message.type === 'taskCreated') return { task: message.task };
    if (message.type === 'result') return message.result; // the server ran it without a task
    if (message.type === 'error') throw message.error;
  }
  throw new Failure('other', 'the SDK ended the task stream without a message');
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
  if (command.op === 'reset') {
    // 1.1 (hello `reuse`): end this client as `close` would, keep the process, start afresh.
    await endClient(command.id);
    Object.assign(session, fresh, { serverErrors: new Set() });
    return {};
  }
  if (!session.client) throw new Failure('other', `${command.op} before connect`);
  // A server behind OAuth may ask for a new authorization at any request (an expired
  // token, a step-up): the application authorizes and sends the request again.
  return authorized(() => operate(command, signal));
}

async function operate(command, signal) {
  const { client } = session;
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
      if (command.task != null) return callToolAsTask(client, params, command.task, options);
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
    // Driver protocol 1.1. The driver checks no server capability itself: whether the
    // client sends a request the server did not declare is what the checks judge.
    case 'set_log_level':
      await client.setLoggingLevel(command.level, options);
      return {};
    case 'subscribe_resource':
      await client.subscribeResource({ uri: command.uri }, options);
      return {};
    case 'unsubscribe_resource':
      await client.unsubscribeResource({ uri: command.uri }, options);
      return {};
    case 'complete': {
      const params = { ref: command.ref, argument: command.argument };
      if (command.context !== undefined) params.context = command.context;
      return client.complete(params, options);
    }
    case 'list_resource_templates':
      return allPages('resourceTemplates', (params) =>
        client.listResourceTemplates(params, options),
      );
    case 'set_roots':
      if (session.roots === null) throw new Failure('unsupported', 'connect gave no roots');
      session.roots = command.roots ?? [];
      await client.sendRootsListChanged(); // it declared roots.listChanged
      return {};
    case 'get_task':
      return client.experimental.tasks.getTask(command.taskId, options);
    case 'task_result':
      return client.experimental.tasks.getTaskResult(command.taskId, CallToolResultSchema, options);
    case 'cancel_task':
      return client.experimental.tasks.cancelTask(command.taskId, options);
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

const bounded = (promise, ms) =>
  Promise.race([promise.catch(() => {}), new Promise((r) => setTimeout(r, ms).unref())]);

// End the client as its application would; `close` and `reset` both do this.
async function endClient(except) {
  const { client, transport } = session;
  if (client) {
    // An application ending its HTTP session says so (DELETE); client.close() alone does not.
    if (transport?.sessionId !== undefined && transport.terminateSession) {
      await bounded(transport.terminateSession(), 2000);
    }
    await bounded(client.close(), 5000); // pending requests fail now, and reply
  }
  const others = [...running.entries()].filter(([id]) => id !== except).map(([, e]) => e.done);
  await bounded(Promise.allSettled(others), 5000);
}

// `close` (reply, then exit 0) or the end of stdin (the harness is gone: just exit 0).
async function shutdown(closeId) {
  await endClient();
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
    // OAuth through the SDK's auth provider, the browser step headless (HeadlessAuthProvider).
    'auth',
    // 1.1 operations: every one but listen (a 2026-07-28 request; the SDK has no 2026).
    // tasks: the SDK's experimental task API (client.experimental.tasks).
    'set_log_level', 'subscribe_resource', 'complete', 'list_resource_templates', 'set_roots',
    'tasks',
  ],
  reuse: true, // `reset` ends the client and keeps this process for the next scenario
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
