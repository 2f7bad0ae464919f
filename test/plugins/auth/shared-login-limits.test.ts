// The failed-login limits hold for the whole deployment: instances on one database share them.
import t, { type Test } from 'tap'
import { mkdtemp, rm } from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { basic, buildTestApp, createTestDatabase, createUser, testDatabases, type TestApp } from '../../helper.js'
import { FORM, MAINTENANCE, form } from '../../helpers/auth.js'

const MAX = 3
const KEY = 'shared-orchestrator-secret-key-0123456789'
const PASSWORD = 'the-right-password'
const env = { LOGIN_FAILURES_MAX: String(MAX), LOGIN_ADDRESS_FAILURES_MAX: '6', ORCHESTRATOR_SECRET_KEY: KEY }
const wrong = async (app: TestApp, username: string, n: number, remoteAddress = '10.1.0.1') =>
  await app.inject({ method: 'POST', url: '/login', payload: { user: { username, password: `wrong-${n}` } }, remoteAddress })

async function twoInstances (t: Test, kind: 'embedded' | 'postgres', extra: Record<string, string> = {}): Promise<[TestApp, TestApp]> {
  const database = await createTestDatabase(t, kind, { migrated: true })
  const a = await buildTestApp(t, { database, env: { ...env, ...extra } })
  if (kind === 'embedded') return [a, a]
  const otherDataDir = await mkdtemp(path.join(os.tmpdir(), 'second-instance-'))
  t.teardown(async () => { await rm(otherDataDir, { recursive: true, force: true }) })
  return [a, await buildTestApp(t, { database, env: { ...env, ...extra, DATA_DIR: otherDataDir } })]
}

for (const kind of testDatabases) {
  // The embedded database is one instance: the same code, the same counts, on one instance.
  t.test(`failures alternating between two instances count once (${kind})`, async (t) => {
    const [a, b] = await twoInstances(t, kind)
    await createUser(a, { username: 'alice', password: PASSWORD })
    await createUser(a, { username: 'bob', password: PASSWORD })
    // alice's right password, verified on A, stays known good there whatever the counts say.
    t.equal((await a.inject({ url: MAINTENANCE, headers: { authorization: basic('alice', PASSWORD) }, remoteAddress: '10.1.0.1' })).statusCode, 200)

    const statuses: number[] = []
    for (let n = 0; n < MAX; n++) statuses.push((await wrong(n % 2 === 0 ? a : b, 'alice', n)).statusCode)
    t.same(statuses, [401, 401, 401], `${MAX} failures in total are checked`)
    const refused = await wrong(MAX % 2 === 0 ? a : b, 'alice', MAX)
    t.equal(refused.statusCode, 429, `the ${MAX + 1}th failure in total is refused`)
    t.match(refused.headers['retry-after'], /^[1-9]\d*$/)
    t.equal((await wrong(a, 'alice', 99)).statusCode, 429, 'and on the other instance')
    const right = await b.inject({ method: 'POST', url: '/login', payload: { user: { username: 'alice', password: PASSWORD } }, remoteAddress: '10.1.0.1' })
    if (kind === 'postgres') t.equal(right.statusCode, 429, 'B never verified alice\'s password: refused by the count there')
    t.equal((await a.inject({ url: MAINTENANCE, headers: { authorization: basic('alice', PASSWORD) }, remoteAddress: '10.1.0.1' })).statusCode, 200,
      'A knows it: its owner keeps working')

    // A success gives its place back: bob logs in, then still has MAX failures.
    t.equal((await b.inject({ method: 'POST', url: '/login', payload: { user: { username: 'bob', password: PASSWORD } }, remoteAddress: '10.1.0.2' })).statusCode, 200)
    const bobs: number[] = []
    for (let n = 0; n <= MAX; n++) bobs.push((await wrong(b, 'bob', n, '10.1.0.2')).statusCode)
    t.same(bobs, [401, 401, 401, 429])

    // The address's own limit (6), across usernames and instances; OAuth clients count alike.
    const address = '10.1.0.3'
    const perAddress: number[] = []
    for (let n = 0; n < 6; n++) perAddress.push((await wrong(n % 2 === 0 ? a : b, `nobody-${n}`, n, address)).statusCode)
    const token = await b.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: FORM,
      remoteAddress: address,
      payload: form({ grant_type: 'client_credentials', client_id: 'a'.repeat(24), client_secret: 'guess' })
    })
    t.same(perAddress, [401, 401, 401, 401, 401, 401])
    t.equal(token.statusCode, 429, 'the 7th failure from the address, on the token endpoint')

    const { rows } = await a.db.query<{ key: string, failures: number }>('SELECT key, failures FROM login_failures')
    t.ok(rows.length > 0)
    t.notMatch(JSON.stringify(rows), /alice|bob|nobody|10\.1\./, 'keys are digests, no username or address in clear')
  })

  t.test(`the counts unreachable: a login that needs one is refused with 503, one known good is not (${kind})`, async (t) => {
    const [a] = await twoInstances(t, kind)
    await createUser(a, { username: 'carol', password: PASSWORD })
    const carol = { authorization: basic('carol', PASSWORD) }
    t.equal((await a.inject({ url: MAINTENANCE, headers: carol })).statusCode, 200)
    await a.db.query('ALTER TABLE login_failures RENAME TO login_failures_away')
    t.teardown(async () => { await a.db.query('ALTER TABLE login_failures_away RENAME TO login_failures').catch(() => {}) })
    const refused = await wrong(a, 'carol', 1)
    t.equal(refused.statusCode, 503)
    t.match(refused.json(), { code: 'DATABASE_UNAVAILABLE' })
    t.equal((await a.inject({ method: 'POST', url: '/login', payload: { user: { username: 'carol', password: PASSWORD } } })).statusCode, 200,
      'a credential verified lately needs no count')
    t.equal((await a.inject({ url: MAINTENANCE, headers: carol })).statusCode, 200, 'a cached one neither')
    await a.db.query('ALTER TABLE login_failures_away RENAME TO login_failures')
    t.equal((await wrong(a, 'carol', 2)).statusCode, 401, 'counted again once it is back')
  })
}

