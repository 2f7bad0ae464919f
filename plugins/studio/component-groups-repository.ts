// The component groups repository: every read and write of the table, filtered by the caller's
// groups (the GBAC rules of lib/studio/gbac.ts, in SQL). Imports are in import.ts; the history
// every write keeps in the same statement, in component-group-history.ts.
import type { Db } from '../database/index.js'
import type { ComponentGroup, ComponentGroupCreate, ComponentGroupFields, ComponentGroupUpdate } from '../../schemas/component-groups.js'
import { COMPONENT_GROUP_LIST } from '../../schemas/component-groups.js'
import { bypassesGbac, gbacParams, mayRead, writeRefusal, type GbacUser } from '../../lib/studio/gbac.js'
import { matchesVersion, type ExpectedVersions } from '../../lib/studio/if-match.js'
import { toFields } from '../../lib/studio/fields.js'
import type { ImportOutcome, Outcome, RestoreOutcome } from '../../lib/studio/outcomes.js'
import { newObjectId } from '../../lib/http/ids.js'
import type { ListRequest } from '../../lib/lists/grammar.js'
import { sql } from '../../lib/lists/sql.js'
import { listStatements, readPage, listColumns, type ListSource } from '../../lib/lists/statements.js'
import { FREQUENT_TRIGRAM_SHARE } from '../../lib/lists/trigram-search.js'
import { COLUMNS, isUniqueViolation, storedDoc, toDoc, WRITE_ATTEMPTS, type Row } from './component-group-rows.js'
import { importComponentGroups } from './import.js'
import { historyClauses, historyReads, type HistoryReads } from './component-group-history.js'
import { DEFAULT_HISTORY, historyParams, type Actor, type HistoryAction, type HistorySettings } from '../../lib/studio/history.js'

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
 * no update is lost and a stale one changes nothing. The same statement records the new
 * version in the history ($9.., historyParams()).
 */
export const REPLACE_SQL = `WITH changed AS (UPDATE component_groups
  SET name = $4, gbac_read = $5, gbac_write = $6, doc = $7::jsonb, version = version + 1, updated_at = now()
  WHERE id = $1 AND ${writable('$2', '$3')} AND ($8::int[] IS NULL OR version = ANY($8::int[]))
  RETURNING ${COLUMNS}),
  ${historyClauses('changed', 9)}
  SELECT ${COLUMNS} FROM changed`

export const GET_SQL = `SELECT ${COLUMNS} FROM component_groups WHERE id = $1 AND ${readable('$2', '$3')}`

const CREATE_SQL = `WITH created AS (INSERT INTO component_groups (id, name, gbac_read, gbac_write, doc)
  VALUES ($1, $2, $3, $4, $5::jsonb) ON CONFLICT (name) DO NOTHING RETURNING ${COLUMNS}),
  ${historyClauses('created', 6)}
  SELECT ${COLUMNS} FROM created`

// A delete is recorded as the version after the last, holding the group as it was.
const DELETE_SQL = `WITH gone AS (DELETE FROM component_groups
  WHERE id = $1 AND ${writable('$2', '$3')} AND ($4::int[] IS NULL OR version = ANY($4::int[]))
  RETURNING ${COLUMNS}),
  entry AS (SELECT id, version + 1 AS version, name, gbac_read, gbac_write, doc FROM gone),
  ${historyClauses('entry', 5)}
  SELECT ${COLUMNS} FROM gone`

// A deleted group back under its id, at the version after its delete ($6), while that delete is
// still its latest version and the id free (else no row).
const RESTORE_DELETED_SQL = `WITH created AS (INSERT INTO component_groups (id, name, gbac_read, gbac_write, doc, version)
  SELECT $1, $2, $3, $4, $5::jsonb, $6::int
  WHERE (SELECT max(version) FROM component_group_versions WHERE group_id = $1) = $6::int - 1
  ON CONFLICT (id) DO NOTHING RETURNING ${COLUMNS}),
  ${historyClauses('created', 7)}
  SELECT ${COLUMNS} FROM created`

