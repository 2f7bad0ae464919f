import { Type, type ObjectOptions, type TObject, type TSchema } from '@sinclair/typebox'
import { MAX_BYTES_KEYWORD, MAX_DEPTH_KEYWORD } from '../lib/http/free-form.js'

// The one error body of every route (see lib/http/errors.ts); extra fields such as `upstream` may follow.
export const ErrorResponse = Type.Object({
  statusCode: Type.Integer(),
  error: Type.String(),
  message: Type.String(),
  code: Type.Optional(Type.String())
}, { $id: 'ErrorResponse', additionalProperties: true, description: 'Error' })

const COMPONENTS = new Map<string, TSchema>()

/**
 * A schema the OpenAPI document names in components.schemas: given `id` as its $id and kept for
 * plugins/core/openapi.ts to add as a shared schema (validation, serialisation and the document
 * then all read this one). Use it through `Type.Ref(schema)`.
 */
export function component<T extends TSchema> (id: string, schema: T): T {
  if (COMPONENTS.has(id)) throw new Error(`schema ${id} is named twice`)
  const named = { ...schema, $id: id }
  COMPONENTS.set(id, named)
  return named
}

/** Every schema named by `component`, for Fastify's shared schemas. */
export function components (): TSchema[] {
  return [...COMPONENTS.values()]
}

/** Response schemas for the error statuses a route can answer, all the one error shape. */
export function errorResponses<const C extends readonly number[]> (...codes: C): Record<C[number], TSchema> {
  return Object.fromEntries(codes.map((code) => [code, Type.Ref(ErrorResponse)])) as Record<C[number], TSchema>
}

export const Role = Type.Union([Type.Literal('admin'), Type.Literal('designer'), Type.Literal('apiwrite')], {
  description: 'admin: everything; designer and apiwrite: studio and git writes. Any user may read.'
})

/** What a DELETE of a user or an orchestrator adapter answers. */
export const Deleted = Type.Object({ deleted: Type.Boolean() })

/** How deep free-form JSON a client sends (meta, a Git project, a relayed body) may nest, itself being 1. */
export const FREE_FORM_MAX_DEPTH = 64

/**
 * A free-form JSON object in a request: any members, nested at most `maxDepth` levels (default
 * FREE_FORM_MAX_DEPTH) and, when `maxBytes` is given, at most that many bytes as JSON text.
 * A value past a limit is a 400 naming the field (lib/http/free-form.ts).
 */
export function FreeFormObject (options: ObjectOptions & { maxDepth?: number, maxBytes?: number } = {}): TObject {
  const { maxDepth = FREE_FORM_MAX_DEPTH, maxBytes, ...rest } = options
  const limits = `At most ${maxDepth} levels deep` + (maxBytes === undefined ? '' : ` and ${maxBytes} bytes as JSON`) + '.'
  return Type.Object({}, {
    additionalProperties: true,
    ...rest,
    description: rest.description === undefined ? limits : `${rest.description} ${limits}`,
    [MAX_DEPTH_KEYWORD]: maxDepth,
    ...(maxBytes === undefined ? {} : { [MAX_BYTES_KEYWORD]: maxBytes })
  })
}
