import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const README = new URL('../../clients/typescript/README.md', import.meta.url).pathname;
const CLIENT = new URL('../../clients/typescript/src/index.js', import.meta.url).pathname;

/** The README's first TypeScript block, compiled against the client's source with the strictest options it claims. */
describe('clients/typescript/README.md', () => {
  it('has a snippet that typechecks under strict and exactOptionalPropertyTypes', () => {
    const snippet = /```ts\n([\s\S]*?)```/.exec(readFileSync(README, 'utf8'))?.[1];
    expect(snippet).toBeDefined();
    expect(snippet).toContain("from 'tool-registry-client'");
    const dir = mkdtempSync(join(tmpdir(), 'readme-snippet-'));
    const file = join(dir, 'snippet.mts');
    // `export {}` keeps the file a module (top-level await) whatever the snippet imports.
    writeFileSync(file, `${snippet!.replace("from 'tool-registry-client'", `from ${JSON.stringify(CLIENT)}`)}\nexport {};\n`);
    const program = ts.createProgram([file], {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
      types: [],
      strict: true,
      noUncheckedIndexedAccess: true,
      exactOptionalPropertyTypes: true,
      noEmit: true,
      skipLibCheck: true,
    });
    expect(program.getSourceFile(file)).toBeDefined();
    // The snippet's own errors: the client's source is compiled with its own tsconfig (the packed
    // declarations are checked under these options by package.test.ts).
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file === undefined || d.file.fileName === file)
      .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(diagnostics).toEqual([]);
  });
});
