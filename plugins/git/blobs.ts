// Reading one blob of a cache (a project file) with its size known before anything is inflated:
// from the pack entry's header (or, for a delta, the first bytes of the delta), or a loose
// object's header. A blob past the limit is refused unread; one within it is inflated a piece at a
// time in zlib's thread pool (lib/git/protocol/inflate.ts), never on the event loop in one call.
// Replaces isomorphic-git's readBlob, which inflates the whole object first (and holds the pack).
import { open, readdir, readFile, type FileHandle } from 'node:fs/promises'
import path from 'node:path'
import { InflateError, inflatePieces, inflateStart, type ReadAt } from '../../lib/git/protocol/inflate.js'
import {
  MAX_ENTRY_HEADER_BYTES, applyDelta, deltaSizes, parseEntryHeader, type ObjectType
} from '../../lib/git/protocol/pack-index.js'
import { ObjectStoreError, findInIndex, looseHeader } from '../../lib/git/protocol/pack-read.js'

/**
 * An object a delta is built on, or a delta, held whole in memory at most this large (as when a
 * pack is indexed: lib/git/protocol/pack-index.ts).
 */
export const MAX_HELD_OBJECT_BYTES = 32 * 1024 * 1024
/** Deltas on deltas followed at most (git packs with 50 unless told otherwise; it allows 4,095). */
const MAX_DELTA_CHAIN = 4096
/** Inflated bytes read to learn a loose object's type and size (`commit 1234\0`) or a delta's two sizes. */
const HEADER_BYTES = 64

/** The blob is larger than may be read, or is stored as a delta on an object larger than may be held. */
export class BlobTooLarge extends Error {
  constructor (readonly description: string) {
    super(`blob too large: ${description}`)
    this.name = 'BlobTooLarge'
  }
}

/** The pack indexes of a cache, read once per pack (packs never change once written: their name is their checksum). */
type IndexMemo = Map<string, Buffer>
const INDEXES = Symbol('pack indexes')

function indexMemo (memory: object): IndexMemo {
  const holder = memory as { [INDEXES]?: IndexMemo }
  holder[INDEXES] ??= new Map()
  return holder[INDEXES]
}

const readerOf = (file: FileHandle): ReadAt => async (position, length) => {
  const buffer = Buffer.allocUnsafe(length)
  const { bytesRead } = await file.read(buffer, 0, length, position)
  return buffer.subarray(0, bytesRead)
}

/** Inflates the stream at `start` whole into a buffer of `size` bytes, a piece at a time. */
async function inflateWhole (read: ReadAt, start: number, end: number, size: number, skip = 0): Promise<Buffer> {
  const out = Buffer.allocUnsafe(size)
  let seen = 0
  let o = 0
  const { size: total } = await inflatePieces(read, start, end, skip + size, (piece) => {
    const from = Math.max(0, skip - seen)
    seen += piece.length
    if (from < piece.length) o += piece.copy(out, o, from)
  })
  if (total !== skip + size) throw new ObjectStoreError(`an object is not the size its header states (${total - skip} of ${size} bytes)`)
  return out
}

interface Located {
  file: FileHandle
  size: number
  offset: number
  /** Loose objects are whole files; in a pack, the entry at `offset`. */
  loose: boolean
}

export interface BlobReader {
  /**
   * Blob `oid` of the cache at `gitdir`, refused (BlobTooLarge) before it is inflated when it is
   * larger than `maxBytes`, or built from an object larger than MAX_HELD_OBJECT_BYTES.
   */
  read: (oid: string, maxBytes: number) => Promise<Buffer>
}

