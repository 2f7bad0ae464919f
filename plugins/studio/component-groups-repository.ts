// The component groups repository: every read and write of the table, filtered by the caller's
// groups (the GBAC rules of lib/studio/gbac.ts, in SQL). Imports are in import.ts.
import type { Db } from '../database/index.js'
import type { ComponentGroup, ComponentGroupCreate, ComponentGroupFields, ComponentGroupUpdate } from '../../schemas/component-groups.js'
import { COMPONENT_GROUP_LIST } from '../../schemas/component-groups.js'
import { bypassesGbac, gbacParams, writeRefusal, type GbacUser } from '../../lib/studio/gbac.js'
import type { ExpectedVersions } from '../../lib/studio/if-match.js'
import { toFields } from '../../lib/studio/fields.js'
import type { ImportOutcome, Outcome } from '../../lib/studio/outcomes.js'
import { newObjectId } from '../../lib/http/ids.js'
import { listStatements, readPage, type ListRequest, type ListSource } from '../../lib/lists/list-query.js'
import { FREQUENT_TRIGRAM_SHARE } from '../../lib/lists/trigram-search.js'
import { COLUMNS, isUniqueViolation, storedDoc, toDoc, WRITE_ATTEMPTS, type Row } from './component-group-rows.js'
import { importComponentGroups } from './import.js'

// bench/studio.ts builds the parameters of REPLACE_SQL from an update as the repository does.
export { toFields }

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

// The parameters $2.. of INSERT_SQL after the id. JSONB goes as text with a cast: pg would send
// a JS array as a PostgreSQL array.
function fieldParams (fields: ComponentGroupFields): unknown[] {
  return [fields.name, fields.gbacRead, fields.gbacWrite, JSON.stringify(storedDoc(fields))]
}

/** The parameters of REPLACE_SQL. */
export function replaceParams (user: GbacUser, id: string, fields: ComponentGroupFields, expected: ExpectedVersions): unknown[] {
  return [id, ...gbacParams(user), ...fieldParams(fields), expected ?? null]
}

/** The parameters of GET_SQL. */
export function getParams (user: GbacUser, id: string): unknown[] {
  return [id, ...gbacParams(user)]
}

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
    async create (input: ComponentGroupCreate): Promise<ComponentGroup | undefined> {
      const { rows } = await db.query<Row>(`${INSERT_SQL} ON CONFLICT (name) DO NOTHING RETURNING ${COLUMNS}`,
        [newObjectId(), ...fieldParams(toFields(input))])
      return rows[0] === undefined ? undefined : toDoc(rows[0])
    },

    /** Replaces the writable fields and adds 1 to the version, if `user` may and the version matches. */
    async replace (user: GbacUser, id: string, update: ComponentGroupUpdate, expected: ExpectedVersions): Promise<Outcome> {
      const params = replaceParams(user, id, toFields(update), expected)
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
     * Creates every group or none, each with a new id; a taken name gets the first free suffix
     * (import.ts). Past `timeoutMs` the import stops and stores nothing.
     */
    async importAll (inputs: ComponentGroupCreate[], timeoutMs: number): Promise<ImportOutcome> {
      return await importComponentGroups(db, inputs.map(toFields), timeoutMs)
    }
  }
}

export type ComponentGroupsRepository = ReturnType<typeof componentGroupsRepository>
