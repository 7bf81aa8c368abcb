import { existsSync } from 'node:fs';

import { toStrictJsonSchema } from 'openai/lib/transform';
import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import type { FunctionTool } from 'openai/resources/responses/responses';
import { describe, expect, it } from 'vitest';

import { loadDataset } from '../../src/eval/dataset.js';
import { strictCoverage } from '../../src/eval/strict-coverage.js';
import { type OpenAiStrictChatTool, type OpenAiStrictResponsesTool, renderStrict } from '../../src/tools/formats.js';
import { compileSchema } from '../../src/tools/json-schema.js';
import { dropAbsentNulls } from '../../src/tools/strict-nulls.js';

// dev-data is kept with the tests (test/fixtures/metatool-dev); dev-mcp is read from
// ../shared/bench beside the repository (CI lays it there), with its figures asserted exactly.
const SETS = [
  { name: 'dev-data', dir: new URL('../fixtures/metatool-dev/', import.meta.url).pathname, tools: 199, rendered: 199 },
  { name: 'dev-mcp', dir: new URL('../../../shared/bench/dev-mcp/', import.meta.url).pathname, tools: 1195, rendered: 1087 },
].filter((set) => existsSync(set.dir));

// Type-level: the strict renderings are what the `openai` package types as tools (a compile error otherwise).
const asChatTool = (tool: OpenAiStrictChatTool): ChatCompletionFunctionTool => tool;
const asResponsesTool = (tool: OpenAiStrictResponsesTool): FunctionTool => tool;

describe('the strict rendering on every tool of the dev sets', () => {
  it('finds the dev-data set at least', () => {
    expect(SETS.map((set) => set.name)).toContain('dev-data');
  });

  for (const set of SETS) {
    it(`${set.name}: renders ${set.rendered} of ${set.tools} tools strict, each accepted by the published rules and left unchanged by the openai package's normalizer`, async () => {
      const { tools } = await loadDataset(set.dir);
      const coverage = strictCoverage(tools);
      expect(coverage.tools).toBe(set.tools);
      expect(coverage.rendered).toBe(set.rendered);
      expect(coverage.refused).toBe(0);
      for (const { name, strict } of coverage.renderings) {
        expect(toStrictJsonSchema(strict as never), name).toEqual(strict);
      }
    });

    it(`${set.name}: a strict call's nulls read as the same call without them, against the original schema`, async () => {
      const { tools } = await loadDataset(set.dir);
      const coverage = strictCoverage(tools);
      let dropped = 0;
      for (const { name, original, strict } of coverage.renderings) {
        const optional = Object.keys((original.properties ?? {}) as object).filter((key) => !((original.required ?? []) as string[]).includes(key));
        const strictCall = Object.fromEntries(optional.map((key) => [key, null]));
        const absent = dropAbsentNulls(original, strictCall);
        const validate = compileSchema(original);
        // Whatever the original says of a call that omits them, it says of the strict call's nulls, unless it accepts the null itself.
        const kept = Object.keys(absent.arguments);
        expect(validate(absent.arguments), name).toEqual(validate(Object.fromEntries(kept.map((key) => [key, null]))));
        expect(kept.every((key) => validate({ [key]: null }).every((issue) => issue.pointer !== `/${key}`)), name).toBe(true);
        dropped += absent.dropped.length;
        // The strict schema itself is valid JSON Schema.
        expect(() => compileSchema(strict), name).not.toThrow();
      }
      expect(dropped > 0).toBe(set.name === 'dev-mcp'); // dev-data's tools take no arguments
    });
  }

  it('types the Chat Completions and Responses renderings as the openai package does', () => {
    const tool = { name: 'ping', summary: 'Ping.', description: 'Ping a host.', side_effects: false, returns: null, parameters: { type: 'object', properties: { host: { type: 'string' } } } };
    const chat = renderStrict(tool, 'openai');
    const responses = renderStrict(tool, 'openai-responses');
    if (!('tool' in chat) || !('tool' in responses)) throw new Error('expected strict renderings');
    expect(asChatTool(chat.tool).function.strict).toBe(true);
    expect(asResponsesTool(responses.tool).strict).toBe(true);
  });
});
