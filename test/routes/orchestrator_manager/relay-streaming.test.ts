// The relay over real sockets: answers stream through (the client reads the start while the
// orchestrator still holds the rest), failures before and after the first byte, restAction's
// check of the JSON it embeds, bounded error bodies and idle pools.
import t from 'tap'
import { request } from 'undici'
import { adminAuth, buildTestApp, captureLogs, testDatabases, type TestApp } from '../../helper.js'
import { largeDocument, type NsoServer } from '../../fixtures/nso-server.js'
import { createAdapter, nsoAdapter, startNso } from '../../helpers/nso.js'
import { until } from '../../helpers/until.js'
import { ACTION_HOLD_BYTES } from '../../../lib/orchestrator/action-body.js'
import { MAX_JSON_DEPTH } from '../../../lib/orchestrator/json-check.js'
import { LOGGED_ERROR_BODY_MAX_CHARS, UPSTREAM_ERROR_BODY_MAX_BYTES, WHOLE_ANSWER_MAX_BYTES } from '../../../lib/orchestrator/upstream.js'

const YANG_JSON = 'application/yang-data+json'
const YANG_XML = 'application/yang-data+xml'
const DOC = '/restconf/data/tailf-ncs:devices/device'

interface Gate {
  promise: Promise<void>
  open: () => void
  opened: boolean
}

function gate (): Gate {
  let open = (): void => {}
  const promise = new Promise<void>((resolve) => { open = resolve })
  const g: Gate = { promise, opened: false, open: () => { g.opened = true; open() } }
  return g
}

// Reads `body` until at least `bytes` bytes came; returns them (the body stays open).
async function readAtLeast (body: AsyncIterable<Buffer>, bytes: number): Promise<{ head: Buffer, rest: AsyncIterator<Buffer> }> {
  const it = body[Symbol.asyncIterator]()
  const chunks: Buffer[] = []
  let size = 0
  while (size < bytes) {
    const next = await it.next()
    if (next.done === true) break
    chunks.push(next.value)
    size += next.value.length
  }
  return { head: Buffer.concat(chunks), rest: it }
}

async function drain (rest: AsyncIterator<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = []
  for (let next = await rest.next(); next.done !== true; next = await rest.next()) chunks.push(next.value)
  return Buffer.concat(chunks)
}

