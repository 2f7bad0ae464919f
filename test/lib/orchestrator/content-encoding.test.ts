import t from 'tap'
import { Readable } from 'node:stream'
import { gzipSync } from 'node:zlib'
import { decodeSmallBody, decodedBody, parseContentEncoding } from '../../../lib/orchestrator/content-encoding.js'

const options = (maxBytes: number) => ({
  maxBytes,
  tooLarge: () => new Error('too large'),
  undecodable: (reason: string) => new Error(`undecodable: ${reason}`)
})

async function read (stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of stream) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

t.test('parseContentEncoding', async (t) => {
  t.equal(parseContentEncoding(undefined), undefined)
  t.equal(parseContentEncoding(''), undefined)
  t.equal(parseContentEncoding('identity'), undefined)
  t.equal(parseContentEncoding(' GZIP '), 'gzip')
  t.equal(parseContentEncoding('x-gzip'), 'gzip')
  t.equal(parseContentEncoding('gzip, identity'), 'gzip')
  t.equal(parseContentEncoding('deflate'), 'deflate')
  t.equal(parseContentEncoding('br'), 'br')
  t.same(parseContentEncoding('zstd'), { unsupported: 'zstd' })
  t.same(parseContentEncoding('gzip, gzip'), { unsupported: 'gzip, gzip' })
})

t.test('a small answer that decodes past the limit fails, and the answer is dropped', async (t) => {
  // 64 MiB of zeros in about 64 KiB of gzip.
  const bomb = gzipSync(Buffer.alloc(64 * 1024 * 1024))
  t.ok(bomb.length < 100 * 1024)
  const source = Readable.from([bomb])
  await t.rejects(read(decodedBody(source, 'gzip', options(1024 * 1024))), { message: 'too large' })
  t.ok(source.destroyed, 'the answer is dropped')
})

t.test('decoding streams: the first bytes come out while the answer is still arriving', async (t) => {
  const document = Buffer.from(JSON.stringify({ items: Array.from({ length: 200_000 }, (_, i) => ({ i, name: `device-${i}` })) }))
  const gzipped = gzipSync(document)
  let sent = 0
  let release: () => void = () => {}
  const held = new Promise<void>((resolve) => { release = resolve })
  // The orchestrator sends a quarter, then holds the rest.
  async function * arriving (): AsyncGenerator<Buffer> {
    const quarter = Math.floor(gzipped.length / 4)
    sent += quarter
    yield gzipped.subarray(0, quarter)
    await held
    for (let at = quarter; at < gzipped.length; at += 16 * 1024) {
      const piece = gzipped.subarray(at, at + 16 * 1024)
      sent += piece.length
      yield piece
    }
  }
  const decoded = decodedBody(Readable.from(arriving()), 'gzip', options(64 * 1024 * 1024))
  const it = decoded[Symbol.asyncIterator]()
  const first = await it.next()
  t.ok(first.done !== true && (first.value as Buffer).length > 0, 'decoded bytes before the rest arrived')
  t.ok(sent < gzipped.length, 'the rest had not arrived')
  release()
  const chunks: Buffer[] = [first.value as Buffer]
  for (let next = await it.next(); next.done !== true; next = await it.next()) chunks.push(next.value as Buffer)
  t.ok(Buffer.concat(chunks).equals(document))
})

t.test('the reader going away drops the answer', async (t) => {
  const source = new Readable({ read () {} })
  source.push(gzipSync(Buffer.from('{"a":1}')))
  const decoded = decodedBody(source, 'gzip', options(1024))
  decoded.destroy()
  await new Promise((resolve) => setImmediate(resolve))
  t.ok(source.destroyed)
})

t.test('the answer\'s own failure comes out as it is', async (t) => {
  const failure = new Error('upstream gone')
  const source = new Readable({ read () {} })
  const decoded = decodedBody(source, 'gzip', options(1024))
  source.destroy(failure)
  await t.rejects(read(decoded), failure)
})

t.test('decodeSmallBody: the first bytes of an error body', async (t) => {
  const text = Buffer.from('x'.repeat(100_000))
  t.same(await decodeSmallBody(gzipSync(text), 'gzip', 1000), { body: text.subarray(0, 1000), truncated: true })
  t.same(await decodeSmallBody(gzipSync(Buffer.from('{"a":1}')), 'gzip', 1000), { body: Buffer.from('{"a":1}'), truncated: false })
  t.equal(await decodeSmallBody(Buffer.from('not gzip'), 'gzip', 1000), undefined)
  // An error body cut at its read limit still gives what it holds.
  const cut = gzipSync(text).subarray(0, 60)
  const partial = await decodeSmallBody(cut, 'gzip', 1000)
  t.ok(partial !== undefined && partial.body.length > 0 && partial.body.every((b) => b === 0x78))
})
