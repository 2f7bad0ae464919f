// One guard for the numbers of every query string, path and header: a value a schema types as an
// integer must be a safe integer (|n| <= 2^53 - 1), one typed as a number must be finite.
//
// Ajv alone lets `Infinity`, `-Infinity` and `1e400` through when it coerces text: "Infinity" is
// coerced to the number Infinity, and the numeric keywords (minimum, maximum) skip any value that
// is not finite, so a schema `{ type: 'integer', maximum: 100 }` accepts it. The validator
// compiler (plugins/core/server-options.ts) wraps every non-body validator with this check, so a
// new route gets it without writing anything: the answer is the usual 400 naming the field.

/** The numeric fields of a query string, path or header schema (an object of flat values). */
export interface NumericField {
  name: string
  integer: boolean
  minimum?: number
  maximum?: number
}

interface SchemaLike {
  type?: unknown
  properties?: Record<string, SchemaLike>
  anyOf?: SchemaLike[]
  oneOf?: SchemaLike[]
  allOf?: SchemaLike[]
  minimum?: unknown
  maximum?: unknown
}

const isObject = (value: unknown): value is SchemaLike => typeof value === 'object' && value !== null

/** The numeric alternative of a field's schema (itself, or one of its union members), if any. */
function numericSchema (schema: SchemaLike): SchemaLike | undefined {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type]
  if (types.includes('integer') || types.includes('number')) return schema
  for (const member of [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]) {
    const found = isObject(member) ? numericSchema(member) : undefined
    if (found !== undefined) return found
  }
  return undefined
}

/** The fields of `schema` (an object schema, possibly a union of them) typed as numbers. */
export function numericFields (schema: unknown): NumericField[] {
  if (!isObject(schema)) return []
  const fields = new Map<string, NumericField>()
  const objects = [schema, ...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])]
  for (const object of objects) {
    for (const [name, property] of Object.entries(isObject(object) ? object.properties ?? {} : {})) {
      const numeric = isObject(property) ? numericSchema(property) : undefined
      if (numeric === undefined || fields.has(name)) continue
      const types = Array.isArray(numeric.type) ? numeric.type : [numeric.type]
      fields.set(name, {
        name,
        integer: !types.includes('number'),
        ...(typeof numeric.minimum === 'number' ? { minimum: numeric.minimum } : {}),
        ...(typeof numeric.maximum === 'number' ? { maximum: numeric.maximum } : {})
      })
    }
  }
  return [...fields.values()]
}

/**
 * Why `value` (after coercion) breaks `field`, in Ajv's words where a bound applies (the message a
 * finite value past the bound gets), or undefined when it is fine.
 */
export function numberProblem (field: NumericField, value: unknown): string | undefined {
  const values = Array.isArray(value) ? value : [value]
  for (const item of values) {
    if (typeof item !== 'number') continue
    if (field.integer ? Number.isSafeInteger(item) : Number.isFinite(item)) continue
    if (item > 0 && field.maximum !== undefined) return `must be <= ${field.maximum}`
    if (item < 0 && field.minimum !== undefined) return `must be >= ${field.minimum}`
    return field.integer
      ? `must be an integer from -${Number.MAX_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}`
      : 'must be a finite number'
  }
  return undefined
}

/** A validator as Fastify calls it: Ajv's, with `errors` and (for a root it may change) `schemaEnv`. */
export type Validator = ((data: unknown, options?: unknown) => unknown) & { errors?: unknown, schemaEnv?: unknown }

/** `validate`, then every numeric field of `schema` checked to be a safe integer or finite. */
export function guardNumbers (schema: unknown, validate: Validator): Validator {
  const fields = numericFields(schema)
  if (fields.length === 0) return validate
  const guarded: Validator = (data, options) => {
    const result = validate(data, options)
    guarded.errors = validate.errors
    if (result !== true || !isObject(data)) return result
    const values = data as Record<string, unknown>
    for (const field of fields) {
      const message = numberProblem(field, values[field.name])
      if (message === undefined) continue
      guarded.errors = [{ keyword: 'type', instancePath: `/${field.name}`, schemaPath: `#/properties/${field.name}`, params: {}, message }]
      return false
    }
    return true
  }
  if (validate.schemaEnv !== undefined) guarded.schemaEnv = validate.schemaEnv
  return guarded
}
