import fp from 'fastify-plugin'
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Db, Queryable, QueryOptions } from '../database/index.js'
import type { ComponentGroup, ComponentGroupCreate, ComponentGroupFields, ComponentGroupUpdate } from '../../schemas/component-groups.js'
import { COMPONENT_GROUP_LIST, LIMITS } from '../../schemas/component-groups.js'
import { bypassesGbac, gbacParams, writeRefusal, type GbacUser, type Refusal } from '../../lib/studio/gbac.js'
import type { ExpectedVersions } from '../../lib/studio/if-match.js'
import { newObjectId } from '../../lib/http/ids.js'
import { listStatements, readPage, type ListRequest, type ListSource } from '../../lib/lists/list-query.js'
import { FREQUENT_TRIGRAM_SHARE } from '../../lib/lists/trigram-search.js'
import { nameAllocator, suffixedNamesPattern } from '../../lib/studio/names.js'

interface Row {
  id: string
  name: string
  version: number
  gbac_read: string[]
  gbac_write: string[]
  doc: Pick<ComponentGroup, 'description' | 'members' | 'meta'>
}

/**
 * A write's result: the document, or why not. 'changed': the document kept changing under the
 * write (its access lists did), 'name-taken': another group has the name.
 */
export type Outcome = { doc: ComponentGroup } | { refusal: Refusal | 'changed' | 'name-taken' }

const COLUMNS = 'id, name, version, gbac_read, gbac_write, doc'

// The GBAC rules of lib/studio/gbac.ts in SQL, over the parameters of gbacParams(): $B the admin
// bypass, $G the user's groups. Written once here, with the parameter numbers filled in.
const readable = (b: string, g: string): string =>
  `(${b}::boolean OR cardinality(gbac_read) = 0 OR gbac_read && ${g}::text[])`
const writable = (b: string, g: string): string =>
  `(${b}::boolean OR ((cardinality(gbac_read) = 0 OR gbac_read && ${g}::text[]) AND (cardinality(gbac_write) = 0 OR gbac_write && ${g}::text[])))`

/**
 * The replacement, in one statement: the database adds 1 to the version while it writes, and
 * only when the user may write and the version is one the writer expects ($8, NULL: any).
 * Concurrent replacements queue on the row lock and each re-checks the version it finds, so
 * no update is lost and a stale one changes nothing.
 */
export const REPLACE_SQL = `UPDATE component_groups
  SET name = $4, gbac_read = $5, gbac_write = $6, doc = $7::jsonb, version = version + 1, updated_at = now()
  WHERE id = $1 AND ${writable('$2', '$3')} AND ($8::int[] IS NULL OR version = ANY($8::int[]))
  RETURNING ${COLUMNS}`

export const GET_SQL = `SELECT ${COLUMNS} FROM component_groups WHERE id = $1 AND ${readable('$2', '$3')}`

const INSERT_SQL = `INSERT INTO component_groups (id, name, gbac_read, gbac_write, doc)
  VALUES ($1, $2, $3, $4, $5::jsonb)`

const DELETE_SQL = `DELETE FROM component_groups
  WHERE id = $1 AND ${writable('$2', '$3')} AND ($4::int[] IS NULL OR version = ANY($4::int[]))
  RETURNING ${COLUMNS}`

// Planned for their values on every call: a list's best plan depends on its filter, and an
// import's name look-ups run while the table grows under them.
const CUSTOM_PLAN: QueryOptions = { plan: 'custom' }

/**
 * The rows `user` may read, as arms of a list (lib/lists/list-query.ts): everything for an admin;
 * else the public groups (empty gbac_read, a partial index in name order) and, apart, those
 * restricted to one of the user's groups (the GIN index on gbac_read). The two are disjoint.
 */
export function readableSource (user: GbacUser): ListSource {
  const source = { table: 'component_groups', columns: COLUMNS }
  if (bypassesGbac(user)) return { ...source, arms: [[]], params: [] }
  if (user.groups.length === 0) return { ...source, arms: [['cardinality(gbac_read) = 0']], params: [] }
  return { ...source, arms: [['cardinality(gbac_read) = 0'], ['gbac_read && $1::text[]']], params: [[...user.groups]] }
}

