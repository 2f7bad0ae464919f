// The members of a component group as the studio page shows them: a tree of folders built from
// the members' paths (a folder's path is a list of segments, a component's one string "/a/b/c").
// Every edit returns a new member list and keeps every other member as it was (its order, and no
// `type` added where a member had none).

export interface FolderMember { path: string[], type?: 'folder' }
export interface ComponentMember { path: string, type?: 'component', sourceCollection: string, ref: string }
export type Member = FolderMember | ComponentMember

export interface TreeNode {
  name: string
  /** The segments from the root to this node, its name last. */
  path: string[]
  kind: 'folder' | 'component'
  /** The member this node stands for; undefined for a folder only implied by a deeper path. */
  member?: number
  children: TreeNode[]
}

export const isComponent = (member: Member): member is ComponentMember => typeof member.path === 'string'

/** A member's path as segments: a component's string split on '/', empty segments dropped. */
export function segmentsOf (member: Member): string[] {
  return isComponent(member) ? member.path.split('/').filter((s) => s !== '') : member.path
}

const startsWith = (segments: readonly string[], prefix: readonly string[]): boolean =>
  prefix.length <= segments.length && prefix.every((s, i) => segments[i] === s)

const withSegments = (member: Member, segments: string[]): Member =>
  isComponent(member) ? { ...member, path: `/${segments.join('/')}` } : { ...member, path: segments }

/** The tree of `members`: folders first, then components, each by name. */
export function buildTree (members: readonly Member[]): TreeNode[] {
  const root: TreeNode = { name: '', path: [], kind: 'folder', children: [] }
  const folderAt = (segments: string[]): TreeNode => {
    let node = root
    for (let i = 0; i < segments.length; i++) {
      const name = segments[i] as string
      let next = node.children.find((c) => c.kind === 'folder' && c.name === name)
      if (next === undefined) {
        next = { name, path: segments.slice(0, i + 1), kind: 'folder', children: [] }
        node.children.push(next)
      }
      node = next
    }
    return node
  }
  members.forEach((member, index) => {
    const segments = segmentsOf(member)
    if (segments.length === 0) return
    if (isComponent(member)) {
      const parent = folderAt(segments.slice(0, -1))
      parent.children.push({ name: segments[segments.length - 1] as string, path: segments, kind: 'component', member: index, children: [] })
    } else {
      const folder = folderAt(segments)
      folder.member ??= index
    }
  })
  const order = (nodes: TreeNode[]): TreeNode[] => nodes
    .sort((a, b) => a.kind === b.kind ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.kind === 'folder' ? -1 : 1)
    .map((n) => ({ ...n, children: order(n.children) }))
  return order(root.children)
}

/** Why `name` cannot be a new member's or a renamed node's name under `parent`; undefined when it can. */
export function nameProblem (members: readonly Member[], parent: readonly string[], name: string, kind: 'folder' | 'component'): string | undefined {
  if (name.trim() === '') return 'The name is empty'
  if (name.includes('/')) return 'A name may not contain "/"'
  const taken = members.some((m) => {
    const segments = segmentsOf(m)
    return segments.length === parent.length + 1 && startsWith(segments, parent) && segments[parent.length] === name &&
      (isComponent(m) ? 'component' : 'folder') === kind
  })
  return taken ? `"${name}" is already in this folder` : undefined
}

export function addFolder (members: readonly Member[], parent: readonly string[], name: string): Member[] {
  return [...members, { path: [...parent, name], type: 'folder' }]
}

export function addComponent (members: readonly Member[], parent: readonly string[], name: string, sourceCollection: string, ref: string): Member[] {
  return [...members, { path: `/${[...parent, name].join('/')}`, type: 'component', sourceCollection, ref }]
}

/**
 * Renames the node at `path` (its last segment) to `name`: a component alone, a folder with all
 * that lies under it.
 */
export function renameNode (members: readonly Member[], node: Pick<TreeNode, 'path' | 'kind' | 'member'>, name: string): Member[] {
  const depth = node.path.length - 1
  return members.map((member, index) => {
    const segments = segmentsOf(member)
    const affected = node.kind === 'component' ? index === node.member : startsWith(segments, node.path)
    if (!affected) return member
    const renamed = [...segments]
    renamed[depth] = name
    return withSegments(member, renamed)
  })
}

/** Removes the node at `path`: a component alone, a folder with all that lies under it. */
export function removeNode (members: readonly Member[], node: Pick<TreeNode, 'path' | 'kind' | 'member'>): Member[] {
  return members.filter((member, index) => node.kind === 'component' ? index !== node.member : !startsWith(segmentsOf(member), node.path))
}

/** Every folder of the tree as a path, the root first ([]), in tree order: the places a member can be added. */
export function folderPaths (tree: readonly TreeNode[]): string[][] {
  const out: string[][] = [[]]
  const walk = (nodes: readonly TreeNode[]): void => {
    for (const node of nodes) {
      if (node.kind !== 'folder') continue
      out.push(node.path)
      walk(node.children)
    }
  }
  walk(tree)
  return out
}
