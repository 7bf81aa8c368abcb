import { beforeAll, describe, expect, it } from 'vitest';

import { useDiscoveryApp } from '../discovery/helpers.js';
import { call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';

interface DecisionBody {
  decision: 'allow' | 'deny';
  reasons: { code: string; message: string; pointer?: string }[];
  tool: { name: string; version: string | null };
}

const refund = () =>
  toolDocument({
    name: 'issue_refund',
    required_scopes: ['billing:write'],
    policy: [{ id: 'large-refund', when: [{ pointer: '/amount', op: 'gt', value: 500 }], require_scopes: ['billing:admin'], message: 'refunds above 500 need billing:admin' }],
  });

forEachDatabase((db) => {
  describe('POST /v1/authorize', () => {
    const ctx = useDiscoveryApp(db, () => undefined);
    const tenant = uniqueTenant('authz');
    let publisher: string;
    let writer: string;
    let reader: string;

    beforeAll(async () => {
      publisher = await token({ tenant, scopes: [PUBLISH] });
      writer = await token({ tenant, scopes: ['billing:write'], sub: 'agent-7' });
      reader = await token({ tenant, scopes: ['billing:read'] });
      expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: refund() })).statusCode).toBe(201);
      const lookup = toolDocument({ name: 'lookup_invoice', required_scopes: [], side_effects: false, sensitivity: 'low', policy: undefined });
      expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: lookup })).statusCode).toBe(201);
    });

    const authorize = async (tokenValue: string | undefined, body: unknown) => {
      const response = await call(ctx.app, 'POST', '/v1/authorize', { token: tokenValue, body });
      return { status: response.statusCode, body: response.json<DecisionBody>() };
    };

    it('allows a call within scopes, schema and policy', async () => {
      const { status, body } = await authorize(writer, { tool: 'issue_refund', arguments: { invoice_id: 'inv_1', amount: 20 } });
      expect(status).toBe(200);
      expect(body).toEqual({ decision: 'allow', reasons: [], tool: { name: 'issue_refund', version: '1.0.0' } });
    });

    it('denies invalid arguments with a pointer for each problem', async () => {
      const { body } = await authorize(writer, { tool: 'issue_refund', arguments: { amount: 'ten', extra: true } });
      expect(body.decision).toBe('deny');
      expect(body.reasons.map((r) => [r.code, r.pointer])).toEqual(
        expect.arrayContaining([
          ['invalid_arguments', '/arguments/invoice_id'],
          ['invalid_arguments', '/arguments/amount'],
          ['invalid_arguments', '/arguments/extra'],
        ]),
      );
    });

    it('applies the tool\'s policy rules after the schema check', async () => {
      const { body } = await authorize(writer, { tool: 'issue_refund', arguments: { invoice_id: 'inv_1', amount: 900 } });
      expect(body.reasons).toEqual([{ code: 'policy_denied', message: 'refunds above 500 need billing:admin' }]);
    });

    it('denies a pinned version that is not the current one', async () => {
      const { body } = await authorize(writer, { tool: 'issue_refund', version: '0.9.0', arguments: { invoice_id: 'inv_1' } });
      expect(body.reasons.map((r) => r.code)).toEqual(['version_mismatch']);
    });

    it('answers a missing scope, another tenant\'s tool and an unknown tool identically', async () => {
      const missingScope = await authorize(reader, { tool: 'issue_refund', arguments: { invoice_id: 'inv_1' } });
      const stranger = await authorize(await token({ tenant: uniqueTenant('x'), scopes: ['billing:write'] }), { tool: 'issue_refund', arguments: { invoice_id: 'inv_1' } });
      const unknown = await authorize(reader, { tool: 'no_such_tool', arguments: {} });
      for (const result of [missingScope, stranger]) {
        expect(result.body).toEqual({ ...unknown.body, tool: { name: 'issue_refund', version: null }, reasons: [{ code: 'unknown_tool', message: "tool 'issue_refund' is not available to this caller" }] });
      }
      expect(unknown.body.decision).toBe('deny');
    });

    it('records every decision in the tenant\'s audit log, with the true reason for publishers', async () => {
      await authorize(reader, { tool: 'issue_refund', arguments: { invoice_id: 'inv_audit' } });
      const audit = await call(ctx.app, 'GET', '/v1/audit?action=authorize&limit=5', { token: publisher });
      expect(audit.statusCode).toBe(200);
      const [latest] = audit.json<{ entries: { decision: string; reasons: { code: string; missing?: string[] }[]; tool: { name: string } }[] }>().entries;
      expect(latest).toMatchObject({ decision: 'deny', tool: { name: 'issue_refund' }, reasons: [{ code: 'missing_scopes', missing: ['billing:write'] }] });
      expect((await call(ctx.app, 'GET', '/v1/audit', { token: reader })).statusCode).toBe(403);
      const other = await call(ctx.app, 'GET', '/v1/audit', { token: await token({ tenant: uniqueTenant('y'), scopes: [PUBLISH] }) });
      expect(other.json().entries).toEqual([]);
    });

    it('takes a tightened scope and a retirement into account on the very next call', async () => {
      const ok = await authorize(reader, { tool: 'lookup_invoice', arguments: { invoice_id: 'inv_1' } });
      expect(ok.body.decision).toBe('allow');
      const tightened = toolDocument({ name: 'lookup_invoice', version: '1.1.0', required_scopes: ['billing:admin'], sensitivity: 'low', policy: undefined });
      expect((await call(ctx.app, 'PUT', '/v1/tools/lookup_invoice', { token: publisher, body: tightened })).statusCode).toBe(200);
      expect((await authorize(reader, { tool: 'lookup_invoice', arguments: { invoice_id: 'inv_1' } })).body.decision).toBe('deny');
      const admin = await token({ tenant, scopes: ['billing:admin'] });
      expect((await authorize(admin, { tool: 'lookup_invoice', arguments: { invoice_id: 'inv_1' } })).body.decision).toBe('allow');
      expect((await call(ctx.app, 'DELETE', '/v1/tools/lookup_invoice', { token: publisher })).statusCode).toBe(200);
      const retired = await authorize(admin, { tool: 'lookup_invoice', arguments: { invoice_id: 'inv_1' } });
      expect(retired.body.reasons.map((r) => r.code)).toEqual(['retired']);
    });

    it('checks a republished schema and policy from the very next call', async () => {
      const doc = (version: string, extra: Record<string, unknown>) => toolDocument({ name: 'rules_tool', version, required_scopes: [], ...extra });
      expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: doc('1.0.0', { policy: undefined }) })).statusCode).toBe(201);
      const body = { tool: 'rules_tool', arguments: { invoice_id: 'inv_1', amount: 900 } };
      expect((await authorize(writer, body)).body.decision).toBe('allow');
      expect((await authorize(writer, body)).body.decision).toBe('allow');
      const capped = [{ id: 'cap', when: [{ pointer: '/amount', op: 'gt', value: 500 }], require_scopes: ['billing:admin'], message: 'above 500 needs billing:admin' }];
      expect((await call(ctx.app, 'PUT', '/v1/tools/rules_tool', { token: publisher, body: doc('1.1.0', { policy: capped }) })).statusCode).toBe(200);
      expect((await authorize(writer, body)).body.reasons.map((r) => r.code)).toEqual(['policy_denied']);
      const strict = { type: 'object', properties: { invoice_id: { type: 'string', pattern: '^INV-', description: 'The invoice, as INV-…' } }, required: ['invoice_id'], additionalProperties: false };
      expect((await call(ctx.app, 'PUT', '/v1/tools/rules_tool', { token: publisher, body: doc('1.2.0', { policy: undefined, parameters: strict }) })).statusCode).toBe(200);
      const denied = await authorize(writer, { tool: 'rules_tool', arguments: { invoice_id: 'inv_1' } });
      expect(denied.body.reasons.map((r) => [r.code, r.pointer])).toEqual([['invalid_arguments', '/arguments/invoice_id']]);
      expect((await authorize(writer, { tool: 'rules_tool', arguments: { invoice_id: 'INV-1' } })).body.decision).toBe('allow');
    });

    it('never lets a call through once a racing retirement has committed', async () => {
      const doc = toolDocument({ name: 'racy_tool', required_scopes: [], policy: undefined });
      expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: doc })).statusCode).toBe(201);
      const body = { tool: 'racy_tool', arguments: { invoice_id: 'inv_1' } };
      let retiredAt = Number.POSITIVE_INFINITY;
      const results: { started: number; decision: string }[] = [];
      const caller = async () => {
        for (let i = 0; i < 15; i += 1) {
          const started = performance.now();
          const { body: decision } = await authorize(writer, body);
          results.push({ started, decision: decision.decision });
        }
      };
      const retire = (async () => {
        await new Promise((resolve) => setTimeout(resolve, 5));
        expect((await call(ctx.app, 'DELETE', '/v1/tools/racy_tool', { token: publisher })).statusCode).toBe(200);
        retiredAt = performance.now();
      })();
      await Promise.all([caller(), caller(), caller(), retire]);
      const after = results.filter((r) => r.started > retiredAt);
      expect(after.length).toBeGreaterThan(0);
      expect(after.every((r) => r.decision === 'deny')).toBe(true);
    });

    it.each([
      [{ arguments: {} }, '/tool'],
      [{ tool: 'issue_refund' }, '/arguments'],
      [{ tool: 'bad name!', arguments: {} }, '/tool'],
      [{ tool: 'issue_refund', arguments: [] }, '/arguments'],
      [{ tool: 'issue_refund', arguments: {}, tenant_id: 'other' }, '/tenant_id'],
      [{ tool: 'issue_refund', arguments: {}, discovery_id: 'not-a-uuid' }, '/discovery_id'],
    ])('rejects malformed request %j with a 400 naming %s', async (body, pointer) => {
      const response = await call(ctx.app, 'POST', '/v1/authorize', { token: writer, body });
      expect(response.statusCode).toBe(400);
      expect(response.json().error.details.map((d: { pointer: string }) => d.pointer)).toContain(pointer);
    });

    it('rejects a bad token with 401', async () => {
      expect((await authorize(undefined, { tool: 'issue_refund', arguments: {} })).status).toBe(401);
      expect((await authorize(`${writer}x`, { tool: 'issue_refund', arguments: {} })).status).toBe(401);
    });
  });
});
