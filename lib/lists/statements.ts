// A list's SQL: the page and its bounded count, from the request (grammar.ts) and the rows the
// caller may see (a ListSource, which the list's repository writes with its own table and
// columns), and the read that runs them. Values go as parameters, numbered as the statement is
// written (sql.ts).
import type { ListRequest, ListSpec } from './grammar.js'
import { join, likePattern, param, raw, sql, statement, type Sql, type Statement } from './sql.js'
import { selectiveContainsPart } from './trigram-search.js'

/**
 * How far past the page the count looks. `total` is exact while fewer than
 * skip + limit + LIST_COUNT_LOOKAHEAD items match; past that it is that many (a lower bound), so
 * the count costs what the page costs plus this many index entries, never the whole table.
 */
export const LIST_COUNT_LOOKAHEAD = 1000

/** The column behind each sortable and filterable field of a list (ListSpec names the fields). */
export interface ListColumns<S extends { sortable: readonly string[], filterable: readonly string[] } = { sortable: string[], filterable: string[] }> {
  /** Per sortable field, the unique column an index orders by (also a column of the page's rows). */
  sortable: Readonly<Record<S['sortable'][number], string>>
  /** Per filterable field, its SQL column. */
  filterable: Readonly<Record<S['filterable'][number], string>>
}

type FieldsOf = Pick<ListSpec, 'sortable' | 'filterable'>

/**
 * `columns`, the column behind each field of `spec` as its repository names them, checked once
 * as the repository loads: a sortable or filterable field without a column stops the service
 * (the types say so too).
 */
export function listColumns<const S extends FieldsOf> (spec: S, columns: ListColumns<S>): ListColumns<S> {
  for (const kind of ['sortable', 'filterable'] as const) {
    const named = columns[kind] as Readonly<Record<string, string | undefined>>
    const missing = spec[kind].filter((field) => !Object.hasOwn(named, field) || typeof named[field] !== 'string')
    if (missing.length > 0) throw new Error(`the list has no column for its ${kind} field(s) ${missing.join(', ')}`)
  }
  return columns
}

/**
 * The rows a caller may see, as its repository reads them: the table, the columns of a row, and
 * the conditions of each arm. A list whose readers see the union of disjoint sets (public rows,
 * rows of one's groups) gives one arm per set: each is read through its own index, in order, and
 * merged. Only the repository's own text reaches the SQL as text; values are parameters.
 */
