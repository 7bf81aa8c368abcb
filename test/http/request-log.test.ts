import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildApp } from '../../src/app.js';
import { call, testConfig, testDependencies } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

type LogLine = Record<string, unknown> & { msg?: string; reqId?: string };

const SECRET_ARGUMENT = 'inv-4242-do-not-log-me';

/**
 * Request logs say who called and about which tool: the tenant, the subject as the token gives
 * it, the tool's name; never the token, the Authorization header, or an argument's value.
 * The app logs through a pino instance writing to memory, as the server's would to stdout.
 */
forEachDatabase((db) => {
  describe('request logs', () => {
    const tenant = uniqueTenant('logs');
    const lines: string[] = [];
    let app: FastifyInstance;
    let publisher: string;
    let agent: string;

    /** The parsed lines of one request, by the request id its response carries. */
    const linesOf = (response: LightMyRequestResponse): LogLine[] =>
      lines.map((line) => JSON.parse(line) as LogLine).filter((line) => line.reqId === response.headers['x-request-id']);
    const completed = (response: LightMyRequestResponse): LogLine => {
      const line = linesOf(response).find((l) => l.msg === 'request completed');
      expect(line).toBeDefined();
      return line!;
    };

    beforeAll(async () => {
      const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
      app = await buildApp(testDependencies(testConfig({ LOG_LEVEL: 'info' }), db.database), logger);
      await app.ready();
      publisher = await token({ tenant, scopes: [PUBLISH], sub: 'ci-pipeline' });
      agent = await token({ tenant, scopes: [], sub: 'user:ada@example.com' });
    });

    afterAll(async () => {
      await app?.close();
    });

    it('a publish names the tenant, the subject and the tool it publishes', async () => {
      const response = await call(app, 'POST', '/v1/tools', { token: publisher, body: toolDocument() });
      expect(response.statusCode).toBe(201);
      expect(completed(response)).toMatchObject({ tenant, subject: 'ci-pipeline', tool: 'issue_refund' });
    });

    it('a discover names the tenant and the subject', async () => {
      const response = await call(app, 'POST', '/v1/discover', { token: agent, body: { query: 'refund the broken purchase' } });
      expect(response.statusCode).toBe(200);
      expect(completed(response)).toMatchObject({ tenant, subject: 'user:ada@example.com', res: { statusCode: 200 } });
    });

    it('an authorize names the tenant, the subject and the tool, and no argument value', async () => {
      const response = await call(app, 'POST', '/v1/authorize', { token: agent, body: { tool: 'issue_refund', arguments: { invoice_id: SECRET_ARGUMENT } } });
      expect(response.json<{ decision: string }>().decision).toBe('allow');
      expect(completed(response)).toMatchObject({ tenant, subject: 'user:ada@example.com', tool: 'issue_refund' });
      expect(JSON.stringify(linesOf(response))).not.toContain(SECRET_ARGUMENT);
    });

    it('a tool read names the tool of its path; a refused token names no one', async () => {
      const read = await call(app, 'GET', '/v1/tools/issue_refund', { token: agent });
      expect(completed(read)).toMatchObject({ tenant, tool: 'issue_refund' });
      const refused = await call(app, 'POST', '/v1/discover', { token: `${agent}x`, body: { query: 'refund' } });
      expect(refused.statusCode).toBe(401);
      expect(completed(refused)).not.toHaveProperty('tenant');
    });

    it('never writes a token or an Authorization header value', () => {
      const all = lines.join('\n');
      expect(lines.length).toBeGreaterThan(8);
      for (const value of [publisher, agent, publisher.split('.')[2]!, agent.split('.')[2]!]) expect(all).not.toContain(value);
      expect(all.toLowerCase()).not.toContain('bearer');
      expect(all).not.toContain(SECRET_ARGUMENT);
    });
  });
});
