import t from 'tap'
import fc from 'fast-check'
import { GitProtocolError, pktLine } from '../../../../lib/git/protocol/receive-pack.js'
import { UploadPackReader, fetchCapabilities, parseUploadPackResponse, uploadPackRequest } from '../../../../lib/git/protocol/upload-pack.js'
import { propertyRuns } from '../../../helpers/property-runs.js'

const A = 'a'.repeat(40)
const B = 'b'.repeat(40)
const C = 'c'.repeat(40)
const FLUSH = Buffer.from('0000')
const band = (n: number, data: string | Buffer): Buffer => pktLine(Buffer.concat([Buffer.from([n]), Buffer.from(data)]))

t.test('the request: want with capabilities, boundary and depth, a flush, haves, done', async (t) => {
  const body = uploadPackRequest({ want: A, haves: [B], shallows: [C], depth: 1, capabilities: ['side-band-64k', 'agent=x/1'] })
  const pkt = (s: string): string => (s.length + 4).toString(16).padStart(4, '0') + s
  t.equal(body.toString('latin1'),
    pkt(`want ${A} side-band-64k agent=x/1\n`) + pkt(`shallow ${C}\n`) + '000ddeepen 1\n' + '0000' + pkt(`have ${B}\n`) + '0009done\n')
  const plain = uploadPackRequest({ want: A, haves: [], shallows: [], capabilities: ['agent=x/1'] })
  t.equal(plain.toString('latin1'), pkt(`want ${A} agent=x/1\n`) + '0000' + '0009done\n')
  t.throws(() => uploadPackRequest({ want: 'HEAD\nwant x', haves: [], shallows: [], capabilities: [] }), RangeError, 'only object ids go on the wire')
})

t.test('capabilities: only what the server offers; the narrow side band when the wide one is not', async (t) => {
  t.same(fetchCapabilities({ 'side-band-64k': true, 'side-band': true, 'ofs-delta': true, 'no-progress': true, shallow: true, multi_ack: true }, 'me/1', true),
    ['side-band-64k', 'ofs-delta', 'no-progress', 'shallow', 'agent=me/1'])
  t.same(fetchCapabilities({ 'side-band': true, shallow: true }, 'me/1', false), ['side-band', 'agent=me/1'])
  t.same(fetchCapabilities({}, 'me/1', true), ['agent=me/1'])
})

t.test('the answer: shallow update, NAK, then the pack in band 1', async (t) => {
  const body = Buffer.concat([
    pktLine(`shallow ${A}\n`), pktLine(`unshallow ${B}\n`), FLUSH, pktLine('NAK\n'),
    band(2, 'Counting objects\n'), band(1, 'PACK'), band(1, 'rest'), FLUSH
  ])
  t.same(parseUploadPackResponse(body, true), { shallow: [A], unshallow: [B], pack: Buffer.from('PACKrest') })
  const raw = Buffer.concat([pktLine(`ACK ${A}\n`), Buffer.from('PACKraw')])
  t.same(parseUploadPackResponse(raw, false), { shallow: [], unshallow: [], pack: Buffer.from('PACKraw') }, 'without a side band the rest is the pack')
  t.throws(() => parseUploadPackResponse(Buffer.concat([pktLine('ERR access denied\n')]), true), GitProtocolError)
  t.throws(() => parseUploadPackResponse(Buffer.concat([pktLine('NAK\n'), band(3, 'disk full\n'), FLUSH]), true), /disk full/)
  t.throws(() => parseUploadPackResponse(Buffer.concat([pktLine('NAK\n'), band(1, 'PACK')]), true), GitProtocolError, 'no flush at the end')
  t.throws(() => parseUploadPackResponse(Buffer.concat([pktLine('NAK\n'), band(7, 'x'), FLUSH]), true), GitProtocolError, 'unknown band')
  t.throws(() => parseUploadPackResponse(Buffer.concat([pktLine('hello\n')]), true), GitProtocolError, 'not a negotiation line')
  t.throws(() => parseUploadPackResponse(FLUSH, true), GitProtocolError, 'no ACK or NAK')
})

t.test('any answer is either parsed or refused with a GitProtocolError', async () => {
  const valid = Buffer.concat([pktLine(`shallow ${A}\n`), FLUSH, pktLine('NAK\n'), band(1, 'PACKdata'), FLUSH])
  fc.assert(fc.property(fc.oneof(
    fc.uint8Array({ maxLength: 200 }),
    fc.tuple(fc.nat({ max: valid.length - 1 }), fc.integer({ min: 1, max: 255 })).map(([at, xor]) => {
      const copy = Buffer.from(valid)
      copy[at] = (copy[at] as number) ^ xor
      return copy
    })
  ), fc.boolean(), (body, sideBand) => {
    try {
      const result = parseUploadPackResponse(body, sideBand)
      return result.pack.length <= body.length
    } catch (err) {
      return err instanceof GitProtocolError
    }
  }), { numRuns: propertyRuns(600) })
})

t.test('read in chunks of any size, the answer is the same as read whole', async () => {
  const answers: Array<[Buffer, boolean]> = [
    [Buffer.concat([pktLine(`shallow ${A}\n`), FLUSH, pktLine('NAK\n'), band(2, 'Counting\n'), band(1, 'PACK'), band(1, Buffer.alloc(300, 7)), FLUSH]), true],
    [Buffer.concat([pktLine(`ACK ${A}\n`), Buffer.from('PACK'), Buffer.alloc(300, 9)]), false]
  ]
  fc.assert(fc.property(fc.constantFrom(...answers), fc.array(fc.nat({ max: 400 }), { maxLength: 8 }), ([body, sideBand], cuts) => {
    const reader = new UploadPackReader(sideBand)
    const points = [0, ...cuts.map((c) => c % (body.length + 1)).sort((a, b) => a - b), body.length]
    const parts: Buffer[] = []
    for (let i = 1; i < points.length; i++) parts.push(...reader.push(body.subarray(points[i - 1], points[i])))
    reader.end()
    const whole = parseUploadPackResponse(body, sideBand)
    return Buffer.concat(parts).equals(whole.pack) && reader.shallow.join() === whole.shallow.join()
  }), { numRuns: propertyRuns(60) })
})
