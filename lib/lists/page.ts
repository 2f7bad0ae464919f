// The page every list answers: the envelope `{items, count, skip, end, limit, total, next,
// previous}` around the items as the projection leaves them, and the one way a list route makes it.
import { InvalidListParameter } from './errors.js'
import { parseListQuery, type ListLimits, type ListQueryString, type ListRequest, type ListSpec } from './grammar.js'
import { project } from './projection.js'

/**
 * The envelope of a page: its items, where it starts, and the neighbouring pages' `skip`. The
 * next page starts after the last item, which is before skip + limit when the byte bound cut
 * the page.
 */
export function pageEnvelope<T> (items: T[], request: Pick<ListRequest, 'skip' | 'limit'>, total: number) {
  const end = request.skip + items.length
  return {
    items,
    count: items.length,
    skip: request.skip,
    end,
    limit: request.limit,
    total,
    next: items.length > 0 && end < total ? end : null,
    previous: request.skip > 0 ? Math.max(0, request.skip - request.limit) : null
  }
}

export type PageEnvelope<T> = ReturnType<typeof pageEnvelope<T>>

/**
 * What a list route answers: `query` read as the list language of `spec` (a 400,
 * INVALID_LIST_PARAMETER, naming the parameter when it is not), the page `read` finds for that
 * request, and its items as the projection leaves them, in the envelope.
 */
export async function listPage<T extends object> (spec: ListSpec, query: ListQueryString, limits: ListLimits,
  read: (request: ListRequest) => Promise<{ items: T[], total: number }>): Promise<PageEnvelope<Partial<T>>> {
  const request = parseListQuery(spec, query, limits)
  if (!request.ok) throw new InvalidListParameter(request.reason)
  const { items, total } = await read(request.value)
  return pageEnvelope(items.map((item) => project(item, request.value.projection)), request.value, total)
}
