import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';

import { type Database, rowsOf } from '../../src/db/client.js';
import { bearer } from '../helpers/app.js';

/** Rows a tenant owns in every table a write touches: a rejected write must leave them unchanged. */
export async function tenantFootprint(database: Database, tenant: string): Promise<Record<string, number>> {
  const [row] = await rowsOf<Record<string, number>>(
    database.db.execute(`
      select (select count(*)::int from tools where tenant_id = '${tenant.replace(/'/g, "''")}') as tools,
             (select count(*)::int from tool_versions where tenant_id = '${tenant.replace(/'/g, "''")}') as versions,
             (select count(*)::int from tool_terms where tenant_id = '${tenant.replace(/'/g, "''")}') as terms,
             (select count(*)::int from audit_log where tenant_id = '${tenant.replace(/'/g, "''")}') as audit`),
  );
  return row!;
}

/** POST/PUT with a raw (possibly malformed) JSON text. */
export function rawJson(app: FastifyInstance, method: 'POST' | 'PUT', url: string, tokenValue: string, payload: string): Promise<LightMyRequestResponse> {
  return app.inject({ method, url, headers: { ...bearer(tokenValue), 'content-type': 'application/json' }, payload });
}

/** An error body in the contract's shape that gives nothing internal away. */
export function expectCleanError(res: LightMyRequestResponse, status?: number): void {
  if (status !== undefined) expect(res.statusCode, res.body.slice(0, 500)).toBe(status);
  expect(res.statusCode).toBeGreaterThanOrEqual(400);
  expect(res.statusCode, res.body.slice(0, 500)).not.toBe(500);
  const body = res.json() as { error: { code: string; message: string; request_id: string } };
  expect(body.error).toMatchObject({ code: expect.any(String), message: expect.any(String), request_id: expect.any(String) });
  expect(res.body).not.toMatch(/\n\s+at |node_modules|\/src\/|\.ts:\d+|stack|SELECT |select .* from |syntax error at/i);
}
