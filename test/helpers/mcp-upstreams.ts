import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';

import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import * as z from 'zod';

const EVERYTHING = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url));

/** The reference MCP server (`server-everything`, streamable HTTP) as a child process on a free port. */
export interface EverythingServer {
  url: string;
  /** Every request it logged (it prints one line per POST /mcp), for "the upstream saw no call". */
  readonly posts: number;
  /** Authorization headers it received. */
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** Starts server-everything with `streamableHttp` and PORT, resolving once it listens. */
export async function startEverything(): Promise<EverythingServer> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let posts = 0;
  child.stdout!.on('data', (chunk: Buffer) => {
    posts += chunk.toString().split('Received MCP POST request').length - 1;
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('server-everything did not start in 30 s')), 30_000);
    child.stderr!.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('listening on port')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited with ${code}`)));
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    get posts() {
      return posts;
    },
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    },
  };
}

/** A scripted MCP server (the SDK's, stateless streamable HTTP) whose tool list a test changes. */
export interface ScriptedServer {
  url: string;
  tools: Set<string>;
  /** Header values it received on its last request. */
  lastHeaders: Record<string, string | string[] | undefined>;
  stop(): Promise<void>;
}

/**
 * A stateless streamable-HTTP MCP server on a free port: each request gets a fresh McpServer that
 * `register` fills (so the tools it registers may change between requests); `onRequest` sees each request first.
 */
export async function serveStateless(register: (mcp: McpServer) => void, onRequest: (request: IncomingMessage) => void = () => undefined): Promise<{ url: string; stop(): Promise<void> }> {
  const server: Server = createServer((request, response) => {
    onRequest(request);
    const mcp = new McpServer({ name: 'scripted', version: '1.0.0' });
    register(mcp);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    response.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    void mcp.connect(transport).then(() => transport.handleRequest(request, response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export async function startScripted(initial: string[]): Promise<ScriptedServer> {
  const tools = new Set(initial);
  const state: ScriptedServer = { url: '', tools, lastHeaders: {}, stop: async () => undefined };
  const served = await serveStateless(
    (mcp) => {
      for (const name of tools) {
        mcp.registerTool(name, { description: `The ${name.replace(/-/g, ' ')} tool of the scripted server.`, inputSchema: { text: z.string().describe('Any text') } }, ({ text }) => ({
          content: [{ type: 'text', text: `${name}: ${text}` }],
        }));
      }
    },
    (request) => (state.lastHeaders = request.headers),
  );
  state.url = served.url;
  state.stop = served.stop;
  return state;
}

/** A stateful SDK server (sessions, notification stream): adding a tool notifies every open session (list_changed). */
export interface LiveServer {
  url: string;
  addTool(name: string): void;
  stop(): Promise<void>;
}

export async function startLive(initial: string[]): Promise<LiveServer> {
  const names = [...initial];
  const sessions = new Map<string, { mcp: McpServer; transport: StreamableHTTPServerTransport }>();
  const register = (mcp: McpServer, name: string) =>
    mcp.registerTool(name, { description: `The ${name} tool of the live server.`, inputSchema: { text: z.string().describe('Any text') } }, ({ text }) => ({ content: [{ type: 'text', text }] }));
  const server: Server = createServer((request, response) => {
    const id = request.headers['mcp-session-id'];
    const existing = typeof id === 'string' ? sessions.get(id) : undefined;
    if (existing) return void existing.transport.handleRequest(request, response);
    const mcp = new McpServer({ name: 'live', version: '1.0.0' });
    for (const name of names) register(mcp, name);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => void sessions.set(sessionId, { mcp, transport }),
    });
    void mcp.connect(transport).then(() => transport.handleRequest(request, response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    // Registering on a connected McpServer sends notifications/tools/list_changed to its client.
    addTool: (name) => {
      names.push(name);
      for (const { mcp } of sessions.values()) register(mcp, name);
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const { transport } of sessions.values()) void transport.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