// The trigrams most names share, as ANALYZE (or autovacuum) last counted them (migrations/010);
// `contains` leaves them out of its index look-up. None where there are no statistics yet (or no
// pg_trgm): the whole value is then looked up.
const FREQUENT_NAME_TRIGRAMS_SQL = `SELECT u.trigram FROM pg_stats_ext_exprs s,
    unnest(s.most_common_elems::text::text[], s.most_common_elem_freqs) AS u(trigram, share)
  WHERE s.statistics_schemaname = current_schema() AND s.statistics_name = 'component_groups_name_trigrams'
    AND u.trigram IS NOT NULL AND u.share >= $1`

// How long the frequent trigrams are kept before they are read again.
const FREQUENT_TRIGRAMS_TTL_MS = 60_000

// An import stores its groups this many per statement.
export const IMPORT_BATCH = 100

const IMPORT_INSERT_SQL = `INSERT INTO component_groups (id, name, gbac_read, gbac_write, doc)
  SELECT r.id, r.name, r.gbac_read, r.gbac_write, r.doc
  FROM jsonb_to_recordset($1::jsonb) AS r(id text, name text, gbac_read text[], gbac_write text[], doc jsonb)
  RETURNING ${COLUMNS}`

// The names an import might clash with for one base: the base itself and its suffixed forms.
const TAKEN_NAMES_SQL = "SELECT name FROM component_groups WHERE name = $1 OR name LIKE $2 ESCAPE '\\'"

/** Why an import stored nothing: a name taken by concurrent writes every time, or its time ran out. */
export type ImportOutcome = { created: ComponentGroup[] } | { refusal: 'name-taken' | 'timeout' }

class ImportDeadline extends Error {}

// A write that found its document changed under it (by a concurrent change of its access lists)
// is tried again this many times before it is answered as a conflict.
const WRITE_ATTEMPTS = 3

function toDoc (row: Row): ComponentGroup {
  return {
    _id: row.id,
    name: row.name,
    description: row.doc.description,
    members: row.doc.members,
    gbacRead: row.gbac_read,
    gbacWrite: row.gbac_write,
    version: row.version,
    meta: row.doc.meta
  }
}

/** The stored fields of a create, import or replacement: defaults applied, `_id` and `version` left out. */
export function toFields (input: ComponentGroupCreate | ComponentGroupUpdate): ComponentGroupFields {
  return {
    name: input.name,
    description: input.description ?? '',
    members: input.members,
    gbacRead: input.gbacRead,
    gbacWrite: input.gbacWrite ?? [],
    meta: input.meta ?? {}
  }
}

// The parameters $2.. of INSERT_SQL after the id. JSONB goes as text with a cast: pg would send
// a JS array as a PostgreSQL array.
function fieldParams (fields: ComponentGroupFields): unknown[] {
  return [fields.name, fields.gbacRead, fields.gbacWrite, JSON.stringify(storedDoc(fields))]
}

const storedDoc = (fields: ComponentGroupFields): Row['doc'] =>
  ({ description: fields.description, members: fields.members, meta: fields.meta })

/** The parameters of REPLACE_SQL. */
export function replaceParams (user: GbacUser, id: string, fields: ComponentGroupFields, expected: ExpectedVersions): unknown[] {
  return [id, ...gbacParams(user), ...fieldParams(fields), expected ?? null]
}

/** The parameters of GET_SQL. */
export function getParams (user: GbacUser, id: string): unknown[] {
  return [id, ...gbacParams(user)]
}

const isUniqueViolation = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === '23505'

