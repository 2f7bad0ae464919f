// The fetch half of Git's smart HTTP protocol (upload-pack, protocol v1) for one wanted commit,
// as a stateless request: wants, shallow boundary and depth, haves, done. Replaces isomorphic-git's
// fetch negotiation, so that the pack is indexed by pack-index.ts (see README.md here). Pure: bytes
// in, bytes or a parsed answer out. Format: https://git-scm.com/docs/pack-protocol ("Packfile Negotiation").
import { GitProtocolError, pktLine } from './receive-pack.js'

const FLUSH = Buffer.from('0000')
const OID = /^[0-9a-f]{40}$/

export interface UploadPackRequest {
  want: string
  /** Commits the cache holds, so only what is new comes. */
  haves: string[]
  /** The cache's shallow boundary: commits whose parents it does not hold. */
  shallows: string[]
  /** History to send, in commits from the wanted one (the whole history unless given). */
  depth?: number
  capabilities: string[]
}

export interface UploadPackResult {
  /** Commits the server made (or kept) the cache's shallow boundary, and those it no longer is. */
  shallow: string[]
  unshallow: string[]
  /** The pack, as the server sent it (possibly with no objects). */
  pack: Buffer
}

/** Capabilities this client asks for, among those the server advertised. */
export function fetchCapabilities (advertised: Record<string, string | true>, agent: string, shallow: boolean): string[] {
  const wanted = [
    advertised['side-band-64k'] !== undefined ? 'side-band-64k' : 'side-band',
    'ofs-delta',
    'no-progress',
    ...(shallow ? ['shallow'] : [])
  ]
  return [...wanted.filter((c) => advertised[c] !== undefined), `agent=${agent}`]
}

export function uploadPackRequest (req: UploadPackRequest): Buffer {
  for (const oid of [req.want, ...req.haves, ...req.shallows]) {
    if (!OID.test(oid)) throw new RangeError(`not an object id: ${oid}`)
  }
  const lines = [
    pktLine(`want ${req.want} ${req.capabilities.join(' ')}\n`),
    ...req.shallows.map((oid) => pktLine(`shallow ${oid}\n`)),
    ...(req.depth === undefined ? [] : [pktLine(`deepen ${req.depth}\n`)]),
    FLUSH,
    ...req.haves.map((oid) => pktLine(`have ${oid}\n`)),
    pktLine('done\n')
  ]
  return Buffer.concat(lines)
}

const text = (line: Buffer): string => line.toString('utf8').replace(/\n$/, '')

/**
 * Reads the server's answer to a request sent with `done`, as it arrives: a shallow update when
 * the request had a depth or a boundary, one ACK or NAK, then the pack, in band 1 of a side band
 * when one was asked for (band 2 carries messages, band 3 a fatal error) or as the rest of the
 * body otherwise. `push` gives back the pack's bytes in each chunk, so the pack can go to a file
 * as it comes; what is kept between chunks is at most one pkt-line (64 KiB).
 */
export class UploadPackReader {
  readonly shallow: string[] = []
  readonly unshallow: string[] = []
  #pending: Buffer = Buffer.alloc(0)
  #phase: 'negotiation' | 'pack' | 'done' = 'negotiation'

  constructor (private readonly sideBand: boolean) {}

  /** The pack's bytes in `chunk` (none while the negotiation lines are read). */
  push (chunk: Uint8Array): Buffer[] {
    const incoming = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
    if (this.#phase === 'done') return []
    if (this.#phase === 'pack' && !this.sideBand) return [incoming]
    let data = this.#pending.length === 0 ? incoming : Buffer.concat([this.#pending, incoming])
    const out: Buffer[] = []
    let at = 0
    while (this.#phase !== 'done') {
      if (this.#phase === 'pack' && !this.sideBand) {
        if (at < data.length) out.push(data.subarray(at))
        at = data.length
        break
      }
      if (data.length - at < 4) break
      const header = data.toString('latin1', at, at + 4)
      if (!/^[0-9a-f]{4}$/i.test(header)) throw new GitProtocolError('malformed pkt-line length')
      const length = parseInt(header, 16)
      if (length !== 0 && length < 4) throw new GitProtocolError('truncated pkt-line')
      if (length !== 0 && data.length - at < length) break
      const line = length === 0 ? null : data.subarray(at + 4, at + length)
      at += length === 0 ? 4 : length
      if (this.#phase === 'negotiation') this.#negotiation(line)
      else if (line === null) this.#phase = 'done'
      else if (line.length === 0) continue
      else if (line[0] === 1) out.push(line.subarray(1))
      else if (line[0] === 3) throw new GitProtocolError(`the server reported an error: ${text(line.subarray(1)).slice(0, 500)}`)
      else if (line[0] !== 2) throw new GitProtocolError('unknown side-band channel')
    }
    // Copied: the rest of a chunk must not keep the whole chunk alive.
    this.#pending = this.#phase === 'done' ? Buffer.alloc(0) : Buffer.from(data.subarray(at))
    data = Buffer.alloc(0)
    return out
  }

  /** The answer ended: throws when it ended early. */
  end (): void {
    if (this.#phase === 'negotiation') {
      throw new GitProtocolError(this.#pending.length === 0 ? 'the server sent no ACK or NAK' : 'truncated pkt-line')
    }
    if (this.#phase === 'pack' && this.sideBand) {
      throw new GitProtocolError(this.#pending.length === 0 ? 'the pack ends without a flush-pkt' : 'truncated pkt-line')
    }
  }

  #negotiation (line: Buffer | null): void {
    if (line === null) return
    const entry = text(line)
    const [word, oid] = entry.split(' ')
    if ((word === 'shallow' || word === 'unshallow') && oid !== undefined && OID.test(oid)) {
      (word === 'shallow' ? this.shallow : this.unshallow).push(oid)
    } else if (word === 'ACK' || word === 'NAK') {
      this.#phase = 'pack'
    } else if (word === 'ERR') {
      throw new GitProtocolError(`the server reported an error: ${entry.slice(4).slice(0, 500)}`)
    } else {
      throw new GitProtocolError('unexpected line in the fetch negotiation')
    }
  }
}

/** The whole answer at once (UploadPackReader over one buffer). */
export function parseUploadPackResponse (body: Uint8Array, sideBand: boolean): UploadPackResult {
  const reader = new UploadPackReader(sideBand)
  const parts = reader.push(body)
  reader.end()
  return { shallow: reader.shallow, unshallow: reader.unshallow, pack: Buffer.concat(parts) }
}
