import { Type, type TSchema } from '@sinclair/typebox'

// The one error body of every route (see lib/http/errors.ts); extra fields such as `upstream` may follow.
export const ErrorResponse = Type.Object({
  statusCode: Type.Integer(),
  error: Type.String(),
  message: Type.String(),
  code: Type.Optional(Type.String())
}, { $id: 'ErrorResponse', additionalProperties: true, description: 'Error' })

/** Response schemas for the error statuses a route can answer, all the one error shape. */
export function errorResponses<const C extends readonly number[]> (...codes: C): Record<C[number], TSchema> {
  return Object.fromEntries(codes.map((code) => [code, Type.Ref(ErrorResponse)])) as Record<C[number], TSchema>
}

export const Role = Type.Union([Type.Literal('admin'), Type.Literal('designer'), Type.Literal('apiwrite')], {
  description: 'admin: everything; designer and apiwrite: studio and git writes. Any user may read.'
})

/** What a DELETE of a user or an orchestrator adapter answers. */
export const Deleted = Type.Object({ deleted: Type.Boolean() })
