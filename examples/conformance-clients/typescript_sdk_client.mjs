#!/usr/bin/env node
// A conformance client in the official runner's convention, on the official TypeScript SDK
// (@modelcontextprotocol/sdk 1.32, the one examples/drivers/typescript-sdk pins: it is
// loaded from there, so `npm ci --prefix examples/drivers/typescript-sdk` is all it needs).
//
// The official runner (@modelcontextprotocol/conformance) and `mcp-testbench run
// --conformance-client` start it the same way, once per client scenario:
//
//   /bin/sh -c "node examples/conformance-clients/typescript_sdk_client.mjs <server URL>"
//
// with the scenario's name in MCP_CONFORMANCE_SCENARIO and the revision in
// MCP_CONFORMANCE_PROTOCOL_VERSION; it does what that scenario's server expects and exits 0.
//
// `--defect NAME` (before the URL) makes a variant with one defect, to show that the runner
// and mcp-testbench fail the same scenario for it. Each defect is put on the wire of the
// unchanged SDK by the fetch the transport is given, or by what the client asks of it:
//
//   no-tool-call          tools_call: lists the tools, never calls add_numbers
//   no-defaults           elicitation-sep1034-client-defaults: accepts the form without
//                         asking the SDK to apply the schema's defaults (empty content)
//   early-reconnect       sse-retry: drops the stream's `retry:` field before the SDK reads
//                         it and reconnects at once (the SDK would wait the 500 ms)
//   old-protocol-version  initialize: offers 2024-11-05, which the scenario does not accept
//   no-initialized        never sends notifications/initialized: the runner's checks pass,
//                         the suite's lifecycle.initialized-notification fails (a finding
//                         only the wire shows)
//   drop-request-state    sep-2322-client-request-state: retries an input_required call
//                         without the requestState the server gave
//
// 2026-07-28: SDK 1.32 knows no stateless revision, so the client speaks it by hand over
// fetch (`statelessSession`: the version header and `_meta` on every request, `Mcp-Method` and
// `Mcp-Name`, the -32022 version retry, the multi round-trip retry), every answer parsed with
// the SDK's JSON-RPC schema. It serves tools_call, request-metadata,
// sep-2322-client-request-state, the three http-*-headers scenarios (with the tools'
// x-mcp-header parameters mirrored into Mcp-Param-* headers, and a tool whose annotation
// is invalid left out) and json-schema-ref-no-deref (the tools listed, no `$ref` fetched)
// there.
//
// The authorization scenarios served so far that need no context (auth/metadata-*,
// auth/token-endpoint-auth-*, three auth/scope-*) run on the SDK's own OAuth client: it
// discovers, registers, builds the authorization URL (with the scope it chose) and makes
// the token request; the client plays the user's browser (it fetches the URL, takes the
// code from the redirect without following it) and hands the code back, with `finishAuth`
// up to 2025-11-25; at 2026-07-28 the stateless requests go through a fetch that adds the
// bearer token and, on a 401, runs the SDK's `auth` with what the challenge named. The SDK
// adds no application_type to a registration (SEP-837, 2026-07-28): the client's metadata
// names it (native) at that revision.
//
// Any other scenario ends it with code 1 and the reason on stderr.

// Where the user's browser would be sent back: nothing listens there, nothing follows it.
const REDIRECT_URI = 'http://localhost:3030/callback';

