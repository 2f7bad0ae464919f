// Imports of component groups: all or none, each with a new id, a taken name given the first free
// numeric suffix (lib/studio/names.ts), within a time bound.
import { setImmediate as nextTurn } from 'node:timers/promises'
import type { Db, Queryable } from '../database/index.js'
import type { ComponentGroup, ComponentGroupFields } from '../../schemas/component-groups.js'
import { LIMITS } from '../../schemas/component-groups.js'
import { newObjectId } from '../../lib/http/ids.js'
import type { ImportOutcome } from '../../lib/studio/outcomes.js'
import { nameAllocator, suffixedNamesPattern } from '../../lib/studio/names.js'
import { historyClauses } from './component-group-history.js'
import { COLUMNS, CUSTOM_PLAN, isUniqueViolation, storedDoc, toDoc, WRITE_ATTEMPTS, type Row } from './component-group-rows.js'

// An import stores its groups this many per statement.
export const IMPORT_BATCH = 100

// Each batch records its groups' first versions in the same statement ($2..: historyParams()).
const IMPORT_INSERT_SQL = `WITH created AS (INSERT INTO component_groups (id, name, gbac_read, gbac_write, doc)
  SELECT r.id, r.name, r.gbac_read, r.gbac_write, r.doc
  FROM jsonb_to_recordset($1::jsonb) AS r(id text, name text, gbac_read text[], gbac_write text[], doc jsonb)
  RETURNING ${COLUMNS}),
  ${historyClauses('created', 2)}
  SELECT ${COLUMNS} FROM created`

// The names an import might clash with for one base: the base itself and its suffixed forms.
const TAKEN_NAMES_SQL = "SELECT name FROM component_groups WHERE name = $1 OR name LIKE $2 ESCAPE '\\'"

class ImportDeadline extends Error {}

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
  history: unknown[], between: () => Promise<void>, inserted: string[]): Promise<ComponentGroup[]> {
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
    const { rows } = await q.query<Row>(IMPORT_INSERT_SQL, [JSON.stringify(batch), ...history])
    inserted.push(...batch.map((r) => r.id))
    const byId = new Map(rows.map((row) => [row.id, row]))
    for (const { id } of batch) created.push(toDoc(byId.get(id) as Row))
  }
  return created
}

// On the PostgreSQL server: one transaction, all or none.
async function importInTransaction (db: Db, inputs: ComponentGroupFields[], deadline: number, history: unknown[]): Promise<ComponentGroup[]> {
  return await db.transaction(async (tx) => {
    const names = await importNames(tx, inputs.map((f) => f.name), deadline)
    return await insertBatches(tx, inputs, names, deadline, history, async () => {}, [])
  })
}

// On the embedded database (one connection, which a transaction holds): each batch commits on
// its own and other requests run between batches; a failure deletes what the import stored, and
// the history it recorded.
async function importInBatches (db: Db, inputs: ComponentGroupFields[], deadline: number, history: unknown[]): Promise<ComponentGroup[]> {
  const inserted: string[] = []
  try {
    const names = await importNames(db, inputs.map((f) => f.name), deadline)
    return await insertBatches(db, inputs, names, deadline, history, async () => { await nextTurn() }, inserted)
  } catch (err) {
    if (inserted.length > 0) {
      await db.query(`WITH gone AS (DELETE FROM component_groups WHERE id = ANY($1::text[]))
        DELETE FROM component_group_versions WHERE group_id = ANY($1::text[])`, [inserted])
    }
    throw err
  }
}

/**
 * Creates every group or none, each with a new id; a name already taken (in the table or
 * earlier in the same import) gets the first free suffix. Imports run one at a time (across
 * instances); a concurrent create that takes a chosen name first makes the import start
 * again. Past `timeoutMs` the import stops and stores nothing.
 */
export async function importComponentGroups (db: Db, inputs: ComponentGroupFields[], timeoutMs: number,
  history: unknown[]): Promise<ImportOutcome> {
  const deadline = performance.now() + timeoutMs
  return await db.withAdvisoryLock('component-group-import', async () => {
    for (let attempt = 1; ; attempt++) {
      try {
        const created = db.kind === 'postgres'
          ? await importInTransaction(db, inputs, deadline, history)
          : await importInBatches(db, inputs, deadline, history)
        return { created }
      } catch (err) {
        if (err instanceof ImportDeadline) return { refusal: 'timeout' }
        if (!isUniqueViolation(err)) throw err
        if (attempt === WRITE_ATTEMPTS) return { refusal: 'name-taken' }
      }
    }
  })
}
