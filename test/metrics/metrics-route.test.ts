import { beforeAll, describe, expect, it } from 'vitest';

import { ServiceMetrics } from '../../src/metrics/metrics.js';
import { useDiscoveryApp } from '../discovery/helpers.js';
import { call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { HashingEmbedder } from '../helpers/embedders.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

/** The value of one sample line (`name{labels} value`) of an exposition, or undefined. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
    return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

forEachDatabase((db) => {
  describe('GET /metrics', () => {
    const ctx = useDiscoveryApp(db, () => new HashingEmbedder());
    const tenant = uniqueTenant('metrics');
    let publisher: string;

    beforeAll(async () => {
      publisher = await token({ tenant, scopes: [PUBLISH] });
      const doc = toolDocument({ name: 'issue_refund', description: 'Refund a paid invoice in full or in part.' });
      expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: doc })).statusCode).toBe(201);
      await ctx.flush();
    });

    it('answers without a token in the Prometheus text format', async () => {
      const response = await call(ctx.app, 'GET', '/metrics');
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(response.body).toContain('# TYPE tool_registry_http_request_duration_seconds histogram');
      expect(response.body).toContain('tool_registry_process_resident_memory_bytes');
    });

    it('counts requests per route template and status', async () => {
      await call(ctx.app, 'GET', '/v1/tools/issue_refund', { token: publisher });
      await call(ctx.app, 'GET', '/v1/tools/unknown_tool', { token: publisher });
      const text = (await call(ctx.app, 'GET', '/metrics')).body;
      const bucket = 'tool_registry_http_request_duration_seconds_count';
      expect(sample(text, bucket, { method: 'GET', route: '/v1/tools/:name', status_code: '200' })).toBeGreaterThanOrEqual(1);
      expect(sample(text, bucket, { method: 'GET', route: '/v1/tools/:name', status_code: '404' })).toBeGreaterThanOrEqual(1);
      expect(text).not.toContain('route="/v1/tools/issue_refund"');
    });

    it('records discovery stages, the shortlist cache and the query embedding cache', async () => {
      const body = { query: 'refund the paid invoice please' };
      // Computed, then a shortlist-cache hit, then another shortlist (top_k) of the same query vector.
      for (const request of [body, body, { ...body, top_k: 2 }]) expect((await call(ctx.app, 'POST', '/v1/discover', { token: publisher, body: request })).statusCode).toBe(200);
      const text = (await call(ctx.app, 'GET', '/metrics')).body;
      const count = 'tool_registry_discovery_stage_seconds_count';
      for (const stage of ['cache', 'log', 'total']) expect(sample(text, count, { stage, search_mode: 'hybrid' }), stage).toBeGreaterThanOrEqual(3);
      for (const stage of ['embedding', 'stats', 'vector', 'retrieval', 'fusion', 'fetch', 'rendering']) {
        expect(sample(text, count, { stage, search_mode: 'hybrid' }), stage).toBeGreaterThanOrEqual(2);
      }
      // The third request's vector is cached: both legs run as one statement, timed as its vector
      // stage, with no lexical stage of its own (this app's first discoveries: exact counts).
      expect(sample(text, count, { stage: 'lexical', search_mode: 'hybrid' })).toBe(1);
      expect(sample(text, count, { stage: 'vector', search_mode: 'hybrid' })).toBe(2);
      expect(sample(text, count, { stage: 'auth' })).toBeGreaterThanOrEqual(3);
      expect(sample(text, 'tool_registry_shortlist_cache_total', { result: 'hit' })).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'tool_registry_shortlist_cache_total', { result: 'miss' })).toBeGreaterThanOrEqual(2);
      expect(sample(text, 'tool_registry_query_embedding_cache_total', { result: 'hit' })).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'tool_registry_query_embedding_cache_total', { result: 'miss' })).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'tool_registry_embedder_failures_total')).toBe(0);
    });

    it('shows pool usage only on a pooled driver', async () => {
      const text = (await call(ctx.app, 'GET', '/metrics')).body;
      if (db.leg === 'pglite') expect(text).not.toContain('tool_registry_db_pool_connections');
      else expect(sample(text, 'tool_registry_db_pool_connections', { state: 'total' })).toBeGreaterThanOrEqual(1);
    });
  });
});

describe('ServiceMetrics', () => {
  it('counts authorize decisions by outcome, with a reason only for denials', async () => {
    const metrics = new ServiceMetrics({ defaultMetrics: false });
    metrics.recordAuthorizeDecision('allow', 'ignored');
    metrics.recordAuthorizeDecision('deny', 'scope_missing');
    metrics.recordAuthorizeDecision('deny', 'scope_missing');
    const text = await metrics.registry.metrics();
    expect(sample(text, 'tool_registry_authorize_decisions_total', { decision: 'allow', reason: '' })).toBe(1);
    expect(sample(text, 'tool_registry_authorize_decisions_total', { decision: 'deny', reason: 'scope_missing' })).toBe(2);
  });

  it('keeps apps apart: each instance has its own registry', async () => {
    const a = new ServiceMetrics({ defaultMetrics: false });
    const b = new ServiceMetrics({ defaultMetrics: false });
    a.recordAuthorizeDecision('allow');
    expect(await b.registry.metrics()).not.toContain('decision="allow"');
  });
});