// The SDK's own ESM build, where the driver's package installed it (its dependencies resolve
// from there too).
const SDK = new URL(
  '../drivers/typescript-sdk/node_modules/@modelcontextprotocol/sdk/dist/esm/',
  import.meta.url,
);
const sdk = (path) => import(new URL(path, SDK).href);
const { Client } = await sdk('client/index.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
const { ElicitRequestSchema, JSONRPCMessageSchema } = await sdk('types.js');
const { UnauthorizedError, auth, extractWWWAuthenticateParams } = await sdk('client/auth.js');

// What the client does: through the SDK up to 2025-11-25, by hand at 2026-07-28.
const LEGACY_SCENARIOS = [
  'initialize',
  'tools_call',
  'elicitation-sep1034-client-defaults',
  'sse-retry',
];
// Authorization (2025-11-25 and 2026-07-28): the SDK's OAuth client, headless.
const AUTH_SCENARIOS = [
  'auth/metadata-default',
  'auth/metadata-var1',
  'auth/metadata-var2',
  'auth/metadata-var3',
  'auth/token-endpoint-auth-basic',
  'auth/token-endpoint-auth-post',
  'auth/token-endpoint-auth-none',
  'auth/scope-from-www-authenticate',
  'auth/scope-from-scopes-supported',
  'auth/scope-omitted-when-undefined',
  // A 403 insufficient_scope: authorized again for the scope it names, once per challenge.
  'auth/scope-step-up',
  'auth/scope-retry-limit',
];
// Authorization at 2026-07-28 only, the same way: what the SDK does not check (the RFC 9207
// `iss`, the metadata's issuer) is not checked here either, so those scenarios fail.
const AUTH_MODERN_SCENARIOS = [
  'auth/resource-mismatch',
  'auth/offline-access-scope',
  'auth/offline-access-not-supported',
  'auth/authorization-server-migration',
  'auth/iss-supported',
  'auth/iss-not-advertised',
  'auth/iss-supported-missing',
  'auth/iss-wrong-issuer',
  'auth/iss-unexpected',
  'auth/iss-normalized',
  'auth/metadata-issuer-mismatch',
];
const STATELESS_SCENARIOS = [
  'tools_call',
  'request-metadata',
  'sep-2322-client-request-state',
  'http-standard-headers',
  'http-custom-headers',
  'http-invalid-tool-headers',
  'json-schema-ref-no-deref',
];
const DEFECTS = [
  'no-tool-call',
  'no-defaults',
  'early-reconnect',
  'old-protocol-version',
  'no-initialized',
  'drop-request-state',
];
// A server asking for input again and again is answered this many times, then refused.
const MAX_INPUT_ROUNDS = 3;
// At most this many authorizations for one request (a scope that never suffices).
const MAX_AUTHORIZATIONS = 3;
const STATELESS = '2026-07-28';
// A bound on the whole scenario: the runner's own time-out is 30 s, and under dash its SIGTERM
// never reaches this process, so the client ends itself first.
const SCENARIO_BOUND_MS = 25_000;
const CLIENT_INFO = { name: 'typescript-sdk-conformance-client', version: '1.0.0' };

// stdout and stderr are kept by the runner (stdout.txt, stderr.txt) and by mcp-testbench.
const log = (text) => console.error(`typescript-sdk-client: ${text}`);

function parseArguments(argv) {
  let defect = null;
  const rest = [];
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === '--defect') {
      defect = argv[i + 1];
      i += 1;
    } else {
      rest.push(argv[i]);
    }
  }
  if (defect !== null && !DEFECTS.includes(defect)) {
    throw new Error(`unknown defect ${JSON.stringify(defect)}; known: ${DEFECTS.join(', ')}`);
  }
  if (rest.length === 0) {
    throw new Error('usage: typescript_sdk_client.mjs [--defect NAME] <server URL>');
  }
  return { defect, url: rest[rest.length - 1] };
}

// An SSE body without its `retry:` lines, whatever the chunking (lines are cut at \n only
// after a whole line has arrived).
function withoutRetryField(body) {
  let pending = '';
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  const keep = (line) => !/^retry:/.test(line);
  return body.pipeThrough(
    new TransformStream({
      transform(chunk, controller) {
        pending += decoder.decode(chunk, { stream: true });
        const lines = pending.split('\n');
        pending = lines.pop();
        const kept = lines.filter(keep);
        if (kept.length) controller.enqueue(encoder.encode(`${kept.join('\n')}\n`));
      },
      flush(controller) {
        if (pending && keep(pending)) controller.enqueue(encoder.encode(pending));
      },
    }),
  );
}

