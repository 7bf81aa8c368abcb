import type { Static } from 'typebox';
import { describe, expectTypeOf, it } from 'vitest';

import type * as Sdk from '../../clients/typescript/src/index.js';
import type { Decision, Reason } from '../../src/authorize/service.js';
import type { RankingMode } from '../../src/discovery/fusion.js';
import type { DiscoverResult } from '../../src/discovery/schemas.js';
import type { ErrorCode } from '../../src/errors.js';
import type { ErrorResponse } from '../../src/http/schemas.js';
import type { Format } from '../../src/tools/formats.js';
import type { TokenCosts, ToolCard, ToolDocumentInput, ToolView } from '../../src/tools/model.js';

/**
 * The SDK's hand-written wire types against the service's own types and route schemas. Checked
 * by `tsc --noEmit` (this file is type-checked with the rest), so a route change that the SDK
 * does not follow fails the typecheck, not a user's build.
 */
describe('SDK wire types', () => {
  it('name the same formats, modes and error codes as the service', () => {
    expectTypeOf<Sdk.SchemaFormat>().toEqualTypeOf<Format>();
    expectTypeOf<Sdk.SearchMode>().toEqualTypeOf<RankingMode>();
    expectTypeOf<Sdk.ServerErrorCode>().toEqualTypeOf<ErrorCode>();
    expectTypeOf<Sdk.ToolTokenCosts>().toEqualTypeOf<Static<typeof TokenCosts>>();
  });

  it('read every response the service sends', () => {
    expectTypeOf<Static<typeof ToolCard>>().toExtend<Sdk.ToolCard>();
    expectTypeOf<Static<typeof ToolView>>().toExtend<Omit<Sdk.ToolView, `x-${string}`>>();
    expectTypeOf<Static<typeof ErrorResponse>>().toExtend<Sdk.ErrorBody>();
    expectTypeOf<Omit<DiscoverResult, 'tools'>>().toExtend<Omit<Sdk.DiscoverResponse, 'tools'>>();
    expectTypeOf<Decision>().toExtend<Sdk.AuthorizeResponse>();
    expectTypeOf<Reason>().toExtend<Sdk.AuthorizeReason>();
  });

  it('send only documents the service accepts', () => {
    expectTypeOf<Omit<Sdk.ToolDocument, `x-${string}`>>().toExtend<ToolDocumentInput>();
  });
});
