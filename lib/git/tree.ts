// Adding one file to a Git tree by editing only the trees on its path, so the cost of a commit
// follows the depth of the path, not the size of the repository. The object store is passed in.

export interface TreeEntry {
  mode: string
  path: string
  oid: string
  type: 'blob' | 'tree' | 'commit'
}

/** Where trees are read and written (a repository's object database). */
export interface TreeStore {
  readTree: (oid: string) => Promise<TreeEntry[]>
  writeTree: (entries: TreeEntry[]) => Promise<string>
}

export type AddFileResult =
  | { ok: true, tree: string, written: string[] }
  | { ok: false, conflict: string }

const REGULAR_FILE = '100644'
const DIRECTORY = '040000'
const SYMLINK = '120000'

/**
 * Returns the root tree with a regular file `path` (already validated, '/'-separated) holding
 * `blob`, and the trees written for it. Nothing is written when the path is taken: by any entry at
 * `path` itself, or by a non-directory where a parent directory should be.
 */
export async function addFileToTree (store: TreeStore, root: string | undefined, path: string, blob: string): Promise<AddFileResult> {
  const segments = path.split('/')
  // Read down the path first, so a conflict is found before anything is written.
  const levels: TreeEntry[][] = []
  let oid = root
  for (let depth = 0; depth < segments.length; depth++) {
    const entries = oid === undefined ? [] : await store.readTree(oid)
    levels.push(entries)
    const existing = entries.find((e) => e.path === segments[depth])
    const here = segments.slice(0, depth + 1).join('/')
    if (depth === segments.length - 1) {
      if (existing !== undefined) {
        return { ok: false, conflict: existing.type === 'tree' ? `${here} already exists as a directory` : `${here} already exists` }
      }
    } else if (existing !== undefined && existing.type !== 'tree') {
      return { ok: false, conflict: `${here} already exists and is not a directory` }
    }
    oid = existing?.oid
  }

  const written: string[] = []
  let child: TreeEntry = { mode: REGULAR_FILE, path: segments[segments.length - 1] as string, oid: blob, type: 'blob' }
  for (let depth = segments.length - 1; depth >= 0; depth--) {
    const entries = (levels[depth] as TreeEntry[]).filter((e) => e.path !== child.path)
    const tree = await store.writeTree([...entries, child])
    written.push(tree)
    if (depth > 0) child = { mode: DIRECTORY, path: segments[depth - 1] as string, oid: tree, type: 'tree' }
  }
  return { ok: true, tree: written[written.length - 1] as string, written }
}

export type FindResult =
  | { ok: true, entry: TreeEntry }
  | { ok: false, missing: string }

/** The entry at `path` (validated, '/'-separated) under `root`, or the first part of it that is missing. */
export async function findInTree (store: TreeStore, root: string, path: string): Promise<FindResult> {
  const segments = path.split('/')
  let oid = root
  for (let depth = 0; depth < segments.length; depth++) {
    const here = segments.slice(0, depth + 1).join('/')
    const entry = (await store.readTree(oid)).find((e) => e.path === segments[depth])
    if (entry === undefined) return { ok: false, missing: here }
    if (depth === segments.length - 1) return { ok: true, entry }
    if (entry.type !== 'tree') return { ok: false, missing: `${segments.slice(0, depth + 2).join('/')} (${here} is not a directory)` }
    oid = entry.oid
  }
  return { ok: false, missing: path }
}

export type ReplaceFileResult =
  | { ok: true, tree: string, written: string[], previous: string }
  | { ok: true, unchanged: true, previous: string }
  | { ok: false, missing: string }

/**
 * Returns the root tree with the existing regular file `path` now holding `blob`, and the trees
 * written for it; nothing is written when the file already holds `blob` or is not there (a
 * directory at `path` is not a file). `previous` is the blob the file held.
 */
export async function replaceFileInTree (store: TreeStore, root: string, path: string, blob: string): Promise<ReplaceFileResult> {
  const segments = path.split('/')
  const levels: TreeEntry[][] = []
  let oid = root
  let file: TreeEntry | undefined
  for (let depth = 0; depth < segments.length; depth++) {
    const entries = await store.readTree(oid)
    levels.push(entries)
    const here = segments.slice(0, depth + 1).join('/')
    const existing = entries.find((e) => e.path === segments[depth])
    if (existing === undefined) return { ok: false, missing: here }
    if (depth === segments.length - 1) {
      if (existing.type !== 'blob') return { ok: false, missing: `${here} (a directory, not a file)` }
      if (existing.mode === SYMLINK) return { ok: false, missing: `${here} (a symbolic link, not a file)` }
      file = existing
    } else {
      if (existing.type !== 'tree') return { ok: false, missing: `${segments.slice(0, depth + 2).join('/')} (${here} is not a directory)` }
      oid = existing.oid
    }
  }
  const previous = (file as TreeEntry).oid
  if (previous === blob) return { ok: true, unchanged: true, previous }
  const written: string[] = []
  // The file keeps its mode (an executable stays executable).
  let child: TreeEntry = { ...(file as TreeEntry), oid: blob }
  for (let depth = segments.length - 1; depth >= 0; depth--) {
    const entries = (levels[depth] as TreeEntry[]).map((e) => e.path === child.path ? child : e)
    const tree = await store.writeTree(entries)
    written.push(tree)
    if (depth > 0) child = { mode: DIRECTORY, path: segments[depth - 1] as string, oid: tree, type: 'tree' }
  }
  return { ok: true, tree: written[written.length - 1] as string, written, previous }
}
