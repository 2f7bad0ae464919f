// The platform's list language, one implementation for every list of the service: a page
// (`limit`, `skip`), its order (`sort`, `order` 1 / -1), projections (`include`, `exclude`) and
// the filters `equals`, `contains` and `starts-with` (also `startsWith`), each on the field its
// `...Field` names (default: the list's own), or in the bracket forms of the platform's query
// guide (`equals[name]=x`, `contains[...]`, `starts-with[...]`, `in[...]`, `not-in[...]`). From
// the validated query string this module makes the request, the SQL of the page and of its
// bounded count, the envelope `{items, count, skip, end, limit, total, next, previous}`, and the
// projection of each document.
// A page holds at most `limit` items and at most about LIST_MAX_PAGE_BYTES of them (at least one
// item); `next` goes on from where it stopped.
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import type { CheckResult } from '../http/check-result.js'
import { selectiveContainsPart } from './trigram-search.js'

export const LIST_DEFAULT_LIMIT = 25
/** The largest `skip`: deep pages stay correct; their cost grows with `skip` (see listStatements). */
export const LIST_MAX_SKIP = 1_000_000_000
/**
 * How far past the page the count looks. `total` is exact while fewer than
 * skip + limit + LIST_COUNT_LOOKAHEAD items match; past that it is that many (a lower bound), so
 * the count costs what the page costs plus this many index entries, never the whole table.
 */
export const LIST_COUNT_LOOKAHEAD = 1000

export type FilterOp = 'equals' | 'contains' | 'startsWith'
export type SetFilterOp = 'in' | 'notIn'

/** What one list offers, and the SQL behind each field. Only these texts ever reach the SQL. */
export interface ListSpec {
  /** The document field always included unless excluded (`_id`, `username`, `id`). */
  idField: string
  /** Every field of a document, for `include` and `exclude`. */
  fields: readonly string[]
  /** Fields a page may be sorted by, with the unique column an index orders by (also a column of the page's rows). */
  sortable: Readonly<Record<string, string>>
  defaultSort: string
  /** Fields the filters may name, with their SQL column. */
  filterable: Readonly<Record<string, string>>
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

/** The most values one `in[...]` or `not-in[...]` takes. */
export const LIST_MAX_SET_VALUES = 100

// The bracket forms: `equals[name]` arrives as that literal key (the query string parser does not
// read brackets), and is read here. Keys that match no form are unknown parameters (a 400).
const BRACKET_OPS: Readonly<Record<string, FilterOp | SetFilterOp>> = {
  equals: 'equals', contains: 'contains', 'starts-with': 'startsWith', startsWith: 'startsWith', in: 'in', 'not-in': 'notIn'
}
const BRACKET_KEY = /^(equals|contains|starts-with|startsWith|in|not-in)\[([^\]]*)\]$/
const VALUE_BRACKETS = '^(equals|contains|starts-with|startsWith)\\[[^\\]]{0,64}\\]$'
const SET_BRACKETS = '^(in|not-in)\\[[^\\]]{0,64}\\]$'

/** Which fields a document keeps: all, only `include`d ones (plus the id unless excluded), or all but `exclude`d ones. */
export type Projection =
  | { kind: 'all' }
  | { kind: 'include', fields: ReadonlySet<string> }
  | { kind: 'exclude', fields: ReadonlySet<string> }

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

// A filter value or field name travels as a query parameter: never a NUL (PostgreSQL refuses
// text holding one), never unbounded.
const NO_NUL = '^[^\\u0000]*$'
const FieldName = Type.String({ minLength: 1, maxLength: 64, pattern: NO_NUL })
const FieldList = Type.String({ maxLength: 1024, pattern: NO_NUL, description: 'Comma-separated field names.' })

/** `include` and `exclude`, as GET of one document takes them. */
export const ProjectionQuery = Type.Object({
  include: Type.Optional({ ...FieldList, description: 'Only these fields (comma-separated); the id too unless exclude=<id>.' }),
  exclude: Type.Optional({ ...FieldList, description: 'All fields but these (comma-separated). With include, only the id may be excluded.' })
}, { additionalProperties: false })
export type ProjectionQuery = Static<typeof ProjectionQuery>

