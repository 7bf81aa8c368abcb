import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import type { FastifyInstance } from 'fastify';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { buildApp } from '../../src/app.js';
import { type Config, loadConfig } from '../../src/config.js';
import { startTracing, type Tracing } from '../../src/telemetry/sdk.js';
import { activeTracer } from '../../src/telemetry/tracer.js';
import { call, testConfig, testDependencies } from '../helpers/app.js';
import { inProcessDatabase } from '../helpers/databases.js';
import { TEST_SECRET, token } from '../helpers/tokens.js';

/**
 * The real OTLP/HTTP exporters against a collector stand-in this test starts (node:http on a
 * loopback port): what an operator's OTEL_* variables configure reaches the collector, as
 * protobuf (the specification's default) or JSON, with the service's name and the headers asked
 * for. One database leg: nothing here depends on the driver (tracing.test.ts covers every leg).
 */
interface Export {
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

const SERVICE = 'otlp-test-registry';
const received: Export[] = [];
let collector: Server;
let endpoint: string;

beforeAll(async () => {
  collector = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks) });
      const json = request.headers['content-type'] === 'application/json';
      response.writeHead(200, { 'content-type': json ? 'application/json' : 'application/x-protobuf' }).end(json ? '{}' : undefined);
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve) => collector.close(() => resolve()));
});

/** The service's configuration as an operator would write it (plus the test's JWT secret). */
function operatorConfig(protocol: string): Config {
  return loadConfig({
    JWT_SECRET: TEST_SECRET,
    EMBEDDING_PROVIDER: 'none',
    LOG_LEVEL: 'silent',
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
    OTEL_SERVICE_NAME: SERVICE,
    OTEL_EXPORTER_OTLP_HEADERS: 'x-collector-key=k%3D1',
    OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
  });
}

describe('OTLP/HTTP export to a collector', () => {
  const db = inProcessDatabase();
  let tracing: Tracing | undefined;
  let app: FastifyInstance | undefined;

  afterEach(async () => {
    await app?.close();
    await tracing?.shutdown();
    app = undefined;
    tracing = undefined;
    received.length = 0;
  });

  /** Starts tracing from `config`, sends one traced request, flushes, and returns what arrived. */
  async function exportOneRequest(config: Config): Promise<Export> {
    tracing = startTracing(config.tracing!);
    app = await buildApp(testDependencies(config, db.database));
    await app.ready();
    const response = await call(app, 'GET', '/v1/tools', { token: await token({ tenant: 'otlp', scopes: [] }) });
    expect(response.statusCode).toBe(200);
    await tracing.flush();
    expect(received.length).toBeGreaterThan(0);
    return received[0]!;
  }

  it('POSTs protobuf to OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces with the service name and the configured headers', async () => {
    const sent = await exportOneRequest(operatorConfig('http/protobuf'));
    expect(sent.path).toBe('/v1/traces');
    expect(sent.headers['content-type']).toBe('application/x-protobuf');
    expect(sent.headers['x-collector-key']).toBe('k=1');
    // Protobuf writes strings as their UTF-8 bytes: the resource and the span name are in the body.
    expect(sent.body.includes(Buffer.from(SERVICE))).toBe(true);
    expect(sent.body.includes(Buffer.from('GET /v1/tools'))).toBe(true);
  });

  it('POSTs JSON when OTEL_EXPORTER_OTLP_PROTOCOL=http/json', async () => {
    const sent = await exportOneRequest(operatorConfig('http/json'));
    expect(sent.path).toBe('/v1/traces');
    expect(sent.headers['content-type']).toBe('application/json');
    const body = JSON.parse(sent.body.toString()) as {
      resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: { name: string }[] }[] }[];
    };
    const resource = Object.fromEntries(body.resourceSpans[0]!.resource.attributes.map((a) => [a.key, a.value.stringValue]));
    expect(resource).toMatchObject({ 'service.name': SERVICE, 'deployment.environment.name': 'test' });
    expect(body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans.map((span) => span.name)))).toContain('GET /v1/tools');
  });

  it('starts nothing when no endpoint is configured: no tracer, no request hook, nothing sent', async () => {
    const config = testConfig();
    expect(config.tracing).toBeUndefined();
    app = await buildApp(testDependencies(config, db.database));
    await app.ready();
    expect(activeTracer()).toBeUndefined();
    expect(app.hasPlugin('http-spans')).toBe(false);
    await call(app, 'GET', '/v1/tools', { token: await token({ tenant: 'otlp', scopes: [] }) });
    expect(received).toEqual([]);
  });
});
