import t from 'tap'
import { execFile } from 'node:child_process'
import { once } from 'node:events'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import https from 'node:https'
import type { AddressInfo } from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { promisify } from 'node:util'
import { orchestratorClient, type UpstreamRequest } from '../../../plugins/orchestrator/client.js'
import type { RelayAdapter } from '../../../plugins/orchestrator/adapters-repository.js'
import { HttpError } from '../../../lib/http/errors.js'
import { adminAuth, buildTestApp } from '../../helper.js'
import type { NsoServer } from '../../fixtures/nso-server.js'
import { createAdapter, nsoAdapter, startNso } from '../../helpers/nso.js'
import { until } from '../../helpers/until.js'

const GET: UpstreamRequest = { method: 'GET', path: '/restconf/data/tailf-ncs:devices/device=ce0/address', accept: 'application/yang-data+json' }

const row = (nso: NsoServer, revision: string, over: Partial<RelayAdapter> = {}): RelayAdapter => ({
  id: 'nso', baseUrl: nso.url, username: nso.username, password: nso.password, timeoutMs: 5000, rejectUnauthorized: true, ca: null, revision, ...over
})

// A registry in memory standing in for the database, counting reads.
function registry (initial: RelayAdapter | undefined) {
  const state = { current: initial, reads: 0 }
  return { state, findAdapter: async (id: string) => { state.reads++; return state.current?.id === id ? state.current : undefined } }
}

t.test('rows are cached for the TTL; concurrent calls share one read', async (t) => {
  const nso = await startNso(t)
  const { state, findAdapter } = registry(row(nso, '1'))
  let clock = 1000
  const client = orchestratorClient({ findAdapter, cacheTtlMs: 2000, connections: 4, now: () => clock })
  t.teardown(async () => { await client.close() })

  const answers = await Promise.all(Array.from({ length: 5 }, async () => await client.send('nso', GET)))
  t.same(answers.map((a) => a.status), [200, 200, 200, 200, 200])
  t.same(JSON.parse(answers[0]?.body.toString() ?? ''), { 'tailf-ncs:address': '127.0.0.1' })
  t.equal(answers[0]?.contentType, 'application/yang-data+json')
  t.equal(state.reads, 1, 'one read for five concurrent calls')
  const pool = client.poolOf('nso')

  clock += 1999
  await client.send('nso', GET)
  t.equal(state.reads, 1, 'still fresh just before the TTL')
  clock += 1
  await client.send('nso', GET)
  t.equal(state.reads, 2, 'read again once the TTL has passed')
  t.equal(client.poolOf('nso'), pool, 'same revision: the pool is kept')
  t.equal(nso.received.length, 7)
})

t.test('a new revision (changed elsewhere) rebuilds the pool; a vanished row closes it', async (t) => {
  const first = await startNso(t)
  const second = await startNso(t)
  const { state, findAdapter } = registry(row(first, '1'))
  const client = orchestratorClient({ findAdapter, cacheTtlMs: 0, connections: 2 })
  t.teardown(async () => { await client.close() })

  await client.send('nso', GET)
  const pool = client.poolOf('nso')
  state.current = row(second, '2')
  await client.send('nso', GET)
  t.equal(second.received.length, 1, 'the new base URL is used at once with TTL 0')
  t.equal(pool?.closed, true, 'the old pool is closed')
  const rebuilt = client.poolOf('nso')
  t.not(rebuilt, pool)

  state.current = row(second, '3', { password: 'changed' })
  const refused = await client.send('nso', GET).catch((err: unknown) => err)
  t.match(refused, { statusCode: 502, code: 'UPSTREAM_ERROR', details: { upstream: { status: 401 } } }, 'new credentials with the new revision')
  t.equal(rebuilt?.closed, true)

  state.current = undefined
  const gone = await client.send('nso', GET).catch((err: unknown) => err)
  t.match(gone, { statusCode: 404, message: 'Orchestrator adapter "nso" not found' })
  t.equal(client.poolOf('nso'), undefined, 'the pool is dropped')
})