// The list schemas made here and the spec each serves: the OpenAPI document declares the bracket
// filters (which the schema admits as patternProperties) from it.
const LIST_SPECS = new WeakMap<object, ListSpec>()

/** The spec of a list's query string schema made by listQuerySchema (undefined for any other schema). */
export function listSpecOf (schema: unknown): ListSpec | undefined {
  return typeof schema === 'object' && schema !== null ? LIST_SPECS.get(schema) : undefined
}

/** The bracket forms of the filters (`equals[name]`...): each op, and whether it takes a list of values. */
export const BRACKET_FILTERS: ReadonlyArray<{ op: string, set: boolean, description: string }> = [
  { op: 'equals', set: false, description: 'Items whose %s equals this value exactly.' },
  { op: 'contains', set: false, description: 'Items whose %s contains this text, ignoring case.' },
  { op: 'starts-with', set: false, description: 'Items whose %s starts with this text, ignoring case.' },
  { op: 'startsWith', set: false, description: 'Same as starts-with[%s].' },
  { op: 'in', set: true, description: `Items whose %s is one of the values: repeat the parameter for each, at most ${LIST_MAX_SET_VALUES}.` },
  { op: 'not-in', set: true, description: `Items whose %s is none of the values: repeat the parameter for each, at most ${LIST_MAX_SET_VALUES}.` }
]

/** The query string of a list: its schema, for validation and the OpenAPI document. */
export function listQuerySchema (spec: ListSpec) {
  const schema = listQueryObject(spec)
  LIST_SPECS.set(schema, spec)
  return schema
}

function listQueryObject (spec: ListSpec) {
  const value = (description: string) => Type.Optional(Type.String({ minLength: 1, maxLength: spec.maxValueLength, pattern: NO_NUL, description }))
  const field = (op: string) => Type.Optional({ ...FieldName, description: `The field ${op} applies to (default ${spec.defaultFilterField}): ${Object.keys(spec.filterable).join(', ')}.` })
  const filterValue = Type.String({ minLength: 1, maxLength: spec.maxValueLength, pattern: NO_NUL })
  const fields = Object.keys(spec.filterable).join(', ')
  return Type.Object({
    limit: Type.Integer({ minimum: 1, maximum: spec.maxLimit, default: LIST_DEFAULT_LIMIT, description: 'Items per page.' }),
    skip: Type.Integer({ minimum: 0, maximum: LIST_MAX_SKIP, default: 0, description: 'Items before the page.' }),
    sort: Type.String({ ...FieldName, default: spec.defaultSort, description: `The field to sort by: ${Object.keys(spec.sortable).join(', ')}.` }),
    order: Type.Integer({ enum: [1, -1], default: 1, description: '1: ascending, -1: descending.' }),
    include: ProjectionQuery.properties.include,
    exclude: ProjectionQuery.properties.exclude,
    equals: value('Items whose field equals this value exactly.'),
    equalsField: field('equals'),
    contains: value('Items whose field contains this text, ignoring case.'),
    containsField: field('contains'),
    startsWith: value('Items whose field starts with this text, ignoring case.'),
    'starts-with': value('Same as startsWith.'),
    startsWithField: field('startsWith')
  }, {
    additionalProperties: false,
    // Typed loosely on purpose: parseListQuery reads these keys and checks the field in brackets.
    patternProperties: {
      [VALUE_BRACKETS]: { ...filterValue, description: `equals[field], contains[field], starts-with[field] (also startsWith[field]): the filter on that field (${fields}).` },
      [SET_BRACKETS]: Type.Array(filterValue, {
        maxItems: LIST_MAX_SET_VALUES,
        description: `in[field] / not-in[field]: items whose field is (is not) one of the values; repeat the parameter for each value, at most ${LIST_MAX_SET_VALUES} (${fields}).`
      })
    }
  })
}
export type ListQueryString = Static<ReturnType<typeof listQuerySchema>>

