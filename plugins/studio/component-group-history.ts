// Component-group history in SQL: the clauses a write adds to its own statement (so a change
// and its version exist together or not at all, on both databases), and the reads of versions
// and of deleted groups.
import type { Queryable } from '../database/index.js'
import type { ComponentGroup } from '../../schemas/component-groups.js'
import type { VersionEntry } from '../../schemas/component-group-history.js'
import { bypassesGbac, type GbacUser } from '../../lib/studio/gbac.js'
import { PRUNE_BATCH, PRUNE_EVERY, type HistoryAction } from '../../lib/studio/history.js'
import type { ListRequest } from '../../lib/lists/grammar.js'
import { param, sql, type Param, type Sql } from '../../lib/lists/sql.js'
import { readPage, listStatements, listColumns, type ListSource } from '../../lib/lists/statements.js'
import { DELETED_LIST, VERSION_LIST } from '../../lib/studio/history.js'
import { toDoc, type Row } from './component-group-rows.js'

/**
 * The clauses of a write's WITH that record `source` (a CTE with the columns of COLUMNS: the
 * group after the change) and prune its group's oldest versions, over the six parameters of
 * historyParams() from `$at`. Nothing is recorded or pruned when the history is off.
 *
 * Retention goes by the version the change made, not by what the statement's snapshot shows:
 * writers of one group queue on its row lock with snapshots taken before they waited, so the
 * oldest versions they see may have gone meanwhile (pruning "the oldest few seen" then fell
 * behind, and a busy group kept ever more versions). `pastLimit` removes the versions the limit
 * has just passed, by key; `caughtUp` removes, from the front of the primary key, older ones a
 * lowered limit left (below that range, so the two never meet) and those past the age limit.
 * Without an age limit it looks only on every PRUNE_EVERY-th version (it finds nothing in the
 * usual case, and the look walks the entries of deleted versions not yet vacuumed).
 * At most 2 * PRUNE_BATCH rows a change.
 */
export function historyClauses (source: string, at: number): string {
  const [action, actor, method, client, max, age] = [0, 1, 2, 3, 4, 5].map((i) => `$${at + i}`)
  const record = `recorded AS (INSERT INTO component_group_versions
      (group_id, version, action, actor, auth_method, client_id, name, gbac_read, gbac_write, doc)
    SELECT id, version, ${action}::text, ${actor}::text, ${method}::text, ${client}::text, name, gbac_read, gbac_write, doc
    FROM ${source} WHERE ${max}::int > 0)`
  const limit = `c.version - ${max}::int`
  const below = `${limit} - ${PRUNE_BATCH}`
  // (A new group has nothing to prune: each look costs one probe of the index.)
  return `${record},
  pastLimit AS (DELETE FROM component_group_versions AS p USING ${source} AS c WHERE ${max}::int > 0
    AND p.group_id = c.id AND p.version > ${below} AND p.version <= ${limit}),
  caughtUp AS (DELETE FROM component_group_versions AS p WHERE ${max}::int > 0 AND (p.group_id, p.version) IN (
    SELECT o.group_id, o.version FROM (SELECT id, version FROM ${source}
        WHERE ${age}::int IS NOT NULL OR version % ${PRUNE_EVERY} = 0) AS c,
      LATERAL (SELECT group_id, version, changed_at FROM component_group_versions
        WHERE group_id = c.id AND version <= CASE WHEN ${age}::int IS NULL THEN ${below} ELSE 2147483647 END
        ORDER BY version LIMIT ${PRUNE_BATCH}) AS o
    WHERE o.version <= ${below} OR (o.version > ${limit} AND o.changed_at < now() - make_interval(days => ${age}::int))))`
}

// The time of a change as the answer writes it (`2026-01-31T12:00:00.123Z`, milliseconds cut as
// a Date cuts them): formatted by the database, it is not parsed into a Date and written back
// out for every entry (a tenth of the service's CPU time on a page of 25 versions).
const CHANGED_AT = 'to_char(changed_at AT TIME ZONE \'UTC\', \'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"\') AS changed_at'
const ENTRY_COLUMNS = `group_id, version, action, actor, auth_method, client_id, ${CHANGED_AT}, name`
const DOCUMENT_COLUMNS = 'gbac_read, gbac_write, doc'

interface EntryRow {
  group_id: string
  version: number
  action: HistoryAction
  actor: string
  auth_method: string
  client_id: string | null
  changed_at: string
  name: string
  gbac_read?: string[]
  gbac_write?: string[]
  doc?: Row['doc']
}

function toEntry (row: EntryRow): VersionEntry {
  const entry: VersionEntry = {
    _id: row.group_id,
    version: row.version,
    action: row.action,
    actor: { username: row.actor, method: row.auth_method, ...(row.client_id === null ? {} : { clientId: row.client_id }) },
    changedAt: row.changed_at,
    name: row.name
  }
  if (row.doc !== undefined) entry.document = toVersionDoc(row as Row & EntryRow)
  return entry
}

const toVersionDoc = (row: Row & EntryRow): ComponentGroup => toDoc({ ...row, id: row.group_id })

// Who may read group `id` now, for a reader who is not an admin (of `groups`).
const readableNow = (id: Param, groups: string[]): Sql => sql`EXISTS (SELECT 1 FROM component_groups AS g WHERE g.id = ${id}
  AND (cardinality(g.gbac_read) = 0 OR g.gbac_read && ${groups}::text[]))`

