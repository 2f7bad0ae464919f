// The push half of Git's smart HTTP protocol (receive-pack, protocol v1), for a push of one ref
// with a pack of exactly the objects a commit added. Replaces isomorphic-git's push, whose walk of
// both trees grows with the repository: a warm write is one exchange at any size (see README.md
// here). Pure: bytes in, bytes or a report out.
// Format: https://git-scm.com/docs/pack-protocol ("Reference Update Request", "Report Status").

export const ZERO_OID = '0'.repeat(40)

/** The receive-pack answer made no sense (not pkt-lines, no status): the provider is not behaving. */
export class GitProtocolError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'GitProtocolError'
  }
}

const FLUSH = Buffer.from('0000')
const MAX_PKT_LENGTH = 65520

/** One pkt-line: four hex digits giving the length (themselves included), then the data. */
export function pktLine (data: string | Uint8Array): Buffer {
  const payload = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data)
  if (payload.length + 4 > MAX_PKT_LENGTH) throw new RangeError('pkt-line too long')
  return Buffer.concat([Buffer.from((payload.length + 4).toString(16).padStart(4, '0')), payload])
}

/** Capabilities this client asks for, among those the server advertised. */
export function pushCapabilities (advertised: Record<string, string | true>, agent: string): string[] {
  const wanted = ['report-status', 'side-band-64k', 'quiet']
  return [...wanted.filter((c) => advertised[c] !== undefined), `agent=${agent}`]
}

/** The body of a push: one ref update `oldOid -> newOid` (ZERO_OID when creating), then the pack. */
export function receivePackRequest (update: { oldOid: string, newOid: string, ref: string }, capabilities: string[], pack: Uint8Array): Buffer {
  const command = pktLine(`${update.oldOid} ${update.newOid} ${update.ref}\u0000${capabilities.join(' ')}\n`)
  return Buffer.concat([command, FLUSH, pack])
}

/** Splits pkt-lines; `null` stands for a flush-pkt. Stops at the end of the buffer. */
export function readPktLines (buffer: Uint8Array): Array<Buffer | null> {
  const data = Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength)
  const lines: Array<Buffer | null> = []
  let at = 0
  while (at < data.length) {
    const header = data.subarray(at, at + 4).toString('latin1')
    if (!/^[0-9a-f]{4}$/i.test(header)) throw new GitProtocolError('malformed pkt-line length')
    const length = parseInt(header, 16)
    if (length === 0) {
      lines.push(null)
      at += 4
      continue
    }
    if (length < 4 || at + length > data.length) throw new GitProtocolError('truncated pkt-line')
    lines.push(data.subarray(at + 4, at + length))
    at += length
  }
  return lines
}

export interface RefStatus {
  ok: boolean
  /** The server's reason when not ok, e.g. `pre-receive hook declined`. */
  reason?: string
}

export interface PushReport {
  /** `ok`, or the server's reason the pack could not be unpacked. */
  unpack: string
  refs: Map<string, RefStatus>
  /** What the server printed for the user (hooks, policies), one entry per line. */
  messages: string[]
}

function text (line: Buffer): string {
  return line.toString('utf8').replace(/\n$/, '')
}

/**
 * Reads the server's answer to a push. With side-band, status lines travel in band 1, messages
 * in band 2 and a fatal error in band 3; without it the body is the status lines themselves.
 */
export function parseReceivePackResponse (body: Uint8Array, sideBand: boolean): PushReport {
  let messages: string[] = []
  let status: Array<Buffer | null>
  if (sideBand) {
    const data: Buffer[] = []
    const progress: Buffer[] = []
    for (const line of readPktLines(body)) {
      if (line === null || line.length === 0) continue
      const payload = line.subarray(1)
      if (line[0] === 1) data.push(payload)
      else if (line[0] === 2) progress.push(payload)
      else if (line[0] === 3) throw new GitProtocolError(`the server reported an error: ${text(payload)}`)
      else throw new GitProtocolError('unknown side-band channel')
    }
    // Band 2 is a byte stream: a message may span packets, or a packet hold several.
    messages = Buffer.concat(progress).toString('utf8').split(/\r?\n|\r/).filter((m) => m.trim() !== '')
    status = readPktLines(Buffer.concat(data))
  } else {
    status = readPktLines(body)
  }

  let unpack: string | undefined
  const refs = new Map<string, RefStatus>()
  for (const line of status) {
    if (line === null) continue
    const entry = text(line)
    if (entry.startsWith('unpack ')) {
      unpack = entry.slice('unpack '.length)
    } else if (entry.startsWith('ok ')) {
      refs.set(entry.slice(3), { ok: true })
    } else if (entry.startsWith('ng ')) {
      const rest = entry.slice(3)
      const space = rest.indexOf(' ')
      const ref = space < 0 ? rest : rest.slice(0, space)
      refs.set(ref, { ok: false, reason: space < 0 ? 'rejected' : rest.slice(space + 1) })
    }
  }
  if (unpack === undefined) throw new GitProtocolError('the server sent no push status')
  return { unpack, refs, messages }
}