for (const database of testDatabases) {
  t.test(`orchestrator relay over sockets, on ${database}`, async (t) => {
    const logs = captureLogs()
    const app: TestApp = await buildTestApp(t, {
      database,
      env: { ORCHESTRATOR_ADAPTER_CACHE_TTL_MS: '60000', LOG_LEVEL: 'info' },
      logStream: logs
    })
    const base = await app.listen({ port: 0, host: '127.0.0.1' })
    const nso: NsoServer = await startNso(t)
    // Deadlines long enough for a loaded machine; the 504 test has an adapter of its own.
    await createAdapter(app, nsoAdapter('nso', nso, { timeoutMs: 60_000 }))
    await createAdapter(app, nsoAdapter('Local NSO', nso, { timeoutMs: 60_000 }))
    t.beforeEach(() => { nso.reset() })

    const relay = async (kind: 'restQuery' | 'restAction', adapter: string, params: Record<string, unknown>, body?: object) =>
      await request(`${base}/orchestrator_manager/${kind}/${encodeURIComponent(adapter)}`, {
        method: 'POST',
        headers: { authorization: adminAuth, 'content-type': 'application/json' },
        body: JSON.stringify(kind === 'restQuery' ? { params: { path: params.path, accept: params.accept } } : { params, body: body ?? {} })
      })

    const document = largeDocument(4 * 1024 * 1024)

    t.test('restQuery: the first bytes reach the client while the orchestrator still holds the rest', async (t) => {
      const held = gate()
      nso.raw.set(DOC, { contentType: YANG_JSON, body: document, holdAfterFirstChunk: held.promise })
      const response = await relay('restQuery', 'Local NSO', { path: DOC, accept: YANG_JSON })
      t.equal(response.statusCode, 200)
      t.equal(response.headers['content-type'], YANG_JSON)
      t.equal(response.headers['content-length'], String(document.length), "the orchestrator's length is passed on")
      const { head, rest } = await readAtLeast(response.body, 1)
      t.equal(held.opened, false, 'the start arrived before the orchestrator sent the rest')
      t.equal(nso.rawOutcomes[0]?.written, 64 * 1024, 'the orchestrator had written one chunk only')
      held.open()
      const whole = Buffer.concat([head, await drain(rest)])
      t.equal(whole.length, document.length)
      t.ok(whole.equals(document), 'byte for byte')
    })

    t.test('restAction: the same, wrapped as [{result, data}] without parsing the document', async (t) => {
      const held = gate()
      nso.raw.set(DOC, { contentType: YANG_JSON, body: document, holdAfterFirstChunk: held.promise })
      const response = await relay('restAction', 'nso', { path: DOC, accept: YANG_JSON, method: 'GET' })
      t.equal(response.statusCode, 200)
      t.match(response.headers['content-type'], /^application\/json/)
      const { head, rest } = await readAtLeast(response.body, 1)
      t.equal(held.opened, false, 'the start arrived before the orchestrator sent the rest')
      t.ok(head.toString().startsWith('[{"result":"200","data":{"tailf-ncs:device":['), head.subarray(0, 60).toString())
      held.open()
      const whole = Buffer.concat([head, await drain(rest)])
      t.same(JSON.parse(whole.toString()), [{ result: '200', data: JSON.parse(document.toString()) }])
      t.ok(whole.subarray(whole.length - document.length - 2, whole.length - 2).equals(document), "the orchestrator's bytes, untouched")
    })

    t.test('restAction: text answers become a JSON string, characters split across chunks included', async (t) => {
      const xml = '<devices>' + '<device><name>pé—😀"\\</name></device>\n'.repeat(20_000) + '</devices>'
      nso.raw.set(DOC, { contentType: YANG_XML, body: xml, chunkBytes: 1021 })
      const response = await relay('restAction', 'nso', { path: DOC, accept: YANG_XML, method: 'GET' })
      t.equal(response.statusCode, 200)
      t.same(await response.body.json(), [{ result: '200', data: xml }])
      nso.raw.set(DOC, { status: 204, contentType: YANG_JSON, body: '' })
      const empty = await relay('restAction', 'nso', { path: DOC, accept: YANG_JSON, method: 'GET' })
      t.same(await empty.body.json(), [{ result: '204' }], 'no data when there is no body')
    })

    t.test('restQuery: an answer within WHOLE_ANSWER_MAX_BYTES goes whole with its length; one past it streams', async (t) => {
      for (const [bytes, chunkBytes] of [[WHOLE_ANSWER_MAX_BYTES, 1000], [WHOLE_ANSWER_MAX_BYTES + 1, 1000], [3 * WHOLE_ANSWER_MAX_BYTES, undefined]] as const) {
        // Exactly `bytes` bytes (restQuery relays them unread, so a cut document is as good).
        const body = largeDocument(bytes).subarray(0, bytes)
        nso.raw.set(DOC, { contentType: YANG_JSON, body, chunked: true, ...(chunkBytes === undefined ? {} : { chunkBytes }) })
        const response = await relay('restQuery', 'nso', { path: DOC, accept: YANG_JSON })
        t.equal(response.statusCode, 200)
        t.equal(response.headers['content-type'], YANG_JSON)
        t.equal(response.headers['x-content-type-options'], 'nosniff', 'whole or streamed, the answer says nosniff')
        const received = Buffer.from(await response.body.arrayBuffer())
        t.ok(received.equals(body), `${bytes} bytes, byte for byte`)
        if (bytes <= WHOLE_ANSWER_MAX_BYTES) {
          t.equal(response.headers['content-length'], String(bytes), 'a whole answer carries its length')
          t.equal(response.headers['transfer-encoding'], undefined)
        } else {
          t.equal(response.headers['transfer-encoding'], 'chunked', 'a larger answer without a length streams')
        }
      }
    })

    t.test('restQuery: a small answer that breaks before its end is a clean 502, and nothing was sent before it', async (t) => {
      nso.raw.set(DOC, { contentType: YANG_JSON, body: largeDocument(WHOLE_ANSWER_MAX_BYTES), chunked: true, chunkBytes: 1000, failAfterBytes: 5000 })
      const response = await relay('restQuery', 'nso', { path: DOC, accept: YANG_JSON })
      t.equal(response.statusCode, 502)
      t.match(await response.body.json(), { code: 'UPSTREAM_ANSWER_INTERRUPTED', nsoStatus: 200 })
    })

    t.test('a failure mid-body: the client sees a 200 whose body is cut short; the service keeps serving', async (t) => {
      for (const kind of ['restQuery', 'restAction'] as const) {
        nso.reset()
        nso.raw.set(DOC, { contentType: YANG_JSON, body: document, failAfterBytes: 1024 * 1024 })
        const response = await relay(kind, 'nso', { path: DOC, accept: YANG_JSON, method: 'GET' })
        t.equal(response.statusCode, 200, `${kind}: the status was sent before the failure`)
        const read = await response.body.arrayBuffer().then((b) => b.byteLength, (err: unknown) => err)
        t.ok(read instanceof Error, `${kind}: reading the body fails (${String(read)})`)
        t.equal(nso.rawOutcomes[0]?.end, 'failed')
        const next = await relay('restQuery', 'nso', { path: '/restconf/data/tailf-ncs:devices/device=ce0/address', accept: YANG_JSON })
        t.same(await next.body.json(), { 'tailf-ncs:address': '127.0.0.1' }, `${kind}: the next call is served`)
      }
      t.ok(logs.lines.some((line) => line.includes('response terminated with an error with headers already sent') || line.includes('UND_ERR_SOCKET')),
        'the cut is logged')
    })

    t.test('restAction: invalid JSON in the first 64 KiB is a clean 502; later, the reply is cut short', async (t) => {
      const early = Buffer.from('{"tailf-ncs:device":[' + '{"name":"pe"},'.repeat(100) + ']}')
      nso.raw.set(DOC, { contentType: YANG_JSON, body: early })
      const clean = await relay('restAction', 'nso', { path: DOC, accept: YANG_JSON, method: 'GET' })
      t.equal(clean.statusCode, 502)
      t.match(await clean.body.json(), { code: 'UPSTREAM_INVALID_JSON', message: /^Orchestrator adapter "nso" answered invalid JSON \(an unexpected .* at byte \d+\)$/ })

      const late = Buffer.from(document)
      late[ACTION_HOLD_BYTES * 8] = 0x01 // a control byte is invalid in a string and out of one
      nso.raw.set(DOC, { contentType: YANG_JSON, body: late })
      const cut = await relay('restAction', 'nso', { path: DOC, accept: YANG_JSON, method: 'GET' })
      t.equal(cut.statusCode, 200, 'the reply had started')
      t.ok(await cut.body.text().then(() => false, () => true), 'its body is cut short: never a complete (and wrong) JSON text')

      const truncatedUpstream = document.subarray(0, 10_000)
      nso.raw.set(DOC, { contentType: YANG_JSON, body: truncatedUpstream })
      const partial = await relay('restAction', 'nso', { path: DOC, accept: YANG_JSON, method: 'GET' })
      t.equal(partial.statusCode, 502)
      t.match(await partial.body.json(), { message: /ends before it is complete/ })
    })

    t.test('restAction: JSON nested deeper than the limit is a 502, never a 500, however deep', async (t) => {
      for (const depth of [MAX_JSON_DEPTH + 1, 100_000, 3_000_000]) {
        nso.raw.set(DOC, { contentType: YANG_JSON, body: '['.repeat(depth) + ']'.repeat(depth) })
        const response = await relay('restAction', 'nso', { path: DOC, accept: YANG_JSON, method: 'GET' })
        t.equal(response.statusCode, 502, `depth ${depth}`)
        t.match(await response.body.json(), { code: 'UPSTREAM_INVALID_JSON', message: new RegExp(`nesting deeper than ${MAX_JSON_DEPTH} levels`) })
      }
      // Deep nesting that starts past the point where the reply began: cut short.
      const late = Buffer.concat([Buffer.from('['), document, Buffer.from(',' + '['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH) + ']')])
      nso.raw.set(DOC, { contentType: YANG_JSON, body: late })
      const cut = await relay('restAction', 'nso', { path: DOC, accept: YANG_JSON, method: 'GET' })
      t.equal(cut.statusCode, 200)
      t.ok(await cut.body.text().then(() => false, () => true), 'cut short')
      // Within the limit: relayed.
      const ok = '['.repeat(MAX_JSON_DEPTH) + ']'.repeat(MAX_JSON_DEPTH)
      nso.raw.set(DOC, { contentType: YANG_JSON, body: ok })
      const fine = await relay('restAction', 'nso', { path: DOC, accept: YANG_JSON, method: 'GET' })
      t.equal(await fine.body.text(), `[{"result":"200","data":${ok}}]`)
    })

    t.test('a 504 before the first byte, for both operations, also once the headers are in', async (t) => {
      await createAdapter(app, nsoAdapter('slow', nso, { timeoutMs: 300 }))
      for (const kind of ['restQuery', 'restAction'] as const) {
        nso.reset()
        nso.mode = 'hang'
        const hung = await relay(kind, 'slow', { path: DOC, accept: YANG_JSON, method: 'GET' })
        t.equal(hung.statusCode, 504, `${kind}: no headers`)
        t.match(await hung.body.json(), { statusCode: 504, code: 'UPSTREAM_TIMEOUT', message: 'Orchestrator adapter "slow" did not answer within 300 ms' })
        nso.reset()
        const never = gate()
        t.teardown(() => { never.open() })
        nso.raw.set(DOC, { contentType: YANG_JSON, body: document, holdBeforeBody: never.promise })
        const headersOnly = await relay(kind, 'slow', { path: DOC, accept: YANG_JSON, method: 'GET' })
        t.equal(headersOnly.statusCode, 504, `${kind}: headers but no body byte`)
        t.match(await headersOnly.body.json(), { code: 'UPSTREAM_TIMEOUT' })
        never.open()
      }
    })

    t.test('a large upstream error body: 502 with its first 64 KiB, marked truncated; the log carries 1 KiB', async (t) => {
      const huge = JSON.stringify({ 'ietf-restconf:errors': { error: [{ 'error-message': 'x'.repeat(1024 * 1024) }] } })
      nso.raw.set(DOC, { status: 500, contentType: YANG_JSON, body: huge })
      const before = logs.lines.length
      const response = await relay('restQuery', 'nso', { path: DOC, accept: YANG_JSON })
      t.equal(response.statusCode, 502)
      const body = await response.body.json() as { upstream: { status: number, body: string, truncated: boolean } }
      t.equal(body.upstream.status, 500)
      t.equal(body.upstream.truncated, true)
      t.equal(body.upstream.body, huge.slice(0, UPSTREAM_ERROR_BODY_MAX_BYTES), 'the start of the body, as text')
      const logged = logs.lines.slice(before).filter((line) => line.includes('UPSTREAM_ERROR'))
      t.equal(logged.length, 1)
      const line = JSON.parse(logged[0] ?? '{}') as { err?: { upstream?: { body: string, truncated: boolean }, details?: unknown } }
      t.equal(line.err?.upstream?.body.length, LOGGED_ERROR_BODY_MAX_CHARS)
      t.equal(line.err?.upstream?.truncated, true)
      t.equal(line.err?.details, undefined, 'not the whole body again')
      t.ok((logged[0] ?? '').length < 4 * LOGGED_ERROR_BODY_MAX_CHARS, `a short line (${(logged[0] ?? '').length} characters)`)

      nso.raw.set(DOC, { status: 404, contentType: YANG_JSON, body: '{"ietf-restconf:errors":{}}' })
      const small = await relay('restQuery', 'nso', { path: DOC, accept: YANG_JSON })
      t.same((await small.body.json() as { upstream: unknown }).upstream, { status: 404, body: { 'ietf-restconf:errors': {} } }, 'a small one whole, parsed')
      nso.raw.set(DOC, { status: 400, contentType: YANG_JSON, body: '['.repeat(10_000) + ']'.repeat(10_000) })
      const deep = await relay('restQuery', 'nso', { path: DOC, accept: YANG_JSON })
      t.equal(deep.statusCode, 502)
      t.equal((await deep.body.json() as { upstream: { body: unknown } }).upstream.body, '['.repeat(10_000) + ']'.repeat(10_000), 'too deep to parse: as text')
    })

    t.test('a client that goes away stops the upstream call', async (t) => {
      const held = gate()
      nso.raw.set(DOC, { contentType: YANG_JSON, body: largeDocument(16 * 1024 * 1024), holdAfterFirstChunk: held.promise })
      const response = await relay('restQuery', 'nso', { path: DOC, accept: YANG_JSON })
      await readAtLeast(response.body, 1)
      response.body.destroy()
      held.open()
      // The orchestrator sees its client (the relay) go away before it wrote everything.
      await until(() => nso.rawOutcomes[0]?.end !== 'writing', 'the orchestrator has stopped writing its answer', 60_000)
      t.equal(nso.rawOutcomes[0]?.end, 'client-gone')
      t.ok((nso.rawOutcomes[0]?.written ?? 0) < 16 * 1024 * 1024, 'not all of it was written')
      // A connection whose client left mid-answer can stay open on the server side until its
      // keep-alive timeout; the test's end should not wait for it.
      app.server.closeAllConnections()
    })
  })
}
