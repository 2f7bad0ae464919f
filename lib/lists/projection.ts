// `include` and `exclude`: which fields of each document a page (or a GET of one document) sends.
import type { CheckResult } from '../http/check-result.js'

/** Which fields a document keeps: all, only `include`d ones (plus the id unless excluded), or all but `exclude`d ones. */
export type Projection =
  | { kind: 'all' }
  | { kind: 'include', fields: ReadonlySet<string> }
  | { kind: 'exclude', fields: ReadonlySet<string> }

/** `include` and `exclude` as a query string gives them (comma-separated field names). */
export interface ProjectionQueryString {
  include?: string
  exclude?: string
}

function fieldList (text: string | undefined): string[] {
  if (text === undefined) return []
  return text.split(',').map((f) => f.trim()).filter((f) => f !== '')
}

/** The 400's reason for `names` that are not among `known`, naming the parameter. */
export const unknownFields = (parameter: string, names: string[], known: readonly string[]): string =>
  `querystring/${parameter} names unknown field${names.length > 1 ? 's' : ''} ${names.map((n) => `"${n}"`).join(', ')}; known: ${known.join(', ')}`

/** `include` / `exclude` as the platform reads them: the id implicit in `include`, and both together only to exclude the id. */
export function parseProjection (spec: { idField: string, fields: readonly string[] }, query: ProjectionQueryString): CheckResult<Projection> {
  const include = fieldList(query.include)
  const exclude = fieldList(query.exclude)
  for (const [parameter, names] of [['include', include], ['exclude', exclude]] as const) {
    const unknown = names.filter((n) => !spec.fields.includes(n))
    if (unknown.length > 0) return { ok: false, reason: unknownFields(parameter, [...new Set(unknown)], spec.fields) }
  }
  if (include.length > 0) {
    if (exclude.some((n) => n !== spec.idField)) {
      return { ok: false, reason: `querystring/exclude may only name "${spec.idField}" together with include` }
    }
    const fields = new Set(include)
    if (exclude.length === 0) fields.add(spec.idField)
    else fields.delete(spec.idField)
    return { ok: true, value: { kind: 'include', fields } }
  }
  if (exclude.length > 0) return { ok: true, value: { kind: 'exclude', fields: new Set(exclude) } }
  return { ok: true, value: { kind: 'all' } }
}

/** `doc` with only the fields `projection` keeps. */
export function project<T extends object> (doc: T, projection: Projection): Partial<T> {
  if (projection.kind === 'all') return doc
  const keep = projection.kind === 'include'
  const out: Partial<T> = {}
  for (const key of Object.keys(doc) as Array<keyof T & string>) {
    if (projection.fields.has(key) === keep) out[key] = doc[key]
  }
  return out
}
