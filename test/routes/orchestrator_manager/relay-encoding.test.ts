// Compressed orchestrator answers (Content-Encoding), which the relay never asks for: restQuery
// passes them on labelled, restAction and error answers decode them, over real sockets.
import t from 'tap'
import { request } from 'undici'
import { brotliCompressSync, deflateSync, gunzipSync, gzipSync } from 'node:zlib'
import { adminAuth, buildTestApp } from '../../helper.js'
import { largeDocument } from '../../fixtures/nso-server.js'
import { createAdapter, nsoAdapter, startNso } from '../../helpers/nso.js'

const YANG_JSON = 'application/yang-data+json'
const DOC = '/restconf/data/tailf-ncs:devices/device'

t.test('compressed orchestrator answers', async (t) => {
  const app = await buildTestApp(t, { database: 'any', env: { ORCHESTRATOR_ADAPTER_CACHE_TTL_MS: '60000' } })
  const base = await app.listen({ port: 0, host: '127.0.0.1' })
  const nso = await startNso(t)
  await createAdapter(app, nsoAdapter('nso', nso, { timeoutMs: 60_000 }))
  t.beforeEach(() => { nso.reset() })

  const relay = async (kind: 'restQuery' | 'restAction', params: Record<string, unknown> = { path: DOC, accept: YANG_JSON, method: 'GET' }) => {
    const response = await request(`${base}/orchestrator_manager/${kind}/nso`, {
      method: 'POST',
      headers: { authorization: adminAuth, 'content-type': 'application/json' },
      body: JSON.stringify(kind === 'restQuery' ? { params: { path: params.path, accept: params.accept } } : { params, body: {} })
    })
    return { status: response.statusCode, headers: response.headers, body: Buffer.from(await response.body.arrayBuffer()) }
  }

  const document = largeDocument(1024 * 1024)
  const gzipped = gzipSync(document)

  t.test('restQuery passes a gzip answer on with its Content-Encoding, bytes untouched', async (t) => {
    nso.raw.set(DOC, { contentType: YANG_JSON, contentEncoding: 'gzip', body: gzipped })
    const response = await relay('restQuery')
    t.equal(response.status, 200)
    t.equal(response.headers['content-type'], YANG_JSON)
    t.equal(response.headers['content-encoding'], 'gzip', 'labelled: a client knows to decode it')
    t.equal(response.headers['content-length'], String(gzipped.length), 'the length of the bytes sent')
    t.ok(response.body.equals(gzipped), 'the orchestrator\'s bytes')
    t.ok(gunzipSync(response.body).equals(document), 'which decode to the document')
  })

  t.test('restQuery without a coding sends no Content-Encoding', async (t) => {
    nso.raw.set(DOC, { contentType: YANG_JSON, body: document })
    const response = await relay('restQuery')
    t.equal(response.headers['content-encoding'], undefined)
    t.ok(response.body.equals(document))
  })

  t.test('restAction decodes gzip, deflate and br (also chunked) before checking and embedding the JSON', async (t) => {
    const expected = `[{"result":"200","data":${document.toString()}}]`
    for (const [coding, body, chunked] of [
      ['gzip', gzipped, false], ['x-gzip', gzipped, true], ['deflate', deflateSync(document), false],
      ['br', brotliCompressSync(document), true], ['identity', document, false]
    ] as const) {
      nso.raw.set(DOC, { contentType: YANG_JSON, contentEncoding: coding, body, chunked })
      const response = await relay('restAction')
      t.equal(response.status, 200, coding)
      t.equal(response.headers['content-encoding'], undefined, `${coding}: the reply is not encoded`)
      t.ok(response.body.toString() === expected, `${coding}: the document, decoded`)
    }
  })

  t.test('restAction refuses a coding it cannot decode, and a body that does not decode', async (t) => {
    for (const coding of ['zstd', 'compress', 'gzip, br']) {
      nso.raw.set(DOC, { contentType: YANG_JSON, contentEncoding: coding, body: gzipped })
      const response = await relay('restAction')
      t.equal(response.status, 502, coding)
      t.match(JSON.parse(response.body.toString()), {
        code: 'UPSTREAM_UNSUPPORTED_ENCODING',
        message: `Orchestrator adapter "nso" answered in Content-Encoding "${coding}", which the relay does not decode (gzip, deflate or br)`
      }, coding)
    }
    nso.raw.set(DOC, { contentType: YANG_JSON, contentEncoding: 'gzip', body: Buffer.from('{"not":"gzip"}') })
    const response = await relay('restAction')
    t.equal(response.status, 502)
    t.match(JSON.parse(response.body.toString()), { code: 'UPSTREAM_INVALID_ENCODING', message: /^Orchestrator adapter "nso" answered a body its Content-Encoding does not decode \(/ })
  })

  t.test('an error answer in gzip: the 502 carries the decoded document', async (t) => {
    const errors = { 'ietf-restconf:errors': { error: [{ 'error-type': 'application', 'error-tag': 'data-exists' }] } }
    for (const kind of ['restQuery', 'restAction'] as const) {
      nso.raw.set(DOC, { status: 409, contentType: YANG_JSON, contentEncoding: 'gzip', body: gzipSync(JSON.stringify(errors)) })
      const response = await relay(kind)
      t.equal(response.status, 502, kind)
      t.match(JSON.parse(response.body.toString()), { code: 'UPSTREAM_ERROR', upstream: { status: 409, body: errors } }, kind)
    }
  })
})