// The fetch the SDK's transport is given: the defect's one change to the wire.
function fetchFor(defect) {
  return async (url, init = {}) => {
    const message = typeof init.body === 'string' ? JSON.parse(init.body) : undefined;
    if (defect === 'no-initialized' && message?.method === 'notifications/initialized') {
      log('defect: notifications/initialized not sent');
      return new Response(null, { status: 202 });
    }
    if (defect === 'old-protocol-version' && message?.method === 'initialize') {
      message.params.protocolVersion = '2024-11-05';
      init = { ...init, body: JSON.stringify(message) };
    }
    const response = await fetch(url, init);
    const sse = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    if (defect === 'early-reconnect' && sse && response.body) {
      return new Response(withoutRetryField(response.body), {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    }
    return response;
  };
}

function transportFor(url, defect) {
  return new StreamableHTTPClientTransport(new URL(url), {
    fetch: fetchFor(defect),
    // Without the server's retry field the SDK waits this; the defect reconnects at once.
    reconnectionOptions: {
      initialReconnectionDelay: defect === 'early-reconnect' ? 0 : 1000,
      maxReconnectionDelay: 30_000,
      reconnectionDelayGrowFactor: 1.5,
      maxRetries: 2,
    },
  });
}

async function withSdk(scenario, url, defect) {
  // SEP-1034: the SDK fills in the schema's defaults of an accepted form when asked to.
  const form = defect === 'no-defaults' ? {} : { applyDefaults: true };
  const client = new Client(CLIENT_INFO, { capabilities: { elicitation: { form } } });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    log(`elicitation: ${request.params.message}; accepting the form untouched`);
    return { action: 'accept', content: {} };
  });
  await client.connect(transportFor(url, defect));
  try {
    if (scenario === 'initialize') {
      log(`initialized with ${JSON.stringify(client.getServerVersion())}`);
    } else if (scenario === 'tools_call') {
      const { tools } = await client.listTools();
      log(`tools: ${tools.map((tool) => tool.name).join(', ')}`);
      if (defect !== 'no-tool-call') {
        const result = await client.callTool({ name: 'add_numbers', arguments: { a: 5, b: 3 } });
        log(`add_numbers: ${JSON.stringify(result)}`);
      }
    } else if (scenario === 'elicitation-sep1034-client-defaults') {
      const name = 'test_client_elicitation_defaults';
      const result = await client.callTool({ name, arguments: {} });
      log(`elicitation tool: ${JSON.stringify(result)}`);
    } else if (scenario === 'sse-retry') {
      const result = await client.callTool({ name: 'test_reconnection', arguments: {} });
      log(`test_reconnection: ${JSON.stringify(result)}`);
    }
  } finally {
    await client.close();
  }
}

// What an application keeps for the SDK's OAuth client (in memory), and the user's browser:
// the authorization URL fetched, its redirect read, not followed.
class HeadlessAuthorization {
  redirectUrl = REDIRECT_URI;
  clientMetadata = { client_name: CLIENT_INFO.name, redirect_uris: [REDIRECT_URI] };
  redirected = null;

  constructor(revision) {
    if (revision >= STATELESS) this.clientMetadata.application_type = 'native';
    // An application that keeps its refresh tokens says so when it registers (SEP-2207):
    // the SDK registers the metadata it is given, refresh_token or not.
    if (revision >= STATELESS) this.clientMetadata.grant_types = ['authorization_code', 'refresh_token'];
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
    return this.verifier;
  }
  async redirectToAuthorization(authorizationUrl) {
    const response = await fetch(authorizationUrl, { redirect: 'manual' });
    await response.body?.cancel();
    const location = response.headers.get('location');
    if (!location) throw new Error(`the authorization endpoint answered ${response.status}`);
    log(`authorization: redirected to ${location}`);
    this.redirected = new URL(location, authorizationUrl);
  }
  // The code the redirect carried, once.
  takeCode() {
    const code = this.redirected?.searchParams.get('code') ?? null;
    if (this.redirected && code === null) {
      throw new Error(`the authorization was refused: ${this.redirected.search}`);
    }
    this.redirected = null;
    return code;
  }
}