/** Component groups table access. Every read and write is filtered by the caller's groups. */
export function componentGroupsRepository (db: Db) {
  let frequentTrigrams: { readAt: number, trigrams: Promise<ReadonlySet<string>> } | undefined

  async function frequentNameTrigrams (): Promise<ReadonlySet<string>> {
    const now = performance.now()
    if (frequentTrigrams === undefined || now - frequentTrigrams.readAt > FREQUENT_TRIGRAMS_TTL_MS) {
      frequentTrigrams = {
        readAt: now,
        trigrams: db.query<{ trigram: string }>(FREQUENT_NAME_TRIGRAMS_SQL, [FREQUENT_TRIGRAM_SHARE])
          .then(({ rows }) => new Set(rows.map((r) => r.trigram)), () => new Set<string>())
      }
    }
    return await frequentTrigrams.trigrams
  }

  async function current (id: string): Promise<ComponentGroup | undefined> {
    const { rows } = await db.query<Row>(`SELECT ${COLUMNS} FROM component_groups WHERE id = $1`, [id])
    return rows[0] === undefined ? undefined : toDoc(rows[0])
  }

  // Runs a conditional write; when it touches no row, finds out why from the document as it is now.
  async function conditionalWrite (user: GbacUser, id: string, expected: ExpectedVersions, write: () => Promise<Row | undefined>): Promise<Outcome> {
    for (let attempt = 1; ; attempt++) {
      let row: Row | undefined
      try {
        row = await write()
      } catch (err) {
        if (isUniqueViolation(err)) return { refusal: 'name-taken' }
        throw err
      }
      if (row !== undefined) return { doc: toDoc(row) }
      // Nothing written: judge the document as it is now. When nothing refuses the write any
      // more, it changed between the two statements; try again.
      const refusal = writeRefusal(user, await current(id), expected)
      if (refusal !== undefined) return { refusal }
      if (attempt === WRITE_ATTEMPTS) return { refusal: 'changed' }
    }
  }

  // The names of an import, in order: each base looked up once (one statement per distinct
  // base, through the name index), then given out in turn (lib/studio/names.ts).
  async function importNames (q: Queryable, names: string[], deadline: number): Promise<string[]> {
    const allocators = new Map<string, () => string>()
    const used = new Set<string>()
    const out: string[] = []
    for (const base of names) {
      let next = allocators.get(base)
      if (next === undefined) {
        if (performance.now() > deadline) throw new ImportDeadline()
        const { rows } = await q.query<{ name: string }>(TAKEN_NAMES_SQL, [base, suffixedNamesPattern(base, LIMITS.name)], CUSTOM_PLAN)
        next = nameAllocator(base, new Set(rows.map((r) => r.name)), used, LIMITS.name)
        allocators.set(base, next)
      }
      out.push(next())
    }
    return out
  }

  // One multi-row statement per batch; `between` runs before each batch after the first.
  async function insertBatches (q: Queryable, inputs: ComponentGroupFields[], names: string[], deadline: number,
    between: () => Promise<void>, inserted: string[]): Promise<ComponentGroup[]> {
    const created: ComponentGroup[] = []
    for (let from = 0; from < inputs.length; from += IMPORT_BATCH) {
      if (from > 0) await between()
      if (performance.now() > deadline) throw new ImportDeadline()
      const batch = inputs.slice(from, from + IMPORT_BATCH).map((fields, i) => ({
        id: newObjectId(),
        name: names[from + i] as string,
        gbac_read: fields.gbacRead,
        gbac_write: fields.gbacWrite,
        doc: storedDoc(fields)
      }))
      const { rows } = await q.query<Row>(IMPORT_INSERT_SQL, [JSON.stringify(batch)])
      inserted.push(...batch.map((r) => r.id))
      const byId = new Map(rows.map((row) => [row.id, row]))
      for (const { id } of batch) created.push(toDoc(byId.get(id) as Row))
    }
    return created
  }

  // On the PostgreSQL server: one transaction, all or none.
  async function importInTransaction (inputs: ComponentGroupFields[], deadline: number): Promise<ComponentGroup[]> {
    return await db.transaction(async (tx) => {
      const names = await importNames(tx, inputs.map((f) => f.name), deadline)
      return await insertBatches(tx, inputs, names, deadline, async () => {}, [])
    })
  }

  // On the embedded database (one connection, which a transaction holds): each batch commits on
  // its own and other requests run between batches; a failure deletes what the import stored.
  async function importInBatches (inputs: ComponentGroupFields[], deadline: number): Promise<ComponentGroup[]> {
    const inserted: string[] = []
    try {
      const names = await importNames(db, inputs.map((f) => f.name), deadline)
      return await insertBatches(db, inputs, names, deadline, async () => { await nextTurn() }, inserted)
    } catch (err) {
      if (inserted.length > 0) await db.query('DELETE FROM component_groups WHERE id = ANY($1::text[])', [inserted])
      throw err
    }
  }

  return {
    /** The trigrams most names share (see FREQUENT_NAME_TRIGRAMS_SQL), read again once a minute. */
    frequentNameTrigrams,

    /** A page of the groups `user` may read, and how many match (see LIST_COUNT_LOOKAHEAD). */
    async list (user: GbacUser, request: ListRequest): Promise<{ items: ComponentGroup[], total: number }> {
      const searched = request.filters.some((f) => f.op === 'contains')
      const { rows, total } = await readPage<Row>(db, listStatements(COMPONENT_GROUP_LIST, request, readableSource(user),
        searched ? { name: await frequentNameTrigrams() } : {}), request)
      return { items: rows.map(toDoc), total }
    },

    /** The document, when it exists and `user` may read it. */
    async get (user: GbacUser, id: string): Promise<ComponentGroup | undefined> {
      const { rows } = await db.query<Row>(GET_SQL, getParams(user, id))
      return rows[0] === undefined ? undefined : toDoc(rows[0])
    },

    /** Creates a group at version 1 with a new id; `undefined` when the name is taken. */
    async create (fields: ComponentGroupFields): Promise<ComponentGroup | undefined> {
      const { rows } = await db.query<Row>(`${INSERT_SQL} ON CONFLICT (name) DO NOTHING RETURNING ${COLUMNS}`,
        [newObjectId(), ...fieldParams(fields)])
      return rows[0] === undefined ? undefined : toDoc(rows[0])
    },

    /** Replaces the writable fields and adds 1 to the version, if `user` may and the version matches. */
    async replace (user: GbacUser, id: string, fields: ComponentGroupFields, expected: ExpectedVersions): Promise<Outcome> {
      const params = replaceParams(user, id, fields, expected)
      return await conditionalWrite(user, id, expected, async () => (await db.query<Row>(REPLACE_SQL, params)).rows[0])
    },

    /** What a replacement would be checked against, without writing: the document as it is. */
    async checkWritable (user: GbacUser, id: string, expected: ExpectedVersions): Promise<Outcome> {
      const doc = await current(id)
      if (doc === undefined) return { refusal: 'not-found' }
      const refusal = writeRefusal(user, doc, expected)
      return refusal === undefined ? { doc } : { refusal }
    },

    async remove (user: GbacUser, id: string, expected: ExpectedVersions): Promise<Outcome> {
      const params = [id, ...gbacParams(user), expected ?? null]
      return await conditionalWrite(user, id, expected, async () => (await db.query<Row>(DELETE_SQL, params)).rows[0])
    },

    /**
     * Creates every group or none, each with a new id; a name already taken (in the table or
     * earlier in the same import) gets the first free suffix. Imports run one at a time (across
     * instances); a concurrent create that takes a chosen name first makes the import start
     * again. Past `timeoutMs` the import stops and stores nothing.
     */
    async importAll (inputs: ComponentGroupFields[], timeoutMs: number): Promise<ImportOutcome> {
      const deadline = performance.now() + timeoutMs
      return await db.withAdvisoryLock('component-group-import', async () => {
        for (let attempt = 1; ; attempt++) {
          try {
            const created = db.kind === 'postgres'
              ? await importInTransaction(inputs, deadline)
              : await importInBatches(inputs, deadline)
            return { created }
          } catch (err) {
            if (err instanceof ImportDeadline) return { refusal: 'timeout' }
            if (!isUniqueViolation(err)) throw err
            if (attempt === WRITE_ATTEMPTS) return { refusal: 'name-taken' }
          }
        }
      })
    }
  }
}

export type ComponentGroupsRepository = ReturnType<typeof componentGroupsRepository>

declare module 'fastify' {
  interface FastifyInstance {
    componentGroupsRepository: ComponentGroupsRepository
  }
}

export default fp(async (fastify) => {
  fastify.decorate('componentGroupsRepository', componentGroupsRepository(fastify.db))
}, { name: 'component-groups-repository', dependencies: ['database'] })
