// Limits for free-form JSON (a component group's `meta`, a Git project, a relayed body), as two
// schema keywords a route schema sets on the field they bound:
//   "x-max-depth": containers (objects, arrays) nested at most this deep, the field itself being 1;
//   "x-max-bytes": the field at most this many bytes as JSON text (UTF-8).
// Every JSON body is first bounded as a whole (lib/http/json-text.ts, MAX_BODY_DEPTH), so the
// value a keyword walks is never deeper than that.

import type { ErrorObject, FuncKeywordDefinition } from 'ajv'

export const MAX_DEPTH_KEYWORD = 'x-max-depth'
export const MAX_BYTES_KEYWORD = 'x-max-bytes'

/** Containers nested in `value`: 0 for a scalar, 1 for `{}` or `[]`, 2 for `{"a": []}`... Iterative. */
export function jsonDepth (value: unknown): number {
  let deepest = 0
  const stack: Array<{ value: unknown, depth: number }> = [{ value, depth: 1 }]
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (typeof item.value !== 'object' || item.value === null) continue
    if (item.depth > deepest) deepest = item.depth
    const children = Array.isArray(item.value) ? item.value : Object.values(item.value)
    for (const child of children) {
      if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: item.depth + 1 })
    }
  }
  return deepest
}

/** Bytes of `value` as JSON text. */
export function jsonBytes (value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '')
}

function limitKeyword (keyword: string, measure: (data: unknown) => number, message: (limit: number) => string): FuncKeywordDefinition {
  const validate: ((limit: number, data: unknown) => boolean) & { errors?: Array<Partial<ErrorObject>> } = (limit, data) => {
    if (measure(data) <= limit) return true
    // Ajv reads a function keyword's errors from the function itself and fills in the paths.
    validate.errors = [{ keyword, message: message(limit), params: { limit } }]
    return false
  }
  return { keyword, type: ['object', 'array'], schemaType: 'number', errors: true, validate }
}

/** The keyword definitions, for the validator's `keywords` option (Ajv). */
export const freeFormKeywords = [
  limitKeyword(MAX_DEPTH_KEYWORD, jsonDepth, (limit) => `must NOT be nested more than ${limit} levels deep`),
  limitKeyword(MAX_BYTES_KEYWORD, jsonBytes, (limit) => `must NOT be larger than ${limit} bytes as JSON`)
]