t.test('forget: the next call reads again, also when the change overlapped a read', async (t) => {
  const first = await startNso(t)
  const second = await startNso(t)
  const state = { current: row(first, '1'), reads: 0 }
  const client = orchestratorClient({
    async findAdapter () {
      state.reads++
      const seen = state.current
      // The row is changed and forgotten while this read is in flight.
      if (state.reads === 2) {
        state.current = row(second, '2')
        client.forget('nso')
      }
      return seen
    },
    cacheTtlMs: 60_000,
    connections: 2
  })
  t.teardown(async () => { await client.close() })

  await client.send('nso', GET)
  const pool = client.poolOf('nso')
  client.forget('nso')
  t.equal(pool?.closed, true, 'forget closes the pool')
  t.equal(client.poolOf('nso'), undefined)
  client.forget('nso')
  t.pass('forgetting twice is harmless')

  await client.send('nso', GET)
  t.equal(state.reads, 3, 'the read that overlapped the change is done again')
  t.equal(second.received.length, 1, 'and the new row wins')
  t.equal(first.received.length, 1)
})

t.test('a pool closed under a call is replaced and the call still goes through once', async (t) => {
  const nso = await startNso(t)
  const { state, findAdapter } = registry(row(nso, '1'))
  const client = orchestratorClient({ findAdapter, cacheTtlMs: 60_000, connections: 2 })
  t.teardown(async () => { await client.close() })
  await client.send('nso', GET)
  const pool = client.poolOf('nso')
  await pool?.close()
  const answer = await client.send('nso', GET)
  t.equal(answer.status, 200)
  t.not(client.poolOf('nso'), pool)
  t.equal(state.reads, 2)
  t.equal(nso.received.length, 2, 'nothing was sent twice')
})

t.test('a call waiting for a free socket is not under the adapter\'s deadline: it goes out once one is free', async (t) => {
  const nso = await startNso(t)
  // Each answer takes 60% of the deadline: two in a row on the one socket would miss it.
  const { findAdapter } = registry(row(nso, '1', { timeoutMs: 500 }))
  const client = orchestratorClient({ findAdapter, cacheTtlMs: 60_000, connections: 1, queueMax: 5, queueWaitMs: 10_000 })
  t.teardown(async () => { await client.close() })
  nso.delayMs = 300
  const ce1 = { ...GET, path: '/restconf/data/tailf-ncs:devices/device=ce1/address' }
  const answers = await Promise.all([client.send('nso', GET), client.send('nso', ce1), client.send('nso', GET)])
  t.same(answers.map((a) => a.status), [200, 200, 200], 'all three answered, one after the other')
  t.same(nso.received.map((r) => r.url), [GET.path, ce1.path, GET.path], 'in the order they came')
  t.same(client.poolStats().map((s) => s.queued), [0], 'nobody left waiting')
})

t.test('the line of waiting calls: full is a 503 at once, waited too long a 503; each says which, with a Retry-After', async (t) => {
  const nso = await startNso(t)
  const { findAdapter } = registry(row(nso, '1', { timeoutMs: 5000 }))
  const client = orchestratorClient({ findAdapter, cacheTtlMs: 60_000, connections: 1, queueMax: 1, queueWaitMs: 200 })
  t.teardown(async () => { await client.close() })
  let releaseHeld: (value?: unknown) => void = () => {}
  const held = new Promise((resolve) => { releaseHeld = resolve })
  nso.raw.set('/held', { contentType: 'application/yang-data+json', body: '{}', holdBeforeBody: held })
  const running = client.send('nso', { ...GET, path: '/held' })
  // The first call holds the one socket (its headers are in): one more may wait, a third may not.
  await until(() => nso.received.length > 0, 'the first call reaches the orchestrator')
  const waiting = client.send('nso', GET).catch((err: unknown) => err)
  const refused = await client.send('nso', GET).catch((err: unknown) => err)
  t.match(refused, { statusCode: 503, code: 'RELAY_QUEUE_FULL', details: { retryAfter: 1 } })
  t.match((refused as Error).message, /1 calls under way and 1 waiting/)
  t.match(await waiting, { statusCode: 503, code: 'RELAY_QUEUE_TIMEOUT', details: { retryAfter: 1 } })
  t.match((await waiting as Error).message, /within 200 ms/)
  releaseHeld()
  t.equal((await running).status, 200, 'the running call was not disturbed')
  t.equal(nso.received.length, 1, 'the refused calls never went out')
  t.equal((await client.send('nso', GET)).status, 200, 'the adapter serves again')
})