/** The column behind each field COMPONENT_GROUP_LIST sorts and filters on, each served by an index (migrations 006, 007). */
const LIST_COLUMNS = listColumns(COMPONENT_GROUP_LIST, {
  sortable: { name: 'name', _id: 'id' },
  filterable: { name: 'name' }
})

/**
 * The rows `user` may read, as arms of a list (lib/lists/statements.ts): everything for an admin;
 * else the public groups (empty gbac_read, a partial index in name order) and, apart, those
 * restricted to one of the user's groups (the GIN index on gbac_read). The two are disjoint.
 */
export function readableSource (user: GbacUser): ListSource {
  const source = { table: 'component_groups', columns: COLUMNS, ...LIST_COLUMNS }
  if (bypassesGbac(user)) return { ...source, arms: [[]] }
  const publicGroups = sql`cardinality(gbac_read) = 0`
  if (user.groups.length === 0) return { ...source, arms: [[publicGroups]] }
  return { ...source, arms: [[publicGroups], [sql`gbac_read && ${[...user.groups]}::text[]`]] }
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
export function replaceParams (user: GbacUser, id: string, fields: ComponentGroupFields, expected: ExpectedVersions,
  history: unknown[]): unknown[] {
  return [id, ...gbacParams(user), ...fieldParams(fields), expected ?? null, ...history]
}

/** The parameters of GET_SQL. */
export function getParams (user: GbacUser, id: string): unknown[] {
  return [id, ...gbacParams(user)]
}

/** `fastify.componentGroupsRepository`: the component groups table. Every read and write is filtered by the caller's groups. */
export interface ComponentGroupsRepository {
  /** The trigrams most names share (see FREQUENT_NAME_TRIGRAMS_SQL), read again once a minute. */
  frequentNameTrigrams: () => Promise<ReadonlySet<string>>
  /** A page of the groups `user` may read, and how many match (see LIST_COUNT_LOOKAHEAD). */
  list: (user: GbacUser, request: ListRequest) => Promise<{ items: ComponentGroup[], total: number }>
  /** The document, when it exists and `user` may read it. */
  get: (user: GbacUser, id: string) => Promise<ComponentGroup | undefined>
  /** Creates a group at version 1 with a new id; `undefined` when the name is taken. */
  create: (input: ComponentGroupCreate, actor: Actor) => Promise<ComponentGroup | undefined>
  /** Replaces the writable fields and adds 1 to the version, if `user` may and the version matches. */
  replace: (user: GbacUser, id: string, update: ComponentGroupUpdate, expected: ExpectedVersions, actor: Actor) => Promise<Outcome>
  /** What a replacement would be checked against, without writing: the document as it is. */
  checkWritable: (user: GbacUser, id: string, expected: ExpectedVersions) => Promise<Outcome>
  /** Deletes the group, if `user` may and the version matches; its history stays. */
  remove: (user: GbacUser, id: string, expected: ExpectedVersions, actor: Actor) => Promise<Outcome>
  /**
   * Creates every group or none, each with a new id; a taken name gets the first free suffix
   * (import.ts). Past `timeoutMs` the import stops and stores nothing.
   */
  importAll: (inputs: ComponentGroupCreate[], timeoutMs: number, actor: Actor) => Promise<ImportOutcome>
  /** The history reads (component-group-history.ts). */
  versions: HistoryReads
  /**
   * Makes version `version` of group `id` its next version, as a replacement would (GBAC, the
   * expected version, the name unique). A deleted group (admins only) comes back under its id,
   * at the version after its delete, which is then what `expected` names.
   */
  restore: (user: GbacUser, id: string, version: number, expected: ExpectedVersions, actor: Actor) => Promise<RestoreOutcome>
}

export function componentGroupsRepository (db: Db, history: HistorySettings = DEFAULT_HISTORY): ComponentGroupsRepository {
  const recorded = (action: HistoryAction, actor: Actor): unknown[] => historyParams(action, actor, history)
  const versions = historyReads(db)
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

  /** One try of a restore; 'back': the deleted group was brought back meanwhile. */
  async function restoreOnce (user: GbacUser, id: string, version: number, expected: ExpectedVersions, actor: Actor): Promise<RestoreOutcome | 'back'> {
    const present = await current(id)
    if (present !== undefined || !bypassesGbac(user)) {
      if (present === undefined || !mayRead(user, present)) return { refusal: 'not-found' }
      const source = await versions.version(id, version)
      if (source?.document === undefined) return { refusal: 'version-not-found' }
      const params = replaceParams(user, id, toFields(source.document), expected, recorded('restore', actor))
      return await conditionalWrite(user, id, expected, async () => (await db.query<Row>(REPLACE_SQL, params)).rows[0])
    }
    const latest = await versions.latest(id)
    if (latest === undefined) return { refusal: 'not-found' }
    if (latest.action !== 'delete') return 'back'
    if (!matchesVersion(expected, latest.version)) return { refusal: 'stale' }
    const source = await versions.version(id, version)
    if (source?.document === undefined) return { refusal: 'version-not-found' }
    try {
      const { rows } = await db.query<Row>(RESTORE_DELETED_SQL,
        [id, ...fieldParams(toFields(source.document)), latest.version + 1, ...recorded('restore', actor)])
      return rows[0] === undefined ? 'back' : { doc: toDoc(rows[0]) }
    } catch (err) {
      // The name may be taken by this very group, brought back by a concurrent restore.
      if (isUniqueViolation(err)) return await current(id) === undefined ? { refusal: 'name-taken' } : 'back'
      throw err
    }
  }

  return {
    frequentNameTrigrams,

    async list (user: GbacUser, request: ListRequest): Promise<{ items: ComponentGroup[], total: number }> {
      const searched = request.filters.some((f) => f.op === 'contains')
      const { rows, total } = await readPage<Row>(db, listStatements(request, readableSource(user),
        searched ? { name: await frequentNameTrigrams() } : {}), request)
      return { items: rows.map(toDoc), total }
    },

    async get (user: GbacUser, id: string): Promise<ComponentGroup | undefined> {
      const { rows } = await db.query<Row>(GET_SQL, getParams(user, id))
      return rows[0] === undefined ? undefined : toDoc(rows[0])
    },

    async create (input: ComponentGroupCreate, actor: Actor): Promise<ComponentGroup | undefined> {
      const { rows } = await db.query<Row>(CREATE_SQL, [newObjectId(), ...fieldParams(toFields(input)), ...recorded('create', actor)])
      return rows[0] === undefined ? undefined : toDoc(rows[0])
    },

    async replace (user: GbacUser, id: string, update: ComponentGroupUpdate, expected: ExpectedVersions, actor: Actor): Promise<Outcome> {
      const params = replaceParams(user, id, toFields(update), expected, recorded('replace', actor))
      return await conditionalWrite(user, id, expected, async () => (await db.query<Row>(REPLACE_SQL, params)).rows[0])
    },

    async checkWritable (user: GbacUser, id: string, expected: ExpectedVersions): Promise<Outcome> {
      const doc = await current(id)
      if (doc === undefined) return { refusal: 'not-found' }
      const refusal = writeRefusal(user, doc, expected)
      return refusal === undefined ? { doc } : { refusal }
    },

    async remove (user: GbacUser, id: string, expected: ExpectedVersions, actor: Actor): Promise<Outcome> {
      const params = [id, ...gbacParams(user), expected ?? null, ...recorded('delete', actor)]
      return await conditionalWrite(user, id, expected, async () => (await db.query<Row>(DELETE_SQL, params)).rows[0])
    },

    async importAll (inputs: ComponentGroupCreate[], timeoutMs: number, actor: Actor): Promise<ImportOutcome> {
      return await importComponentGroups(db, inputs.map(toFields), timeoutMs, recorded('import', actor))
    },

    versions,

    async restore (user: GbacUser, id: string, version: number, expected: ExpectedVersions, actor: Actor): Promise<RestoreOutcome> {
      for (let attempt = 1; ; attempt++) {
        const outcome = await restoreOnce(user, id, version, expected, actor)
        if (outcome !== 'back') return outcome
        // Another write brought the group back between our reads: judged again as it is now (a
        // replacement then, which If-Match naming the delete finds stale: a 409, not a 404).
        if (attempt === WRITE_ATTEMPTS) return { refusal: 'changed' }
      }
    }
  }
}
