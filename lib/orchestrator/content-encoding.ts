// An orchestrator's answer may come compressed (Content-Encoding: gzip) although the relay never
// asks for it. restQuery passes the coding on with the bytes; restAction, which reads the JSON, and
// an error answer, which the 502 carries, decode it here: as a stream, bounded on the decoded side.
import { Readable, Transform, type TransformCallback } from 'node:stream'
import zlib from 'node:zlib'

export type ContentCoding = 'gzip' | 'deflate' | 'br'

const CODINGS: Record<string, ContentCoding> = { gzip: 'gzip', 'x-gzip': 'gzip', deflate: 'deflate', br: 'br' }

/**
 * The coding a Content-Encoding value names: `undefined` for none (absent, empty, `identity`);
 * `{unsupported}` for one the relay cannot decode, or for several codings stacked.
 */
export function parseContentEncoding (value: string | undefined): ContentCoding | undefined | { unsupported: string } {
  if (value === undefined) return undefined
  const codings = value.split(',').map((c) => c.trim().toLowerCase()).filter((c) => c !== '' && c !== 'identity')
  if (codings.length === 0) return undefined
  const coding = codings.length === 1 ? CODINGS[codings[0] as string] : undefined
  return coding ?? { unsupported: value.trim() }
}

function decoder (coding: ContentCoding): Transform {
  // Lenient as browsers and curl are about a missing end: what arrived is decoded, the rest is the
  // reader's concern (a cut JSON text fails its own check).
  const flush = { finishFlush: zlib.constants.Z_SYNC_FLUSH }
  if (coding === 'gzip') return zlib.createGunzip(flush)
  if (coding === 'deflate') return zlib.createInflate(flush)
  return zlib.createBrotliDecompress({ finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH })
}

/** Fails with `tooLarge()` once more than `maxBytes` went through. */
class ByteLimit extends Transform {
  #bytes = 0
  constructor (private readonly maxBytes: number, private readonly tooLarge: () => Error) {
    super()
  }

  override _transform (chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#bytes += chunk.length
    if (this.#bytes > this.maxBytes) { callback(this.tooLarge()); return }
    callback(null, chunk)
  }
}

export interface DecodeOptions {
  /** Most decoded bytes: a small compressed answer can expand a thousandfold. */
  maxBytes: number
  tooLarge: () => Error
  /** The error for a body the coding cannot decode. */
  undecodable: (reason: string) => Error
}

/**
 * `body` decoded from `coding`, as a stream with backpressure back to `body`. Memory stays that of
 * the decoder (its window, about 32 KiB for gzip) and the streams' buffers, whatever the size.
 * `body`'s own errors pass through as they are; destroying the result destroys `body`.
 */
export function decodedBody (body: Readable, coding: ContentCoding, options: DecodeOptions): Readable {
  const engine = decoder(coding)
  const limit = new ByteLimit(options.maxBytes, options.tooLarge)
  body.on('error', (err) => { limit.destroy(err) })
  engine.on('error', (err) => { limit.destroy(options.undecodable(err.message)) })
  limit.on('close', () => {
    body.destroy()
    engine.destroy()
  })
  body.pipe(engine).pipe(limit)
  return limit
}

/**
 * The first `maxBytes` of a whole (error) body, decoded; `truncated` when there was more, or when
 * the body could not be decoded to its end. Undefined when nothing could be decoded.
 */
export async function decodeSmallBody (body: Buffer, coding: ContentCoding, maxBytes: number): Promise<{ body: Buffer, truncated: boolean } | undefined> {
  const chunks: Buffer[] = []
  let bytes = 0
  const stream = Readable.from([body]).pipe(decoder(coding))
  try {
    for await (const chunk of stream) {
      const piece = chunk as Buffer
      const room = maxBytes - bytes
      chunks.push(piece.length > room ? piece.subarray(0, room) : piece)
      bytes += Math.min(piece.length, room)
      if (piece.length > room) {
        stream.destroy()
        return { body: Buffer.concat(chunks), truncated: true }
      }
    }
  } catch {
    return bytes === 0 ? undefined : { body: Buffer.concat(chunks), truncated: true }
  }
  return { body: Buffer.concat(chunks), truncated: false }
}
