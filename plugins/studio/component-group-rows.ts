// How a component group is stored: its row (the GBAC lists and the name as columns for the
// indexes, the rest as JSONB) and the document read back from it.
import type { QueryOptions } from '../database/index.js'
import type { ComponentGroup, ComponentGroupFields } from '../../schemas/component-groups.js'

export interface Row {
  id: string
  name: string
  version: number
  gbac_read: string[]
  gbac_write: string[]
  doc: Pick<ComponentGroup, 'description' | 'members' | 'meta'>
}

export const COLUMNS = 'id, name, version, gbac_read, gbac_write, doc'

// Planned for their values on every call: a list's best plan depends on its filter, and an
// import's name look-ups run while the table grows under them.
export const CUSTOM_PLAN: QueryOptions = { plan: 'custom' }

// A write that found its document changed under it (by a concurrent change of its access lists),
// or an import that lost a name to a concurrent write, is tried again this many times before it
// is answered as a conflict.
export const WRITE_ATTEMPTS = 3

export function toDoc (row: Row): ComponentGroup {
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

/** The JSONB column: the fields that have no column of their own. */
export const storedDoc = (fields: ComponentGroupFields): Row['doc'] =>
  ({ description: fields.description, members: fields.members, meta: fields.meta })

export const isUniqueViolation = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === '23505'
