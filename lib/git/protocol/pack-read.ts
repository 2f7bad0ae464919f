// Finding an object in a cache's object store, and reading its size, without inflating it:
// the version-2 pack index (the one pack-index.ts and git write), and a loose object's header.
// Used to read project files with their size known first (plugins/git/blobs.ts). Pure.
// Formats: https://git-scm.com/docs/pack-format, and Git's loose objects (`<type> <size>\0<data>`, deflated).
import type { ObjectType } from './pack-index.js'

const IDX_SIGNATURE = 0xff744f63
const FANOUT = 8
const LARGE_OFFSET = 0x80000000

/** A pack index or loose object that is not what Git writes (a damaged cache). */
export class ObjectStoreError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'ObjectStoreError'
  }
}

/** The offset in its pack of object `oid` (20 bytes), found in the version-2 index `idx`; undefined when the pack lacks it. */
export function findInIndex (idx: Buffer, oid: Buffer): number | undefined {
  if (idx.length < FANOUT + 256 * 4 + 40 || idx.readUInt32BE(0) !== IDX_SIGNATURE || idx.readUInt32BE(4) !== 2) {
    throw new ObjectStoreError('not a version-2 pack index')
  }
  const n = idx.readUInt32BE(FANOUT + 255 * 4)
  const ids = FANOUT + 256 * 4
  const offsets = ids + n * 24
  const largeOffsets = offsets + n * 4
  if (idx.length < largeOffsets + 40) throw new ObjectStoreError('a pack index shorter than its object count says')
  const first = oid[0] as number
  let lo = first === 0 ? 0 : idx.readUInt32BE(FANOUT + (first - 1) * 4)
  let hi = idx.readUInt32BE(FANOUT + first * 4)
  if (lo > hi || hi > n) throw new ObjectStoreError('a pack index with a fan-out out of order')
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    const order = Buffer.compare(idx.subarray(ids + mid * 20, ids + mid * 20 + 20), oid)
    if (order === 0) {
      const offset = idx.readUInt32BE(offsets + mid * 4)
      if ((offset & LARGE_OFFSET) === 0) return offset
      const at = largeOffsets + (offset & ~LARGE_OFFSET) * 8
      if (at + 8 > idx.length - 40) throw new ObjectStoreError('a pack index with a large offset out of range')
      return Number(idx.readBigUInt64BE(at))
    }
    if (order < 0) lo = mid + 1
    else hi = mid
  }
  return undefined
}

const LOOSE_HEADER = /^(blob|tree|commit|tag) (0|[1-9][0-9]{0,15})$/

/** A loose object's type and size, from the start of its inflated content; `headerBytes` precede the data. */
export function looseHeader (start: Buffer): { type: ObjectType, size: number, headerBytes: number } {
  const nul = start.indexOf(0)
  const match = nul < 0 ? null : LOOSE_HEADER.exec(start.toString('latin1', 0, nul))
  if (match === null) throw new ObjectStoreError('a loose object without a valid header')
  return { type: match[1] as ObjectType, size: Number(match[2]), headerBytes: nul + 1 }
}