/** The page envelope around items of `item`'s schema, any field of which a projection may leave out. */
export function pageSchema (item: TSchema & { properties: Record<string, TSchema> }, description: string) {
  const skip = Type.Union([Type.Integer({ minimum: 0 }), Type.Null()])
  return Type.Object({
    items: Type.Array(Type.Partial(item as never), { description }),
    count: Type.Integer({ minimum: 0, description: 'Items on this page: at most `limit`, fewer when their size reached LIST_MAX_PAGE_BYTES (default 8 MiB).' }),
    skip: Type.Integer({ minimum: 0 }),
    limit: Type.Integer({ minimum: 1 }),
    total: Type.Integer({
      minimum: 0,
      description: `Items matching. Exact while fewer than skip + limit + ${LIST_COUNT_LOOKAHEAD} match; past that, ` +
        'that many (a lower bound): paging on until `next` is null reads every item, and the last page\'s total is exact.'
    }),
    end: Type.Integer({ minimum: 0, description: 'The index after the page\'s last item: skip + count.' }),
    next: { ...skip, description: 'The skip of the next page (skip + count); null on the last. Following next reads every item once.' },
    previous: { ...skip, description: 'skip - limit (at least 0); null on the first. A page cut by its size may stop before this one starts: follow next to read every item.' }
  })
}

function fieldList (text: string | undefined): string[] {
  if (text === undefined) return []
  return text.split(',').map((f) => f.trim()).filter((f) => f !== '')
}

const unknownFields = (parameter: string, names: string[], known: readonly string[]): string =>
  `querystring/${parameter} names unknown field${names.length > 1 ? 's' : ''} ${names.map((n) => `"${n}"`).join(', ')}; known: ${known.join(', ')}`

