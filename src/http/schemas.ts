import { Type } from 'typebox';

/** The error response every route shares (the tools' shapes are in src/tools/schemas.ts). */

export const ErrorResponse = Type.Object(
  {
    error: Type.Object({
      code: Type.String(),
      message: Type.String(),
      details: Type.Array(Type.Object({ pointer: Type.String(), message: Type.String(), in: Type.Optional(Type.String()) })),
      request_id: Type.String(),
    }),
  },
  { $id: 'ErrorResponse' },
);

export const errorResponses = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((status) => [status, Type.Ref('ErrorResponse')]));
