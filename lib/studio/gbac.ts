// Group-based access control on documents: who may read and write one, and, when a write
// touched nothing, why. The repository applies the same rules in SQL (see
// plugins/studio/component-groups-repository.ts); these are the rules it must agree with.
import { matchesVersion, type ExpectedVersions } from './if-match.js'

export interface GbacUser {
  roles: readonly string[]
  groups: readonly string[]
}

export interface GbacLists {
  gbacRead: readonly string[]
  gbacWrite: readonly string[]
}

/** Admins see and change every document, whatever its lists say. */
export function bypassesGbac (user: GbacUser): boolean {
  return user.roles.includes('admin')
}

/** An empty list restricts nothing; otherwise the user must share one of its groups. */
export function listAdmits (list: readonly string[], user: GbacUser): boolean {
  return list.length === 0 || list.some((group) => user.groups.includes(group))
}

export function mayRead (user: GbacUser, doc: GbacLists): boolean {
  return bypassesGbac(user) || listAdmits(doc.gbacRead, user)
}

/** Writing needs reading too: a document one may not read is, to that user, not there. */
export function mayWrite (user: GbacUser, doc: GbacLists): boolean {
  return bypassesGbac(user) || (listAdmits(doc.gbacRead, user) && listAdmits(doc.gbacWrite, user))
}

/** The parameters of the SQL form of these rules: `[bypass, groups]`. */
export function gbacParams (user: GbacUser): [boolean, string[]] {
  return [bypassesGbac(user), [...user.groups]]
}

export type Refusal = 'not-found' | 'forbidden' | 'stale'

/**
 * What stops `user` from writing `current` (`undefined`: gone) when the writer expects one of
 * the versions `expected`; `undefined` when nothing does. A document the user may not read is
 * not found; one it may read but not write is forbidden; a version it does not expect is stale.
 */
export function writeRefusal (user: GbacUser, current: (GbacLists & { version: number }) | undefined, expected: ExpectedVersions): Refusal | undefined {
  if (current === undefined || !mayRead(user, current)) return 'not-found'
  if (!mayWrite(user, current)) return 'forbidden'
  if (!matchesVersion(expected, current.version)) return 'stale'
  return undefined
}