export interface ListSource extends ListColumns {
  table: string
  columns: string
  arms: Sql[][]
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
  pageOnly?: Sql[]
  /**
   * The most bytes one row can take as JSON text (the byte bound's measure), when every column
   * is bounded. A page of `limit` such rows cannot pass the byte bound, so it is read in one pass,
   * without measuring its rows first.
   */
  maxRowBytes?: number
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

/** The filters as conditions on their columns. */
function filterConditions (request: ListRequest, source: ListSource,
  frequentTrigrams: Readonly<Record<string, ReadonlySet<string>>>): Sql[] {
  return request.filters.map((f) => {
    const column = raw(source.filterable[f.field] as string)
    // Case folds by the database's default collation, whatever the column's (names sort bytewise).
    const ilike = (pattern: string): Sql => sql`(${column} COLLATE "default") ILIKE ${pattern} ESCAPE '\\'`
    switch (f.op) {
      case 'equals': return sql`${column} = ${f.value}`
      case 'contains': {
        const frequent = frequentTrigrams[f.field]
        const part = frequent === undefined ? undefined : selectiveContainsPart(f.value, frequent)
        const lookUp = ilike(likePattern(part ?? f.value, true, true))
        if (part === undefined) return lookUp
        // The index looks up the part; the whole value is tested on the rows it finds. `IS TRUE`
        // (the same test in a WHERE clause) keeps the planner from giving that test to the index
        // too, which would read the frequent trigrams' lists again.
        return sql`${lookUp} AND (${ilike(likePattern(f.value, true, true))}) IS TRUE`
      }
      case 'startsWith': return ilike(likePattern(f.value, false, true))
      case 'in': return sql`${column} = ANY(${f.values}::text[])`
      case 'notIn': return sql`${column} <> ALL(${f.values}::text[])`
    }
    throw new Error('unreachable')
  })
}

const ROWS = raw(LIST_ROWS_COLUMN)
const TOTAL = raw(LIST_TOTAL_COLUMN)
const NOTHING = raw('')

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
export function listStatements (request: ListRequest, source: ListSource,
  frequentTrigrams: Readonly<Record<string, ReadonlySet<string>>> = {}): ListStatements {
  const filters = filterConditions(request, source, frequentTrigrams)
  const sortColumn = raw(source.sortable[request.sort] as string)
  // Every sortable column is unique (name, _id, username, id), so pages never overlap.
  const orderBy = sql`${sortColumn} ${raw(request.order === 1 ? 'ASC' : 'DESC')}`
  const table = raw(source.table)
  const columns = raw(source.columns)
  const where = (arm: Sql[], extra: readonly Sql[] = []): Sql => {
    const conditions = [...arm, ...extra, ...filters]
    return conditions.length === 0 ? NOTHING : sql`WHERE ${join(conditions, ' AND ')}`
  }
  const pageWhere = (arm: Sql[]): Sql => where(arm, source.pageOnly)
  const reach = param(request.skip + request.limit)
  const limit = param(request.limit)
  const skip = param(request.skip)
  const bound = param(request.skip + request.limit + LIST_COUNT_LOOKAHEAD)
  const maxBytes = param(request.maxBytes)
  const arms = source.arms.length === 0 ? [[]] : source.arms
  const pageText = arms.length === 1
    ? sql`SELECT ${columns} FROM ${table} ${pageWhere(arms[0] as Sql[])} ORDER BY ${orderBy} LIMIT ${limit} OFFSET ${skip}`
    : sql`SELECT * FROM (${join(arms.map((arm) => sql`(SELECT ${columns} FROM ${table} ${pageWhere(arm)} ORDER BY ${orderBy} LIMIT ${reach})`), ' UNION ALL ')}) AS page
       ORDER BY ${orderBy} LIMIT ${limit} OFFSET ${skip}`
  // The byte bound. A first pass over the page's rows keeps only their sizes as JSON text (about
  // what the driver receives and the answer sends), and how many of the first rows add up to at
  // most the bound (the first row always); the second pass returns that many rows of the page,
  // in its order. Both passes are one statement: one snapshot, the same rows, and no row past the
  // cut ever leaves the database. The first pass is a CTE, so it runs once (as a subquery joined
  // to the rows, its cut was computed again for every row), and the rows come in index order
  // under a LIMIT: no join, no sort. An array of at most `limit` numbers rather than a window
  // function, which would sort.
  const fit = sql`SELECT s.${ROWS}, CASE WHEN s.bytes <= ${maxBytes}::bigint THEN s.${ROWS}
      ELSE (SELECT count(*) FROM generate_subscripts(s.sizes, 1) AS i
        WHERE i = 1 OR (SELECT sum(b) FROM unnest(s.sizes[1:i]) AS u(b)) <= ${maxBytes}::bigint) END AS kept
    FROM (SELECT count(*)::int AS ${ROWS}, sum(list_bytes) AS bytes, array_agg(list_bytes ORDER BY ${orderBy}) AS sizes
      FROM (SELECT ${sortColumn}, octet_length(row_to_json(paged)::text) AS list_bytes FROM (${pageText}) AS paged) AS measured) AS s`
  const cutText = (extra: Sql): Sql => sql`WITH fit AS MATERIALIZED (${fit})
    SELECT listed.*, (SELECT ${ROWS} FROM fit) AS ${ROWS}${extra} FROM (${pageText}) AS listed
    ORDER BY ${orderBy} LIMIT (SELECT kept FROM fit)`
  const keepsPlan = source.plansAlike === true && request.filters.length === 0
  // A kept plan counts in the page's order, through the index: the plan is made once from the
  // table's statistics and used for every key, and a count reading the table (cheaper for a key
  // with most of the rows) would read all of it for a key with few.
  const countOrder = keepsPlan ? sql` ORDER BY ${orderBy}` : NOTHING
  const countSql = sql`(${join(arms.map((arm) =>
    sql`(SELECT count(*) FROM (SELECT 1 FROM ${table} ${where(arm)}${countOrder} LIMIT ${bound}) AS counted)`), ' + ')})::int`
  const carriesTotal = request.filters.length === 0
  // Rows of bounded size that cannot add up to the bound: the page as it is, nothing measured
  // (the first pass cost a versions page more than reading its rows).
  const fitsWhole = source.maxRowBytes !== undefined && request.limit * source.maxRowBytes <= request.maxBytes
  const wholeText = (extra: Sql): Sql => extra === NOTHING ? pageText : sql`SELECT listed.*${extra} FROM (${pageText}) AS listed`
  return {
    page: statement((fitsWhole ? wholeText : cutText)(carriesTotal ? sql`, ${countSql} AS ${TOTAL}` : NOTHING)),
    carriesTotal,
    keepsPlan,
    count: statement(sql`SELECT ${countSql} AS n`)
  }
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
