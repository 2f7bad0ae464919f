// Replaces isomorphic-git's indexPack (GitPackIndex.fromPack + toBuffer), the index written beside
// each fetched pack: 0.23-0.36 of its time on a 10,000-file pack, and the event loop held for one
// small object at most rather than the whole pack; an object over 1 MiB is inflated and hashed a
// piece at a time, never held (see README.md here).
// Format: https://git-scm.com/docs/pack-format (pack v2/v3 entries, index v2).
import { createHash, type Hash } from 'node:crypto'
import { crc32, inflateSync } from 'node:zlib'
import { InflateError, inflatePieces } from './inflate.js'
import { GitProtocolError } from './receive-pack.js'

/** The pack is not a well-formed Git pack (truncated, corrupt, or an object that cannot be built). */
export class PackError extends GitProtocolError {
  constructor (message: string) {
    super(`corrupt pack: ${message}`)
    this.name = 'PackError'
  }
}

export type ObjectType = 'commit' | 'tree' | 'blob' | 'tag'

export interface GitObject {
  type: ObjectType
  data: Buffer
}

export interface IndexPackOptions {
  /** An object's largest size, inflated or rebuilt from a delta (256 MiB unless given). */
  maxObjectBytes?: number
  /**
   * An object's largest size held whole in memory: a delta, a delta's base, an object rebuilt
   * from a delta (32 MiB unless given). Larger objects are hashed as they inflate, never held; a
   * delta that needs one held is refused (PackTooLarge).
   */
  maxHeldBytes?: number
  /** Bytes of all objects inflated or rebuilt, together: bounds the work of one pack (4 GiB unless given). */
  maxInflatedBytes?: number
  /** Resolved objects kept as delta bases, in bytes (32 MiB unless given). */
  cacheBytes?: number
  /** Longest stretch of work between two yields to the event loop, in ms (10 unless given). */
  sliceMs?: number
  /** Bytes read ahead from a PackSource at a time (1 MiB unless given). */
  windowBytes?: number
}

export interface PackIndex {
  /** The index file (version 2) to write beside the pack. */
  idx: Buffer
  /** The pack's checksum (its last 20 bytes), hex: it names the pack and index files. */
  packSha: string
  /** Object ids in pack order. */
  oids: string[]
}

const TYPES: Record<number, ObjectType | 'ofs-delta' | 'ref-delta'> = {
  1: 'commit', 2: 'tree', 3: 'blob', 4: 'tag', 6: 'ofs-delta', 7: 'ref-delta'
}
const HEADER_BYTES = 12
const TRAILER_BYTES = 20
const MAX_OFFSET = 2 ** 53
/** Objects up to this size are inflated in one call; larger ones a piece at a time, off the event loop. */
const INLINE_BYTES = 1024 * 1024
/** Bytes hashed or checked between two looks at the clock. */
const HASH_PIECE = 1024 * 1024

/** An entry of the pack as parsed in the first pass. */
interface Entry {
  offset: number
  /** Where its deflated data starts, and the size the header states once inflated. */
  dataStart: number
  size: number
  kind: ObjectType | 'ofs-delta' | 'ref-delta'
  /** The entry its delta applies to (ofs-delta), or the id of that object (ref-delta). */
  baseIndex?: number
  baseOid?: string
  /** Set once resolved: the object's id, in bytes and in hex. */
  oid?: Buffer
  hex?: string
  type?: ObjectType
  crc: number
}

/** The longest header of a pack entry: type and size (at most 8 bytes here), then a delta's base (at most 20). */
export const MAX_ENTRY_HEADER_BYTES = 32

/** A pack entry's header: what it is, its size once inflated, where its base is (a delta), and its own length. */
export interface EntryHeader {
  kind: ObjectType | 'ofs-delta' | 'ref-delta'
  /** The inflated size of the entry's data: the object's, or the delta's (not the object it builds). */
  size: number
  /** An ofs-delta's base: the offset in the pack of its entry. */
  baseOffset?: number
  /** A ref-delta's base: its object id. */
  baseOid?: string
  headerBytes: number
}

