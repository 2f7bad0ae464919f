// The platform's list language, read from a validated query string: a page (`limit`, `skip`),
// its order (`sort`, `order` 1 / -1), projections (`include`, `exclude`, see projection.ts) and
// the filters `equals`, `contains` and `starts-with` (also `startsWith`), each on the field its
// `...Field` names (default: the list's own), or in the bracket forms of the platform's query
// guide (`equals[name]=x`, `contains[...]`, `starts-with[...]`, `in[...]`, `not-in[...]`).
// A list names its fields here; which column each one is belongs to its repository
// (statements.ts), and the query string's schema to schemas/lists.ts.
import type { CheckResult } from '../http/check-result.js'
import { parseProjection, unknownFields, type Projection } from './projection.js'

export const LIST_DEFAULT_LIMIT = 25
/** The largest `skip`: deep pages stay correct; their cost grows with `skip` (see listStatements). */
export const LIST_MAX_SKIP = 1_000_000_000
/** The most values one `in[...]` or `not-in[...]` takes. */
export const LIST_MAX_SET_VALUES = 100

export type FilterOp = 'equals' | 'contains' | 'startsWith'
export type SetFilterOp = 'in' | 'notIn'

/** What one list offers a client, by field name. Its repository maps each field to its column. */
export interface ListSpec {
  /** The document field always included unless excluded (`_id`, `username`, `id`). */
  idField: string
  /** Every field of a document, for `include` and `exclude`. */
  fields: readonly string[]
  /** Fields a page may be sorted by (each a unique column in the repository, so pages never overlap). */
  sortable: readonly string[]
  defaultSort: string
  /** The order of a list whose query string has no `order` (its history lists: newest first); default 1. */
  defaultOrder?: 1 | -1
  /** Fields the filters may name. */
  filterable: readonly string[]
  defaultFilterField: string
  /** The largest `limit`. */
  maxLimit: number
  /** The longest filter value, in characters. */
  maxValueLength: number
}

export type Filter =
  | { op: FilterOp, field: string, value: string }
  /** The field is one of `values` (`in`) or none of them (`notIn`). */
  | { op: SetFilterOp, field: string, values: string[] }

export interface ListRequest {
  limit: number
  skip: number
  /** The most bytes of items a page holds (their rows as JSON text); the first item always. */
  maxBytes: number
  sort: string
  order: 1 | -1
  filters: Filter[]
  projection: Projection
}

/**
 * A list's query string as its schema (schemas/lists.ts) validated it. A list that only pages
 * (a history) has no `sort`, `order` or filters: its spec's defaults apply.
 */
export interface ListQueryString {
  limit: number
  skip: number
  sort?: string
  order?: number
  include?: string
  exclude?: string
  equals?: string
  equalsField?: string
  contains?: string
  containsField?: string
  startsWith?: string
  'starts-with'?: string
  startsWithField?: string
}

/** The service's bounds on every page (plugins/core/config.ts): `fastify.config` fits. */
export interface ListLimits {
  LIST_MAX_PAGE_BYTES: number
}

// The bracket forms: `equals[name]` arrives as that literal key (the query string parser does not
// read brackets), and is read here. Keys that match no form are unknown parameters (a 400).
const BRACKET_OPS: Readonly<Record<string, FilterOp | SetFilterOp>> = {
  equals: 'equals', contains: 'contains', 'starts-with': 'startsWith', startsWith: 'startsWith', in: 'in', 'not-in': 'notIn'
}
const BRACKET_KEY = /^(equals|contains|starts-with|startsWith|in|not-in)\[([^\]]*)\]$/

/** The request a validated query string asks for, or a 400's reason naming the parameter. */
export function parseListQuery (spec: ListSpec, query: ListQueryString, limits: ListLimits): CheckResult<ListRequest> {
  // The schema says so too, but a number such as 1e400 reaches here as Infinity past it.
  if (!Number.isSafeInteger(query.limit) || query.limit < 1 || query.limit > spec.maxLimit) {
    return { ok: false, reason: `querystring/limit must be an integer from 1 to ${spec.maxLimit}` }
  }
  if (!Number.isSafeInteger(query.skip) || query.skip < 0 || query.skip > LIST_MAX_SKIP) {
    return { ok: false, reason: `querystring/skip must be an integer from 0 to ${LIST_MAX_SKIP}` }
  }
  const sort = query.sort ?? spec.defaultSort
  if (!spec.sortable.includes(sort)) {
    return { ok: false, reason: unknownFields('sort', [sort], spec.sortable) }
  }
  if (query.startsWith !== undefined && query['starts-with'] !== undefined && query.startsWith !== query['starts-with']) {
    return { ok: false, reason: 'querystring/startsWith and querystring/starts-with are two spellings of one filter: give one' }
  }
  const filters: Filter[] = []
  const given: Array<[FilterOp, string | undefined, string | undefined]> = [
    ['equals', query.equals, query.equalsField],
    ['contains', query.contains, query.containsField],
    ['startsWith', query.startsWith ?? query['starts-with'], query.startsWithField]
  ]
  for (const [op, value, field] of given) {
    if (value === undefined && field === undefined) continue
    const name = field ?? spec.defaultFilterField
    if (!spec.filterable.includes(name)) {
      return { ok: false, reason: unknownFields(`${op}Field`, [name], spec.filterable) }
    }
    if (value === undefined) return { ok: false, reason: `querystring/${op}Field is given without querystring/${op}` }
    filters.push({ op, field: name, value })
  }
  const brackets = bracketFilters(spec, query)
  if (!brackets.ok) return brackets
  filters.push(...brackets.value)
  const projection = parseProjection(spec, query)
  if (!projection.ok) return projection
  const order = query.order ?? spec.defaultOrder ?? 1
  return {
    ok: true,
    value: { limit: query.limit, skip: query.skip, maxBytes: limits.LIST_MAX_PAGE_BYTES, sort, order: order === -1 ? -1 : 1, filters, projection: projection.value }
  }
}

/** The filters of the bracket forms in `query`, or a 400's reason naming the parameter. */
function bracketFilters (spec: ListSpec, query: object): CheckResult<Filter[]> {
  const filters: Filter[] = []
  for (const [key, given] of Object.entries(query) as Array<[string, unknown]>) {
    const match = BRACKET_KEY.exec(key)
    if (match === null) continue
    const op = BRACKET_OPS[match[1] as string] as FilterOp | SetFilterOp
    const field = match[2] as string
    if (!spec.filterable.includes(field)) {
      return { ok: false, reason: `querystring/${key} names ${field === '' ? 'no field' : `unknown field "${field}"`}; known: ${spec.filterable.join(', ')}` }
    }
    // The schema gives in/not-in an array and the others a string; this only narrows the type.
    if (op === 'in' || op === 'notIn') filters.push({ op, field, values: Array.isArray(given) ? given.map(String) : [String(given)] })
    else filters.push({ op, field, value: String(given) })
  }
  return { ok: true, value: filters }
}
