// The audit_events table: batches written by the flusher, pages for GET /audit, retention.
import type { Db } from '../database/index.js'
import type { AuditDetails, AuditEvent, TimeRange } from '../../lib/audit/events.js'
import type { ListRequest } from '../../lib/lists/grammar.js'
import { sql, type Sql } from '../../lib/lists/sql.js'
import { listStatements, readPage, listColumns, type ListSource } from '../../lib/lists/statements.js'
import { AUDIT_LIST, type AuditEvent as AuditEventDoc } from '../../schemas/audit.js'

interface EventRow {
  id: string | number | bigint
  at: Date
  actor: string | null
  service_account: string | null
  address: string
  request_id: string
  action: string
  target: string
  outcome: AuditEventDoc['outcome']
  status: number
  duration_ms: number
  details: AuditDetails | null
}

const COLUMNS = 'id, at, actor, service_account, address, request_id, action, target, outcome, status, duration_ms, details'

const LIST_COLUMNS = listColumns(AUDIT_LIST, {
  // The events' write order: their time order within an instance, and across instances within
  // the flush interval (docs/audit.md). The unique key a list needs; `at` itself is not unique.
  sortable: { time: 'id', id: 'id' },
  filterable: { actor: 'actor', action: 'action', target: 'target' }
})

/** The events a list reads (AUDIT_LIST): those within `range`. */
export function eventsSource (range: TimeRange): ListSource {
  const conditions: Sql[] = []
  if (range.from !== undefined) conditions.push(sql`at >= ${range.from}`)
  if (range.to !== undefined) conditions.push(sql`at < ${range.to}`)
  return { table: 'audit_events', columns: COLUMNS, ...LIST_COLUMNS, arms: [conditions] }
}

// One statement per batch, whatever its size: the events travel as one JSON parameter, in order
// (the time as epoch milliseconds).
const INSERT = `INSERT INTO audit_events (at, actor, service_account, address, request_id, action, target, outcome, status, duration_ms, details)
  SELECT to_timestamp((e->>'at')::float8 / 1000), e->>'actor', e->>'serviceAccount', e->>'address', e->>'requestId', e->>'action', e->>'target',
    e->>'outcome', (e->>'status')::int, (e->>'durationMs')::float8, nullif(e->'details', 'null'::jsonb)
  FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS batch(e, n) ORDER BY n`

// Rows older than the retention, oldest first, a batch at a time; rows another instance is
// deleting are left to it (never waits on a lock).
const PRUNE = `DELETE FROM audit_events WHERE id IN (
  SELECT id FROM audit_events WHERE at < now() - make_interval(days => $1) ORDER BY at LIMIT $2 FOR UPDATE SKIP LOCKED)`

function toEvent (row: EventRow): AuditEventDoc {
  return {
    id: Number(row.id),
    time: row.at.toISOString(),
    actor: row.actor,
    serviceAccount: row.service_account,
    address: row.address,
    requestId: row.request_id,
    action: row.action,
    target: row.target,
    outcome: row.outcome,
    status: row.status,
    durationMs: row.duration_ms,
    details: row.details
  }
}

/** The audit_events table (`fastify.audit.repository`). */
export interface AuditEventsRepository {
  /** Writes a batch of events, in order, in one statement. */
  insert: (events: AuditEvent[]) => Promise<void>
  /** A page of events, and how many match (see LIST_COUNT_LOOKAHEAD). */
  list: (request: ListRequest, range: TimeRange) => Promise<{ items: AuditEventDoc[], total: number }>
  /** Deletes up to `batch` events older than `days`; how many it deleted. */
  pruneBatch: (days: number, batch: number) => Promise<number>
}

export function auditEventsRepository (db: Db): AuditEventsRepository {
  return {
    async insert (events: AuditEvent[]): Promise<void> {
      await db.query(INSERT, [JSON.stringify(events)])
    },

    async list (request: ListRequest, range: TimeRange): Promise<{ items: AuditEventDoc[], total: number }> {
      const { rows, total } = await readPage<EventRow>(db, listStatements(request, eventsSource(range)), request)
      return { items: rows.map(toEvent), total }
    },

    async pruneBatch (days: number, batch: number): Promise<number> {
      return (await db.query(PRUNE, [days, batch])).rowCount
    }
  }
}
