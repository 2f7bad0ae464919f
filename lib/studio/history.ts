// Component-group history: who changed a group and how, what retention keeps, and the fields of
// a version entry as the list language projects them.
import type { ListSpec } from '../lists/grammar.js'

export type HistoryAction = 'create' | 'replace' | 'import' | 'restore' | 'delete'

/** Who made a change, as the request authenticated (a service account as its OAuth client's token). */
export interface Actor {
  username: string
  method: string
  clientId?: string
}

/** What the history keeps: `maxVersions` per group (0: history off), and, when set, nothing older than `maxAgeDays`. */
export interface HistorySettings {
  maxVersions: number
  maxAgeDays?: number
}

export const DEFAULT_HISTORY: HistorySettings = { maxVersions: 100 }

/**
 * A change removes the versions its own version puts past the limit (at most this many, by key)
 * and at most this many more from the front of the primary key (a lowered limit, the age limit):
 * a lowered limit is caught up with a few rows per change, never by a scan.
 */
export const PRUNE_BATCH = 4

/**
 * Without an age limit, only a change whose version is a multiple of this looks at the front of
 * the primary key (the versions a lowered limit left). The look walks the index entries of the
 * versions deleted since the table's last VACUUM (a busy group: thousands), and it finds nothing
 * unless the limit was lowered; a lowered limit is then caught up PRUNE_BATCH versions every
 * PRUNE_EVERY changes.
 */
export const PRUNE_EVERY = 8

/** The parameters that follow a write's own in its statement (see historyClauses). */
export function historyParams (action: HistoryAction, actor: Actor, settings: HistorySettings): unknown[] {
  return [action, actor.username, actor.method, actor.clientId ?? null, settings.maxVersions, settings.maxAgeDays ?? null]
}

/** The field a version entry holds its group in; only sent when `include` names it. */
export const DOCUMENT_FIELD = 'document'

/**
 * The list language on a group's versions (newest first, not sortable or filterable) and on the
 * deleted groups (latest delete first). `include` / `exclude` choose fields.
 */
export const VERSION_LIST = {
  idField: 'version',
  fields: ['_id', 'version', 'action', 'actor', 'changedAt', 'name', DOCUMENT_FIELD],
  sortable: ['version'],
  defaultSort: 'version',
  defaultOrder: -1,
  filterable: [],
  defaultFilterField: '',
  maxLimit: 100,
  maxValueLength: 1
} as const satisfies ListSpec

export const DELETED_LIST = { ...VERSION_LIST, idField: '_id', sortable: ['deleted'], defaultSort: 'deleted' } as const satisfies ListSpec

/** Whether entries are read with their documents: only when `include` names the document. */
export function wantsDocument (projection: { kind: string, fields?: ReadonlySet<string> }): boolean {
  return projection.kind === 'include' && projection.fields?.has(DOCUMENT_FIELD) === true
}
