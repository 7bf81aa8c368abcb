import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-node';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';

import { buildApp } from '../../src/app.js';
import type { EmbedOptions, EncoderCounters } from '../../src/embedding/provider.js';
import { startTracing, type Tracing } from '../../src/telemetry/sdk.js';
import { call, testConfig, testDependencies } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { HashingEmbedder } from '../helpers/embedders.js';
import { toolDocument } from '../helpers/fixtures.js';
import { type ScriptedServer, startScripted } from '../helpers/mcp-upstreams.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

/**
 * Traces with the real SDK, exported to its in-memory exporter: a server span per request that
 * continues the caller's W3C trace, the discover stages as its children, a span per database
 * statement (text without values) under the stage that ran it, and the trace handed on to an
 * upstream MCP server (the SDK's own server, in this process) in the call's `traceparent`.
 */
const exporter = new InMemorySpanExporter();
let tracing: Tracing;

beforeAll(() => {
  const config = testConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_SERVICE_NAME: 'registry-under-test' });
  tracing = startTracing(config.tracing!, new SimpleSpanProcessor(exporter));
});

afterAll(async () => {
  await tracing.shutdown();
});

const CALLER_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';
const TRACEPARENT = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`;
const SECRET_ARGUMENT = 'inv-7f3c-secret-argument-value';

const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
const named = (name: string): ReadableSpan[] => spans().filter((span) => span.name === name);
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;

/** The server span of `name`, once the response hook has ended it. */
async function serverSpan(name: string): Promise<ReadableSpan> {
  await vi.waitFor(() => expect(named(name)).toHaveLength(1));
  return named(name)[0]!;
}

forEachDatabase((db) => {
  describe('OpenTelemetry traces (in-memory exporter)', () => {
    const tenant = uniqueTenant('traces');
    let app: FastifyInstance;
    let upstream: ScriptedServer;
    let publisher: string;
    let agent: string;

    beforeAll(async () => {
      upstream = await startScripted(['lookup']);
      const config = testConfig({ UPSTREAM_ALLOWED_URLS: new URL(upstream.url).origin, UPSTREAM_SECRET_KEY: 'b'.repeat(64), UPSTREAM_SYNC_INTERVAL_MS: '0' });
      app = await buildApp({ ...testDependencies(config, db.database), embedder: new HashingEmbedder() });
      await app.ready();
      publisher = await token({ tenant, scopes: [PUBLISH], sub: 'ci' });
      agent = await token({ tenant, scopes: [], sub: 'agent-7' });
      expect((await call(app, 'POST', '/v1/tools', { token: publisher, body: toolDocument() })).statusCode).toBe(201);
    });

    afterAll(async () => {
      await app?.close();
      await upstream?.stop();
    });

    beforeEach(() => exporter.reset());

    it('continues the caller\'s trace: the request span is a server span whose parent is the caller\'s span', async () => {
      const response = await call(app, 'POST', '/v1/discover', { token: agent, body: { query: 'refund a broken purchase' }, headers: { traceparent: TRACEPARENT } });
      expect(response.statusCode).toBe(200);
      const server = await serverSpan('POST /v1/discover');
      expect(server.kind).toBe(SpanKind.SERVER);
      expect(server.spanContext().traceId).toBe(CALLER_TRACE);
      expect(parentOf(server)).toBe(CALLER_SPAN);
      expect(server.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.route': '/v1/discover', 'http.response.status_code': 200, 'tool_registry.tenant': tenant });
      expect(server.resource.attributes['service.name']).toBe('registry-under-test');
    });

    it('starts a trace of its own when the caller sends none', async () => {
      await call(app, 'POST', '/v1/discover', { token: agent, body: { query: 'give my money back' } });
      const server = await serverSpan('POST /v1/discover');
      expect(parentOf(server)).toBeUndefined();
      expect(server.spanContext().traceId).not.toBe(CALLER_TRACE);
    });

    it('has a child span per discover stage, and the database statements under the stage that ran them', async () => {
      await call(app, 'POST', '/v1/discover', { token: agent, body: { query: 'refund invoice 1024 in part' }, headers: { traceparent: TRACEPARENT } });
      const server = await serverSpan('POST /v1/discover');
      const stages = ['discover.embed', 'discover.stats', 'discover.lexical', 'discover.vector', 'discover.fetch', 'discover.render'];
      for (const stage of stages) {
        expect(named(stage), stage).toHaveLength(1);
        expect(parentOf(named(stage)[0]!), stage).toBe(server.spanContext().spanId);
        expect(named(stage)[0]!.spanContext().traceId).toBe(CALLER_TRACE);
      }
      const legs = [named('discover.lexical')[0]!, named('discover.vector')[0]!];
      const statementsOf = (leg: (typeof legs)[number]) => spans().filter((span) => span.kind === SpanKind.CLIENT && parentOf(span) === leg.spanContext().spanId);
      for (const leg of legs) expect(statementsOf(leg).length, leg.name).toBeGreaterThan(0);
      const statements = legs.flatMap(statementsOf);
      for (const statement of statements) {
        expect(statement.attributes['db.system.name']).toBe('postgresql');
        expect(statement.name).toBe(statement.attributes['db.operation.name']);
        const text = String(statement.attributes['db.query.text']);
        // Parameterized: the tenant and the query are values ($n), never part of the text.
        expect(text).toMatch(/\$\d/);
        expect(text).not.toContain(tenant);
        expect(text).not.toContain('1024');
      }
    });

    it('traces an authorize and its statements without any argument value', async () => {
      const response = await call(app, 'POST', '/v1/authorize', { token: agent, body: { tool: 'issue_refund', arguments: { invoice_id: SECRET_ARGUMENT } }, headers: { traceparent: TRACEPARENT } });
      expect(response.json<{ decision: string }>().decision).toBe('allow');
      const server = await serverSpan('POST /v1/authorize');
      expect(server.spanContext().traceId).toBe(CALLER_TRACE);
      const statements = spans().filter((span) => span.attributes['db.query.text'] !== undefined && span.spanContext().traceId === CALLER_TRACE);
      expect(statements.length).toBeGreaterThan(0);
      expect(JSON.stringify(spans().map((span) => [span.name, span.attributes]))).not.toContain(SECRET_ARGUMENT);
    });

    it('hands the trace on to an upstream MCP server in the call\'s traceparent', async () => {
      const registered = await call(app, 'POST', '/v1/upstreams', { token: publisher, body: { name: 'scripted', url: upstream.url } });
      expect(registered.statusCode).toBe(201);
      exporter.reset();
      const response = await call(app, 'POST', '/v1/call', { token: agent, body: { tool: 'scripted_lookup', arguments: { text: 'hello' } }, headers: { traceparent: TRACEPARENT } });
      expect(response.statusCode).toBe(200);
      const sent = String(upstream.lastHeaders.traceparent);
      const [, traceId, parentId] = sent.split('-');
      expect(traceId).toBe(CALLER_TRACE);
      // The upstream's parent is the registry's client span of that request, itself in the caller's trace.
      await serverSpan('POST /v1/call');
      const client = spans().find((span) => span.spanContext().spanId === parentId);
      expect(client).toMatchObject({ kind: SpanKind.CLIENT, name: 'POST' });
      expect(client!.attributes['server.address']).toBe('127.0.0.1');
    });

    it('leaves probes and scrapes untraced', async () => {
      await call(app, 'GET', '/healthz');
      await call(app, 'GET', '/metrics');
      expect(spans().filter((span) => span.kind === SpanKind.SERVER)).toEqual([]);
    });
  });

  /**
   * An in-process encoder as discovery sees it: query texts wait until `ready()` says so, tool
   * texts never; `busy` reports queries already queued (what LocalEmbedder's counters say under load).
   */
  class SlowQueryEmbedder extends HashingEmbedder {
    busy = false;
    ready: () => boolean = () => true;

    override async embed(texts: string[], options?: EmbedOptions): Promise<number[][]> {
      if (options?.purpose === 'query') await vi.waitFor(() => expect(this.ready()).toBe(true), { timeout: 10_000, interval: 5 });
      return super.embed(texts);
    }

    counters(): EncoderCounters {
      return { encoded: { query: 0, index: 0 }, queued: { query: this.busy ? 1 : 0, index: 0 } };
    }
  }

  describe('the lexical leg and the query embedding', () => {
    const tenant = uniqueTenant('overlap');
    const embedder = new SlowQueryEmbedder();
    let app: FastifyInstance;
    let agent: string;

    beforeAll(async () => {
      app = await buildApp({ ...testDependencies(testConfig({ EMBEDDING_TIMEOUT_MS: '30000' }), db.database), embedder });
      await app.ready();
      const publisher = await token({ tenant, scopes: [PUBLISH] });
      expect((await call(app, 'POST', '/v1/tools', { token: publisher, body: toolDocument() })).statusCode).toBe(201);
      await app.indexer?.flush();
      agent = await token({ tenant, scopes: [] });
    });

    afterAll(async () => {
      await app?.close();
    });

    beforeEach(() => exporter.reset());

    const ms = (time: ReadableSpan['startTime']): number => time[0] * 1e3 + time[1] / 1e6;
    // Span times come from two clocks, one of them whole milliseconds: compare within that.
    const CLOCK_MS = 2;

    it('overlap while the encoder is free: the lexical leg is done before the query vector is there, and the vector leg waits for both', async () => {
      embedder.busy = false;
      embedder.ready = () => named('discover.lexical').length > 0;
      expect((await call(app, 'POST', '/v1/discover', { token: agent, body: { query: 'refund a purchase that arrived broken' } })).statusCode).toBe(200);
      const [embed, lexical, vector] = [named('discover.embed')[0]!, named('discover.lexical')[0]!, named('discover.vector')[0]!];
      expect(ms(lexical.endTime)).toBeLessThan(ms(embed.endTime) + CLOCK_MS);
      expect(ms(vector.startTime)).toBeGreaterThan(ms(embed.endTime) - CLOCK_MS);
    });

    it('one statement once the vector is there while queries queue for the encoder', async () => {
      embedder.busy = true;
      // Slow enough that a lexical leg started alongside would begin well before the vector is there.
      const asked = Date.now();
      embedder.ready = () => Date.now() - asked > 150;
      expect((await call(app, 'POST', '/v1/discover', { token: agent, body: { query: 'money back for a damaged parcel' } })).statusCode).toBe(200);
      expect(named('discover.lexical')).toEqual([]);
      const [embed, vector] = [named('discover.embed')[0]!, named('discover.vector')[0]!];
      expect(ms(vector.startTime)).toBeGreaterThan(ms(embed.endTime) - CLOCK_MS);
      const statements = spans().filter((span) => span.kind === SpanKind.CLIENT && parentOf(span) === vector.spanContext().spanId);
      expect(statements.some((span) => String(span.attributes['db.query.text']).includes('named_tools'))).toBe(true);
    });

    it('one statement when the request\'s vector is cached: nothing to overlap when a shortlist is recomputed for a request seen before', async () => {
      embedder.busy = false;
      embedder.ready = () => true;
      const query = 'send back an item I no longer need';
      expect((await call(app, 'POST', '/v1/discover', { token: agent, body: { query } })).statusCode).toBe(200);
      expect(named('discover.lexical')).toHaveLength(1);
      exporter.reset();
      // Another top_k misses the shortlist cache; the query vector is cached.
      expect((await call(app, 'POST', '/v1/discover', { token: agent, body: { query, top_k: 2 } })).statusCode).toBe(200);
      expect(named('discover.lexical')).toEqual([]);
      const vector = named('discover.vector')[0]!;
      const statements = spans().filter((span) => span.kind === SpanKind.CLIENT && parentOf(span) === vector.spanContext().spanId);
      expect(statements.some((span) => String(span.attributes['db.query.text']).includes('named_tools'))).toBe(true);
    });
  });
});