export function blobReader (gitdir: string, memory: object): BlobReader {
  const objects = path.join(gitdir, 'objects')
  const indexes = indexMemo(memory)
  const files: FileHandle[] = []

  async function openFile (file: string): Promise<FileHandle | undefined> {
    try {
      const handle = await open(file, 'r')
      files.push(handle)
      return handle
    } catch (err) {
      if ((err as { code?: unknown }).code === 'ENOENT') return undefined
      throw err
    }
  }

  /** Where object `oid` is: loose, or in which pack at which offset. */
  async function locate (oid: string): Promise<Located> {
    const loose = await openFile(path.join(objects, oid.slice(0, 2), oid.slice(2)))
    if (loose !== undefined) return { file: loose, size: (await loose.stat()).size, offset: 0, loose: true }
    const id = Buffer.from(oid, 'hex')
    const packDir = path.join(objects, 'pack')
    for (const name of (await readdir(packDir).catch(() => [])).filter((f) => f.endsWith('.idx')).sort()) {
      let idx = indexes.get(name)
      if (idx === undefined) {
        idx = await readFile(path.join(packDir, name))
        indexes.set(name, idx)
      }
      const offset = findInIndex(idx, id)
      if (offset === undefined) continue
      const pack = await openFile(path.join(packDir, `${name.slice(0, -'.idx'.length)}.pack`))
      if (pack === undefined) throw new ObjectStoreError(`the pack of ${name} is missing`)
      return { file: pack, size: (await pack.stat()).size, offset, loose: false }
    }
    throw new ObjectStoreError(`object ${oid} is not in the cache`)
  }

  /** An object's type and size, read from its header, and how to inflate it. */
  async function header (at: Located): Promise<{ type: ObjectType | 'delta', size: number, dataStart: number, skip: number, base?: () => Promise<Located> }> {
    const read = readerOf(at.file)
    if (at.loose) {
      const start = looseHeader(await inflateStart(read, 0, at.size, HEADER_BYTES))
      return { type: start.type, size: start.size, dataStart: 0, skip: start.headerBytes }
    }
    const head = parseEntryHeader(await read(at.offset, MAX_ENTRY_HEADER_BYTES), at.offset)
    const dataStart = at.offset + head.headerBytes
    if (head.kind !== 'ofs-delta' && head.kind !== 'ref-delta') return { type: head.kind, size: head.size, dataStart, skip: 0 }
    const { baseOffset, baseOid } = head
    const base = baseOffset !== undefined
      ? async (): Promise<Located> => ({ ...at, offset: baseOffset })
      : async (): Promise<Located> => await locate(baseOid as string)
    return { type: 'delta', size: head.size, dataStart, skip: 0, base }
  }

  /** The object at `at`, whole, refused past `maxBytes` (`what` says what it is for, in the refusal). */
  async function objectAt (start: Located, maxBytes: number, what: (size: number) => string): Promise<{ type: ObjectType, data: Buffer }> {
    // The chain of deltas down to a whole object, read from headers alone; then built up again.
    const deltas: Array<{ at: Located, size: number, dataStart: number }> = []
    let at = start
    for (;;) {
      const head = await header(at)
      const read = readerOf(at.file)
      if (head.type !== 'delta') {
        const limit = deltas.length === 0 ? maxBytes : MAX_HELD_OBJECT_BYTES
        if (head.size > limit) throw new BlobTooLarge(deltas.length === 0 ? what(head.size) : `stored as a change to an object of ${head.size} bytes, past the ${limit} bytes held in memory`)
        let data = await inflateWhole(read, head.dataStart, at.size, head.size, head.skip)
        const type = head.type
        for (let d = deltas.length - 1; d >= 0; d--) {
          const link = deltas[d] as { at: Located, size: number, dataStart: number }
          const delta = await inflateWhole(readerOf(link.at.file), link.dataStart, link.at.size, link.size)
          data = applyDelta(delta, data, d === 0 ? maxBytes : MAX_HELD_OBJECT_BYTES)
        }
        return { type, data }
      }
      // A delta: the object's size is the second of the two sizes at the start of the delta.
      const { sourceSize, targetSize } = deltaSizes(await inflateStart(read, head.dataStart, at.size, HEADER_BYTES))
      if (deltas.length === 0 && targetSize > maxBytes) throw new BlobTooLarge(what(targetSize))
      if (head.size > MAX_HELD_OBJECT_BYTES || sourceSize > MAX_HELD_OBJECT_BYTES) {
        throw new BlobTooLarge(`stored as a change of ${head.size} bytes to an object of ${sourceSize} bytes, past the ${MAX_HELD_OBJECT_BYTES} bytes held in memory`)
      }
      if (deltas.length >= MAX_DELTA_CHAIN) throw new ObjectStoreError(`a chain of more than ${MAX_DELTA_CHAIN} deltas`)
      deltas.push({ at, size: head.size, dataStart: head.dataStart })
      at = await (head.base as () => Promise<Located>)()
    }
  }

  return {
    async read (oid, maxBytes) {
      try {
        const { type, data } = await objectAt(await locate(oid), maxBytes, (size) => `a file of ${size} bytes`)
        if (type !== 'blob') throw new ObjectStoreError(`object ${oid} is a ${type}, not a blob`)
        return data
      } catch (err) {
        if (err instanceof InflateError) throw new ObjectStoreError(`an object does not inflate (${err.message})`)
        throw err
      } finally {
        await Promise.all(files.splice(0).map(async (f) => { await f.close() }))
      }
    }
  }
}
