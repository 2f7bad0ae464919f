// What differs between two versions of a component group, as the studio page's history shows it:
// field by field, the members as the paths added and removed.
import { isComponent, segmentsOf, type Member } from './member-tree.js'

export interface GroupContent {
  name: string
  description: string
  members: readonly Member[]
  gbacRead: readonly string[]
  gbacWrite: readonly string[]
  meta: Record<string, unknown>
}

export type Change =
  | { field: 'name' | 'description' | 'meta', before: string, after: string }
  | { field: 'gbacRead' | 'gbacWrite', added: string[], removed: string[] }
  | { field: 'members', added: string[], removed: string[] }

/** A member as one line: its path, and for a component where it comes from. */
export function memberLabel (member: Member): string {
  const path = `/${segmentsOf(member).join('/')}`
  return isComponent(member) ? `${path} (component ${member.sourceCollection}/${member.ref})` : `${path}/ (folder)`
}

/** JSON text with keys in order, so that two objects equal in content compare equal. */
export function canonicalJson (value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0)
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

function setChange (before: readonly string[], after: readonly string[]): { added: string[], removed: string[] } {
  const old = new Set(before)
  const now = new Set(after)
  return { added: after.filter((x) => !old.has(x)), removed: before.filter((x) => !now.has(x)) }
}

/** The changes that turn `from` into `to`; empty when their content is the same. */
export function diffGroups (from: GroupContent, to: GroupContent): Change[] {
  const changes: Change[] = []
  if (from.name !== to.name) changes.push({ field: 'name', before: from.name, after: to.name })
  if (from.description !== to.description) changes.push({ field: 'description', before: from.description, after: to.description })
  for (const field of ['gbacRead', 'gbacWrite'] as const) {
    const change = setChange(from[field], to[field])
    if (change.added.length + change.removed.length > 0) changes.push({ field, ...change })
  }
  const members = setChange(from.members.map(memberLabel), to.members.map(memberLabel))
  if (members.added.length + members.removed.length > 0) changes.push({ field: 'members', ...members })
  const before = canonicalJson(from.meta)
  const after = canonicalJson(to.meta)
  if (before !== after) changes.push({ field: 'meta', before, after })
  return changes
}
