import t from 'tap'
import fc from 'fast-check'
import {
  GitProtocolError, ZERO_OID, parseReceivePackResponse, pktLine, pushCapabilities, readPktLines, receivePackRequest
} from '../../../../lib/git/protocol/receive-pack.js'

const A = 'a'.repeat(40)
const B = 'b'.repeat(40)
const band = (n: number, text: string | Buffer): Buffer => pktLine(Buffer.concat([Buffer.from([n]), Buffer.from(text)]))
const FLUSH = '0000'

t.test('pkt-lines: length prefix, flush, round trip', async (t) => {
  t.equal(pktLine('hello\n').toString(), '000ahello\n')
  t.equal(pktLine('').toString(), '0004')
  t.same(readPktLines(Buffer.from('000ahello\n00000006ab')).map((l) => l?.toString() ?? null), ['hello\n', null, 'ab'])
  t.throws(() => pktLine(Buffer.alloc(65520)), RangeError)
  fc.assert(fc.property(fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 20 }), (chunks) => {
    const lines = readPktLines(Buffer.concat(chunks.map((c) => pktLine(c))))
    return lines.length === chunks.length && lines.every((l, i) => l !== null && Buffer.compare(l, Buffer.from(chunks[i] as Uint8Array)) === 0)
  }))
  for (const bad of ['zzzz', '0003', '0010short', '00']) {
    t.throws(() => readPktLines(Buffer.from(bad)), GitProtocolError, bad)
  }
})

t.test('the request: one command with capabilities, a flush, then the pack', async (t) => {
  const pack = Buffer.from('PACK....')
  const body = receivePackRequest({ oldOid: ZERO_OID, newOid: A, ref: 'refs/heads/feature/x' }, ['report-status', 'agent=x/1'], pack)
  const command = `${ZERO_OID} ${A} refs/heads/feature/x\u0000report-status agent=x/1\n`
  t.equal(body.toString('latin1'), `${(command.length + 4).toString(16).padStart(4, '0')}${command}${FLUSH}PACK....`)
  t.same(pushCapabilities({ 'report-status': true, 'side-band-64k': true, 'ofs-delta': true, agent: 'git/2' }, 'me/1'),
    ['report-status', 'side-band-64k', 'agent=me/1'], 'only what the server offers, and never more than needed')
  t.same(pushCapabilities({ 'report-status': true, quiet: true }, 'me/1'), ['report-status', 'quiet', 'agent=me/1'])
})

t.test('the report, with side-band: status in band 1, messages in band 2', async (t) => {
  const status = Buffer.concat([pktLine('unpack ok\n'), pktLine('ok refs/heads/main\n'), Buffer.from(FLUSH)])
  const ok = parseReceivePackResponse(Buffer.concat([band(1, status), Buffer.from(FLUSH)]), true)
  t.same(ok, { unpack: 'ok', refs: new Map([['refs/heads/main', { ok: true }]]), messages: [] })

  const refused = Buffer.concat([
    band(2, 'policy: branch '), band(2, 'is frozen\nsecond line\r\n'), band(2, '\n'),
    band(1, Buffer.concat([pktLine('unpack ok\n'), pktLine('ng refs/heads/main pre-receive hook declined\n')])),
    band(1, FLUSH),
    Buffer.from(FLUSH)
  ])
  t.same(parseReceivePackResponse(refused, true), {
    unpack: 'ok',
    refs: new Map([['refs/heads/main', { ok: false, reason: 'pre-receive hook declined' }]]),
    messages: ['policy: branch is frozen', 'second line']
  }, 'messages are reassembled across packets; a status may span packets too')

  const bare = parseReceivePackResponse(band(1, Buffer.concat([pktLine('unpack index-pack abnormal exit\n'), pktLine('ng refs/heads/x\n')])), true)
  t.same(bare, { unpack: 'index-pack abnormal exit', refs: new Map([['refs/heads/x', { ok: false, reason: 'rejected' }]]), messages: [] })

  t.throws(() => parseReceivePackResponse(band(3, 'fatal: out of space'), true), { name: 'GitProtocolError', message: /out of space/ })
  t.throws(() => parseReceivePackResponse(band(7, 'x'), true), { message: /unknown side-band channel/ })
  t.throws(() => parseReceivePackResponse(Buffer.from(FLUSH), true), { message: /no push status/ })
  t.throws(() => parseReceivePackResponse(Buffer.from('<html>'), true), GitProtocolError)
})

t.test('the report without side-band', async (t) => {
  const body = Buffer.concat([pktLine('unpack ok\n'), pktLine('ok refs/heads/a\n'), pktLine('ng refs/heads/b stale info\n'), Buffer.from(FLUSH)])
  t.same(parseReceivePackResponse(body, false), {
    unpack: 'ok',
    refs: new Map([['refs/heads/a', { ok: true }], ['refs/heads/b', { ok: false, reason: 'stale info' }]]),
    messages: []
  })
  t.equal(B.length, 40)
})
