// The page's only way to the API: openapi-fetch over the types generated from the service's own
// OpenAPI document at build time (npm run build), so a change of the API that breaks the page
// breaks its build. Every call goes relative to where the page is served (under a proxy's prefix
// too), with the page's own header: the service then answers 401 without a Basic challenge, and
// the browser opens no login dialog of its own.
import createClient from 'openapi-fetch'
import type { paths } from '../generated/api'
import type { Member } from '../../lib/studio-ui/member-tree'

/** The header that marks a request as the page's (no Basic challenge on a 401). */
export const PAGE_HEADER = { 'x-requested-with': 'netauto-studio' } as const

// The page lives at <base>/studio/ or <base>/automation-studio/: the API at <base>.
const base = new URL('..', document.baseURI).href.replace(/\/$/, '')

export const api = createClient<paths>({ baseUrl: base, headers: PAGE_HEADER, credentials: 'same-origin' })

type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never
type Ok<P extends keyof paths, M extends 'get' | 'put' | 'post' | 'delete'> =
  paths[P][M] extends { responses: { 200: infer R } } ? Json<R> : never

export type WhoAmI = Ok<'/whoami', 'get'>
export type ListPage = Ok<'/studio/component-groups', 'get'>
export type VersionsPage = Ok<'/studio/component-groups/{id}/versions', 'get'>
type VersionItem = VersionsPage['items'][number]

/** One version as the page shows it (the list's fields are optional in the document's types: a projection may leave them out). */
export interface VersionEntry { _id: string, version: number, action: string, username: string, changedAt: string, name: string }

export const asEntry = (item: VersionItem): VersionEntry => ({
  _id: item._id ?? '',
  version: item.version ?? 0,
  action: item.action ?? '',
  username: item.actor?.username ?? '',
  changedAt: item.changedAt ?? '',
  name: item.name ?? ''
})
export type Version = Ok<'/studio/component-groups/{id}/versions/{version}', 'get'>

export interface Group {
  _id: string
  name: string
  description: string
  members: Member[]
  gbacRead: string[]
  gbacWrite: string[]
  version: number
  meta: Record<string, unknown>
}

/** A group as the API sent it (its fields optional in the document's types), with the defaults of the absent ones. */
export function asGroup (doc: Partial<Group> & { members?: Member[] }): Group {
  return {
    _id: doc._id ?? '',
    name: doc.name ?? '',
    description: doc.description ?? '',
    members: doc.members ?? [],
    gbacRead: doc.gbacRead ?? [],
    gbacWrite: doc.gbacWrite ?? [],
    version: doc.version ?? 0,
    meta: doc.meta ?? {}
  }
}

export type Result<T> = { ok: true, data: T, response: Response } | { ok: false, status: number, message: string }

export const NETWORK_ERROR = 'The service could not be reached (network error): check the connection and try again.'

/** The outcome of an API call: its data, or the error's status and message (the API's own, or a network failure's). */
export async function call<T> (request: Promise<{ data?: T, error?: unknown, response: Response }>): Promise<Result<T>> {
  let outcome: { data?: T, error?: unknown, response: Response }
  try {
    outcome = await request
  } catch {
    return { ok: false, status: 0, message: NETWORK_ERROR }
  }
  const { data, error, response } = outcome
  if (response.ok && data !== undefined) return { ok: true, data, response }
  const message = typeof error === 'object' && error !== null && typeof (error as { message?: unknown }).message === 'string'
    ? (error as { message: string }).message
    : `The service answered ${response.status} ${response.statusText}`.trim()
  return { ok: false, status: response.status, message }
}

/** The If-Match value of a version. */
export const ifMatch = (version: number): string => `"${version}"`
