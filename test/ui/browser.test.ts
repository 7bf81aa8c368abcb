import { existsSync, mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';

import type { FastifyInstance } from 'fastify';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { buildApp } from '../../src/app.js';
import { call, testConfig, testDependencies } from '../helpers/app.js';
import { databaseLegs, type TestDatabase } from '../helpers/databases.js';
import { HashingEmbedder } from '../helpers/embedders.js';
import { PUBLISH, token, uniqueTenant } from '../helpers/tokens.js';
import { READER_SCOPES, uiCatalog } from './catalog.js';

/**
 * The catalog UI in a real headless Chromium (Debian's /usr/bin/chromium driven by playwright-core)
 * against the app listening on 127.0.0.1:0, on in-process PGlite. Screenshots go to
 * test-results/ui/ (git-ignored). Without Chromium the suite is skipped and its title says why.
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SCREENSHOTS = 'test-results/ui';
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const skipReason = existsSync(CHROMIUM) ? undefined : `${CHROMIUM} is missing (apt-get install -y chromium, or set CHROMIUM_PATH)`;
const suite = skipReason ? describe.skip : describe;

suite(skipReason ? `catalog UI in headless Chromium: SKIPPED, ${skipReason}` : 'catalog UI in headless Chromium (PGlite in-process)', () => {
  const tenant = uniqueTenant('ui');
  let database: TestDatabase;
  let app: FastifyInstance;
  let origin: string;
  let browser: Browser;
  let reader: string;
  let publisher: string;
  const offOrigin: string[] = [];
  const problems: string[] = [];

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    database = await databaseLegs().find((leg) => leg.name === 'pglite')!.open();
    app = await buildApp({ ...testDependencies(testConfig(), database.database), embedder: new HashingEmbedder() });
    await app.listen({ host: '127.0.0.1', port: 0 });
    origin = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    publisher = await token({ tenant, sub: 'alice@example.com', scopes: [PUBLISH, ...READER_SCOPES] });
    reader = await token({ tenant, sub: 'agent-7', scopes: READER_SCOPES });
    for (const doc of uiCatalog()) expect((await call(app, 'POST', '/v1/tools', { token: publisher, body: doc })).statusCode).toBe(201);
    const bumped = { ...uiCatalog()[0]!, version: '1.1.0', summary: 'Refund a paid invoice in full or in part, to the original payment method.' };
    expect((await call(app, 'PUT', '/v1/tools/issue_refund', { token: publisher, body: bumped })).statusCode).toBe(200);
    const wide = {
      name: 'wide_schema_tool', version: '1.0.0', summary: 'First line of the summary.\nSecond line.', description: 'Paragraph one.\n\nParagraph two.', required_scopes: ['ui:wide'],
      parameters: { type: 'object', properties: { token: { type: 'string', description: `An opaque token such as ${'averyveryverylongidentifier'.repeat(12)}` } } },
    };
    expect((await call(app, 'POST', '/v1/tools', { token: publisher, body: wide })).statusCode).toBe(201);
    await app.indexer?.flush();
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  });

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    await database?.close();
  });

  /** A fresh page that refuses (and records) any request leaving the service's origin. */
  async function openPage(width = 1280): Promise<Page> {
    const page = await browser.newPage({ viewport: { width, height: 900 }, colorScheme: 'light' });
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(origin) || url.startsWith('data:')) return route.continue();
      offOrigin.push(url);
      return route.abort();
    });
    page.on('console', (message) => {
      if (message.type() === 'error' || /Content Security Policy/i.test(message.text())) problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(error.message));
    return page;
  }

  const pasteToken = async (page: Page, value: string) => {
    await page.getByLabel('Bearer token').fill(value);
    await page.getByLabel('Bearer token').press('Enter');
  };

  it('serves the page with a strict Content-Security-Policy and labelled controls', async () => {
    const page = await openPage();
    const response = await page.goto(`${origin}/ui`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
    expect(await page.title()).toBe('Tool registry');
    // A string, because the test compiles without DOM types.
    const unlabelled = await page.evaluate("[...document.querySelectorAll('input, select, textarea')].filter((c) => c.labels.length === 0).map((c) => c.id)");
    expect(unlabelled).toEqual([]);
    await page.close();
  });

  it('browses the tools the token may see, page by page, with versions and token costs', async () => {
    const page = await openPage();
    await page.goto(`${origin}/ui/`);
    await pasteToken(page, reader);
    await expect.poll(() => page.locator('#catalog > li').count()).toBe(24);
    await expect.poll(() => page.locator('#catalog-status').textContent()).toBe('25 tools · showing 24');
    await expect.poll(() => page.locator('#token-help').textContent()).toMatch(/agent-7.*in tenant.*billing:read/s);
    await page.screenshot({ path: `${SCREENSHOTS}/catalog.png` });

    await page.getByRole('button', { name: 'Load more' }).click();
    await expect.poll(() => page.locator('#catalog > li').count()).toBe(25);
    expect(await page.getByRole('button', { name: 'Load more' }).isHidden()).toBe(true);

    const names = await page.locator('#catalog .tool-name').allTextContents();
    expect(names).toContain('issue_refund');
    for (const admin of ['void_invoice', 'rollback_release', 'merge_contacts']) expect(names).not.toContain(admin);

    const refund = page.locator('li[data-tool="issue_refund"]');
    expect(await refund.locator('.badge.version').textContent()).toBe('v1.1.0');
    expect(await refund.locator('.costs').textContent()).toMatch(/openai:?\s*\d+/);
    await refund.getByText('Full schema').click();
    await expect.poll(() => refund.locator('pre.schema').first().textContent()).toContain('"reason"');
    await page.close();
  });

  it('searches and filters the whole catalog with a total count; schemas wrap, line breaks stay', async () => {
    const page = await openPage(900);
    await page.goto(`${origin}/ui/`);
    await pasteToken(page, publisher);
    await expect.poll(() => page.locator('#catalog-status').textContent()).toMatch(/^\d+ tools · showing 24$/);
    const total = Number((await page.locator('#catalog-status').textContent())!.split(' ')[0]);

    await page.getByLabel('Search', { exact: true }).fill('invoice');
    await expect.poll(() => page.locator('#catalog .tool-name').allTextContents()).toEqual(['get_invoice', 'issue_refund', 'list_invoices', 'void_invoice']);
    expect(await page.locator('#catalog-status').textContent()).toBe(`${total} tools · 4 matches`);
    // Every word must match, in any field: aliases and tags count.
    await page.getByLabel('Search', { exact: true }).fill('invoice lines taxes');
    await expect.poll(() => page.locator('#catalog .tool-name').allTextContents()).toEqual(['get_invoice']);
    await page.getByLabel('Search', { exact: true }).fill('');
    await page.getByLabel('Category', { exact: true }).selectOption('devops');
    await page.getByLabel('Effects', { exact: true }).selectOption('read-only');
    await expect.poll(() => page.locator('#catalog .tool-name').allTextContents()).toEqual(['get_service_logs', 'query_metrics']);
    await page.getByLabel('Category', { exact: true }).selectOption('');
    await page.getByLabel('Effects', { exact: true }).selectOption('');
    await page.getByLabel('Tag', { exact: true }).selectOption('escalation');
    await expect.poll(() => page.locator('#catalog .tool-name').allTextContents()).toEqual(['escalate_ticket']);
    await page.getByLabel('Tag', { exact: true }).selectOption('');

    await page.getByLabel('Search', { exact: true }).fill('wide_schema_tool');
    const wide = page.locator('li[data-tool="wide_schema_tool"]');
    await expect.poll(() => wide.count()).toBe(1);
    expect(await wide.locator('.summary-text').innerText()).toBe('First line of the summary.\nSecond line.');
    await wide.getByText('Full schema').click();
    const schema = wide.locator('pre.schema').first();
    await expect.poll(() => schema.textContent()).toContain('averyveryverylongidentifier');
    // Wrapped: nothing is cut at the right edge (no horizontal scrolling inside the block).
    const fits = "(() => { const n = document.querySelector('li[data-tool=\"wide_schema_tool\"] pre.schema'); return [n.scrollWidth, n.clientWidth]; })()";
    const [scrollWidth, clientWidth] = (await page.evaluate(fits)) as [number, number];
    expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
    expect(await wide.locator('.description').innerText()).toContain('Paragraph one.\n\nParagraph two.');
    await page.screenshot({ path: `${SCREENSHOTS}/search.png`, fullPage: true });
    await page.close();
  });

  it('shows publishers the version history of a tool', async () => {
    const page = await openPage();
    await page.goto(`${origin}/ui/`);
    await pasteToken(page, publisher);
    const refund = page.locator('li[data-tool="issue_refund"]');
    await refund.getByText('Full schema').click();
    await expect.poll(() => refund.locator('.versions li').allTextContents()).toEqual([expect.stringMatching(/^1\.1\.0 · revision 2 · .* · alice@example\.com$/), expect.stringMatching(/^1\.0\.0 · revision 1/)]);
    await refund.scrollIntoViewIfNeeded();
    await refund.screenshot({ path: `${SCREENSHOTS}/catalog-details.png` });
    await page.close();
  });

  it('runs a discovery from the keyboard and shows scores, mode, confidence, tokens and schemas', async () => {
    const page = await openPage();
    await page.goto(`${origin}/ui/`);
    await pasteToken(page, reader);
    await page.getByRole('tab', { name: 'Catalog' }).focus();
    await page.keyboard.press('ArrowRight');
    expect(await page.getByRole('tab', { name: 'Discovery playground' }).getAttribute('aria-selected')).toBe('true');

    await page.getByLabel('Top k').fill('4');
    await page.getByLabel('Schema format').selectOption('anthropic');
    await page.getByLabel("Request, in the user's words").fill('refund the paid invoice to the customer');
    await page.getByLabel("Request, in the user's words").press('Enter');

    await expect.poll(() => page.locator('#results > li.result').count()).toBeGreaterThan(0);
    const results = page.locator('#results > li.result');
    expect(await results.count()).toBeLessThanOrEqual(4);
    expect(await results.first().getAttribute('data-tool')).toBe('issue_refund');
    const summary = await page.locator('#discover-summary').textContent();
    expect(summary).toMatch(/search mode\s*hybrid/);
    expect(summary).toMatch(/confidence\s*(ok|low)/);
    expect(summary).toMatch(/anthropic tokens\s*[\d,]+ of [\d,]+/);
    expect(await results.first().locator('.score strong').textContent()).toMatch(/^\d\.\d{3}$/);
    expect(await results.first().locator('pre.schema').textContent()).toContain('"input_schema"');
    const shown = await page.locator('#results .tool-name').allTextContents();
    for (const admin of ['void_invoice', 'rollback_release', 'merge_contacts']) expect(shown).not.toContain(admin);
    await page.screenshot({ path: `${SCREENSHOTS}/discovery.png`, fullPage: true });

    // The token survives a reload (session storage) and is gone after "Forget".
    await page.reload();
    await expect.poll(() => page.locator('#catalog > li').count()).toBe(24);
    await page.getByRole('button', { name: 'Forget' }).click();
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    expect(await page.locator('#catalog > li').count()).toBe(0);
    await page.close();
  });

  it('explains a rejected token instead of failing silently', async () => {
    const page = await openPage(420);
    await page.goto(`${origin}/ui/`);
    await pasteToken(page, 'not-a-token');
    await expect.poll(() => page.getByRole('alert').textContent()).toMatch(/401 unauthorized/);
    await page.screenshot({ path: `${SCREENSHOTS}/rejected-token-narrow.png` });
    await page.close();
  });

  it('loaded nothing from other origins and broke no CSP rule', () => {
    expect(offOrigin).toEqual([]);
    // The rejected-token case makes the browser log its 401 as a failed resource load: expected.
    expect(problems.filter((p) => !/status of 401/.test(p))).toEqual([]);
  });
});
