import t from 'tap'
import { setTimeout as sleep } from 'node:timers/promises'
import { basic, buildTestApp } from '../../helper.js'
import { FORM, MAINTENANCE, form } from '../../helpers/auth.js'

// Test processes run with --expose-gc (package.json, tap's node-arg) for a collectable heap measure.
const gc = (globalThis as { gc?: () => void }).gc ?? (() => { throw new Error('run the tests with --expose-gc') })

// Requests just answered hold their strings for a moment after (V8's string table): measured
// once that has passed, what is left is what the service keeps.
async function heapAfterGc (): Promise<number> {
  gc()
  await sleep(1000)
  gc()
  return process.memoryUsage().heapUsed
}

const MIB = 1024 * 1024
const CAP = 500
const BATCH = 250

async function inBatches (count: number, send: (i: number) => Promise<number>): Promise<Record<number, number>> {
  const tally: Record<number, number> = {}
  for (let from = 0; from < count; from += BATCH) {
    const statuses = await Promise.all(Array.from({ length: Math.min(BATCH, count - from) }, async (_, k) => await send(from + k)))
    for (const s of statuses) tally[s] = (tally[s] ?? 0) + 1
  }
  return tally
}

t.test('20,000 failed logins with new subjects each leave a bounded failure state', async (t) => {
  // What the login guard keeps is in this process, whatever the database.
  const app = await buildTestApp(t, { database: 'any', env: { LOGIN_GUARD_MAX_ENTRIES: String(CAP) } })
  const guard = app.loginGuard
  const long = (i: number): string => `${'x'.repeat(4000)}-${i}`
  const at = (i: number): string => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`
  // Warm up every path, so that what they compile and cache once is not counted.
  await app.inject({ url: MAINTENANCE, headers: { authorization: basic(long(0), 'guess') }, remoteAddress: '10.255.0.1' })
  await app.inject({ method: 'POST', url: '/login', payload: { user: { username: 'warm-up', password: 'guess' } }, remoteAddress: '10.255.0.1' })
  await app.inject({ method: 'POST', url: '/oauth/token', headers: FORM, payload: form({ grant_type: 'client_credentials', client_id: long(0), client_secret: 'guess' }), remoteAddress: '10.255.0.1' })
  const before = await heapAfterGc()

  // Basic on a guarded route, a username no user can have (4 KB), one address.
  const basicLong = await inBatches(5000, async (i) =>
    (await app.inject({ url: MAINTENANCE, headers: { authorization: basic(long(i), 'guess') }, remoteAddress: '10.200.0.1' })).statusCode)
  t.same(basicLong, { 401: 5000 }, 'an impossible username is refused as wrong credentials, never counted')
  // POST /login: names of the allowed form, new each time, from one address: past the address's
  // budget nothing more is kept.
  const loginNew = await inBatches(5000, async (i) =>
    (await app.inject({ method: 'POST', url: '/login', payload: { user: { username: `${'n'.repeat(56)}${i}`, password: 'guess' } }, remoteAddress: '10.200.0.2' })).statusCode)
  t.ok((loginNew[401] ?? 0) <= 20, 'at most LOGIN_ADDRESS_FAILURES_MAX checks')
  t.equal((loginNew[401] ?? 0) + (loginNew[429] ?? 0) + (loginNew[503] ?? 0), 5000, `then 429 (503 when the line is full): ${JSON.stringify(loginNew)}`)
  // POST /oauth/token with client ids no client can have (4 KB).
  const tokenLong = await inBatches(5000, async (i) =>
    (await app.inject({ method: 'POST', url: '/oauth/token', headers: FORM, payload: form({ grant_type: 'client_credentials', client_id: long(i), client_secret: 'guess' }), remoteAddress: '10.200.0.3' })).statusCode)
  t.same(tokenLong, { 401: 5000 }, 'an impossible client id is refused as invalid_client, never counted')
  // Client ids of the allowed form from 5,000 addresses: each address and subject counted,
  // within the cap.
  const tokenSpread = await inBatches(5000, async (i) =>
    (await app.inject({ method: 'POST', url: '/oauth/token', headers: FORM, payload: form({ grant_type: 'client_credentials', client_id: i.toString(16).padStart(24, '0'), client_secret: 'guess' }), remoteAddress: at(i) })).statusCode)
  t.same(tokenSpread, { 401: 5000 })

  const sizes = guard.sizes()
  t.ok(sizes.counters <= CAP && sizes.good <= CAP && sizes.bad <= CAP, `every table within LOGIN_GUARD_MAX_ENTRIES: ${JSON.stringify(sizes)}`)
  const grown = await heapAfterGc() - before
  t.ok(grown < 8 * MIB, `heap after GC grew ${(grown / MIB).toFixed(1)} MiB`)
})