t.test('after close() calls are refused with 503 and no pool is built', async (t) => {
  const nso = await startNso(t)
  const { findAdapter } = registry(row(nso, '1'))
  const client = orchestratorClient({ findAdapter, cacheTtlMs: 60_000, connections: 2 })
  await client.send('nso', GET)
  const pool = client.poolOf('nso')
  await client.close()
  t.equal(pool?.closed, true)
  const refused = await client.send('nso', GET).catch((err: unknown) => err)
  t.ok(refused instanceof HttpError)
  t.match(refused, { statusCode: 503, code: 'SHUTTING_DOWN' })

  // A read that was in flight when close() came does not leave a pool behind.
  let release: (value: RelayAdapter) => void = () => {}
  const late = orchestratorClient({
    findAdapter: async () => await new Promise<RelayAdapter>((resolve) => { release = resolve }),
    cacheTtlMs: 60_000,
    connections: 2
  })
  const pending = late.send('nso', GET).catch((err: unknown) => err)
  await late.close()
  release(row(nso, '1'))
  t.match(await pending, { statusCode: 503 })
  t.equal(late.poolOf('nso'), undefined)
})

t.test('the app closes its pools on shutdown', async (t) => {
  const nso = await startNso(t)
  const app = await buildTestApp(t, { database: 'any' })
  await createAdapter(app, nsoAdapter('nso', nso))
  const relayed = await app.inject({
    method: 'POST',
    url: '/orchestrator_manager/restQuery/nso',
    headers: { authorization: adminAuth },
    payload: { params: { path: GET.path, accept: GET.accept } }
  })
  t.equal(relayed.statusCode, 200)
  const pool = app.orchestrator.poolOf('nso')
  t.equal(pool?.closed, false)
  await app.close()
  t.equal(pool?.closed, true)
})

t.test('an idle pool closes (its sockets with it) and opens again on the next call; a pool in use stays open', async (t) => {
  const nso = await startNso(t)
  const { findAdapter } = registry(row(nso, '1'))
  // The sweep runs on a real timer (every half idle time); the clock it reads is ours, and each
  // sweep reads it once. A call reads it too, when it ends: of two reads, one is a sweep's.
  let clock = 0
  let reads = 0
  const client = orchestratorClient({ findAdapter, cacheTtlMs: 60_000, connections: 2, poolIdleMs: 40, now: () => { reads++; return clock } })
  t.teardown(async () => { await client.close() })
  const swept = async (): Promise<void> => {
    const before = reads
    await until(() => reads >= before + 2, 'a sweep reads the clock')
  }
  const waitFor = async (what: string, done: () => boolean): Promise<void> => {
    await until(done, what)
    t.ok(done(), what)
  }

  t.equal((await client.send('nso', GET)).status, 200)
  const first = client.poolOf('nso')
  t.equal(first?.stats.connected, 1, 'one socket open')
  clock += 39
  await swept()
  t.equal(client.poolOf('nso'), first, 'not idle long enough: still open')
  clock += 1
  await waitFor('idle for poolIdleMs: closed', () => client.poolOf('nso') === undefined)
  t.equal(first?.closed, true)
  await waitFor('its socket closed', () => first?.stats.connected === 0)

  t.equal((await client.send('nso', GET)).status, 200, 'the next call opens a new pool')
  const second = client.poolOf('nso')
  t.not(second, first)
  t.equal(second?.closed, false)

  // A call under way (its answer held by the orchestrator) keeps its pool however long it takes.
  let release = (): void => {}
  nso.raw.set('/held', { contentType: 'application/json', body: '[1,2,3]', chunkBytes: 2, holdAfterFirstChunk: new Promise<void>((resolve) => { release = resolve }) })
  const held = await client.open('nso', { ...GET, path: '/held' })
  clock += 1000
  await swept()
  t.equal(client.poolOf('nso'), second, 'in use: not closed')
  release()
  const chunks: Buffer[] = []
  for await (const chunk of held.body) chunks.push(chunk as Buffer)
  t.equal(Buffer.concat(chunks).toString(), '[1,2,3]')
  clock += 40
  await waitFor('idle again after the call: closed', () => client.poolOf('nso') === undefined)
})