/**
 * Parses the header of the pack entry at `offset` from `bytes`, the pack's bytes from there (up
 * to MAX_ENTRY_HEADER_BYTES; fewer at the end of the pack).
 */
export function parseEntryHeader (bytes: Uint8Array, offset: number): EntryHeader {
  let p = 0
  const malformed = (): PackError => new PackError(`object at ${offset} has a malformed header`)
  const next = (): number => {
    if (p >= bytes.length) throw malformed()
    return bytes[p++] as number
  }
  let c = next()
  const kind = TYPES[(c >> 4) & 7]
  if (kind === undefined) throw new PackError(`object at ${offset} has an unknown type`)
  let size = c & 0x0f
  let shift = 4
  while ((c & 0x80) !== 0) {
    if (shift > 49) throw malformed()
    c = next()
    size += (c & 0x7f) * 2 ** shift
    shift += 7
  }
  const header: EntryHeader = { kind, size, headerBytes: 0 }
  if (kind === 'ofs-delta') {
    c = next()
    let distance = c & 0x7f
    while ((c & 0x80) !== 0) {
      if (distance > MAX_OFFSET / 256) throw malformed()
      c = next()
      distance = (distance + 1) * 128 + (c & 0x7f)
    }
    header.baseOffset = offset - distance
  } else if (kind === 'ref-delta') {
    if (p + 20 > bytes.length) throw malformed()
    header.baseOid = Buffer.from(bytes.subarray(p, p + 20)).toString('hex')
    p += 20
  }
  header.headerBytes = p
  return header
}

/** Keeps recently resolved objects by entry index up to a number of bytes, least recently used dropped first. */
class ObjectCache {
  private bytes = 0
  private readonly map = new Map<number, GitObject>()
  constructor (private readonly maxBytes: number) {}

  get (key: number): GitObject | undefined {
    const value = this.map.get(key)
    if (value !== undefined) {
      this.map.delete(key)
      this.map.set(key, value)
    }
    return value
  }

  set (key: number, value: GitObject): void {
    if (value.data.length > this.maxBytes / 4 || this.map.has(key)) return
    this.map.set(key, value)
    this.bytes += value.data.length
    for (const [oldKey, old] of this.map) {
      if (this.bytes <= this.maxBytes) break
      this.map.delete(oldKey)
      this.bytes -= old.data.length
    }
  }
}

/** The object id Git gives `data` of `type`: SHA-1 over "<type> <size>\0" and the data. */
export function objectId (type: ObjectType, data: Uint8Array): Buffer {
  return createHash('sha1').update(`${type} ${data.length}\u0000`).update(data).digest()
}

/** A pack, or an object in it, past a bound of what the indexer inflates or holds (not a corrupt pack). */
export class PackTooLarge extends GitProtocolError {
  constructor (readonly reason: string) {
    super(`pack too large to index: ${reason}`)
    this.name = 'PackTooLarge'
  }
}

/** A delta's two sizes, from its start: the base's it applies to and the object's it builds. */
export function deltaSizes (delta: Uint8Array): { sourceSize: number, targetSize: number, headerBytes: number } {
  let p = 0
  const varint = (): number => {
    let value = 0
    let shift = 0
    let c: number
    do {
      if (shift > 49) throw new PackError('delta size too large')
      if (p >= delta.length) throw new PackError('delta ends early')
      c = delta[p++] as number
      value += (c & 0x7f) * 2 ** shift
      shift += 7
    } while ((c & 0x80) !== 0)
    return value
  }
  const sourceSize = varint()
  const targetSize = varint()
  return { sourceSize, targetSize, headerBytes: p }
}

