import { readFileSync } from 'node:fs';
import { join } from 'node:path';

import { beforeAll, describe, expect, it } from 'vitest';

import { MIGRATIONS_DIR } from '../../src/db/migrate.js';
import { useDiscoveryApp } from '../discovery/helpers.js';
import { call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';
import { expectCleanError } from './helpers.js';

/**
 * Names that look alike must not reach each other (issue 13, finding 7), on every database leg:
 * tenant claims that are not well-formed Unicode are refused (drivers would store `org\ud800` and
 * `org\ufffd` as one tenant), and tool names are unique per tenant in a canonical form.
 */
forEachDatabase((db) => {
  describe('look-alike identities', () => {
    const ctx = useDiscoveryApp(db, () => undefined);

    it('refuses tokens whose tenant, subject or scope has an unpaired surrogate, so look-alike tenants never meet', async () => {
      const base = `org-${uniqueTenant('u')}`;
      // Before: a tool published as `org\ud800` was stored under `org\ufffd` (drivers encode the
      // lone surrogate as U+FFFD), so that tenant read it and its publisher could not.
      for (const tenant of [`${base}\ud800`, `${base}\udfff`]) {
        const res = await call(ctx.app, 'POST', '/v1/tools', { token: await token({ tenant, scopes: [PUBLISH] }), body: toolDocument() });
        expectCleanError(res, 401);
        expect(res.json().error.message).toBe("token claim 'tenant_id' is not well-formed Unicode (it has an unpaired surrogate)");
      }
      const replacement = await token({ tenant: `${base}\ufffd`, scopes: [PUBLISH] });
      expect((await call(ctx.app, 'GET', '/v1/tools/issue_refund', { token: replacement })).statusCode).toBe(404);
      const badSubject = await call(ctx.app, 'GET', '/v1/tools', { token: await token({ tenant: base, sub: 'user\udc00' }) });
      expect(badSubject.json().error.message).toContain("'sub'");
      const badScope = await call(ctx.app, 'GET', '/v1/tools', { token: await token({ tenant: base, scopes: ['billing:\ud83d'] }) });
      expect(badScope.statusCode).toBe(401);
      // Astral characters are well-formed: a tenant may be named with them.
      expect((await call(ctx.app, 'GET', '/v1/tools', { token: await token({ tenant: `${base}\u{1F600}` }) })).statusCode).toBe(200);
    });

    describe('tool names', () => {
      let tenant: string;
      let publisher: string;
      beforeAll(async () => {
        tenant = uniqueTenant('names');
        publisher = await token({ tenant, scopes: [PUBLISH] });
        expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: toolDocument({ name: 'pay_vendor' }) })).statusCode).toBe(201);
      });

      it('refuses a name equal to an existing one ignoring case, separators and trailing separators, naming the existing tool', async () => {
        for (const name of ['Pay_Vendor', 'PAY_VENDOR', 'pay-vendor', 'pay.vendor', 'pay_vendor.', 'pay_vendor_', 'pay__vendor', 'Pay-Vendor--']) {
          const res = await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: toolDocument({ name }) });
          expectCleanError(res, 409);
          expect(res.json().error.message, name).toContain("existing tool 'pay_vendor'");
          expect(res.json().error.details).toEqual([{ pointer: '/name', message: "conflicts with the existing tool 'pay_vendor'" }]);
        }
        const exact = await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: toolDocument({ name: 'pay_vendor' }) });
        expect(exact.statusCode).toBe(409);
        expect(exact.json().error.message).toContain("tool 'pay_vendor' already exists");
      });

      it('still allows distinct names, and the same name in another tenant', async () => {
        expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: toolDocument({ name: 'payvendor' }) })).statusCode).toBe(201);
        expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: toolDocument({ name: 'pay_vendors' }) })).statusCode).toBe(201);
        const other = await token({ tenant: uniqueTenant('names-other'), scopes: [PUBLISH] });
        expect((await call(ctx.app, 'POST', '/v1/tools', { token: other, body: toolDocument({ name: 'Pay-Vendor' }) })).statusCode).toBe(201);
      });

      it('keeps tools that collided before the rule: the migration never fails, and they stay publishable', async () => {
        const migration = readFileSync(join(MIGRATIONS_DIR, '0013_canonical_tool_names.sql'), 'utf8');
        const legacy = uniqueTenant('legacy');
        const legacyPublisher = await token({ tenant: legacy, scopes: [PUBLISH] });
        expect((await call(ctx.app, 'POST', '/v1/tools', { token: legacyPublisher, body: toolDocument({ name: 'send_invoice' }) })).statusCode).toBe(201);
        // Back to the schema before the rule, where look-alikes could be registered: copy the row.
        const copy = (name: string) => `
          insert into tools (tenant_id, name, version, revision, status, summary, description, not_for, aliases, examples, tags, category,
                             required_scopes, sensitivity, side_effects, document, content_hash, token_costs,
                             search_name, search_card, search_body, search_params, search_learned)
          select tenant_id, '${name}', version, revision, status, summary, description, not_for, aliases, examples, tags, category,
                 required_scopes, sensitivity, side_effects, jsonb_set(document, '{name}', '"${name}"'), content_hash, token_costs,
                 search_name, search_card, search_body, search_params, search_learned
          from tools where tenant_id = '${legacy}' and name = 'send_invoice';`;
        await db.database.withMigrationLock((session) =>
          session.exec(
            `drop index tools_tenant_canonical_name_idx; alter table tools drop column canonical_name, drop column canonical_name_legacy; ${copy('Send_Invoice')} ${copy('send-invoice')}`,
          ),
        );
        // As migrate() runs every file: deferred triggers fire per statement (src/db/migrate.ts).
        await db.database.withMigrationLock((session) => session.exec(`set constraints all immediate; ${migration}`));
        for (const name of ['send_invoice', 'Send_Invoice', 'send-invoice']) {
          expect((await call(ctx.app, 'GET', `/v1/tools/${name}`, { token: legacyPublisher })).statusCode).toBe(200);
        }
        const republished = await call(ctx.app, 'PUT', '/v1/tools/Send_Invoice', { token: legacyPublisher, body: toolDocument({ name: 'Send_Invoice', version: '1.1.0', description: 'Refund a paid invoice, new text.' }) });
        expect(republished.statusCode).toBe(200);
        const fresh = await call(ctx.app, 'POST', '/v1/tools', { token: legacyPublisher, body: toolDocument({ name: 'SEND.INVOICE' }) });
        expect(fresh.statusCode).toBe(409);
        expect(fresh.json().error.message).toContain("existing tool 'send_invoice'");
      });
    });
  });
});
