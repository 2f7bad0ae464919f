// Inflating one zlib stream of a Git pack or loose object a piece at a time, in zlib's thread
// pool: the event loop gets a turn between pieces, and what is held is one piece of input and one
// of output, whatever the object's size. Used where an object may be large (pack-index.ts, and
// the reading of project files in plugins/git/objects.ts).
import { createInflate } from 'node:zlib'

/** Compressed bytes fed to zlib at a time, and the largest piece of output it gives back. */
const INPUT_PIECE = 64 * 1024
const OUTPUT_PIECE = 64 * 1024

/** Reads `length` bytes at `position` (fewer only at the end of what is there). */
export type ReadAt = (position: number, length: number) => Buffer | Promise<Buffer>

/** The stream does not inflate, ends early, or inflates to more than it may. */
export class InflateError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'InflateError'
  }
}

/**
 * Inflates the zlib stream that starts at `start` (input read up to `end` at most), giving its
 * output to `onData` piece by piece; the stream must not inflate past `maxOutput` bytes (it is
 * stopped as soon as it does). Resolves to the compressed bytes the stream took and the bytes it
 * gave. Input after the stream's end is not consumed.
 */
export async function inflatePieces (read: ReadAt, start: number, end: number, maxOutput: number,
  onData: (piece: Buffer) => void): Promise<{ used: number, size: number }> {
  const inflate = createInflate({ chunkSize: OUTPUT_PIECE })
  let size = 0
  let failure: Error | undefined
  const fail = (err: Error): void => {
    failure ??= err
    inflate.destroy()
  }
  inflate.on('data', (piece: Buffer) => {
    size += piece.length
    if (size > maxOutput) return fail(new InflateError(`inflates past ${maxOutput} bytes`))
    try {
      onData(piece)
    } catch (err) {
      fail(err as Error)
    }
  })
  const finished = new Promise<void>((resolve) => {
    inflate.once('end', resolve)
    inflate.once('error', (err) => { failure ??= new InflateError(err.message); resolve() })
    inflate.once('close', resolve)
  })
  let fed = 0
  while (start + fed < end && failure === undefined) {
    const piece = await read(start + fed, Math.min(INPUT_PIECE, end - start - fed))
    if (piece.length === 0) break
    await new Promise<void>((resolve) => inflate.write(piece, () => { resolve() }))
    fed += piece.length
    // The stream ended within this piece: the rest is not its.
    if (inflate.bytesWritten < fed) break
  }
  if (failure === undefined) inflate.end()
  await finished
  if (failure !== undefined) throw failure
  return { used: inflate.bytesWritten, size }
}

/** Ends a stream once enough of it is read. */
class Enough extends Error {}

/**
 * The first `length` bytes a zlib stream inflates to (fewer when it is shorter): enough to read an
 * object's header (a loose object's `<type> <size>\0`, a delta's two sizes), inflating at most a
 * piece past them, whatever the object's size.
 */
export async function inflateStart (read: ReadAt, start: number, end: number, length: number): Promise<Buffer> {
  const parts: Buffer[] = []
  let got = 0
  try {
    await inflatePieces(read, start, end, Number.MAX_SAFE_INTEGER, (piece) => {
      parts.push(Buffer.from(piece.subarray(0, length - got)))
      got += Math.min(piece.length, length - got)
      if (got >= length) throw new Enough()
    })
  } catch (err) {
    if (!(err instanceof Enough)) throw err
  }
  return Buffer.concat(parts)
}