/**
 * The pieces of the object a Git delta builds on `base`, in order (views of the base and of the
 * delta, nothing copied). Every copy and insert is checked against the sizes the delta states, so
 * a hostile delta can neither read outside the base nor build past the size it states.
 */
export function * deltaPieces (delta: Uint8Array, base: Uint8Array): Generator<Uint8Array, void, undefined> {
  const { sourceSize, targetSize, headerBytes } = deltaSizes(delta)
  if (sourceSize !== base.length) throw new PackError(`delta expects a base of ${sourceSize} bytes, the base has ${base.length}`)
  let p = headerBytes
  const byte = (): number => {
    if (p >= delta.length) throw new PackError('delta ends early')
    return delta[p++] as number
  }
  let o = 0
  while (p < delta.length) {
    const op = byte()
    if ((op & 0x80) !== 0) {
      let offset = 0
      let size = 0
      if ((op & 0x01) !== 0) offset += byte()
      if ((op & 0x02) !== 0) offset += byte() * 0x100
      if ((op & 0x04) !== 0) offset += byte() * 0x10000
      if ((op & 0x08) !== 0) offset += byte() * 0x1000000
      if ((op & 0x10) !== 0) size += byte()
      if ((op & 0x20) !== 0) size += byte() * 0x100
      if ((op & 0x40) !== 0) size += byte() * 0x10000
      if (size === 0) size = 0x10000
      if (offset + size > base.length) throw new PackError('delta copies from outside its base')
      if (o + size > targetSize) throw new PackError('delta writes past the size it states')
      yield base.subarray(offset, offset + size)
      o += size
    } else if (op !== 0) {
      if (p + op > delta.length) throw new PackError('delta ends early')
      if (o + op > targetSize) throw new PackError('delta writes past the size it states')
      yield delta.subarray(p, p + op)
      p += op
      o += op
    } else {
      throw new PackError('delta has a reserved instruction')
    }
  }
  if (o !== targetSize) throw new PackError('delta builds fewer bytes than it states')
}

/**
 * Applies a Git delta to `base` (checked as deltaPieces checks it); an object of more than
 * `maxBytes` is refused before anything is built.
 */
export function applyDelta (delta: Uint8Array, base: Uint8Array, maxBytes = 256 * 1024 * 1024): Buffer {
  const { targetSize } = deltaSizes(delta)
  if (targetSize > maxBytes) throw new PackTooLarge(`an object of ${targetSize} bytes built from a delta, past the limit of ${maxBytes}`)
  const out = Buffer.allocUnsafe(targetSize)
  let o = 0
  for (const piece of deltaPieces(delta, base)) {
    out.set(piece, o)
    o += piece.length
  }
  return out
}

/**
 * Where a pack is read from: a buffer, or (for a pack streamed to a file) random reads, so that
 * the pack is never held whole. Reads are synchronous: each is one window of the pack.
 */
export interface PackSource {
  readonly size: number
  /** The bytes at `position`: `length` of them, fewer only at the end of the pack. */
  read: (position: number, length: number) => Buffer
}

/** Bytes read from a file source at a time, ahead of the parse. */
const WINDOW_BYTES = 1024 * 1024

/** A buffer as a source: every read a view, no copy. */
function bufferSource (input: Uint8Array): PackSource {
  const pack = Buffer.from(input.buffer, input.byteOffset, input.byteLength)
  return { size: pack.length, read: (position, length) => pack.subarray(position, position + length) }
}

/** The last window read from a source, read again only when a request falls outside it. */
class PackWindow {
  private buffer: Buffer = Buffer.alloc(0)
  private start = 0
  constructor (private readonly source: PackSource, private readonly ahead: number) {}

  get (position: number, length: number): Buffer {
    const end = Math.min(position + length, this.source.size)
    if (position < this.start || end > this.start + this.buffer.length) {
      this.buffer = this.source.read(position, Math.max(end - position, this.ahead))
      this.start = position
    }
    return this.buffer.subarray(position - this.start, end - this.start)
  }