t.test('ORCHESTRATOR_POOL_IDLE_MS closes the pools of the app', async (t) => {
  const nso = await startNso(t)
  const app = await buildTestApp(t, { database: 'any', env: { ORCHESTRATOR_POOL_IDLE_MS: '100' } })
  await createAdapter(app, nsoAdapter('nso', nso))
  const relay = async () => await app.inject({
    method: 'POST',
    url: '/orchestrator_manager/restQuery/nso',
    headers: { authorization: adminAuth },
    payload: { params: { path: GET.path, accept: GET.accept } }
  })
  t.equal((await relay()).statusCode, 200)
  const pool = app.orchestrator.poolOf('nso')
  t.ok(pool !== undefined)
  await until(() => app.orchestrator.poolOf('nso') === undefined, 'the idle pool closes')
  t.equal(app.orchestrator.poolOf('nso'), undefined, 'closed once idle')
  t.equal(pool?.closed, true)
  t.equal((await relay()).statusCode, 200, 'and reopened on use')
  t.not(app.orchestrator.poolOf('nso'), undefined)
})

const run = promisify(execFile)

t.test('TLS: verified by default, a CA bundle per adapter, verification can be turned off', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'orchestrator-tls-'))
  t.teardown(async () => { await rm(dir, { recursive: true, force: true }) })
  await run('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
    '-subj', '/CN=nso.test', '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')])
  const cert = await readFile(path.join(dir, 'cert.pem'), 'utf8')
  const authorizations: Array<string | undefined> = []
  const server = https.createServer({ key: await readFile(path.join(dir, 'key.pem')), cert }, (req, res) => {
    authorizations.push(req.headers.authorization)
    res.writeHead(200, { 'content-type': 'application/yang-data+json' })
    res.end('{"tailf-ncs:address":"127.0.0.1"}')
  })
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  t.teardown(async () => { server.closeAllConnections(); await new Promise((resolve) => server.close(resolve)) })
  const baseUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}`

  const app = await buildTestApp(t, { database: 'any' })
  const headers = { authorization: adminAuth }
  const relay = async (id: string) => await app.inject({
    method: 'POST', url: `/orchestrator_manager/restQuery/${id}`, headers, payload: { params: { path: GET.path, accept: GET.accept } }
  })
  const created = await createAdapter(app, { id: 'tls', baseUrl, username: 'admin', password: 'tls-secret' })
  t.equal(created.json().rejectUnauthorized, true, 'verification on by default')

  const refused = await relay('tls')
  t.equal(refused.statusCode, 502, 'a self-signed certificate is refused')
  t.match(refused.json(), { code: 'UPSTREAM_UNREACHABLE', message: /self.signed certificate/i })
  t.same(authorizations, [], 'no request (nor credentials) went over the unverified connection')

  const withCa = await app.inject({ method: 'PUT', url: '/orchestrator_manager/adapters/tls', headers, payload: { ca: cert } })
  t.equal(withCa.statusCode, 200)
  t.equal(withCa.json().ca, cert)
  const trusted = await relay('tls')
  t.equal(trusted.statusCode, 200, 'trusted through the adapter\'s CA')
  t.equal(trusted.body, '{"tailf-ncs:address":"127.0.0.1"}')
  t.same(authorizations, ['Basic ' + Buffer.from('admin:tls-secret').toString('base64')])

  await createAdapter(app, { id: 'insecure', baseUrl, username: 'admin', password: 'x', rejectUnauthorized: false })
  t.equal((await relay('insecure')).statusCode, 200, 'rejectUnauthorized: false accepts it')

  await app.inject({ method: 'PUT', url: '/orchestrator_manager/adapters/tls', headers, payload: { ca: null } })
  t.equal((await relay('tls')).statusCode, 502, 'without the CA: refused again')
})