/**
 * The most bytes a version entry without its document takes as JSON text (the byte bound's
 * measure): the ids have 24 characters, the name at most 255 (component_groups' CHECK), the
 * actor is a username of at most 64 (users' CHECK) or a service account's principal, the method
 * one of four words; a character takes at most 6 bytes (`\u001f`). About 2,200 bytes at most.
 */
export const VERSION_ENTRY_MAX_BYTES = 4096

const MAX_VERSION = 2_147_483_647

// A group's versions in their order; the deleted groups in the order of their deletes (seq).
const VERSION_COLUMNS = listColumns(VERSION_LIST, { sortable: { version: 'version' }, filterable: {} })
const DELETED_COLUMNS = listColumns(DELETED_LIST, { sortable: { deleted: 'seq' }, filterable: {} })

/** The rows of group `id`'s history that `user` may read: every one for an admin (a deleted group's too). */
export function versionsSource (user: GbacUser, id: string, withDocument: boolean): ListSource {
  // One group's versions in primary-key order, whatever the values: the plan can be kept. Kept
  // by PostgreSQL, that is, only if its generic plan looks no dearer than one planned for the
  // values: with LIMIT and OFFSET as parameters it guesses a tenth of the group's rows for each
  // (a thousand of 10,000 versions), and so planned every page again (more than half of the
  // statement's time). The range of every version, as parameters, is guessed at 0.5% of the
  // group's rows, which makes the generic plan the cheaper one; it removes no row, only bounds
  // the page's index scan (not the count's, where it would be checked on each of its entries).
  const source = {
    table: 'component_group_versions',
    columns: withDocument ? `${ENTRY_COLUMNS}, ${DOCUMENT_COLUMNS}` : ENTRY_COLUMNS,
    ...VERSION_COLUMNS,
    plansAlike: true,
    ...(withDocument ? {} : { maxRowBytes: VERSION_ENTRY_MAX_BYTES })
  }
  const groupId = param(id)
  const pageOnly = [sql`version BETWEEN ${1}::int AND ${MAX_VERSION}::int`]
  if (bypassesGbac(user)) return { ...source, arms: [[sql`group_id = ${groupId}`]], pageOnly }
  return { ...source, arms: [[sql`group_id = ${groupId}`, readableNow(groupId, [...user.groups])]], pageOnly }
}

// A deleted group: its latest version is a delete (a restore would have added one after it).
const DELETED_SOURCE = (withDocument: boolean): ListSource => ({
  table: 'component_group_versions',
  columns: `seq, ${ENTRY_COLUMNS}${withDocument ? `, ${DOCUMENT_COLUMNS}` : ''}`,
  ...DELETED_COLUMNS,
  arms: [[sql`action = 'delete'`, sql`NOT EXISTS (SELECT 1 FROM component_group_versions AS later
    WHERE later.group_id = component_group_versions.group_id AND later.version > component_group_versions.version)`]]
})

const VERSION_SQL = `SELECT ${ENTRY_COLUMNS}, ${DOCUMENT_COLUMNS} FROM component_group_versions WHERE group_id = $1 AND version = $2`
const LATEST_SQL = `SELECT ${ENTRY_COLUMNS}, ${DOCUMENT_COLUMNS} FROM component_group_versions WHERE group_id = $1 ORDER BY version DESC LIMIT 1`

/** The history reads. GBAC is the caller's to apply to single versions (the route knows the group). */
/** The reads of the component groups' history (`componentGroupsRepository.versions`). */
export interface HistoryReads {
  /** A page of group `id`'s versions newest first, as `user` may read them now. */
  page: (user: GbacUser, id: string, request: ListRequest, withDocument: boolean) => Promise<{ items: VersionEntry[], total: number }>
  /** A page of the deleted groups, the latest delete first (for admins). */
  deleted: (request: ListRequest, withDocument: boolean) => Promise<{ items: VersionEntry[], total: number }>
  /** One version of group `id`, whole; undefined when there is none (no GBAC: see the caller). */
  version: (id: string, version: number) => Promise<VersionEntry | undefined>
  /** The newest version of group `id`: a delete when the group is deleted. */
  latest: (id: string) => Promise<VersionEntry | undefined>
}

export function historyReads (db: Queryable): HistoryReads {
  return {
    async page (user: GbacUser, id: string, request: ListRequest, withDocument: boolean): Promise<{ items: VersionEntry[], total: number }> {
      const { rows, total } = await readPage<EntryRow>(db, listStatements(request, versionsSource(user, id, withDocument)), request)
      return { items: rows.map(toEntry), total }
    },

    async deleted (request: ListRequest, withDocument: boolean): Promise<{ items: VersionEntry[], total: number }> {
      const { rows, total } = await readPage<EntryRow>(db, listStatements(request, DELETED_SOURCE(withDocument)), request)
      return { items: rows.map(toEntry), total }
    },

    async version (id: string, version: number): Promise<VersionEntry | undefined> {
      const { rows } = await db.query<EntryRow>(VERSION_SQL, [id, version])
      return rows[0] === undefined ? undefined : toEntry(rows[0])
    },

    async latest (id: string): Promise<VersionEntry | undefined> {
      const { rows } = await db.query<EntryRow>(LATEST_SQL, [id])
      return rows[0] === undefined ? undefined : toEntry(rows[0])
    }
  }
}