  byte (position: number): number {
    return this.get(position, 1)[0] as number
  }
}

/**
 * Reads every object of `pack`, checks the pack's checksum and each object's stated size, and
 * returns the version-2 index Git (and isomorphic-git) read it through. A `PackSource` is read a
 * window at a time: what is held is the window, the objects being built (each at most
 * `maxHeldBytes`; larger ones are hashed as they inflate) and the delta bases kept (`cacheBytes`),
 * whatever the pack's size. Past a bound, PackTooLarge; a malformed pack, PackError.
 */
export async function indexPack (packInput: Uint8Array | PackSource, options: IndexPackOptions = {}): Promise<PackIndex> {
  const maxObjectBytes = options.maxObjectBytes ?? 256 * 1024 * 1024
  const sliceMs = options.sliceMs ?? 10
  const inMemory = packInput instanceof Uint8Array
  const source = inMemory ? bufferSource(packInput) : packInput
  const ahead = options.windowBytes ?? WINDOW_BYTES
  const window = new PackWindow(source, inMemory ? source.size : ahead)
  if (source.size < HEADER_BYTES + TRAILER_BYTES) throw new PackError('shorter than a header and a checksum')
  const header = source.read(0, HEADER_BYTES)
  if (header.toString('latin1', 0, 4) !== 'PACK') throw new PackError('no PACK signature')
  const version = header.readUInt32BE(4)
  if (version !== 2 && version !== 3) throw new PackError(`unsupported version ${version}`)
  const objectCount = header.readUInt32BE(8)
  const end = source.size - TRAILER_BYTES
  const trailer = Buffer.from(source.read(end, TRAILER_BYTES))

  let sliceStart = performance.now()
  const pause = async (): Promise<void> => {
    if (performance.now() - sliceStart < sliceMs) return
    await new Promise<void>((resolve) => setImmediate(resolve))
    sliceStart = performance.now()
  }

  const checksum = createHash('sha1')
  for (let p = 0; p < end; p += ahead) {
    checksum.update(source.read(p, Math.min(ahead, end - p)))
    await pause()
  }
  if (!checksum.digest().equals(trailer)) throw new PackError('checksum does not match its content')

  const entries: Entry[] = []
  const indexByOffset = new Map<number, number>()
  const indexByOid = new Map<string, number>()
  const cacheBytes = options.cacheBytes ?? 32 * 1024 * 1024
  const cache = new ObjectCache(cacheBytes)
  const maxHeldBytes = Math.min(options.maxHeldBytes ?? 32 * 1024 * 1024, maxObjectBytes)
  const maxInflatedBytes = options.maxInflatedBytes ?? 4 * 1024 * 1024 * 1024
  let inflatedBytes = 0
  const countInflated = (bytes: number): void => {
    inflatedBytes += bytes
    if (inflatedBytes > maxInflatedBytes) throw new PackTooLarge(`objects of more than ${maxInflatedBytes} bytes in all`)
  }
  const tooLargeToHold = (what: string, size: number): PackTooLarge =>
    new PackTooLarge(`${what} of ${size} bytes, past the ${maxHeldBytes} bytes held in memory at once`)

  /** Feeds `data` to `hash` a piece at a time, with turns for the event loop. */
  const hashPieces = async (hash: Hash, data: Uint8Array): Promise<void> => {
    for (let p = 0; p < data.length; p += HASH_PIECE) {
      hash.update(data.subarray(p, p + HASH_PIECE))
      await pause()
    }
  }

  /** The CRC-32 of the pack's bytes from `start` to `stop`, read a window at a time. */
  const crcOf = async (start: number, stop: number): Promise<number> => {
    let crc = 0
    for (let p = start; p < stop; p += ahead) {
      crc = crc32(source.read(p, Math.min(ahead, stop - p)), crc)
      await pause()
    }
    return crc
  }

  /** The inflated data of a small entry `e` (at most INLINE_BYTES), in one call, and how many bytes of the pack its stream took. */
  const inflateInline = (e: Entry): { data: Buffer, used: number } => {
    let result: { buffer: Buffer, engine: { bytesWritten: number } }
    const rest = end - e.dataStart
    // From a file, a window a little larger than the object (deflate rarely grows data much),
    // doubled while the stream goes on past it.
    for (let length = inMemory ? rest : Math.min(rest, e.size + (e.size >> 3) + 1024); ; length = Math.min(rest, length * 2)) {
      const input = window.get(e.dataStart, length)
      try {
        // Inflation stops at the end of the object's stream; bytesWritten says how much it read.
        result = inflateSync(input, {
          info: true, maxOutputLength: Math.max(e.size, 1), chunkSize: Math.min(Math.max(e.size, 64), 64 * 1024)
        }) as unknown as typeof result
        break
      } catch (err) {
        if (input.length < rest && (err as { code?: unknown }).code === 'Z_BUF_ERROR') continue
        throw new PackError(`object at ${e.offset} does not inflate (${(err as Error).message})`)
      }
    }
    if (result.buffer.length !== e.size) throw new PackError(`object at ${e.offset} is not the size its header states`)
    return { data: result.buffer, used: result.engine.bytesWritten }
  }

  /**
   * Inflates entry `e` a piece at a time, giving each piece to `onData`; resolves to how many
   * bytes of the pack its stream took.
   */
  const inflateStreamed = async (e: Entry, onData: (piece: Buffer) => void): Promise<number> => {
    try {
      const { used, size } = await inflatePieces(source.read, e.dataStart, end, e.size, onData)
      if (size !== e.size) throw new PackError(`object at ${e.offset} is not the size its header states`)
      return used
    } catch (err) {
      if (!(err instanceof InflateError)) throw err
      throw new PackError(`object at ${e.offset} does not inflate (${err.message})`)
    }
  }

  /** Entry `e`'s inflated data, held whole (so at most maxHeldBytes), and how many bytes of the pack its stream took. */
  const inflateHeld = async (e: Entry): Promise<{ data: Buffer, used: number }> => {
    if (e.size > maxHeldBytes) throw tooLargeToHold(isDelta(e) ? 'a delta' : 'a delta base', e.size)
    countInflated(e.size)
    if (e.size <= INLINE_BYTES) return inflateInline(e)
    const data = Buffer.allocUnsafe(e.size)
    let o = 0
    const used = await inflateStreamed(e, (piece) => { o += piece.copy(data, o) })
    return { data, used }
  }

  const isDelta = (e: Entry): boolean => e.kind === 'ofs-delta' || e.kind === 'ref-delta'
  /** The entry a delta applies to, when it is in the pack and resolved. */
  const baseOf = (e: Entry): number | undefined => {
    const i = e.baseIndex ?? (e.baseOid === undefined ? undefined : indexByOid.get(e.baseOid))
    return i !== undefined && entries[i]?.oid !== undefined ? i : undefined
  }

  /** Entry `i` is the object of `type` with id `oid`; `data`, when held, is kept as a delta base. */
  function identified (i: number, type: ObjectType, oid: Buffer, data?: Buffer): void {
    const e = entries[i] as Entry
    if (e.oid === undefined) {
      e.type = type
      e.oid = oid
      e.hex = oid.toString('hex')
      indexByOid.set(e.hex, i)
    }
    if (data !== undefined) cache.set(i, { type, data })
  }

  async function resolved (i: number, object: GitObject): Promise<GitObject> {
    const e = entries[i] as Entry
    if (e.oid === undefined) {
      const hash = createHash('sha1').update(`${object.type} ${object.data.length}\u0000`)
      await hashPieces(hash, object.data)
      identified(i, object.type, hash.digest(), object.data)
    } else {
      cache.set(i, object)
    }
    return object
  }

  /**
   * Entry `i` is the delta `delta` on `base`: its object built and held when small enough,
   * else only hashed as it is built, piece by piece.
   */
  async function resolveDelta (i: number, delta: Buffer, base: GitObject): Promise<void> {
    const { targetSize } = deltaSizes(delta)
    if (targetSize > maxObjectBytes) throw new PackTooLarge(`an object of ${targetSize} bytes built from a delta, past the limit of ${maxObjectBytes}`)
    countInflated(targetSize)
    if (targetSize <= maxHeldBytes) {
      await resolved(i, { type: base.type, data: applyDelta(delta, base.data, maxHeldBytes) })
      return
    }
    const hash = createHash('sha1').update(`${base.type} ${targetSize}\u0000`)
    for (const piece of deltaPieces(delta, base.data)) await hashPieces(hash, piece)
    identified(i, base.type, hash.digest())
  }

  /** Entry `i`'s object (resolved before): from the cache, else built again along its delta chain (each link held). */
  async function objectAt (i: number): Promise<GitObject> {
    const chain: number[] = []
    let k = i
    let object = cache.get(k)
    while (object === undefined) {
      const e = entries[k] as Entry
      if (!isDelta(e)) {
        object = await resolved(k, { type: e.kind as ObjectType, data: (await inflateHeld(e)).data })
        break
      }
      chain.push(k)
      k = baseOf(e) as number
      object = cache.get(k)
    }
    for (let x = chain.length - 1; x >= 0; x--) {
      const j = chain[x] as number
      const delta = (await inflateHeld(entries[j] as Entry)).data
      const { targetSize } = deltaSizes(delta)
      if (targetSize > maxHeldBytes) throw tooLargeToHold('a delta base', targetSize)
      countInflated(targetSize)
      object = await resolved(j, { type: object.type, data: applyDelta(delta, object.data, maxHeldBytes) })
    }
    return object
  }

  // One pass in pack order: each entry's header parsed, its data inflated (which says where it
  // ends: the CRC covers header and data), whole objects hashed from the data as it inflates and
  // deltas applied to their base, which is earlier in the pack except for a ref-delta's at times.
  const waiting: Array<{ i: number }> = []
  let at = HEADER_BYTES
  for (let n = 0; n < objectCount; n++) {
    if (at >= end) throw new PackError(`ends after ${n} of ${objectCount} objects`)
    const offset = at
    const head = parseEntryHeader(window.get(offset, Math.min(MAX_ENTRY_HEADER_BYTES, end - offset)), offset)
    const { kind, size } = head
    if (size > maxObjectBytes) throw new PackTooLarge(`an object of ${size} bytes (at ${offset}), past the limit of ${maxObjectBytes}`)
    const entry: Entry = { offset, dataStart: 0, size, kind, crc: 0 }
    if (head.baseOffset !== undefined) {
      entry.baseIndex = indexByOffset.get(head.baseOffset)
      if (entry.baseIndex === undefined) throw new PackError(`delta at ${offset} points to no object`)
    }
    entry.baseOid = head.baseOid
    at = offset + head.headerBytes
    entry.dataStart = at
    const i = entries.length
    entries.push(entry)
    indexByOffset.set(offset, i)
    if (isDelta(entry)) {
      const { data, used } = await inflateHeld(entry)
      at += used
      entry.crc = await crcOf(offset, at)
      const base = baseOf(entry)
      if (base === undefined) waiting.push({ i })
      else await resolveDelta(i, data, await objectAt(base))
    } else if (size <= INLINE_BYTES) {
      countInflated(size)
      const { data, used } = inflateInline(entry)
      at += used
      entry.crc = crc32(window.get(offset, at - offset))
      await resolved(i, { type: kind as ObjectType, data })
    } else {
      // A large object: hashed as it inflates; kept only when the cache of delta bases would keep it.
      countInflated(size)
      const hash = createHash('sha1').update(`${kind} ${size}\u0000`)
      const kept = size <= cacheBytes / 4 ? Buffer.allocUnsafe(size) : undefined
      let o = 0
      at += await inflateStreamed(entry, (piece) => {
        hash.update(piece)
        if (kept !== undefined) o += piece.copy(kept, o)
      })
      entry.crc = await crcOf(offset, at)
      identified(i, kind as ObjectType, hash.digest(), kept)
    }
    await pause()
  }
  if (at !== end) throw new PackError('has bytes after its last object')

  // Deltas whose base came later (or was itself waiting): resolved once their base is.
  for (let progress = true; waiting.length > 0 && progress;) {
    progress = false
    for (let w = 0; w < waiting.length; w++) {
      const { i } = waiting[w] as { i: number }
      const base = baseOf(entries[i] as Entry)
      if (base === undefined) continue
      const object = await objectAt(base)
      await resolveDelta(i, (await inflateHeld(entries[i] as Entry)).data, object)
      waiting.splice(w--, 1)
      progress = true
      await pause()
    }
  }
  if (waiting.length > 0) throw new PackError(`${waiting.length} delta(s) whose base is not in the pack`)

  return { idx: await buildIndex(entries, trailer, pause), packSha: trailer.toString('hex'), oids: entries.map((e) => e.hex as string) }
}