t.test('a flood of failed logins: statements per failed attempt', async (t) => {
  const ATTEMPTS = 400
  const CONCURRENCY = 50
  const app = await buildTestApp(t, { database: 'any', env: { ...env, LOGIN_FAILURES_MAX: '1000', LOGIN_ADDRESS_FAILURES_MAX: '100000' } })
  const before = app.sharedLoginCounts.statements
  let next = 0
  const statuses: number[] = []
  // Distinct client ids from one address: every attempt needs the database (no key found full).
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < ATTEMPTS) {
      const n = next++
      const answer = await app.inject({
        method: 'POST',
        url: '/oauth/token',
        headers: FORM,
        remoteAddress: '10.2.0.1',
        payload: form({ grant_type: 'client_credentials', client_id: n.toString(16).padStart(24, '0'), client_secret: `guess-${n}` })
      })
      statuses.push(answer.statusCode)
    }
  }))
  const statements = app.sharedLoginCounts.statements - before
  t.same(new Set(statuses), new Set([401]))
  t.comment(`${ATTEMPTS} failed attempts, ${CONCURRENCY} at a time: ${statements} statements (${(statements / ATTEMPTS).toFixed(2)} per attempt)`)
  t.ok(statements < ATTEMPTS, 'fewer statements than attempts: places taken meanwhile go in one statement')

  // One key hammered past its limit: refused without the database once found full.
  const small = await buildTestApp(t, { database: 'any', env })
  for (let n = 0; n < MAX; n++) await wrong(small, 'dave', n, '10.2.0.2')
  const full = small.sharedLoginCounts.statements
  t.equal((await wrong(small, 'dave', MAX, '10.2.0.2')).statusCode, 429)
  const answers = await Promise.all(Array.from({ length: 100 }, async (_, n) => (await wrong(small, 'dave', 100 + n, '10.2.0.2')).statusCode))
  t.same(new Set(answers), new Set([429]))
  t.ok(small.sharedLoginCounts.statements - full <= 2, 'finding it full took a statement (and one giving the refused places back); the next 100 none')
})
