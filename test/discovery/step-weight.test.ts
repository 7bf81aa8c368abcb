import { describe, expect, it } from 'vitest';

import type { Embedder } from '../../src/embedding/provider.js';
import { call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';
import { type DiscoverResponse, useDiscoveryApp } from './helpers.js';

const DIMS = 16;
const vector = (weights: Record<number, number>): number[] => {
  const v = Array.from({ length: DIMS }, (_, d) => weights[d] ?? 0);
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
};

const TOOLS: Record<string, string> = {
  export_ledger: 'Export ledger entries of an account to a CSV file.',
  email_report: 'Email a finished report to a list of recipients.',
  ledger_summary: 'Totals of an account.',
  ...Object.fromEntries(['rotate_keys', 'list_users', 'purge_cache', 'resize_image', 'translate_text', 'book_room', 'track_parcel'].map((name) => [name, 'Does its own thing.'])),
};
const NAMES = Object.keys(TOOLS);
const DECOY = NAMES.indexOf('ledger_summary');

/**
 * What a sentence encoder does to a request asking for two things, made exact: every tool's texts
 * point along the tool's own axis, and the request's vector, whole or step by step, lies nearest
 * `ledger_summary`, which shares a word with the request and does neither step.
 */
class ScriptedEmbedder implements Embedder {
  readonly model = 'test-scripted-16';

  async embed(texts: string[]): Promise<number[][]> {
    return texts.map((text) => {
      const tool = NAMES.findIndex((name) => text.toLowerCase().startsWith(name.replace(/_/g, ' ')));
      if (tool >= 0) return vector({ [tool]: 1, [DIMS - 1]: 0.2 });
      if (/, then /.test(text)) return vector({ [DECOY]: 1, [NAMES.indexOf('export_ledger')]: 0.45, [NAMES.indexOf('email_report')]: 0.45 });
      if (/^export the ledger/i.test(text)) return vector({ [DECOY]: 1, [NAMES.indexOf('export_ledger')]: 0.3 });
      if (/^email the report/i.test(text)) return vector({ [DECOY]: 1, [NAMES.indexOf('email_report')]: 0.4 });
      return vector({ [DIMS - 1]: 1 });
    });
  }
}

/**
 * A request naming steps weighs the lexical leg more (STEPS_LEXICAL_WEIGHT): through the API, on
 * every database leg, with vectors scripted so that the two weightings disagree.
 */
forEachDatabase((db) => {
  const ctx = useDiscoveryApp(db, () => new ScriptedEmbedder());
  const tenant = uniqueTenant('step-weight');
  let caller = '';

  const names = async (query: string): Promise<string[]> => {
    const response = await call(ctx.app, 'POST', '/v1/discover', { token: caller, body: { query, top_k: 3 } });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json<DiscoverResponse>();
    expect(body.search_mode).toBe('hybrid');
    return body.tools.map((t) => t.name);
  };

  describe('POST /v1/discover, a request naming several steps', () => {
    it('ranks first the tool a step\'s words name, over the one its vectors lean to', async () => {
      const publisher = await token({ tenant, scopes: [PUBLISH] });
      for (const [name, description] of Object.entries(TOOLS)) {
        const body = toolDocument({ name, description: `${name.replace(/_/g, ' ')}: ${description}`, summary: undefined, not_for: undefined, aliases: [], examples: [], tags: [], category: undefined });
        expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body })).statusCode).toBe(201);
      }
      await ctx.flush();
      caller = await token({ tenant, scopes: [] });

      const steps = await names('Export the ledger to CSV, then email the report to finance');
      expect(steps[0]).toBe('export_ledger');
      expect(steps).toContain('email_report');
      // One step with the same vectors weighs both legs alike, and the vector leg's choice leads.
      expect((await names('Email the report to finance'))[0]).toBe('ledger_summary');
    });
  });
});
