import t from 'tap'
import { basic, buildTestApp } from '../../helper.js'
import { FORM, MAINTENANCE, form } from '../../helpers/auth.js'
import { until } from '../../helpers/until.js'

// Test processes run with --expose-gc (package.json, tap's node-arg) for a collectable heap measure.
const gc = (globalThis as { gc?: () => void }).gc ?? (() => { throw new Error('run the tests with --expose-gc') })

// Requests just answered hold their strings for a moment after (V8's string table): collected
// again on each turn of the event loop until the heap stops shrinking, what is left is what the
// service keeps.
async function heapAfterGc (): Promise<number> {
  let last = Infinity
  let used = Infinity
  await until(() => {
    gc()
    used = process.memoryUsage().heapUsed
    const settled = used > last - 64 * 1024
    last = used
    return settled
  }, 'the heap stops shrinking')
  return used
}

const MIB = 1024 * 1024
const CAP = 250
const BATCH = 250
// Each kind of attempt ten times the table's cap: 2,500 of them with 4 KB names would keep 10 MB
// were they kept, past the bound on the heap's growth.
const COUNT = 10 * CAP

async function inBatches (count: number, send: (i: number) => Promise<number>): Promise<Record<number, number>> {
  const tally: Record<number, number> = {}
  for (let from = 0; from < count; from += BATCH) {
    const statuses = await Promise.all(Array.from({ length: Math.min(BATCH, count - from) }, async (_, k) => await send(from + k)))
    for (const s of statuses) tally[s] = (tally[s] ?? 0) + 1
  }
  return tally
}

t.test('10,000 failed logins with new subjects each leave a bounded failure state', async (t) => {
  // What the login guard keeps is in this process, whatever the database. The failure window
  // outlasts the test however slow the machine: one ending midway would allow more checks.
  const app = await buildTestApp(t, { database: 'any', env: { LOGIN_GUARD_MAX_ENTRIES: String(CAP), LOGIN_FAILURES_WINDOW_MS: String(3_600_000) } })
  const guard = app.loginGuard
  const long = (i: number): string => `${'x'.repeat(4000)}-${i}`
  const at = (i: number): string => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`
  // Warm up every path, so that what they compile and cache once is not counted.
  await app.inject({ url: MAINTENANCE, headers: { authorization: basic(long(0), 'guess') }, remoteAddress: '10.255.0.1' })
  await app.inject({ method: 'POST', url: '/login', payload: { user: { username: 'warm-up', password: 'guess' } }, remoteAddress: '10.255.0.1' })
  await app.inject({ method: 'POST', url: '/oauth/token', headers: FORM, payload: form({ grant_type: 'client_credentials', client_id: long(0), client_secret: 'guess' }), remoteAddress: '10.255.0.1' })
  const before = await heapAfterGc()

  // Basic on a guarded route, a username no user can have (4 KB), one address.
  const basicLong = await inBatches(COUNT, async (i) =>
    (await app.inject({ url: MAINTENANCE, headers: { authorization: basic(long(i), 'guess') }, remoteAddress: '10.200.0.1' })).statusCode)
  t.same(basicLong, { 401: COUNT }, 'an impossible username is refused as wrong credentials, never counted')
  // POST /login: names of the allowed form, new each time, from one address: past the address's
  // budget nothing more is kept.
  const loginNew = await inBatches(COUNT, async (i) =>
    (await app.inject({ method: 'POST', url: '/login', payload: { user: { username: `${'n'.repeat(56)}${i}`, password: 'guess' } }, remoteAddress: '10.200.0.2' })).statusCode)
  t.ok((loginNew[401] ?? 0) <= 20, 'at most LOGIN_ADDRESS_FAILURES_MAX checks')
  t.equal((loginNew[401] ?? 0) + (loginNew[429] ?? 0) + (loginNew[503] ?? 0), COUNT, `then 429 (503 when the line is full): ${JSON.stringify(loginNew)}`)
  // POST /oauth/token with client ids no client can have (4 KB).
  const tokenLong = await inBatches(COUNT, async (i) =>
    (await app.inject({ method: 'POST', url: '/oauth/token', headers: FORM, payload: form({ grant_type: 'client_credentials', client_id: long(i), client_secret: 'guess' }), remoteAddress: '10.200.0.3' })).statusCode)
  t.same(tokenLong, { 401: COUNT }, 'an impossible client id is refused as invalid_client, never counted')
  // Client ids of the allowed form from as many addresses: each address and subject counted,
  // within the cap.
  const tokenSpread = await inBatches(COUNT, async (i) =>
    (await app.inject({ method: 'POST', url: '/oauth/token', headers: FORM, payload: form({ grant_type: 'client_credentials', client_id: i.toString(16).padStart(24, '0'), client_secret: 'guess' }), remoteAddress: at(i) })).statusCode)
  t.same(tokenSpread, { 401: COUNT })

  const sizes = guard.sizes()
  t.ok(sizes.counters <= CAP && sizes.good <= CAP && sizes.bad <= CAP, `every table within LOGIN_GUARD_MAX_ENTRIES: ${JSON.stringify(sizes)}`)
  const grown = await heapAfterGc() - before
  t.ok(grown < 8 * MIB, `heap after GC grew ${(grown / MIB).toFixed(1)} MiB`)
})
