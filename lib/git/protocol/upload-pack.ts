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

/** Reads one pkt-line at `at`: its payload (null for a flush-pkt) and where the next one starts. */
function readPkt (data: Buffer, at: number): { line: Buffer | null, next: number } {
  const header = data.toString('latin1', at, at + 4)
  if (!/^[0-9a-f]{4}$/i.test(header)) throw new GitProtocolError('malformed pkt-line length')
  const length = parseInt(header, 16)
  if (length === 0) return { line: null, next: at + 4 }
  if (length < 4 || at + length > data.length) throw new GitProtocolError('truncated pkt-line')
  return { line: data.subarray(at + 4, at + length), next: at + length }
}

const text = (line: Buffer): string => line.toString('utf8').replace(/\n$/, '')

/**
 * Reads the server's answer to a request sent with `done`: a shallow update when the request
 * had a depth or a boundary, one ACK or NAK, then the pack, in band 1 of a side band when one was
 * asked for (band 2 carries messages, band 3 a fatal error) or as the rest of the body otherwise.
 */
export function parseUploadPackResponse (body: Uint8Array, sideBand: boolean): UploadPackResult {
  const data = Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  const shallow: string[] = []
  const unshallow: string[] = []
  let at = 0
  for (let acknowledged = false; !acknowledged;) {
    if (at >= data.length) throw new GitProtocolError('the server sent no ACK or NAK')
    const { line, next } = readPkt(data, at)
    at = next
    if (line === null) continue
    const entry = text(line)
    const [word, oid] = entry.split(' ')
    if ((word === 'shallow' || word === 'unshallow') && oid !== undefined && OID.test(oid)) {
      (word === 'shallow' ? shallow : unshallow).push(oid)
    } else if (word === 'ACK' || word === 'NAK') {
      acknowledged = true
    } else if (word === 'ERR') {
      throw new GitProtocolError(`the server reported an error: ${entry.slice(4).slice(0, 500)}`)
    } else {
      throw new GitProtocolError('unexpected line in the fetch negotiation')
    }
  }
  if (!sideBand) return { shallow, unshallow, pack: data.subarray(at) }
  const parts: Buffer[] = []
  for (;;) {
    if (at >= data.length) throw new GitProtocolError('the pack ends without a flush-pkt')
    const { line, next } = readPkt(data, at)
    at = next
    if (line === null) break
    if (line.length === 0) continue
    if (line[0] === 1) parts.push(line.subarray(1))
    else if (line[0] === 3) throw new GitProtocolError(`the server reported an error: ${text(line.subarray(1)).slice(0, 500)}`)
    else if (line[0] !== 2) throw new GitProtocolError('unknown side-band channel')
  }
  return { shallow, unshallow, pack: Buffer.concat(parts) }
}
