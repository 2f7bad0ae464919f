// The Git objects of a commit the service makes, built in memory: their ids, their bytes and a
// pack of them. Replaces isomorphic-git's writeBlob, writeTree, writeCommit and packObjects before
// a push: the push is sent from memory, with less than half their work before it (see README.md
// here). Pure. Formats: https://git-scm.com/docs/gitformat-pack, and Git's tree and commit objects.

import { createHash } from 'node:crypto'
import { deflateSync } from 'node:zlib'
import type { GitIdentity } from '../commit.js'
import { objectId } from './pack-index.js'
import type { TreeEntry } from '../tree.js'

export type ObjectType = 'commit' | 'tree' | 'blob'

export interface GitObject {
  type: ObjectType
  oid: string
  /** The object's content, without Git's `<type> <size>\0` header. */
  content: Buffer
}

/** An object and its id: the SHA-1 of `<type> <size>\0<content>`. */
export function gitObject (type: ObjectType, content: Buffer): GitObject {
  return { type, oid: objectId(type, content).toString('hex'), content }
}

const DIRECTORY = '040000'

/** A tree's content: entries in Git's order (by name bytes, a directory's name as if it ended in '/'). */
export function treeContent (entries: readonly TreeEntry[]): Buffer {
  const named = entries.map((entry) => ({ entry, name: Buffer.from(entry.path, 'utf8') }))
  const sortKey = (e: { entry: TreeEntry, name: Buffer }): Buffer => e.entry.mode === DIRECTORY ? Buffer.concat([e.name, Buffer.from('/')]) : e.name
  named.sort((a, b) => Buffer.compare(sortKey(a), sortKey(b)))
  return Buffer.concat(named.flatMap(({ entry, name }) => [
    // Git writes a directory's mode without its leading zero.
    Buffer.from(`${entry.mode.replace(/^0/, '')} `), name, Buffer.from([0]), Buffer.from(entry.oid, 'hex')
  ]))
}

/** `Name <email> <seconds> <+hhmm>`; the offset counted in minutes west of UTC, as Date#getTimezoneOffset does. */
function ident (who: GitIdentity): string {
  const east = -who.timezoneOffset
  const minutes = Math.abs(east)
  const zone = `${east < 0 ? '-' : '+'}${String(Math.floor(minutes / 60)).padStart(2, '0')}${String(minutes % 60).padStart(2, '0')}`
  return `${who.name} <${who.email}> ${who.timestamp} ${zone}`
}

/** A commit's content; `message` is written as given (lib/git/commit.ts makes it end in one newline). */
export function commitContent (commit: { tree: string, parents: readonly string[], author: GitIdentity, committer: GitIdentity, message: string }): Buffer {
  const parents = commit.parents.map((p) => `parent ${p}\n`).join('')
  return Buffer.from(`tree ${commit.tree}\n${parents}author ${ident(commit.author)}\ncommitter ${ident(commit.committer)}\n\n${commit.message}`, 'utf8')
}

const PACK_TYPES: Record<ObjectType, number> = { commit: 1, tree: 2, blob: 3 }

/** A version 2 pack of `objects`, each whole (no deltas): what a push of them sends. */
export function packOf (objects: readonly GitObject[]): Buffer {
  const header = Buffer.alloc(12)
  header.write('PACK', 0, 'latin1')
  header.writeUInt32BE(2, 4)
  header.writeUInt32BE(objects.length, 8)
  const parts: Buffer[] = [header]
  for (const object of objects) {
    // Type and size: 3 bits of type and 4 of size, then 7 bits of size per byte, low bits first.
    let size = object.content.length
    const bytes = [(PACK_TYPES[object.type] << 4) | (size & 0x0f)]
    size = Math.floor(size / 16)
    while (size > 0) {
      bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) | 0x80
      bytes.push(size & 0x7f)
      size = Math.floor(size / 128)
    }
    parts.push(Buffer.from(bytes), deflateSync(object.content))
  }
  const body = Buffer.concat(parts)
  return Buffer.concat([body, createHash('sha1').update(body).digest()])
}