/** `include` / `exclude` as the platform reads them: the id implicit in `include`, and both together only to exclude the id. */
export function parseProjection (spec: Pick<ListSpec, 'idField' | 'fields'>, query: ProjectionQuery): CheckResult<Projection> {
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

/** The service's bounds on every page (plugins/core/config.ts): `fastify.config` fits. */
export interface ListLimits {
  LIST_MAX_PAGE_BYTES: number
}

/** The request a validated query string asks for, or a 400's reason naming the parameter. */
export function parseListQuery (spec: ListSpec, query: ListQueryString, limits: ListLimits): CheckResult<ListRequest> {
  // The schema says so too, but a number such as 1e400 reaches here as Infinity past it.
  if (!Number.isSafeInteger(query.limit) || query.limit < 1 || query.limit > spec.maxLimit) {
    return { ok: false, reason: `querystring/limit must be an integer from 1 to ${spec.maxLimit}` }
  }
  if (!Number.isSafeInteger(query.skip) || query.skip < 0 || query.skip > LIST_MAX_SKIP) {
    return { ok: false, reason: `querystring/skip must be an integer from 0 to ${LIST_MAX_SKIP}` }
  }
  if (!Object.hasOwn(spec.sortable, query.sort)) {
    return { ok: false, reason: unknownFields('sort', [query.sort], Object.keys(spec.sortable)) }
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
    const name = field ?? spec.defaultFilterField
    if (!Object.hasOwn(spec.filterable, name)) {
      return { ok: false, reason: unknownFields(`${op}Field`, [name], Object.keys(spec.filterable)) }
    }
    if (value === undefined) {
      if (field !== undefined) return { ok: false, reason: `querystring/${op}Field is given without querystring/${op}` }
      continue
    }
    filters.push({ op, field: name, value })
  }
  const brackets = bracketFilters(spec, query)
  if (!brackets.ok) return brackets
  filters.push(...brackets.value)
  const projection = parseProjection(spec, query)
  if (!projection.ok) return projection
  return {
    ok: true,
    value: { limit: query.limit, skip: query.skip, maxBytes: limits.LIST_MAX_PAGE_BYTES, sort: query.sort, order: query.order === -1 ? -1 : 1, filters, projection: projection.value }
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
    if (!Object.hasOwn(spec.filterable, field)) {
      return { ok: false, reason: `querystring/${key} names ${field === '' ? 'no field' : `unknown field "${field}"`}; known: ${Object.keys(spec.filterable).join(', ')}` }
    }
    // The schema gives in/not-in an array and the others a string; this only narrows the type.
    if (op === 'in' || op === 'notIn') filters.push({ op, field, values: Array.isArray(given) ? given.map(String) : [String(given)] })
    else filters.push({ op, field, value: String(given) })
  }
  return { ok: true, value: filters }
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

/** A LIKE/ILIKE pattern: `text` taken literally (escape character `\`) with `%` where `before` / `after` say. */
export function likePattern (text: string, before: boolean, after: boolean): string {
  const literal = text.replace(/[\\%_]/g, (c) => `\\${c}`)
  return `${before ? '%' : ''}${literal}${after ? '%' : ''}`
}

/**
 * One arm of a list's SQL: the rows a caller may see, as conditions over `params` numbered
 * from $1. A list whose readers see the union of disjoint sets (public rows, rows of one's
 * groups) gives one arm per set: each is read through its own index, in order, and merged.
 */
export interface ListSource {
  table: string
  columns: string
  arms: string[][]
  params: unknown[]
  /**
   * The best plan does not depend on the values (one key's rows through its own index, no
   * filters): the page may keep the plan made for earlier values (prepared once per connection),
   * which saves its planning on every call. A filtered page is always planned for its values.
   */
  plansAlike?: boolean
  /**
   * Conditions every row meets, which each arm of the page adds (its count does not): for a
   * plan that is only PostgreSQL's choice once the page looks cheap enough to keep (see
   * versionsSource). Never a condition that removes a row.
   */
  pageOnly?: string[]
  /**
   * The most bytes one row can take as JSON text (the byte bound's measure), when every column
   * is bounded. A page of `limit` such rows cannot pass the byte bound, so it is read in one pass,
   * without measuring its rows first.
   */
  maxRowBytes?: number
}

export interface Statement {
  text: string
  params: unknown[]
}

/** A list's statements (see listStatements). */
export interface ListStatements {
  /** The page's rows; with `carriesTotal`, each also holds the bounded count as `list_total`. */
  page: Statement
  carriesTotal: boolean
  /** Whether the statements may keep their plan (ListSource.plansAlike); else planned per call. */
  keepsPlan: boolean
  /** The bounded count alone, for when the page cannot tell it. */
  count: Statement
}

/** The column of a page's rows that holds the bounded count, when the page carries it. */
export const LIST_TOTAL_COLUMN = 'list_total'
/** The column of a page's rows that holds how many rows the page had before the byte bound cut it. */
export const LIST_ROWS_COLUMN = 'list_rows'
// (A page that cannot reach the byte bound has no such column: its rows are all it had.)

/**
 * The page and its count as SQL. The page reads its rows in index order and stops after
 * skip + limit of them (a deep `skip` costs that many index entries); the count reads at most
 * skip + limit + LIST_COUNT_LOOKAHEAD rows per arm. No window function: the page's cost does
 * not depend on how many rows match. `frequentTrigrams`, per filterable field with a trigram
 * index: the trigrams most of its values share, which `contains` leaves to a filter
 * (lib/lists/trigram-search.ts).
 *
 * Without filters the page usually fills, and then needs its count: the page carries it (a
 * subquery run once, for the first row), which saves a statement's round trip and parsing
 * (a reader's page +14% requests/s). A search often finds fewer rows than a page and then needs
 * no count at all (see totalFromPage), so it does not plan one (-10% on short searches if it did).
 */
export function listStatements (spec: ListSpec, request: ListRequest, source: ListSource,
  frequentTrigrams: Readonly<Record<string, ReadonlySet<string>>> = {}): ListStatements {
  const params = [...source.params]
  const param = (value: unknown): string => {
    params.push(value)
    return `$${params.length}`
  }
  const filterSql = request.filters.map((f) => {
    const column = spec.filterable[f.field] as string
    // Case folds by the database's default collation, whatever the column's (names sort bytewise).
    const ilike = (pattern: string): string => `(${column} COLLATE "default") ILIKE ${param(pattern)} ESCAPE '\\'`
    switch (f.op) {
      case 'equals': return `${column} = ${param(f.value)}`
      case 'contains': {
        const frequent = frequentTrigrams[f.field]
        const part = frequent === undefined ? undefined : selectiveContainsPart(f.value, frequent)
        const lookUp = ilike(likePattern(part ?? f.value, true, true))
        if (part === undefined) return lookUp
        // The index looks up the part; the whole value is tested on the rows it finds. `IS TRUE`
        // (the same test in a WHERE clause) keeps the planner from giving that test to the index
        // too, which would read the frequent trigrams' lists again.
        return `${lookUp} AND (${ilike(likePattern(f.value, true, true))}) IS TRUE`
      }
      case 'startsWith': return ilike(likePattern(f.value, false, true))
      case 'in': return `${column} = ANY(${param(f.values)}::text[])`
      case 'notIn': return `${column} <> ALL(${param(f.values)}::text[])`
    }
    throw new Error('unreachable')
  })
  const direction = request.order === 1 ? 'ASC' : 'DESC'
  const sortSql = spec.sortable[request.sort] as string
  // Every sortable column is unique (name, _id, username, id), so pages never overlap.
  const orderBy = `${sortSql} ${direction}`
  const where = (arm: string[], extra: readonly string[] = []): string => {
    const conditions = [...arm, ...extra, ...filterSql]
    return conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`
  }
  const pageWhere = (arm: string[]): string => where(arm, source.pageOnly)
  const reach = param(request.skip + request.limit)
  const limit = param(request.limit)
  const skip = param(request.skip)
  const bound = param(request.skip + request.limit + LIST_COUNT_LOOKAHEAD)
  const maxBytes = param(request.maxBytes)
  const arms = source.arms.length === 0 ? [[]] : source.arms
  const pageText = arms.length === 1
    ? `SELECT ${source.columns} FROM ${source.table} ${pageWhere(arms[0] as string[])} ORDER BY ${orderBy} LIMIT ${limit} OFFSET ${skip}`
    : `SELECT * FROM (${arms.map((arm) => `(SELECT ${source.columns} FROM ${source.table} ${pageWhere(arm)} ORDER BY ${orderBy} LIMIT ${reach})`).join(' UNION ALL ')}) AS page
       ORDER BY ${orderBy} LIMIT ${limit} OFFSET ${skip}`
  // The byte bound. A first pass over the page's rows keeps only their sizes as JSON text (about
  // what the driver receives and the answer sends), and how many of the first rows add up to at
  // most the bound (the first row always); the second pass returns that many rows of the page,
  // in its order. Both passes are one statement: one snapshot, the same rows, and no row past the
  // cut ever leaves the database. The first pass is a CTE, so it runs once (as a subquery joined
  // to the rows, its cut was computed again for every row), and the rows come in index order
  // under a LIMIT: no join, no sort. An array of at most `limit` numbers rather than a window
  // function, which would sort.
  const fit = `SELECT s.${LIST_ROWS_COLUMN}, CASE WHEN s.bytes <= ${maxBytes}::bigint THEN s.${LIST_ROWS_COLUMN}
      ELSE (SELECT count(*) FROM generate_subscripts(s.sizes, 1) AS i
        WHERE i = 1 OR (SELECT sum(b) FROM unnest(s.sizes[1:i]) AS u(b)) <= ${maxBytes}::bigint) END AS kept
    FROM (SELECT count(*)::int AS ${LIST_ROWS_COLUMN}, sum(list_bytes) AS bytes, array_agg(list_bytes ORDER BY ${orderBy}) AS sizes
      FROM (SELECT ${sortSql}, octet_length(row_to_json(paged)::text) AS list_bytes FROM (${pageText}) AS paged) AS measured) AS s`
  const cutText = (extra: string): string => `WITH fit AS MATERIALIZED (${fit})
    SELECT listed.*, (SELECT ${LIST_ROWS_COLUMN} FROM fit) AS ${LIST_ROWS_COLUMN}${extra} FROM (${pageText}) AS listed
    ORDER BY ${orderBy} LIMIT (SELECT kept FROM fit)`
  const keepsPlan = source.plansAlike === true && request.filters.length === 0
  // A kept plan counts in the page's order, through the index: the plan is made once from the
  // table's statistics and used for every key, and a count reading the table (cheaper for a key
  // with most of the rows) would read all of it for a key with few.
  const countOrder = keepsPlan ? ` ORDER BY ${orderBy}` : ''
  const countSql = `(${arms.map((arm) =>
    `(SELECT count(*) FROM (SELECT 1 FROM ${source.table} ${where(arm)}${countOrder} LIMIT ${bound}) AS counted)`).join(' + ')})::int`
  const carriesTotal = request.filters.length === 0
  // Rows of bounded size that cannot add up to the bound: the page as it is, nothing measured
  // (the first pass cost a versions page more than reading its rows).
  const fitsWhole = source.maxRowBytes !== undefined && request.limit * source.maxRowBytes <= request.maxBytes
  const wholeText = (extra: string): string => extra === '' ? pageText : `SELECT listed.*${extra} FROM (${pageText}) AS listed`
  const countText = `SELECT ${countSql} AS n`
  // Each statement carries only the parameters its text names, in order.
  const used = (text: string): Statement => {
    const { text: renumbered, numbers } = renumbering(text)
    return { text: renumbered, params: numbers.map((n) => params[n - 1]) }
  }
  return {
    page: used((fitsWhole ? wholeText : cutText)(carriesTotal ? `, ${countSql} AS ${LIST_TOTAL_COLUMN}` : '')),
    carriesTotal,
    keepsPlan,
    count: used(countText)
  }
}

// A text's parameters renumbered from $1 in order, and the numbers they had, by text: a list
// makes the same few texts again and again (one per shape of query), and finding and renumbering
// the parameters cost more than building the text. Bounded: emptied when full.
const renumberings = new Map<string, { text: string, numbers: number[] }>()
const RENUMBERINGS_MAX = 1000
function renumbering (text: string): { text: string, numbers: number[] } {
  let known = renumberings.get(text)
  if (known === undefined) {
    const numbers = [...new Set([...text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])))].sort((a, b) => a - b)
    const mapping = new Map(numbers.map((n, i) => [n, i + 1]))
    known = { text: text.replace(/\$(\d+)/g, (_, n: string) => `$${String(mapping.get(Number(n)))}`), numbers }
    if (renumberings.size >= RENUMBERINGS_MAX) renumberings.clear()
    renumberings.set(text, known)
  }
  return known
}

/** What runs a list's statements: the service's database, planning each for its values unless told it may keep a plan. */
export interface ListQueryable {
  query<R>(text: string, params: unknown[], options: { plan?: 'custom' }): Promise<{ rows: R[] }>
}

type PageRow<R> = R & { [LIST_TOTAL_COLUMN]?: number, [LIST_ROWS_COLUMN]?: number }

/**
 * A page of rows and the list's total: from the page when it is short (before the byte bound
 * cut it), else the count it carries, else the count statement (a page past the end carries
 * nothing). The rows keep only their own columns.
 */
export async function readPage<R extends object> (db: ListQueryable, statements: ListStatements,
  request: Pick<ListRequest, 'skip' | 'limit'>): Promise<{ rows: R[], total: number }> {
  const planning = statements.keepsPlan ? {} : { plan: 'custom' } as const
  const { rows } = await db.query<PageRow<R>>(statements.page.text, statements.page.params, planning)
  const total = totalFromPage(request, rows[0]?.[LIST_ROWS_COLUMN] ?? rows.length) ?? rows[0]?.[LIST_TOTAL_COLUMN] ??
    (await db.query<{ n: number }>(statements.count.text, statements.count.params, planning)).rows[0]?.n ?? 0
  return { rows: rows.map(({ [LIST_TOTAL_COLUMN]: _total, [LIST_ROWS_COLUMN]: _rows, ...row }) => row as unknown as R), total }
}

/**
 * The total when the page itself tells it: a page short of `limit` that is not past the end
 * ends the list, so the count statement need not run (a search finding a few items reads its
 * index once). Undefined when only the count can tell.
 */
export function totalFromPage (request: Pick<ListRequest, 'skip' | 'limit'>, rowsOnPage: number): number | undefined {
  return rowsOnPage < request.limit && (rowsOnPage > 0 || request.skip === 0) ? request.skip + rowsOnPage : undefined
}

/**
 * The envelope of a page: its items, where it starts, and the neighbouring pages' `skip`. The
 * next page starts after the last item, which is before skip + limit when the byte bound cut
 * the page.
 */
export function pageEnvelope<T> (items: T[], request: Pick<ListRequest, 'skip' | 'limit'>, total: number) {
  const end = request.skip + items.length
  return {
    items,
    count: items.length,
    skip: request.skip,
    end,
    limit: request.limit,
    total,
    next: items.length > 0 && end < total ? end : null,
    previous: request.skip > 0 ? Math.max(0, request.skip - request.limit) : null
  }
}
