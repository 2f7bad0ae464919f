import fp from 'fastify-plugin'
import type { Db, Queryable } from './database.js'
import type { ComponentGroup, ComponentGroupCreate, ComponentGroupFields, ComponentGroupUpdate, ListQuery } from '../schemas/component-groups.js'
import { LIMITS } from '../schemas/component-groups.js'
import { gbacParams, writeRefusal, type GbacUser, type Refusal } from '../lib/studio/gbac.js'
import type { ExpectedVersions } from '../lib/studio/if-match.js'
import { newObjectId } from '../lib/http/ids.js'
import { containsPattern, nameCandidates } from '../lib/studio/names.js'

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

// The ORDER BY of a page, from the validated query (never text from the request itself).
const SORTS = { name: 'name', version: 'version' } as const
const ORDERS = { asc: 'ASC', desc: 'DESC' } as const

// A write that found its document changed under it (by a concurrent change of its access lists)
// is tried again this many times before it is answered as a conflict.
const WRITE_ATTEMPTS = 3

// How many suffixed names an import asks the database about at a time.
const NAME_BATCH = 20

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
  const doc = { description: fields.description, members: fields.members, meta: fields.meta }
  return [fields.name, fields.gbacRead, fields.gbacWrite, JSON.stringify(doc)]
}

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

  // The first name free both in the table and among `used` (names this import already gave out).
  async function freeName (tx: Queryable, base: string, used: Set<string>): Promise<string> {
    for (let from = 0; ; from += NAME_BATCH) {
      const candidates = nameCandidates(base, from, NAME_BATCH, LIMITS.name)
      const { rows } = await tx.query<{ name: string }>('SELECT name FROM component_groups WHERE name = ANY($1::text[])', [candidates])
      const taken = new Set(rows.map((r) => r.name))
      const free = candidates.find((name) => !taken.has(name) && !used.has(name))
      if (free !== undefined) return free
    }
  }

  return {
    async list (user: GbacUser, query: ListQuery): Promise<{ results: ComponentGroup[], total: number }> {
      const [bypass, groups] = gbacParams(user)
      const pattern = query.contains === undefined ? null : containsPattern(query.contains)
      const where = `WHERE ${readable('$1', '$2')} AND ($3::text IS NULL OR name ILIKE $3 ESCAPE '\\')`
      const direction = ORDERS[query.order]
      const { rows } = await db.query<Row & { total: number }>(
        `SELECT ${COLUMNS}, count(*) OVER ()::int AS total FROM component_groups ${where}
         ORDER BY ${SORTS[query.sort]} ${direction}, id ${direction} LIMIT $4 OFFSET $5`,
        [bypass, groups, pattern, query.limit, query.skip])
      // A page past the end has no row to carry the total.
      const total = rows[0]?.total ??
        (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM component_groups ${where}`, [bypass, groups, pattern])).rows[0]?.n ?? 0
      return { results: rows.map(toDoc), total }
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
     * earlier in the same import) gets the first free suffix. A concurrent create that takes a
     * chosen name first makes the whole import start again.
     */
    async importAll (inputs: ComponentGroupFields[]): Promise<ComponentGroup[] | undefined> {
      for (let attempt = 1; ; attempt++) {
        try {
          return await db.transaction(async (tx) => {
            const used = new Set<string>()
            const created: ComponentGroup[] = []
            for (const fields of inputs) {
              const name = await freeName(tx, fields.name, used)
              used.add(name)
              const { rows } = await tx.query<Row>(`${INSERT_SQL} RETURNING ${COLUMNS}`,
                [newObjectId(), ...fieldParams({ ...fields, name })])
              created.push(toDoc(rows[0] as Row))
            }
            return created
          })
        } catch (err) {
          if (!isUniqueViolation(err)) throw err
          if (attempt === WRITE_ATTEMPTS) return undefined
        }
      }
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