/**
 * The version-2 index of resolved `entries`: fan-out, sorted ids, CRCs, offsets, checksums. The
 * ids are sorted within each of the 256 fan-out buckets, as hex strings (their order is the bytes'
 * order), with a turn for the event loop between buckets: one sort of 50,000 ids by Buffer.compare
 * held the thread for half a second.
 */
async function buildIndex (entries: Entry[], packChecksum: Buffer, pause: () => Promise<void>): Promise<Buffer> {
  const n = entries.length
  const buckets: number[][] = Array.from({ length: 256 }, () => [])
  entries.forEach((e, i) => { buckets[(e.oid as Buffer)[0] as number]?.push(i) })
  const order: number[] = []
  for (const bucket of buckets) {
    const keyed = bucket.map((i) => ({ i, hex: (entries[i] as Entry).hex as string }))
    keyed.sort((a, b) => a.hex < b.hex ? -1 : a.hex > b.hex ? 1 : 0)
    for (const { i } of keyed) order.push(i)
    await pause()
  }
  const large = entries.filter((e) => e.offset >= 0x80000000).length
  const size = 8 + 256 * 4 + n * 20 + n * 4 + n * 4 + large * 8 + 20 + 20
  const idx = Buffer.alloc(size)
  idx.writeUInt32BE(0xff744f63, 0)
  idx.writeUInt32BE(2, 4)
  const fanout = 8
  const ids = fanout + 256 * 4
  const crcs = ids + n * 20
  const offsets = crcs + n * 4
  const largeOffsets = offsets + n * 4
  let largeCount = 0
  const counts = new Uint32Array(256)
  order.forEach((i, position) => {
    const e = entries[i] as Entry
    const oid = e.oid as Buffer
    counts[oid[0] as number]++
    oid.copy(idx, ids + position * 20)
    idx.writeUInt32BE(e.crc, crcs + position * 4)
    if (e.offset < 0x80000000) {
      idx.writeUInt32BE(e.offset, offsets + position * 4)
    } else {
      idx.writeUInt32BE((0x80000000 | largeCount) >>> 0, offsets + position * 4)
      idx.writeBigUInt64BE(BigInt(e.offset), largeOffsets + largeCount * 8)
      largeCount++
    }
  })
  let total = 0
  for (let b = 0; b < 256; b++) {
    total += counts[b] as number
    idx.writeUInt32BE(total, fanout + b * 4)
  }
  packChecksum.copy(idx, size - 40)
  createHash('sha1').update(idx.subarray(0, size - 20)).digest().copy(idx, size - 20)
  return idx
}