async function withSdkAuthorization(url) {
  const authorization = new HeadlessAuthorization('2025-11-25');
  let client;
  let transport;
  const connect = async () => {
    client = new Client(CLIENT_INFO);
    transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: authorization });
    await client.connect(transport);
  };
  try {
    await connect();
  } catch (error) {
    // The SDK sent the user to authorize: with the code back, the application hands it to
    // the transport and connects afresh (a transport starts once).
    const code = error instanceof UnauthorizedError ? authorization.takeCode() : null;
    if (code === null) throw error;
    await transport.finishAuth(code);
    await connect();
  }
  // A request the SDK refused for want of a token or a scope (a resource that lets the
  // lifecycle through asks only then): the code handed back, the request made again.
  const authorized = async (operation) => {
    for (let round = 1; ; round += 1) {
      try {
        return await operation();
      } catch (error) {
        const code =
          error instanceof UnauthorizedError && round < MAX_AUTHORIZATIONS
            ? authorization.takeCode()
            : null;
        if (code === null) throw error;
        await transport.finishAuth(code);
      }
    }
  };
  try {
    const { tools } = await authorized(() => client.listTools());
    log(`tools: ${tools.map((tool) => tool.name).join(', ')}`);
    const call = () => client.callTool({ name: 'test-tool', arguments: {} });
    log(`test-tool: ${JSON.stringify(await authorized(call))}`);
  } finally {
    await client.close();
  }
}

// 2026-07-28 behind the bearer check: the SDK's `auth` when a request is refused with 401
// (the metadata URL and scope its challenge named), the code handed back from the redirect,
// the request sent again with the token.
async function statelessAuthorization(url, revision) {
  const authorization = new HeadlessAuthorization(revision);
  const withToken = (init) => {
    const token = authorization.tokens()?.access_token;
    const headers = token ? { ...init.headers, authorization: `Bearer ${token}` } : init.headers;
    return { ...init, headers };
  };
  // As the SDK's transport does: on a 401, or a 403 insufficient_scope whose challenge
  // was not already tried, authorize for the scope the challenge names, then send again;
  // a step-up asks for that scope with those asked for before (SEP-2350, 2026-07-28).
  let asked = '';
  const authorizedFetch = async (input, init) => {
    let tried = null;
    for (;;) {
      const response = await fetch(input, withToken(init));
      const challenge = extractWWWAuthenticateParams(response);
      const header = response.headers.get('www-authenticate');
      const stepUp = response.status === 403 && challenge.error === 'insufficient_scope';
      if (!(response.status === 401 || stepUp) || tried === header) return response;
      tried = header;
      await response.body?.cancel();
      const { resourceMetadataUrl } = challenge;
      const named = challenge.scope ?? '';
      const scope = stepUp ? [...new Set(`${asked} ${named}`.split(' '))].join(' ').trim() : named;
      asked = scope;
      const options = { serverUrl: url, resourceMetadataUrl, scope: scope || undefined };
      let result = await auth(authorization, options);
      if (result === 'REDIRECT') {
        const authorizationCode = authorization.takeCode();
        result = await auth(authorization, { ...options, authorizationCode });
      }
      if (result !== 'AUTHORIZED') throw new Error(`not authorized: ${result}`);
    }
  };
  const session = statelessSession(url, revision, authorizedFetch);
  const tools = await session.listTools();
  log(`tools: ${tools.map((tool) => tool.name).join(', ')}`);
  const result = await session.request('tools/call', { name: 'test-tool', arguments: {} });
  log(`test-tool: ${JSON.stringify(result)}`);
}

