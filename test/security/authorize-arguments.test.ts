import { beforeAll, describe, expect, it } from 'vitest';

import { useDiscoveryApp } from '../discovery/helpers.js';
import { call } from '../helpers/app.js';
import { forEachDatabase } from '../helpers/databases.js';
import { toolDocument } from '../helpers/fixtures.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';
import { expectCleanError, rawJson } from './helpers.js';

/**
 * Arguments must mean to the check what they mean to the gateway that executes them (issue 13,
 * findings 2 and 6), on every database leg: policy values compare structurally whatever order
 * the database stored their keys in, and a body another parser could read differently (a
 * duplicate key, a number JSON.parse rounds) is refused with a pointer.
 */
forEachDatabase((db) => {
  describe('POST /v1/authorize reads arguments exactly', () => {
    const ctx = useDiscoveryApp(db, () => undefined);
    const tenant = uniqueTenant('args');
    let agent: string;

    beforeAll(async () => {
      const publisher = await token({ tenant, scopes: [PUBLISH] });
      agent = await token({ tenant, scopes: [] });
      const transfer = toolDocument({
        name: 'grant_access',
        parameters: {
          type: 'object',
          properties: {
            target: { type: 'object', description: 'who gets access', properties: { type: { type: 'string' }, id: { type: 'string' } } },
            amount: { type: 'number', minimum: 0, description: 'quota' },
            count: { type: 'integer', description: 'how many' },
          },
          required: ['target'],
          additionalProperties: false,
        },
        policy: [
          { id: 'no-root', when: [{ pointer: '/target', op: 'eq', value: { type: 'user', id: 'root' } }], deny: true },
          { id: 'no-admins', when: [{ pointer: '/target', op: 'in', value: [{ type: 'group', id: 'admins', tags: ['a', { x: 1, y: 2 }] }] }], deny: true },
          { id: 'big', when: [{ pointer: '/amount', op: 'gt', value: 500 }], deny: true },
        ],
      });
      expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: transfer })).statusCode).toBe(201);
      // The schema types nothing: a rule must not be sidestepped by sending "900" or [900].
      const untyped = toolDocument({
        name: 'untyped_refund',
        parameters: { type: 'object', properties: { amount: { description: 'how much' }, account: { description: 'whose' } } },
        policy: [
          { id: 'big', when: [{ pointer: '/amount', op: 'gt', value: 500 }], deny: true },
          { id: 'no-root', when: [{ pointer: '/account', op: 'in', value: ['root'] }], deny: true },
        ],
      });
      expect((await call(ctx.app, 'POST', '/v1/tools', { token: publisher, body: untyped })).statusCode).toBe(201);
    });

    const decide = async (args: string) => {
      const res = await rawJson(ctx.app, 'POST', '/v1/authorize', agent, `{"tool":"grant_access","arguments":${args}}`);
      return res;
    };

    it('denies an object value equal to a rule\'s, in any key order', async () => {
      for (const target of ['{"type":"user","id":"root"}', '{"id":"root","type":"user"}']) {
        const res = await decide(`{"target":${target}}`);
        expect(res.json()).toMatchObject({ decision: 'deny', reasons: [{ code: 'policy_denied' }] });
      }
      const nested = await decide('{"target":{"tags":["a",{"y":2,"x":1}],"id":"admins","type":"group"}}');
      expect(nested.json()).toMatchObject({ decision: 'deny' });
      expect((await decide('{"target":{"type":"user","id":"alice"}}')).json().decision).toBe('allow');
    });

    it('refuses duplicate keys with a pointer, never picking one', async () => {
      const res = await decide('{"target":{"type":"user","id":"alice"},"amount":900,"amount":40}');
      expectCleanError(res, 400);
      expect(res.json().error.details).toEqual([expect.objectContaining({ pointer: '/arguments/amount', message: expect.stringContaining('duplicate key') })]);
    });

    it('refuses numbers that do not survive parsing exactly, with a pointer', async () => {
      for (const [field, literal] of [['amount', '500.00000000000001'], ['amount', '-1e-400'], ['count', '1e400'], ['count', '9007199254740993']]) {
        const res = await decide(`{"target":{"type":"user","id":"alice"},"${field}":${literal}}`);
        expectCleanError(res, 400);
        expect(res.json().error.details).toEqual([expect.objectContaining({ pointer: `/arguments/${field}`, message: expect.stringContaining('exactly') })]);
      }
    });

    it('accepts ordinary numbers as before', async () => {
      for (const [amount, decision] of [['40', 'allow'], ['40.5', 'allow'], ['19.99', 'allow'], ['0.1', 'allow'], ['1e2', 'allow'], ['500', 'allow'], ['-0', 'allow'], ['500.5', 'deny']] as const) {
        const res = await decide(`{"target":{"type":"user","id":"alice"},"amount":${amount},"count":3}`);
        expect(res.statusCode, amount).toBe(200);
        expect(res.json().decision, amount).toBe(decision);
      }
    });

    it('denies a numeric rule on a value that is not a number, naming the pointer (issue 32, finding 7)', async () => {
      for (const amount of ['"900"', '[900]', '{"n":900}', 'true', '"40"']) {
        const res = await rawJson(ctx.app, 'POST', '/v1/authorize', agent, `{"tool":"untyped_refund","arguments":{"amount":${amount}}}`);
        expect(res.statusCode, amount).toBe(200);
        expect(res.json(), amount).toMatchObject({ decision: 'deny', reasons: [{ code: 'policy_denied', pointer: '/arguments/amount', message: expect.stringContaining('must be a number') }] });
      }
      for (const args of ['{"amount":40}', '{"account":"alice"}', '{}']) {
        const res = await rawJson(ctx.app, 'POST', '/v1/authorize', agent, `{"tool":"untyped_refund","arguments":${args}}`);
        expect(res.json().decision, args).toBe('allow');
      }
    });

    it('refuses NUL and unpaired surrogates in argument values and keys, nested, with the path (issue 32, finding 8)', async () => {
      // "root\ud800" used to slip past `in ["root"]`; a NUL key reached the audit entry's pointers.
      for (const [args, pointer] of [
        ['{"account":"root\\ud800"}', '/arguments/account'],
        ['{"account":"root\\udc00x"}', '/arguments/account'],
        ['{"account":"root\\u0000"}', '/arguments/account'],
        ['{"a\\u0000b":1}', '/arguments/a\u0000b'],
        ['{"amount":{"deep":["ok",{"k\\ud800":"v"}]}}', '/arguments/amount/deep/1/k\ud800'],
      ] as const) {
        const res = await rawJson(ctx.app, 'POST', '/v1/authorize', agent, `{"tool":"untyped_refund","arguments":${args}}`);
        expectCleanError(res, 400);
        expect(res.json().error.details, args).toEqual([expect.objectContaining({ pointer, in: 'body', message: expect.stringContaining('NUL or unpaired surrogates') })]);
      }
      // A well-formed pair and other control characters are still arguments like any other.
      for (const account of ['"root\\ud83d\\ude00"', '"tab\\there\\u001b[0m"']) {
        const res = await rawJson(ctx.app, 'POST', '/v1/authorize', agent, `{"tool":"untyped_refund","arguments":{"account":${account}}}`);
        expect(res.json().decision, account).toBe('allow');
      }
    });

    it('refuses a body that is not valid UTF-8 instead of reading U+FFFD into it (issue 32, finding 8)', async () => {
      const payload = Buffer.concat([Buffer.from('{"tool":"untyped_refund","arguments":{"account":"root'), Buffer.from([0xff]), Buffer.from('"}}')]);
      const res = await ctx.app.inject({ method: 'POST', url: '/v1/authorize', headers: { authorization: `Bearer ${agent}`, 'content-type': 'application/json' }, payload });
      expectCleanError(res, 400);
      expect(res.json().error.details).toEqual([expect.objectContaining({ message: 'must be valid UTF-8', in: 'body' })]);
    });
  });
});
