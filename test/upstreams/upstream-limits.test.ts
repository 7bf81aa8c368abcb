import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { listAllTools, MAX_TOOL_PAGES } from '../../src/mcp-client/list-tools.js';
import { guardedFetch } from '../../src/upstreams/client.js';

const tool = (name: string): Tool => ({ name, inputSchema: { type: 'object' } });

/** A client whose tools/list answers page after page from `page(n)` (n from 0), counting the pages asked. */
function pagingClient(page: (n: number) => { tools: Tool[]; nextCursor?: string }): { client: Client; asked: () => number } {
  let n = 0;
  const client = { listTools: async () => page(n++) } as unknown as Client;
  return { client, asked: () => n };
}

describe('listing an upstream’s tools is bounded', () => {
  it('follows every page of a server that ends', async () => {
    const { client } = pagingClient((n) => ({ tools: [tool(`t${n}a`), tool(`t${n}b`)], ...(n < 2 ? { nextCursor: `c${n}` } : {}) }));
    expect((await listAllTools(client)).map((t) => t.name)).toEqual(['t0a', 't0b', 't1a', 't1b', 't2a', 't2b']);
  });

  it(`stops a server that hands out new cursors forever after ${MAX_TOOL_PAGES} pages`, async () => {
    const { client, asked } = pagingClient((n) => ({ tools: [], nextCursor: `cursor-${n}` }));
    await expect(listAllTools(client)).rejects.toThrow(`MCP server listed more than ${MAX_TOOL_PAGES} pages of tools`);
    expect(asked()).toBe(MAX_TOOL_PAGES);
  });

  it('refuses a server that lists more tools than a sync may carry, as soon as it does', async () => {
    const { client, asked } = pagingClient((n) => ({ tools: Array.from({ length: 40 }, (_, i) => tool(`t${n}_${i}`)), nextCursor: `c${n}` }));
    await expect(listAllTools(client, undefined, 100)).rejects.toThrow('MCP server lists more than 100 tools');
    expect(asked()).toBe(3);
  });

  it('refuses a repeated cursor', async () => {
    const { client } = pagingClient(() => ({ tools: [tool('t')], nextCursor: 'same' }));
    await expect(listAllTools(client)).rejects.toThrow('MCP server repeated cursor same');
  });
});

describe('the notification stream of an upstream is bounded per event', () => {
  let server: Server;
  let url: string;
  // What the GET stream sends next: chunks written one after another.
  let chunks: string[] = [];
  beforeAll(async () => {
    server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const send = chunks.slice();
      const next = () => {
        const chunk = send.shift();
        if (chunk === undefined) response.end();
        else response.write(chunk, () => setImmediate(next));
      };
      next();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const read = async (): Promise<string> => (await guardedFetch(1_024)(url, { method: 'GET' })).text();
  const event = (bytes: number, newline = '\n') => `data: ${'x'.repeat(bytes - 7)}${newline}${newline}`;

  it('passes any number of events under the cap, whatever the stream’s total, with LF, CRLF or CR line ends', async () => {
    chunks = [event(600), event(600), event(600, '\r\n'), event(1_000, '\r\n'), event(900, '\r'), event(900, '\r'), event(700)];
    expect(await read()).toBe(chunks.join(''));
  });

  it('fails the stream once one event passes the cap, even sent in small chunks', async () => {
    chunks = [event(600), ...Array.from({ length: 30 }, () => `data: ${'y'.repeat(50)}\n`)];
    await expect(read()).rejects.toThrow("the upstream's response is larger than 1024 bytes");
  });
});