// Every property of a requested form filled: its default, else a value of its type.
function filledForm(schema) {
  const byType = { boolean: true, string: '', number: 0, integer: 0 };
  const properties = schema?.properties ?? {};
  return Object.fromEntries(
    Object.entries(properties).map(([name, p]) => [name, p.default ?? byType[p.type]]),
  );
}

// A header value as 2026-07-28 carries it: plain when it is visible ASCII with inner spaces
// only, else `=?base64?...?=` of its UTF-8 (so is a plain value that looks encoded).
function headerValue(value) {
  const text = typeof value === 'boolean' ? String(value) : `${value}`;
  const plain = /^[\x21-\x7E]([\x20-\x7E]*[\x21-\x7E])?$|^$/.test(text);
  if (plain && !/^=\?base64\?.*\?=$/.test(text)) return text;
  return `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;
}

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const HEADER_TYPES = ['string', 'integer', 'boolean'];

// A tool's x-mcp-header parameters ({path, name}), or the reason the tool must be left out:
// each annotation a token, unique whatever its case, on a string, integer or boolean
// property reached from the root through `properties` only.
function headerParameters(inputSchema) {
  const found = [];
  const problems = [];
  const walk = (schema, path) => {
    for (const [key, value] of Object.entries(schema ?? {})) {
      if (key === 'properties' && value && typeof value === 'object') {
        for (const [name, property] of Object.entries(value)) {
          if (property && typeof property === 'object' && 'x-mcp-header' in property) {
            found.push({ path: [...path, name], name: property['x-mcp-header'], property });
          }
          walk(property, [...path, name]);
        }
      } else if (key !== 'x-mcp-header') {
        const hidden = JSON.stringify(value ?? null).includes('"x-mcp-header"');
        if (hidden) problems.push(`an x-mcp-header under ${[...path, key].join('.')}`);
      }
    }
  };
  walk(inputSchema, []);
  const seen = new Set();
  for (const { path, name, property } of found) {
    const where = path.join('.');
    if (typeof name !== 'string' || !TOKEN.test(name)) {
      problems.push(`${where}: ${JSON.stringify(name)} is not a header name token`);
    } else if (seen.has(name.toLowerCase())) {
      problems.push(`${where}: ${name} is not unique`);
    } else if (!HEADER_TYPES.includes(property.type)) {
      problems.push(`${where}: a ${JSON.stringify(property.type)} cannot be a header`);
    }
    if (typeof name === 'string') seen.add(name.toLowerCase());
  }
  if (problems.length) return { problems };
  return { parameters: found.map(({ path, name }) => ({ path, name })) };
}

// The Mcp-Param-* headers of a call: each annotated argument present (null is absent).
function parameterHeaders(parameters, args) {
  const headers = {};
  for (const { path, name } of parameters ?? []) {
    const value = path.reduce((at, key) => (at == null ? undefined : at[key]), args);
    if (value !== undefined && value !== null) headers[`mcp-param-${name}`] = headerValue(value);
  }
  return headers;
}

// The request's standard headers (2026-07-28): the method, and the name it acts on.
function standardHeaders(method, params) {
  const headers = { 'mcp-method': method };
  const name = method === 'resources/read' ? params.uri : params.name;
  if (['tools/call', 'prompts/get', 'resources/read'].includes(method) && name !== undefined) {
    headers['mcp-name'] = headerValue(name);
  }
  return headers;
}

// The answer to request `id` in a JSON body or an event stream, parsed by the SDK's schema.
async function answerOf(response, id) {
  const type = response.headers.get('content-type') ?? '';
  const text = await response.text();
  const bodies = type.includes('text/event-stream')
    ? text.split(/\r?\n/).filter((line) => line.startsWith('data:')).map((line) => line.slice(5))
    : [text];
  for (const body of bodies) {
    if (!body.trim()) continue;
    const message = JSONRPCMessageSchema.parse(JSON.parse(body));
    if (message.id === id && ('result' in message || 'error' in message)) return message;
  }
  throw new Error(`HTTP ${response.status} (${type || 'no content type'}): no answer to ${id}`);
}

// 2026-07-28: no initialize, no session; every request carries the revision in its header
// and its `_meta`, with the client's info and capabilities.
function statelessSession(url, firstVersion, fetchFn = fetch) {
  let version = firstVersion;
  let nextId = 0;
  const capabilities = { elicitation: {} };
  const headerParametersOf = new Map(); // tool name -> its x-mcp-header parameters
  const send = async (method, params) => {
    nextId += 1;
    const id = nextId;
    const _meta = {
      'io.modelcontextprotocol/protocolVersion': version,
      'io.modelcontextprotocol/clientInfo': CLIENT_INFO,
      'io.modelcontextprotocol/clientCapabilities': capabilities,
    };
    const response = await fetchFn(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': version,
        ...standardHeaders(method, params),
        ...(method === 'tools/call'
          ? parameterHeaders(headerParametersOf.get(params.name), params.arguments)
          : {}),
      },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params: { ...params, _meta } }),
      // The scenario's bound, not less: the runner starts every scenario of a set at once,
      // and on a small machine its servers answer seconds late.
      signal: AbortSignal.timeout(SCENARIO_BOUND_MS),
    });
    return answerOf(response, id);
  };
  const request = async (method, params = {}) => {
    let answer = await send(method, params);
    const supported = answer.error?.data?.supported;
    if (answer.error?.code === -32022 && Array.isArray(supported)) {
      // The server names the versions it speaks: take the newest this client speaks too.
      const shared = supported.filter((v) => v >= STATELESS).sort().pop();
      if (shared === undefined) throw new Error(`no shared version in ${supported}`);
      log(`${method}: ${version} refused; retrying at ${shared}`);
      version = shared;
      answer = await send(method, params);
    }
    if (answer.error) throw new Error(`${method}: ${answer.error.code} ${answer.error.message}`);
    return answer.result;
  };
  // tools/list, a tool with an invalid x-mcp-header left out (with a warning).
  const listTools = async () => {
    const { tools } = await request('tools/list');
    return tools.filter((tool) => {
      const { parameters, problems } = headerParameters(tool.inputSchema);
      if (problems) log(`warning: tool ${tool.name} left out: ${problems.join('; ')}`);
      else headerParametersOf.set(tool.name, parameters);
      return !problems;
    });
  };
  return { request, listTools };
}

// A request the server may answer with input_required (SEP-2322): each input request
// answered (a form accepted, filled), the request retried under a new id with the answers
// and the server's requestState, unread and unchanged.
async function withInput(session, method, params, defect) {
  let result = await session.request(method, params);
  for (let round = 0; result.resultType === 'input_required'; round += 1) {
    if (round === MAX_INPUT_ROUNDS) throw new Error(`${method}: still input_required`);
    const inputResponses = {};
    for (const [key, asked] of Object.entries(result.inputRequests ?? {})) {
      if (asked.method !== 'elicitation/create') throw new Error(`cannot answer ${asked.method}`);
      const content = filledForm(asked.params?.requestedSchema);
      inputResponses[key] = { action: 'accept', content };
    }
    const retry = { ...params, inputResponses };
    if (result.requestState !== undefined && defect !== 'drop-request-state') {
      retry.requestState = result.requestState;
    }
    result = await session.request(method, retry);
  }
  return result;
}

async function stateless(scenario, url, defect, revision) {
  const session = statelessSession(url, revision);
  const show = async (label, pending) => log(`${label}: ${JSON.stringify(await pending)}`);
  if (scenario === 'tools_call') {
    const tools = await session.listTools();
    log(`tools: ${tools.map((tool) => tool.name).join(', ')}`);
    if (defect !== 'no-tool-call') {
      const call = { name: 'add_numbers', arguments: { a: 5, b: 3 } };
      await show('add_numbers', session.request('tools/call', call));
    }
  } else if (scenario === 'request-metadata') {
    await show('server/discover', session.request('server/discover'));
    await show('tools/list', session.request('tools/list'));
  } else if (scenario === 'sep-2322-client-request-state') {
    const tools = await session.listTools();
    for (const { name } of tools) {
      await show(name, withInput(session, 'tools/call', { name, arguments: {} }, defect));
    }
  } else if (scenario === 'http-standard-headers') {
    // One request of each kind the server records headers for.
    const tools = await session.listTools();
    for (const { name } of tools) await show(name, session.request('tools/call', { name }));
    const { prompts } = await session.request('prompts/list');
    for (const { name } of prompts) await show(name, session.request('prompts/get', { name }));
    const { resources } = await session.request('resources/list');
    for (const { uri } of resources) await show(uri, session.request('resources/read', { uri }));
  } else if (scenario === 'http-custom-headers') {
    // The calls to make are the scenario's context; the tools listed first, so that their
    // x-mcp-header parameters are known.
    await session.listTools();
    const { toolCalls } = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? '{}');
    for (const call of toolCalls ?? []) await show(call.name, session.request('tools/call', call));
  } else if (scenario === 'http-invalid-tool-headers') {
    // Every tool kept, called with a value of its type for each required argument.
    const byType = { string: 'us-west1', integer: 1, boolean: true };
    for (const { name, inputSchema } of await session.listTools()) {
      const properties = inputSchema?.properties ?? {};
      const args = Object.fromEntries(
        (inputSchema?.required ?? []).map((key) => [key, byType[properties[key]?.type] ?? '']),
      );
      await show(name, session.request('tools/call', { name, arguments: args }));
    }
  } else if (scenario === 'json-schema-ref-no-deref') {
    // The tools listed, their schemas' `$ref`s (one to a URL) left as they are: a client
    // resolves no network reference on its own.
    const tools = await session.listTools();
    log(`tools: ${tools.map((tool) => tool.name).join(', ')}`);
  }
}

async function main() {
  const { defect, url } = parseArguments(process.argv.slice(2));
  const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
  const revision = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION ?? '2025-11-25';
  log(`scenario ${JSON.stringify(scenario)} at ${revision}, server ${url}, defect ${defect}`);
  const served = [
    ...(revision >= STATELESS ? STATELESS_SCENARIOS : LEGACY_SCENARIOS),
    ...AUTH_SCENARIOS,
    ...(revision >= STATELESS ? AUTH_MODERN_SCENARIOS : []),
  ];
  if (!served.includes(scenario)) {
    // The runner runs every scenario of a set (authorization too): say so, and fail it.
    const named = JSON.stringify(scenario);
    throw new Error(`this client does not implement the scenario ${named} at ${revision}`);
  }
  if ([...AUTH_SCENARIOS, ...AUTH_MODERN_SCENARIOS].includes(scenario) && revision >= STATELESS) {
    await statelessAuthorization(url, revision);
  } else if (AUTH_SCENARIOS.includes(scenario)) {
    await withSdkAuthorization(url);
  } else if (revision >= STATELESS) {
    await stateless(scenario, url, defect, revision);
  } else {
    await withSdk(scenario, url, defect);
  }
}

const bound = setTimeout(() => {
  log(`the scenario did not end within ${SCENARIO_BOUND_MS} ms`);
  process.exit(1);
}, SCENARIO_BOUND_MS);
try {
  await main();
  clearTimeout(bound);
  process.exit(0);
} catch (error) {
  log(`failed: ${error?.stack ?? error}`);
  process.exit(1);
}
