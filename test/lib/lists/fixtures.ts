// The list the grammar and statement tests read: a document list sorted by name or id.
import type { ListQueryString, ListSpec } from '../../../lib/lists/grammar.js'

export const SPEC: ListSpec = {
  idField: '_id',
  fields: ['_id', 'name', 'description', 'version'],
  sortable: ['name', '_id'],
  defaultSort: 'name',
  filterable: ['name', 'description'],
  defaultFilterField: 'name',
  maxLimit: 100,
  maxValueLength: 255
}

export const LIMITS = { LIST_MAX_PAGE_BYTES: 8 * 1024 * 1024 }

/** The query string of a first page of 25 by name, with `q` over it. */
export const query = (q: Partial<ListQueryString> = {}): ListQueryString => ({ limit: 25, skip: 0, sort: 'name', order: 1, ...q })
